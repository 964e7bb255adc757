// MatMul/Gemm/Conv through cuBLAS/cuDNN on --target=cuda: the f32 ops that
// fit become host-side library calls on device buffers (constants are the
// session's device copies), the rest keep the generated loops and the
// report says why; --library-calls=none keeps everything as loops.
// RUN: disc-compile %s --target=cuda --emit=gpu --report-codegen -o - 2>%t.report | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report
// RUN: disc-compile %s --target=cuda --library-calls=none --emit=gpu -o - | FileCheck %s --check-prefix=NONE

// REPORT: library call: 'disc.conv': cuDNN with post-ops bias relu
// REPORT: library call: 'disc.conv': generated loops (asymmetric pads 0 and 1 on spatial dim 0 (cuDNN takes symmetric pads))
// REPORT: library call: 'disc.dot_general': cuBLAS
// REPORT: library call: 'disc.dot_general': generated loops (element type f64 (the cuBLAS/cuDNN calls take f32))
// REPORT: library calls: 1 cuBLAS, 1 cuDNN, 2 MatMul/Conv as generated loops

// CHECK-DAG: func.func private @disc_lib_matmul(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64)
// CHECK-DAG: func.func private @disc_lib_conv2d_post1(
// CHECK-LABEL: func.func @disc_entry
// The weights and the bias are the session's device copies, requested at
// the start of the run (uploaded once per session; nothing allocated,
// copied or freed per run).
// CHECK-NOT: disc.device_constant_bytes
// CHECK: %[[W:.+]] = memref.get_global @__constant_8x3x3x3xf32 : memref<8x3x3x3xf32>
// CHECK: call @disc_device_constant_4_{{[0-9]+}}(%[[W]], %c864_i64)
// CHECK: %[[BIAS:.+]] = memref.get_global @__constant_8xf32 : memref<8xf32>
// CHECK: call @disc_device_constant_1_{{[0-9]+}}(%[[BIAS]], %c32_i64)
// Conv + bias + Relu: one call, flags 5 (bias, Relu); attrs {groups 1,
// weights constant 1, strides, dilations, pads}.
// CHECK: call @disc_lib_conv2d_post1(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c1_i64, %c5_i64)
// The asymmetrically padded conv: a kernel.
// CHECK: gpu.launch
// CHECK: call @disc_lib_matmul(%{{.+}}, %{{.+}}, %{{.+}}, %c0_i64, %c0_i64)
// The f64 MatMul: a kernel.
// CHECK: gpu.launch
// CHECK-NOT: gpu.memcpy
// CHECK: return

// NONE-NOT: disc_lib
// NONE: gpu.launch
// NONE-NOT: disc_lib

func.func @main(%x: tensor<?x3x?x?xf32>, %a: tensor<?x?x16xf32>, %b: tensor<?x16x8xf32>, %d: tensor<?x4xf64>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x?x8xf32>, tensor<?x4xf64>) {
  %w = disc.constant dense<0.5> : tensor<8x3x3x3xf32>
  %bias = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %zero = disc.constant dense<0.0> : tensor<f32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %cb = disc.add %c, %bias : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %r = disc.max %cb, %zero : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %c2 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  %m = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<?x?x16xf32>, tensor<?x16x8xf32>) -> tensor<?x?x8xf32>
  %w64 = disc.constant dense<1.0> : tensor<4x4xf64>
  %m64 = disc.dot_general %d, %w64 {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x4xf64>, tensor<4x4xf64>) -> tensor<?x4xf64>
  return %r, %c2, %m, %m64 : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x?x8xf32>, tensor<?x4xf64>
}

// -----
// The marking pass on its own: ConvTranspose with symmetric pads (after
// output_padding) is a cuDNN call; one with an end pad below the begin pad
// is not.
// RUN: disc-opt --disc-mark-cuda-library-calls --split-input-file %s | FileCheck %s --check-prefix=MARK
// MARK-LABEL: func.func @conv_transpose
// MARK: disc.conv_transpose {{.*}}disc.library_call
// MARK: disc.conv_transpose
// MARK-NOT: disc.library_call
// MARK: return
func.func @conv_transpose(%x: tensor<?x4x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>) {
  %0 = disc.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 2, 2>, output_padding = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x3x?x?xf32>
  %1 = disc.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x3x?x?xf32>
  return %0, %1 : tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>
}

// -----
// On CUDA a ConvTranspose call takes the post-ops of a Conv: its bias add
// is applied by the call (after cuDNN's backward-data convolution), so it
// is no kernel and no buffer of its own.
// MARK-LABEL: func.func @conv_transpose_bias
// MARK: disc.conv_transpose {{.*}}disc.library_call{{.*}}disc.post_op_attrs = array<i64: 1>{{.*}}disc.post_ops = ["bias"]
// MARK: disc.add {{.*}}disc.fused_into_call = 0
func.func @conv_transpose_bias(%x: tensor<?x4x?x?xf32>, %w: tensor<4x3x2x2xf32>) -> tensor<?x3x?x?xf32> {
  %0 = disc.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x3x2x2xf32>) -> tensor<?x3x?x?xf32>
  %b = disc.constant dense<[[[0.5]], [[1.5]], [[-2.0]]]> : tensor<3x1x1xf32>
  %1 = disc.add %0, %b : (tensor<?x3x?x?xf32>, tensor<3x1x1xf32>) -> tensor<?x3x?x?xf32>
  return %1 : tensor<?x3x?x?xf32>
}

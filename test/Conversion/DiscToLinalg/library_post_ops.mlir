// Post-ops of library calls (DiscToLinalg/LibraryCalls.h): a bias add, a
// residual add and a Relu right after a Conv/MatMul run inside the call
// (flags bit 0 bias, 1 residual, 2 Relu); ConvTranspose becomes a
// deconvolution call.
// RUN: disc-opt --disc-mark-library-calls %s | FileCheck %s --check-prefix=MARK
// RUN: disc-opt --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s

// The residual is the conv's input (3x3, pad 1: same dims, proven).
// MARK-LABEL: func.func @conv_bias_add_relu
// MARK: disc.conv {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 7>, disc.post_ops = ["bias", "add", "relu"]
// MARK: disc.add {{.*}}disc.fused_into_call = 0 : i64
// MARK: disc.add {{.*}}disc.fused_into_call = 0 : i64
// MARK: disc.max {{.*}}disc.fused_into_call = 0 : i64
// CHECK-LABEL: func.func @conv_bias_add_relu
// CHECK: %[[Y:.+]] = memref.alloc
// CHECK: %[[B:.+]] = arith.constant dense<2.500000e-01> : tensor<8x1x1xf32>
// CHECK: tensor.collapse_shape %[[B]] {{\[\[}}0, 1, 2]] : tensor<8x1x1xf32> into tensor<8xf32>
// CHECK: %[[F:.+]] = arith.constant 7 : i64
// CHECK: call @disc_lib_conv2d_post3({{.*}}, %[[F]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @conv_bias_add_relu(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x3x3xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %s = disc.add %a, %x : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %y = disc.max %s, %z : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  return %y : tensor<?x8x?x?xf32>
}

// The residual add's other operand may broadcast (its dims are not proven
// equal to the conv's): only the bias is fused.
// MARK-LABEL: func.func @conv_broadcast_residual
// MARK: disc.conv {{.*}}disc.post_ops = ["bias"]
// MARK: disc.add {{.*}}disc.fused_into_call = 0 : i64
// MARK-NOT: disc.fused_into_call
// MARK: return
func.func @conv_broadcast_residual(%x: tensor<?x8x?x?xf32>, %r: tensor<?x?x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %s = disc.add %a, %r : (tensor<?x8x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %s : tensor<?x8x?x?xf32>
}

// nn.Linear + ReLU: MatMul with its bias and Relu (flags 5, and 4096: constant weights).
// CHECK-LABEL: func.func @linear_relu
// CHECK: %[[F:.+]] = arith.constant 4101 : i64
// CHECK: call @disc_lib_matmul_post1({{.*}}, %[[F]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_relu(%x: tensor<?x?x64xf32>) -> tensor<?x?x32xf32> {
  %w = disc.constant dense<1.0> : tensor<64x32xf32>
  %m = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %b = disc.constant dense<0.5> : tensor<32xf32>
  %a = disc.add %m, %b : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %y = disc.max %a, %z : (tensor<?x?x32xf32>, tensor<f32>) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// ConvTranspose (stride 2, output_padding 1 taken from the end pad 1):
// pads_end 0 in the call.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: call @disc_lib_conv_transpose2d
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @conv_transpose(%x: tensor<?x4x?x?xf32>) -> tensor<?x2x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<4x2x3x3xf32>
  %y = disc.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x2x3x3xf32>) -> tensor<?x2x?x?xf32>
  return %y : tensor<?x2x?x?xf32>
}

// ReLU6 after a depthwise Conv (MobileNetV2): max 0 then min 6 become one
// clip (flags 8 | bias) with the bounds' f32 bit patterns (0, 6.0 =
// 0x40C00000 = 1086324736).
// MARK-LABEL: func.func @conv_bias_relu6
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 9, 0, 1086324736>, disc.post_ops = ["bias", "relu", "min"]
// MARK: disc.max {{.*}}disc.fused_into_call = 0 : i64
// MARK: disc.min {{.*}}disc.fused_into_call = 0 : i64
// CHECK-LABEL: func.func @conv_bias_relu6
// CHECK: call @disc_lib_conv2d_post1c
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @conv_bias_relu6(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x1x3x3xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 8 : i64} : (tensor<?x8x?x?xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %r = disc.max %a, %z : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %six = disc.constant dense<6.0> : tensor<f32>
  %y = disc.min %r, %six : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  return %y : tensor<?x8x?x?xf32>
}

// A clip whose lower bound is above its upper bound is not a oneDNN clip:
// only the max is fused (flags 8, bounds -1 and +inf).
// MARK-LABEL: func.func @conv_bad_clip
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 8, 3212836864, 2139095040>, disc.post_ops = ["max"]
// MARK: disc.max {{.*}}disc.fused_into_call = 0 : i64
// MARK-NOT: disc.fused_into_call
// MARK: return
func.func @conv_bad_clip(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %lo = disc.constant dense<-1.0> : tensor<f32>
  %r = disc.max %c, %lo : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %hi = disc.constant dense<-2.0> : tensor<f32>
  %y = disc.min %r, %hi : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  return %y : tensor<?x8x?x?xf32>
}

// nn.Linear + Sigmoid (flags 17, and 4096: constant weights); a Relu after
// the Sigmoid stays a loop.
// MARK-LABEL: func.func @linear_sigmoid
// MARK: disc.dot_general {{.*}}disc.post_op_attrs = array<i64: 4113>, disc.post_ops = ["bias", "sigmoid"]
// MARK: disc.logistic {{.*}}disc.fused_into_call = 0 : i64
// MARK-NOT: disc.fused_into_call
// MARK: return
// CHECK-LABEL: func.func @linear_sigmoid
// CHECK: %[[F:.+]] = arith.constant 4113 : i64
// CHECK: call @disc_lib_matmul_post1({{.*}}, %[[F]])
// CHECK: linalg.generic
// CHECK: return
func.func @linear_sigmoid(%x: tensor<?x?x64xf32>) -> tensor<?x?x32xf32> {
  %w = disc.constant dense<1.0> : tensor<64x32xf32>
  %m = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %b = disc.constant dense<0.5> : tensor<32xf32>
  %a = disc.add %m, %b : (tensor<?x?x32xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %s = disc.logistic %a : tensor<?x?x32xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %y = disc.max %s, %z : (tensor<?x?x32xf32>, tensor<f32>) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

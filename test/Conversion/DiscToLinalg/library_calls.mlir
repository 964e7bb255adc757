// RUN: disc-opt --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s
// RUN: disc-opt --disc-lower-to-linalg=library-calls=none -cse %s | FileCheck %s --check-prefix=NONE
// RUN: not disc-opt --disc-lower-to-linalg=library-calls=mkl %s 2>&1 | FileCheck %s --check-prefix=BAD

// f32 MatMul/Gemm/Conv become calls of private C-interface functions that
// the model wrapper forwards to the runtime's library module.
// CHECK-DAG: func.func private @disc_lib_conv2d(memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @disc_lib_matmul(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64) attributes {llvm.emit_c_interface}

// NONE-NOT: disc_lib
// NONE: linalg.matmul
// NONE-NOT: disc_lib

// BAD: library-calls must be 'onednn', 'cuda' or 'none', got 'mkl'

// Gemm with transB: both operands viewed as [1, ., .] strided buffers; the
// output is allocated with the result shape, viewed as [1, M, N] for the
// call, and returned as is.
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-DAG: %[[A:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<1x?x64xf32> to memref<1x?x64xf32, strided<[?, ?, ?], offset: ?>>
// CHECK-DAG: %[[B:.+]] = bufferization.to_buffer %{{.+}} read_only : tensor<1x32x64xf32> to memref<1x32x64xf32, strided<[?, ?, ?], offset: ?>>
// CHECK: %[[C:.+]] = memref.alloc(%{{.+}}) {alignment = 64 : i64} : memref<?x32xf32>
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[C]] restrict writable
// CHECK: %[[E:.+]] = memref.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [1, %{{.+}}, 32]
// CHECK: %[[CC:.+]] = memref.cast %[[E]]
// CHECK: %[[F:.+]] = arith.constant 0 : i64
// CHECK: %[[TR:.+]] = arith.constant 1 : i64
// CHECK: call @disc_lib_matmul(%{{.+}}, %{{.+}}, %[[CC]], %[[F]], %[[TR]])
// CHECK-NOT: linalg.
// CHECK: return %[[T]]
func.func @gemm_trans_b(%a: tensor<?x64xf32>, %b: tensor<32x64xf32>) -> tensor<?x32xf32> {
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// nn.Linear on a 3-D tensor: [B, S, K] collapsed to [B*S, K], one call.
// CHECK-LABEL: func.func @linear_3d
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
// CHECK: %[[C:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x32xf32>
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[C]]
// CHECK: memref.collapse_shape %[[C]] {{\[\[}}0, 1], [2]] : memref<?x?x32xf32> into memref<?x32xf32>
// CHECK: call @disc_lib_matmul
// CHECK-NOT: linalg.
// CHECK: return
func.func @linear_3d(%a: tensor<?x?x64xf32>) -> tensor<?x?x32xf32> {
  %w = disc.constant dense<1.0> : tensor<64x32xf32>
  %0 = disc.dot_general %a, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  return %0 : tensor<?x?x32xf32>
}

// Two batch dims collapsed into one.
// CHECK-LABEL: func.func @batch4d
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : tensor<?x?x?x64xf32> into tensor<?x?x64xf32>
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2], [3]] : tensor<?x?x64x?xf32> into tensor<?x64x?xf32>
// CHECK: %[[C:.+]] = memref.alloc(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x?x?xf32>
// CHECK: memref.collapse_shape %[[C]] {{\[\[}}0, 1], [2], [3]] : memref<?x?x?x?xf32> into memref<?x?x?xf32>
// CHECK: call @disc_lib_matmul
// CHECK-NOT: linalg.
// CHECK: return
func.func @batch4d(%a: tensor<?x?x?x64xf32>, %b: tensor<?x?x64x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0, 1>, rhs_batching_dimensions = array<i64: 0, 1>, lhs_contracting_dimensions = array<i64: 3>, rhs_contracting_dimensions = array<i64: 2>} : (tensor<?x?x?x64xf32>, tensor<?x?x64x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// Grouped, dilated, strided, asymmetrically padded conv: no padded copy;
// attrs {groups, weights_constant, strides, dilations, pads_begin, pads_end}.
// CHECK-LABEL: func.func @conv_grouped_dilated
// CHECK-NOT: tensor.pad
// CHECK: memref.alloc(%{{.+}}, %{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x8x?x?xf32>
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : i64
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : i64
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[C3:.+]] = arith.constant 3 : i64
// CHECK: call @disc_lib_conv2d(%{{.+}}, %{{.+}}, %{{.+}}, %[[C4]], %[[C0]], %[[C2]], %[[C1]], %[[C2]], %[[C3]], %[[C1]], %[[C2]], %[[C3]], %[[C4]])
// CHECK-NOT: linalg.
// CHECK: return
func.func @conv_grouped_dilated(%x: tensor<?x8x?x?xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %0 = disc.conv %x, %w {strides = array<i64: 2, 1>, dilations = array<i64: 2, 3>, padding = array<i64: 1, 2, 3, 4>, feature_group_count = 4 : i64} : (tensor<?x8x?x?xf32>, tensor<8x2x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// Integers keep the linalg lowering.
// CHECK-LABEL: func.func @matmul_i32
// CHECK: linalg.matmul
// CHECK-NOT: disc_lib
func.func @matmul_i32(%a: tensor<?x64xi32>, %b: tensor<64x?xi32>) -> tensor<?x?xi32> {
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x64xi32>, tensor<64x?xi32>) -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}

// So does f64.
// CHECK-LABEL: func.func @conv_f64
// CHECK: linalg.generic
// CHECK-NOT: disc_lib
func.func @conv_f64(%x: tensor<1x1x5xf64>, %w: tensor<1x1x3xf64>) -> tensor<1x1x3xf64> {
  %0 = disc.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, padding = array<i64: 0, 0>, feature_group_count = 1 : i64} : (tensor<1x1x5xf64>, tensor<1x1x3xf64>) -> tensor<1x1x3xf64>
  return %0 : tensor<1x1x3xf64>
}

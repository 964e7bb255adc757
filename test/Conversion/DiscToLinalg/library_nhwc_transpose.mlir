// Transposes around Conv calls in graphs that keep NHWC, as tf2onnx exports
// TensorFlow models (DiscToLinalg/LibraryCalls.h): a Transpose NHWC -> NCHW
// of a dense buffer read only as Conv inputs, and a Transpose NCHW -> NHWC
// that is the only reader of a Conv's final value, become views
// (disc.nhwc_view, lowered as tensor.reshape, no copy); the Conv reads
// (flags bit 128) or writes (bit 64) NHWC.
// RUN: disc-opt --disc-mark-library-calls %s | FileCheck %s --check-prefix=MARK
// RUN: disc-opt --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s

// NHWC in, Conv (bias, Relu), NHWC add, Conv, NHWC out.
// MARK-LABEL: func.func @tf2onnx
// MARK: disc.transpose {{.*}}disc.nhwc_view, permutation = array<i64: 0, 3, 1, 2>
// MARK: disc.conv {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 197>, disc.post_ops = ["bias", "relu"]
// MARK: disc.transpose {{.*}}disc.nhwc_view, permutation = array<i64: 0, 2, 3, 1>
// MARK: disc.add
// MARK: disc.transpose {{.*}}disc.nhwc_view, permutation = array<i64: 0, 3, 1, 2>
// MARK: disc.conv {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 192>, feature_group_count
// MARK: disc.transpose {{.*}}disc.nhwc_view, permutation = array<i64: 0, 2, 3, 1>
// MARK: return
// CHECK-LABEL: func.func @tf2onnx
// CHECK-NOT: linalg.transpose
// CHECK: %[[F1:.+]] = arith.constant 197 : i64
// CHECK: call @disc_lib_conv2d_post1({{.*}}, %[[F1]])
// CHECK: linalg.generic
// CHECK: %[[F2:.+]] = arith.constant 192 : i64
// CHECK: call @disc_lib_conv2d_post0({{.*}}, %[[F2]])
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @tf2onnx(%x: tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x3x3xf32>
  %t0 = disc.transpose %x {permutation = array<i64: 0, 3, 1, 2>} : (tensor<?x?x?x8xf32>) -> tensor<?x8x?x?xf32>
  %c1 = disc.conv %t0, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c1, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %r = disc.max %a, %z : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %t1 = disc.transpose %r {permutation = array<i64: 0, 2, 3, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x?x8xf32>
  %s = disc.add %t1, %x : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  %t2 = disc.transpose %s {permutation = array<i64: 0, 3, 1, 2>} : (tensor<?x?x?x8xf32>) -> tensor<?x8x?x?xf32>
  %c2 = disc.conv %t2, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %t3 = disc.transpose %c2 {permutation = array<i64: 0, 2, 3, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x?x8xf32>
  return %t3 : tensor<?x?x?x8xf32>
}

// Not views: a Transpose to NCHW also read by a loop nest, one of a strided
// slice, a Conv value read by a Transpose and a loop nest, and other
// permutations keep their copies.
// MARK-LABEL: func.func @kept
// MARK-NOT: nhwc_view
// MARK: return
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.transpose
// CHECK: return
func.func @kept(%x: tensor<?x?x?x8xf32>, %y: tensor<?x?x?x16xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x?x?x8xf32>, tensor<?x8x?x?xf32>, tensor<?x?x8x?xf32>, tensor<?x8x?x?xf32>) {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %t0 = disc.transpose %x {permutation = array<i64: 0, 3, 1, 2>} : (tensor<?x?x?x8xf32>) -> tensor<?x8x?x?xf32>
  %e = disc.exp %t0 : tensor<?x8x?x?xf32>
  %c1 = disc.conv %t0, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %t1 = disc.transpose %c1 {permutation = array<i64: 0, 2, 3, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x?x8xf32>
  %e1 = disc.exp %c1 : tensor<?x8x?x?xf32>
  %st = disc.constant dense<0> : tensor<1xi64>
  %en = disc.constant dense<8> : tensor<1xi64>
  %sp = disc.constant dense<1> : tensor<1xi64>
  %sl = disc.slice %y, %st, %en, %sp {axes = array<i64: 3>} : (tensor<?x?x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x8xf32>
  %t2 = disc.transpose %sl {permutation = array<i64: 0, 3, 1, 2>} : (tensor<?x?x?x8xf32>) -> tensor<?x8x?x?xf32>
  %c2 = disc.conv %t2, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %c3 = disc.conv %e, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %t3 = disc.transpose %c3 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x8x?x?xf32>) -> tensor<?x?x8x?xf32>
  return %e, %e1, %t1, %c2, %t3, %c1 : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x?x?x8xf32>, tensor<?x8x?x?xf32>, tensor<?x?x8x?xf32>, tensor<?x8x?x?xf32>
}

// A Concat along the channels of Conv/pooling calls' values, read only by
// calls (SqueezeNet's fire modules, Inception's blocks), runs NHWC
// (DiscToLinalg/LibraryCalls.h): disc.nhwc_concat, its producers write NHWC
// (flags bit 64), its readers read NHWC (bit 128), and the copies run on
// channels-last views (tensor.reshape) of the operands and the result.
// RUN: disc-opt --disc-mark-library-calls %s | FileCheck %s --check-prefix=MARK
// RUN: disc-opt --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s

// MARK-LABEL: func.func @fire
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 68>, disc.post_ops = ["relu"]
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 192>
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 192>
// MARK: disc.concatenate {{.*}}disc.nhwc_concat
// MARK: disc.concatenate {{.*}}disc.nhwc_concat
// MARK: disc.pool max, {{.*}}disc.post_op_attrs = array<i64: 192>
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 128>
// MARK: return
// CHECK-LABEL: func.func @fire
// CHECK-NOT: linalg.transpose
// CHECK: call @disc_lib_conv2d_post0({{.*}}, %c68_i64)
// CHECK: %[[E1:.+]] = bufferization.to_tensor
// CHECK: call @disc_lib_conv2d_post0({{.*}}, %c192_i64)
// CHECK: %[[E3:.+]] = bufferization.to_tensor
// CHECK: call @disc_lib_conv2d_post0({{.*}}, %c192_i64)
// CHECK: %[[D:.+]] = tensor.empty({{.*}}) : tensor<?x?x?x8xf32>
// CHECK: %[[V1:.+]] = tensor.reshape %[[E1]]({{.*}}) -> tensor<?x?x?x4xf32>
// CHECK: %[[I1:.+]] = tensor.insert_slice %[[V1]] into %[[D]][0, 0, 0, 0]
// CHECK: %[[V3:.+]] = tensor.reshape %[[E3]]({{.*}}) -> tensor<?x?x?x4xf32>
// CHECK: %[[I3:.+]] = tensor.insert_slice %[[V3]] into %[[I1]][0, 0, 0, 4]
// CHECK: %[[C:.+]] = tensor.reshape %[[I3]]({{.*}}) : (tensor<?x?x?x8xf32>, tensor<4xindex>) -> tensor<?x8x?x?xf32>
// CHECK: %[[D2:.+]] = tensor.empty({{.*}}) : tensor<?x?x?x16xf32>
// CHECK: %[[VC:.+]] = tensor.reshape %[[C]]({{.*}}) -> tensor<?x?x?x8xf32>
// CHECK: %[[J1:.+]] = tensor.insert_slice %[[VC]] into %[[D2]][0, 0, 0, 0]
// CHECK: tensor.insert_slice %[[VC]] into %[[J1]][0, 0, 0, 8]
// CHECK: call @disc_lib_pool2d
// CHECK: return
func.func @fire(%x: tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w0 = disc.constant dense<0.5> : tensor<4x4x1x1xf32>
  %w1 = disc.constant dense<0.25> : tensor<4x4x1x1xf32>
  %w3 = disc.constant dense<0.125> : tensor<4x4x3x3xf32>
  %w4 = disc.constant dense<0.5> : tensor<8x16x1x1xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %s0 = disc.conv %x, %w0 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  %s = disc.max %s0, %z : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %e1 = disc.conv %s, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  %e3 = disc.conv %s, %w3 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x3x3xf32>) -> tensor<?x4x?x?xf32>
  %c = disc.concatenate %e1, %e3 {dimension = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32>
  // A Concat of a Concat (Inception-v3's last blocks).
  %c2 = disc.concatenate %c, %c {dimension = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x16x?x?xf32>
  %p = disc.pool max, %c2 {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
  %o = disc.conv %p, %w4 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x16x?x?xf32>, tensor<8x16x1x1xf32>) -> tensor<?x8x?x?xf32>
  return %o : tensor<?x8x?x?xf32>
}

// NCHW: a Concat read by a loop nest, one of a loop nest's value, one
// returned, one along another dim; nor do their producers write NHWC.
// MARK-LABEL: func.func @kept
// MARK-NOT: nhwc_concat
// MARK-NOT: array<i64: 64>
// MARK: return
func.func @kept(%x: tensor<?x4x?x?xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) {
  %w = disc.constant dense<0.5> : tensor<4x4x1x1xf32>
  %e1 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  %e2 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  %c1 = disc.concatenate %e1, %e2 {dimension = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32>
  %a = disc.add %c1, %c1 : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %e3 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  %n = disc.neg %x : tensor<?x4x?x?xf32>
  %c2 = disc.concatenate %e3, %n {dimension = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32>
  %w8 = disc.constant dense<0.5> : tensor<4x8x1x1xf32>
  %o2 = disc.conv %c2, %w8 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<4x8x1x1xf32>) -> tensor<?x4x?x?xf32>
  %e4 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  %c3 = disc.concatenate %e4, %e4 {dimension = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32>
  %e5 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  %c4 = disc.concatenate %e5, %e5 {dimension = 2 : i64} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %o4 = disc.conv %c4, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<4x4x1x1xf32>) -> tensor<?x4x?x?xf32>
  return %a, %c3, %o2, %o4 : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>
}

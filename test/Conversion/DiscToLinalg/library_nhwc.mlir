// NHWC chains of Conv library calls (DiscToLinalg/LibraryCalls.h): a Conv
// whose final value (after its post-ops) is read only by Conv calls, as
// their input or residual, writes NHWC (flags bit 64) and they read it
// NHWC (bit 128 input, 256 residual); a Conv without post-ops then carries
// the flags word alone (`_post0`).
// RUN: disc-opt --disc-mark-library-calls %s | FileCheck %s --check-prefix=MARK
// RUN: disc-opt --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s

// conv1 (bias, Relu) -> conv2 (no post-ops) -> conv3 (its input is also
// its residual) -> returned.
// MARK-LABEL: func.func @chain
// MARK: disc.conv {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 69>, disc.post_ops = ["bias", "relu"]
// MARK: disc.conv {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 192>, feature_group_count
// MARK: disc.conv {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 386>, disc.post_ops = ["add"]
// MARK: return
// CHECK-LABEL: func.func @chain
// CHECK: %[[F1:.+]] = arith.constant 69 : i64
// CHECK: call @disc_lib_conv2d_post1({{.*}}, %[[F1]])
// CHECK: %[[F2:.+]] = arith.constant 192 : i64
// CHECK: call @disc_lib_conv2d_post0({{.*}}, %[[F2]])
// CHECK: %[[F3:.+]] = arith.constant 386 : i64
// CHECK: call @disc_lib_conv2d_post2({{.*}}, %[[F3]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x3x3xf32>
  %c1 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c1, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %r = disc.max %a, %z : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %c2 = disc.conv %r, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %c3 = disc.conv %c2, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %s = disc.add %c3, %c2 : (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %s : tensor<?x8x?x?xf32>
}

// conv1's value is also read by a loop nest (exp), conv2's is returned as
// well as read by conv3: neither is NHWC, and conv2/conv3 read NCHW. Only
// the plain calls remain (no flags word).
// MARK-LABEL: func.func @not_only_convs
// MARK-NOT: post_op_attrs
// MARK: disc.conv {{.*}}disc.library_call, feature_group_count
// MARK-NOT: post_op_attrs
// MARK: disc.exp
// MARK-NOT: post_op_attrs
// MARK: disc.conv {{.*}}disc.library_call, feature_group_count
// MARK-NOT: post_op_attrs
// MARK: disc.conv {{.*}}disc.library_call, feature_group_count
// MARK-NOT: post_op_attrs
// MARK: return
// CHECK-LABEL: func.func @not_only_convs
// CHECK-COUNT-3: call @disc_lib_conv2d(
// CHECK-NOT: _post
// CHECK: return
func.func @not_only_convs(%x: tensor<?x8x?x?xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c1 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %e = disc.exp %c1 : tensor<?x8x?x?xf32>
  %c2 = disc.conv %c1, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %c3 = disc.conv %c2, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x1x1xf32>) -> tensor<?x8x?x?xf32>
  return %e, %c2, %c3 : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>
}

// A Conv's value read as another Conv's weights stays NCHW; one read only
// by a ConvTranspose is NHWC, and the ConvTranspose (no post-ops) passes
// the flags word alone.
// MARK-LABEL: func.func @weights_and_deconv
// MARK-NOT: post_op_attrs
// MARK: disc.conv {{.*}}disc.library_call, feature_group_count
// MARK-NOT: post_op_attrs
// MARK: disc.conv {{.*}}disc.library_call, feature_group_count
// MARK: disc.conv {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 64>, feature_group_count
// MARK: disc.conv_transpose {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 128>, feature_group_count
// MARK: return
// CHECK-LABEL: func.func @weights_and_deconv
// CHECK: call @disc_lib_conv2d(
// CHECK: call @disc_lib_conv2d(
// CHECK: %[[F1:.+]] = arith.constant 64 : i64
// CHECK: call @disc_lib_conv2d_post0({{.*}}, %[[F1]])
// CHECK: %[[F2:.+]] = arith.constant 128 : i64
// CHECK: call @disc_lib_conv_transpose2d_post0({{.*}}, %[[F2]])
// CHECK: return
func.func @weights_and_deconv(%x: tensor<1x8x3x3xf32>, %y: tensor<1x8x5x5xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x8x6x6xf32>) {
  %w = disc.constant dense<0.5> : tensor<8x8x1x1xf32>
  %c1 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x8x3x3xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x3x3xf32>
  %c2 = disc.conv %y, %c1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<1x8x3x3xf32>) -> tensor<1x1x3x3xf32>
  %c3 = disc.conv %y, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x5x5xf32>
  %wt = disc.constant dense<0.5> : tensor<8x8x2x2xf32>
  %d = disc.conv_transpose %c3, %wt {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, feature_group_count = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<8x8x2x2xf32>) -> tensor<1x8x6x6xf32>
  return %c2, %d : tensor<1x1x3x3xf32>, tensor<1x8x6x6xf32>
}

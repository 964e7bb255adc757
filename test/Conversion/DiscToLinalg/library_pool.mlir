// MaxPool / AveragePool as oneDNN pooling calls (DiscToLinalg/LibraryCalls.h,
// DISC_LIB_POOL in docs/runtime-abi.md): `disc_lib_pool<k>d(x, y, kind,
// window..., strides..., pads_begin..., flags)`; the NHWC bits join Conv
// chains (a Conv's value read only by the pool is written NHWC, the pool
// reads it NHWC, and writes NHWC for a Conv that reads its result).
// RUN: disc-opt --disc-mark-library-calls %s | FileCheck %s --check-prefix=MARK
// RUN: disc-opt --disc-lower-to-linalg=library-calls=onednn -cse %s | FileCheck %s

// MARK-LABEL: func.func @conv_pool_conv
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 69>
// MARK: disc.pool max, {{.*}}disc.library_call, disc.post_op_attrs = array<i64: 192>
// MARK: disc.conv {{.*}}disc.post_op_attrs = array<i64: 128>
// CHECK-LABEL: func.func @conv_pool_conv
// CHECK-DAG: %[[K:.+]] = arith.constant 0 : i64
// CHECK-DAG: %[[W:.+]] = arith.constant 3 : i64
// CHECK-DAG: %[[S:.+]] = arith.constant 2 : i64
// CHECK-DAG: %[[P:.+]] = arith.constant 1 : i64
// CHECK-DAG: %[[F:.+]] = arith.constant 192 : i64
// CHECK: call @disc_lib_pool2d(%{{.+}}, %{{.+}}, %[[K]], %[[W]], %[[W]], %[[S]], %[[S]], %[[P]], %[[P]], %[[F]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @conv_pool_conv(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %w = disc.constant dense<0.5> : tensor<8x8x3x3xf32>
  %c1 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  %b = disc.constant dense<0.25> : tensor<8x1x1xf32>
  %a = disc.add %c1, %b : (tensor<?x8x?x?xf32>, tensor<8x1x1xf32>) -> tensor<?x8x?x?xf32>
  %z = disc.constant dense<0.0> : tensor<f32>
  %r = disc.max %a, %z : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %p = disc.pool max, %r {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %c2 = disc.conv %p, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %c2 : tensor<?x8x?x?xf32>
}

// Average pools: not counting the padding in ceil_mode (kind 2), counting
// it (kind 1). Kept as loops: an average counting the padding in
// ceil_mode, a dilated window, a pad as large as the window.
// MARK-LABEL: func.func @kinds
// MARK: disc.pool avg, {{.*}}disc.library_call
// MARK: disc.pool avg, {{.*}}disc.library_call
// MARK-NOT: disc.library_call
// MARK: return
// CHECK-LABEL: func.func @kinds
// CHECK: call @disc_lib_pool2d(%{{.+}}, %{{.+}}, %c2_i64
// CHECK: call @disc_lib_pool1d(%{{.+}}, %{{.+}}, %c1_i64
// CHECK-NOT: call @disc_lib_pool
// CHECK: return
func.func @kinds(%x: tensor<?x8x?x?xf32>, %y: tensor<?x8x?xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x8x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>) {
  %0 = disc.pool avg, %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %1 = disc.pool avg, %y {window = array<i64: 3>, strides = array<i64: 1>, dilations = array<i64: 1>, padding = array<i64: 1, 1>, count_include_pad = true} : (tensor<?x8x?xf32>) -> tensor<?x8x?xf32>
  %2 = disc.pool avg, %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = true, count_include_pad = true} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %3 = disc.pool max, %x {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  %4 = disc.pool max, %x {window = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 2, 0, 0, 0>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %0, %1, %2, %3, %4 : tensor<?x8x?x?xf32>, tensor<?x8x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>
}

// disc-form-conv-backward-filter: the filter gradient that disc.conv's
// gradient rule writes portably (both operands transposed, a convolution
// with strides and dilations swapped, sliced to the kernel and transposed
// back) becomes one disc.conv_backward_filter (oneDNN's backward weights).
// RUN: disc-opt %s --disc-form-conv-backward-filter | FileCheck %s
// RUN: disc-opt %s --disc-form-conv-backward-filter --disc-lower-to-linalg=library-calls=onednn | FileCheck %s --check-prefix=LOWER

// The call: input, output gradient, the filter buffer, then strides,
// dilations and pads.
// LOWER-LABEL: func.func @filter_gradient
// LOWER: %[[W:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16x8x3x3xf32>
// LOWER: call @disc_lib_conv_backward_filter2d(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}, %c2_i64{{(_[0-9]+)?}}, %c2_i64{{(_[0-9]+)?}}, %c1_i64{{(_[0-9]+)?}}, %c1_i64{{(_[0-9]+)?}}, %c1_i64{{(_[0-9]+)?}}, %c1_i64{{(_[0-9]+)?}}, %c1_i64{{(_[0-9]+)?}}, %c1_i64{{(_[0-9]+)?}})

// CHECK-LABEL: func.func @filter_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x?x?xf32>, %[[G:.*]]: tensor<?x16x?x?xf32>)
// CHECK-NEXT: %[[W:.*]] = disc.conv_backward_filter %[[X]], %[[G]] {dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x8x?x?xf32>, tensor<?x16x?x?xf32>) -> tensor<16x8x3x3xf32>
// CHECK-NEXT: return %[[W]]
func.func @filter_gradient(%x: tensor<?x8x?x?xf32>, %g: tensor<?x16x?x?xf32>) -> tensor<16x8x3x3xf32> {
  %xt = disc.transpose %x {permutation = array<i64: 1, 0, 2, 3>} : (tensor<?x8x?x?xf32>) -> tensor<8x?x?x?xf32>
  %gt = disc.transpose %g {permutation = array<i64: 1, 0, 2, 3>} : (tensor<?x16x?x?xf32>) -> tensor<16x?x?x?xf32>
  %c = disc.conv %xt, %gt {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<8x?x?x?xf32>, tensor<16x?x?x?xf32>) -> tensor<8x16x?x?xf32>
  %st = disc.constant dense<0> : tensor<2xi64>
  %en = disc.constant dense<3> : tensor<2xi64>
  %sp = disc.constant dense<1> : tensor<2xi64>
  %s = disc.slice %c, %st, %en, %sp {axes = array<i64: 2, 3>} : (tensor<8x16x?x?xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<8x16x3x3xf32>
  %w = disc.transpose %s {permutation = array<i64: 1, 0, 2, 3>} : (tensor<8x16x3x3xf32>) -> tensor<16x8x3x3xf32>
  return %w : tensor<16x8x3x3xf32>
}

// A slice that does not start at 0 is not a filter gradient: unchanged.
// CHECK-LABEL: func.func @not_a_gradient
// CHECK-NOT: disc.conv_backward_filter
// CHECK: disc.conv
// CHECK: return
func.func @not_a_gradient(%x: tensor<?x8x?x?xf32>, %g: tensor<?x16x?x?xf32>) -> tensor<16x8x3x3xf32> {
  %xt = disc.transpose %x {permutation = array<i64: 1, 0, 2, 3>} : (tensor<?x8x?x?xf32>) -> tensor<8x?x?x?xf32>
  %gt = disc.transpose %g {permutation = array<i64: 1, 0, 2, 3>} : (tensor<?x16x?x?xf32>) -> tensor<16x?x?x?xf32>
  %c = disc.conv %xt, %gt {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<8x?x?x?xf32>, tensor<16x?x?x?xf32>) -> tensor<8x16x?x?xf32>
  %st = disc.constant dense<1> : tensor<2xi64>
  %en = disc.constant dense<4> : tensor<2xi64>
  %sp = disc.constant dense<1> : tensor<2xi64>
  %s = disc.slice %c, %st, %en, %sp {axes = array<i64: 2, 3>} : (tensor<8x16x?x?xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<8x16x3x3xf32>
  %w = disc.transpose %s {permutation = array<i64: 1, 0, 2, 3>} : (tensor<8x16x3x3xf32>) -> tensor<16x8x3x3xf32>
  return %w : tensor<16x8x3x3xf32>
}

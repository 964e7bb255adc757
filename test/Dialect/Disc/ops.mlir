// RUN: disc-opt %s | disc-opt | FileCheck %s
// Round trip of every disc op with dynamic dims.

// CHECK-LABEL: func @elementwise
func.func @elementwise(%a: tensor<?x4xf32>, %b: tensor<4xf32>, %p: tensor<?x4xi1>) -> tensor<?x4xf32> {
  // CHECK: disc.exp %{{.*}} : tensor<?x4xf32>
  %0 = disc.exp %a : tensor<?x4xf32>
  // CHECK: disc.add %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %1 = disc.add %0, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: disc.compare lt
  %2 = disc.compare lt, %1, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xi1>
  // CHECK: disc.select
  %3 = disc.select %2, %1, %a : (tensor<?x4xi1>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: disc.is_nan
  %4 = disc.is_nan %3 : tensor<?x4xf32> -> tensor<?x4xi1>
  %5 = disc.convert %4 : (tensor<?x4xi1>) -> tensor<?x4xf32>
  return %5 : tensor<?x4xf32>
}

// CHECK-LABEL: func @linalg_like
func.func @linalg_like(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %a: tensor<?x?x64xf32>, %b: tensor<?x64x?xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x?x?xf32>, tensor<?x8xf32>) {
  // CHECK: disc.conv
  %0 = disc.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: disc.pool max
  %1 = disc.pool max, %0 {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32>
  // CHECK: disc.reduce mean
  %2 = disc.reduce mean, %1 {dimensions = array<i64: 2, 3>} : (tensor<?x8x?x?xf32>) -> tensor<?x8xf32>
  // CHECK: disc.dot_general
  %3 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>} : (tensor<?x?x64xf32>, tensor<?x64x?xf32>) -> tensor<?x?x?xf32>
  return %1, %3, %2 : tensor<?x8x?x?xf32>, tensor<?x?x?xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<?x?x128xf32>, %i: tensor<?x?xi64>, %e: tensor<1000x128xf32>) -> (tensor<?x?x4x32xf32>, tensor<?x?x128xf32>, tensor<?xi64>) {
  // CHECK: disc.shape_of
  %s = disc.shape_of %x : tensor<?x?x128xf32> -> tensor<3xi64>
  %c = disc.constant dense<[4, 32]> : tensor<2xi64>
  %one = disc.constant dense<[0, 1]> : tensor<2xi64>
  %head = disc.gather %s, %one {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  // CHECK: disc.concatenate
  %t = disc.concatenate %head, %c {dimension = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  // CHECK: disc.dynamic_reshape
  %r = disc.dynamic_reshape %x, %t : (tensor<?x?x128xf32>, tensor<4xi64>) -> tensor<?x?x4x32xf32>
  // CHECK: disc.gather
  %g = disc.gather %e, %i {axis = 0 : i64} : (tensor<1000x128xf32>, tensor<?x?xi64>) -> tensor<?x?x128xf32>
  %z = disc.constant dense<0> : tensor<i64>
  %n = disc.constant dense<5> : tensor<i64>
  %d = disc.constant dense<1> : tensor<i64>
  // CHECK: disc.range
  %rg = disc.range %z, %n, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r, %g, %rg : tensor<?x?x4x32xf32>, tensor<?x?x128xf32>, tensor<?xi64>
}

// CHECK-LABEL: func @movement
func.func @movement(%x: tensor<?x?xf32>, %p: tensor<4xi64>, %v: tensor<f32>, %st: tensor<1xi64>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  // CHECK: disc.transpose
  %0 = disc.transpose %x {permutation = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: disc.pad reflect
  %1 = disc.pad reflect, %x, %p, %v : (tensor<?x?xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x?xf32>
  // CHECK: disc.slice
  %2 = disc.slice %x, %st, %st, %st {axes = array<i64: 1>} : (tensor<?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  %s = disc.shape_of %x : tensor<?x?xf32> -> tensor<2xi64>
  // CHECK: disc.expand
  %3 = disc.expand %v, %s : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0, %1, %2, %3 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func @resize_gather_scatter
func.func @resize_gather_scatter(%x: tensor<?x3x?x?xf32>, %sz: tensor<4xi64>, %sc: tensor<4xf64>, %roi: tensor<8xf64>, %i: tensor<?x?xi64>, %j: tensor<?x1xi64>, %y: tensor<?x?xf32>) -> (tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xi64>) {
  // CHECK: disc.resize "cubic", %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 2, 3>, coordinate_transformation_mode = "align_corners", cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true}
  %0 = disc.resize "cubic", %x, %sz, %sc {axes = array<i64: 2, 3>, coordinate_transformation_mode = "align_corners", cubic_coeff_a = -0.5 : f64, exclude_outside = true} : (tensor<?x3x?x?xf32>, tensor<4xi64>, tensor<4xf64>) -> tensor<?x3x?x?xf32>
  // CHECK: disc.resize "linear", %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 2, 3>, coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 1.000000e+01 : f64}
  %1 = disc.resize "linear", %x, %sz, %sc, %roi {axes = array<i64: 2, 3>, coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f64} : (tensor<?x3x?x?xf32>, tensor<4xi64>, tensor<4xf64>, tensor<8xf64>) -> tensor<?x3x?x?xf32>
  // CHECK: disc.gather_elements
  %2 = disc.gather_elements %y, %i {axis = 0 : i64} : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  // CHECK: disc.gather_nd
  %3 = disc.gather_nd %y, %j {batch_dims = 0 : i64} : (tensor<?x?xf32>, tensor<?x1xi64>) -> tensor<?x?xf32>
  // CHECK: disc.scatter_elements
  %4 = disc.scatter_elements %y, %i, %2 {axis = 1 : i64, reduction = "mul"} : (tensor<?x?xf32>, tensor<?x?xi64>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: disc.scatter_nd
  %5 = disc.scatter_nd %y, %j, %3 : (tensor<?x?xf32>, tensor<?x1xi64>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: disc.arg_sort
  %6 = disc.arg_sort %y {dimension = 1 : i64, descending = true} : (tensor<?x?xf32>) -> tensor<?x?xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x3x?x?xf32>, tensor<?x3x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xi64>
}

// CHECK-LABEL: func @random_uniform
func.func @random_uniform(%s: tensor<2xi64>) -> tensor<?x?xf64> {
  // CHECK: disc.random_uniform %{{.*}} {seed = 7 : i64} : (tensor<2xi64>) -> tensor<?x?xf64>
  %0 = disc.random_uniform %s {seed = 7 : i64} : (tensor<2xi64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}

// CHECK-LABEL: func @grid_sample
func.func @grid_sample(%x: tensor<?x?x?x?xf32>, %g: tensor<?x?x?x2xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: disc.grid_sample %{{.*}}, %{{.*}} {align_corners = false, mode = "nearest", padding_mode = "border"}
  %0 = disc.grid_sample %x, %g {mode = "nearest", padding_mode = "border", align_corners = false} : (tensor<?x?x?x?xf32>, tensor<?x?x?x2xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func @conv_transpose_scan_shift
func.func @conv_transpose_scan_shift(%x: tensor<?x8x?x?xf32>, %w: tensor<8x4x3x3xf32>, %a: tensor<?x?xi32>, %s: tensor<?x?xi32>) -> (tensor<?x4x?x?xf32>, tensor<?x?xi32>, tensor<?x?xi32>, tensor<?x?xi32>) {
  // CHECK: disc.conv_transpose
  %0 = disc.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, feature_group_count = 1 : i64} : (tensor<?x8x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<?x4x?x?xf32>
  // CHECK: disc.cumsum
  %1 = disc.cumsum %a {dimension = 1 : i64, exclusive = true, reverse = true} : (tensor<?x?xi32>) -> tensor<?x?xi32>
  // CHECK: disc.shift_left
  %2 = disc.shift_left %a, %s : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  // CHECK: disc.shift_right
  %3 = disc.shift_right %a, %s : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  return %0, %1, %2, %3 : tensor<?x4x?x?xf32>, tensor<?x?xi32>, tensor<?x?xi32>, tensor<?x?xi32>
}

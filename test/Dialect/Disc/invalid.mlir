// RUN: disc-opt %s -split-input-file -verify-diagnostics

func.func @bad_broadcast(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand dim 0 of size 3 cannot broadcast to result dim 0 of size 4}}
  %0 = disc.add %a, %b : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_rank(%a: tensor<3xf32>, %b: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result rank 1 does not match broadcast rank 2}}
  %0 = disc.mul %a, %b : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @bad_conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{input channels 4 != filter channels 3 * groups 1}}
  %0 = disc.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, feature_group_count = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @bad_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{permutation entry 0 repeated}}
  %0 = disc.transpose %x {permutation = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_reduce(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dimensions entry 2 out of range [0, 2)}}
  %0 = disc.reduce sum, %x {dimensions = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @bad_reshape(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<4x2xf32> {
  // expected-error @+1 {{element count changes from 6 to 8}}
  %0 = disc.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @bad_dot(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contracting dims 1 and 0 have different sizes}}
  %0 = disc.dot_general %a, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @bad_resize_mode(%x: tensor<1x2xf32>, %sz: tensor<2xi64>, %sc: tensor<2xf64>) -> tensor<1x4xf32> {
  // expected-error @+1 {{unknown coordinate_transformation_mode 'corners'}}
  %0 = disc.resize "linear", %x, %sz, %sc {axes = array<i64: 1>, coordinate_transformation_mode = "corners"} : (tensor<1x2xf32>, tensor<2xi64>, tensor<2xf64>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @bad_resize_axes(%x: tensor<1x2xf32>, %sz: tensor<2xi64>, %sc: tensor<2xf64>) -> tensor<1x4xf32> {
  // expected-error @+1 {{dim 1 is not in axes but changes size from 2 to 4}}
  %0 = disc.resize "nearest", %x, %sz, %sc {axes = array<i64: 0>, coordinate_transformation_mode = "asymmetric"} : (tensor<1x2xf32>, tensor<2xi64>, tensor<2xf64>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @bad_resize_roi(%x: tensor<1x2xf32>, %sz: tensor<2xi64>, %sc: tensor<2xf64>) -> tensor<1x4xf32> {
  // expected-error @+1 {{tf_crop_and_resize needs a roi operand}}
  %0 = disc.resize "linear", %x, %sz, %sc {axes = array<i64: 1>, coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x2xf32>, tensor<2xi64>, tensor<2xf64>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @bad_gather_elements(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{indices rank must equal data rank}}
  %0 = disc.gather_elements %x, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @bad_gather_nd(%x: tensor<2x3xf32>, %i: tensor<4x2xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{indices last dim 2 does not match the result rank (expects 1)}}
  %0 = disc.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @bad_scatter_reduction(%x: tensor<2x3xf32>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{unknown reduction 'max'}}
  %0 = disc.scatter_elements %x, %i, %x {axis = 0 : i64, reduction = "max"} : (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_scatter_nd(%x: tensor<2x3xf32>, %i: tensor<4x2xi64>, %u: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{indices last dim 2 does not match the updates rank (expects 1)}}
  %0 = disc.scatter_nd %x, %i, %u : (tensor<2x3xf32>, tensor<4x2xi64>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_gather_index_type(%x: tensor<2x3xf32>, %i: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{indices must be i32 or i64}}
  %0 = disc.gather %x, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_gather_elements_axis(%x: tensor<2x3xf32>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 out of range}}
  %0 = disc.gather_elements %x, %i {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_gather_nd_tuple(%x: tensor<2x3xf32>, %i: tensor<4x3xi64>) -> tensor<f32> {
  // expected-error @+1 {{result rank implies an index tuple of 3 entries, outside [1, 2]}}
  %0 = disc.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<4x3xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @bad_scatter_elements_updates(%x: tensor<2x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xi32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{element types must match, got 'f32' and 'i32'}}
  %0 = disc.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_scatter_nd_scalar_indices(%x: tensor<2x3xf32>, %i: tensor<i64>, %u: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{indices must have rank >= 1}}
  %0 = disc.scatter_nd %x, %i, %u : (tensor<2x3xf32>, tensor<i64>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_arg_sort(%x: tensor<2x3xf32>) -> tensor<2x3xi64> {
  // expected-error @+1 {{dimension 2 out of range}}
  %0 = disc.arg_sort %x {dimension = 2 : i64, descending = true} : (tensor<2x3xf32>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

func.func @bad_random_uniform(%s: tensor<3xi64>) -> tensor<?x?xf64> {
  // expected-error @+1 {{shape has 3 entries for a result of rank 2}}
  %0 = disc.random_uniform %s {seed = 0 : i64} : (tensor<3xi64>) -> tensor<?x?xf64>
  return %0 : tensor<?x?xf64>
}

// -----

func.func @bad_grid_sample(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{grid must end in a dim of size 2}}
  %0 = disc.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros", align_corners = false} : (tensor<1x1x4x4xf32>, tensor<1x2x2x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @bad_conv_transpose_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<1x3x10x10xf32> {
  // expected-error @+1 {{input channels 4 != filter dim 0 (6)}}
  %0 = disc.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>, feature_group_count = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return %0 : tensor<1x3x10x10xf32>
}

// -----

func.func @bad_conv_transpose_output_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32> {
  // expected-error @+1 {{expects 2 strides, dilations and output_padding entries}}
  %0 = disc.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0>, feature_group_count = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return %0 : tensor<1x3x10x10xf32>
}

// -----

func.func @bad_cumsum_dim(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dimension 2 out of range [0, 2)}}
  %0 = disc.cumsum %x {dimension = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @bad_shift(%a: tensor<3xi32>, %b: tensor<3xi64>) -> tensor<3xi32> {
  // expected-error @+1 {{element types must match}}
  %0 = disc.shift_left %a, %b : (tensor<3xi32>, tensor<3xi64>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

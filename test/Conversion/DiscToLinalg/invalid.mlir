// RUN: disc-opt --disc-lower-to-linalg --split-input-file --verify-diagnostics %s

func.func @exp_int(%x: tensor<?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'disc.exp' op cannot be lowered to linalg yet: unsupported element type 'i32'}}
  %0 = disc.exp %x : tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

func.func @and_float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'disc.and' op cannot be lowered to linalg yet: unsupported element type 'f32'}}
  %0 = disc.and %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @grouped_conv_dynamic_filter_channels(%x: tensor<?x?x?xf32>, %w: tensor<6x?x3xf32>) -> tensor<?x6x?xf32> {
  // expected-error @+1 {{'disc.conv' op cannot be lowered to linalg yet: grouped convolution needs static channel counts}}
  %0 = disc.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, padding = array<i64: 0, 0>, feature_group_count = 2 : i64} : (tensor<?x?x?xf32>, tensor<6x?x3xf32>) -> tensor<?x6x?xf32>
  return %0 : tensor<?x6x?xf32>
}

// -----

func.func @avg_pool_int(%x: tensor<?x4x?xi32>) -> tensor<?x4x?xi32> {
  // expected-error @+1 {{'disc.pool' op cannot be lowered to linalg yet: unsupported element type 'i32'}}
  %0 = disc.pool avg, %x {window = array<i64: 2>, strides = array<i64: 1>, dilations = array<i64: 1>, padding = array<i64: 0, 0>} : (tensor<?x4x?xi32>) -> tensor<?x4x?xi32>
  return %0 : tensor<?x4x?xi32>
}

// -----

func.func @logistic_int(%x: tensor<?xi64>) -> tensor<?xi64> {
  // expected-error @+1 {{'disc.logistic' op cannot be lowered to linalg yet: unsupported element type 'i64'}}
  %0 = disc.logistic %x : tensor<?xi64>
  return %0 : tensor<?xi64>
}

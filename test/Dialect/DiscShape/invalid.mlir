// RUN: disc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{empty range [4, 2]}}
disc_shape.symbolic_dim @S0 {min = 4, max = 2}

// -----

// expected-error @+1 {{likely value 9 outside the range}}
disc_shape.symbolic_dim @S0 {min = 1, max = 8, likely = 9}

// -----

// expected-error @+1 {{reference to undefined symbolic dim @S9}}
disc_shape.constraint "eq", @S9, 3

// -----

disc_shape.symbolic_dim @S0
// expected-error @+1 {{kind must be "eq" or "ge"}}
disc_shape.constraint "lt", @S0, 3

// -----

func.func @dangling(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{reference to undefined symbolic dim @S7}}
  %0 = disc.exp %arg0 {disc_shape.dims = [[@S7]]} : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @not_a_dim(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{@not_a_dim does not name a disc_shape.symbolic_dim}}
  %0 = disc.exp %arg0 {disc_shape.dims = [[@not_a_dim]]} : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

disc_shape.symbolic_dim @S0
func.func @rank(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{disc_shape.dims has 1 dims but the type 'tensor<?x4xf32>' has rank 2}}
  %0 = disc.exp %arg0 {disc_shape.dims = [[@S0]]} : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

disc_shape.symbolic_dim @S0
func.func @static_mismatch(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{dim annotation 5 contradicts the static size 4}}
  %0 = disc.exp %arg0 {disc_shape.dims = [[@S0, 5]]} : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

disc_shape.symbolic_dim @S0
func.func @static_expr_mismatch(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{dim annotation 3 contradicts the static size 4}}
  %0 = disc.exp %arg0 {disc_shape.dims = [[@S0, #disc_shape.expr<()[s0] -> (3), [@S0]>]]} : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

disc_shape.symbolic_dim @S0 {min = 2, max = 2}
func.func @static_range_mismatch(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{symbolic dim @S0 with range [2, 2] contradicts the static size 4}}
  %0 = disc.exp %arg0 {disc_shape.dims = [[@S0]]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @results(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{disc_shape.dims has 2 entries but the op has 1 results}}
  %0 = disc.exp %arg0 {disc_shape.dims = [[4], [4]]} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

disc_shape.symbolic_dim @S0
// expected-error @+1 {{map has 2 symbols but 1 symbolic dims are listed}}
disc_shape.constraint "eq", @S0, #disc_shape.expr<()[s0, s1] -> (s0 * s1), [@S0]>

// -----

// expected-error @+1 {{disc_shape.dims has 2 dims but the type 'tensor<?xf32>' has rank 1}}
func.func @arg(%arg0: tensor<?xf32> {disc_shape.dims = [3, 4]}) {
  return
}

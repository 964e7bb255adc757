// RUN: disc-opt %s | FileCheck %s
// RUN: disc-opt %s | disc-opt | FileCheck %s
// RUN: disc-opt %s --cse --canonicalize | FileCheck %s --check-prefix=CANON

// CHECK: disc_shape.symbolic_dim @S0 {knownNonNegative, knownNonOne, likely = 128 : i64, max = 512 : i64, min = 1 : i64, name = "seq"}
disc_shape.symbolic_dim @S0 {name = "seq", min = 1, max = 512, likely = 128, knownNonNegative, knownNonOne}
// CHECK: disc_shape.symbolic_dim @S1 {name = "batch"}
disc_shape.symbolic_dim @S1 {name = "batch"}
disc_shape.symbolic_dim @S2
// CHECK: disc_shape.constraint "eq", @S2, #disc_shape.expr<()[s0, s1] -> (s0 * s1), [@S0, @S1]>
disc_shape.constraint "eq", @S2, #disc_shape.expr<()[s0, s1] -> (s0 * s1), [@S0, @S1]>
// CHECK: disc_shape.constraint "ge", @S0, 1
disc_shape.constraint "ge", @S0, 1

// CHECK-LABEL: func.func @annotated
// CHECK-SAME: disc_shape.dims = [@S1, @S0]
// CANON-LABEL: func.func @annotated
func.func @annotated(%arg0: tensor<?x?xf32> {disc_shape.dims = [@S1, @S0]}) -> tensor<?x?xf32> {
  // CHECK: disc.exp %arg0 {disc_shape.dims = {{\[\[}}@S1, @S0]]}
  // CANON: disc.exp %arg0 {disc_shape.dims = {{\[\[}}@S1, @S0]]}
  %0 = disc.exp %arg0 {disc_shape.dims = [[@S1, @S0]]} : tensor<?x?xf32>
  %s = disc.shape_of %0 {disc_shape.dims = [[2]]} : tensor<?x?xf32> -> tensor<2xi64>
  // CHECK: #disc_shape.expr<()[s0] -> (s0 floordiv 2 + 1), [@S0]>
  %1 = disc.dynamic_reshape %0, %s {disc_shape.dims = [[@S1, #disc_shape.expr<()[s0] -> (s0 floordiv 2 + 1), [@S0]>]]} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// RUN: disc-opt %s -split-input-file --disc-shape-simplify | FileCheck %s
// RUN: disc-opt %s -split-input-file --disc-shape-propagate --disc-shape-simplify --disc-strip-shape-annotations | FileCheck %s --check-prefix=STRIP

// A reshape whose target shape is a known constant becomes static; the
// function result type follows; shape_of of it folds to a constant.
// CHECK-LABEL: func.func @static_reshape
// CHECK-SAME: -> (tensor<2x6xf32>, tensor<2xi64>)
// CHECK: %[[R:.*]] = disc.dynamic_reshape {{.*}} -> tensor<2x6xf32>
// CHECK: %[[S:.*]] = disc.constant {{.*}}dense<[2, 6]> : tensor<2xi64>
// CHECK: return %[[R]], %[[S]] : tensor<2x6xf32>, tensor<2xi64>
// STRIP-LABEL: func.func @static_reshape
// STRIP-NOT: disc_shape
func.func @static_reshape(%x: tensor<?x4xf32> {disc.dims = ["b", 4]}) -> (tensor<?x?xf32>, tensor<2xi64>) {
  %w = disc.constant dense<0.0> : tensor<2x6xf32>
  %s = disc.shape_of %w : tensor<2x6xf32> -> tensor<2xi64>
  %r = disc.dynamic_reshape %w, %s : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %t = disc.shape_of %r : tensor<?x?xf32> -> tensor<2xi64>
  return %r, %t : tensor<?x?xf32>, tensor<2xi64>
}

// -----

// A dim specialized by the user (min = max) becomes static everywhere.
// CHECK: disc_shape.symbolic_dim @batch {{{.*}}max = 8 : i64, min = 8 : i64, name = "batch"}
// CHECK-LABEL: func.func @specialized
// CHECK-SAME: (%arg0: tensor<8x?xf32> {{.*}}disc_shape.dims = [8, @seq]
// CHECK-SAME: -> tensor<8x?xf32>
// CHECK: disc.exp %arg0 {{.*}}: tensor<8x?xf32>
disc_shape.symbolic_dim @user_batch {name = "batch", min = 8, max = 8}
func.func @specialized(%x: tensor<?x?xf32> {disc.dims = ["batch", "seq"]}) -> tensor<?x?xf32> {
  %0 = disc.exp %x : tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Equal dims are merged: m2 == m from the concatenation along dim 1, so
// the product is over one symbol; the merge is kept as a constraint.
// CHECK-LABEL: func.func @merge
// CHECK: disc.concatenate {{.*}}disc_shape.dims = {{\[\[}}@m, 8]]
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}#disc_shape.expr<()[s0] -> (s0 * 8), [@m]>]]
// CHECK: disc_shape.constraint "eq", @m2, @m
func.func @merge(%a: tensor<?x4xf32> {disc.dims = ["m", 4]}, %b: tensor<?x4xf32> {disc.dims = ["m2", 4]}) -> tensor<?xf32> {
  %0 = disc.concatenate %a, %b {dimension = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %m1 = disc.constant dense<-1> : tensor<1xi64>
  %1 = disc.dynamic_reshape %0, %m1 : (tensor<?x8xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// Products: c*4 == a (the reshape, with c a fresh symbol) and c == b (the
// concatenation along dim 1), so a == b*4 and the two operands share a
// symbol after simplify.
// CHECK-LABEL: func.func @products
// CHECK: disc.dynamic_reshape {{.*}}disc_shape.dims = {{\[\[}}@b, 4]]
// CHECK: disc.concatenate {{.*}}disc_shape.dims = {{\[\[}}@b, 8]]
func.func @products(%x: tensor<?xf32> {disc.dims = ["a"]}, %y: tensor<?x4xf32> {disc.dims = ["b", 4]}) -> tensor<?x8xf32> {
  %shape = disc.constant dense<[-1, 4]> : tensor<2xi64>
  %0 = disc.dynamic_reshape %x, %shape : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %1 = disc.concatenate %0, %y {dimension = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// disc-fold-transposed-concat: a channel shuffle (concatenate G tensors
// along dim k, split dim k into [G, S], move the group dim inward) becomes
// one concatenation of the inputs, each with a unit dim inserted where the
// group dim goes.
// RUN: disc-opt %s --disc-fold-transposed-concat --split-input-file | FileCheck %s

// A channel shuffle of two static groups: each input gets a unit dim where
// the transpose puts the group dim, and they are concatenated there.
// CHECK-LABEL: func.func @static_shuffle
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x3x3xf32>, %[[B:.*]]: tensor<2x4x3x3xf32>)
// CHECK-NEXT: %[[SA:.*]] = disc.constant dense<[2, 4, 1, 3, 3]> : tensor<5xi64>
// CHECK-NEXT: %[[RA:.*]] = disc.dynamic_reshape %[[A]], %[[SA]] {allow_zero = true} : (tensor<2x4x3x3xf32>, tensor<5xi64>) -> tensor<2x4x1x3x3xf32>
// CHECK-NEXT: %[[SB:.*]] = disc.constant dense<[2, 4, 1, 3, 3]> : tensor<5xi64>
// CHECK-NEXT: %[[RB:.*]] = disc.dynamic_reshape %[[B]], %[[SB]] {allow_zero = true} : (tensor<2x4x3x3xf32>, tensor<5xi64>) -> tensor<2x4x1x3x3xf32>
// CHECK-NEXT: %[[C:.*]] = disc.concatenate %[[RA]], %[[RB]] {dimension = 2 : i64} : (tensor<2x4x1x3x3xf32>, tensor<2x4x1x3x3xf32>) -> tensor<2x4x2x3x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @static_shuffle(%a: tensor<2x4x3x3xf32>, %b: tensor<2x4x3x3xf32>) -> tensor<2x4x2x3x3xf32> {
  %c = disc.concatenate %a, %b {dimension = 1 : i64} : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x8x3x3xf32>
  %s = disc.constant dense<[2, 2, 4, 3, 3]> : tensor<5xi64>
  %r = disc.dynamic_reshape %c, %s : (tensor<2x8x3x3xf32>, tensor<5xi64>) -> tensor<2x2x4x3x3xf32>
  %t = disc.transpose %r {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<2x2x4x3x3xf32>) -> tensor<2x4x2x3x3xf32>
  return %t : tensor<2x4x2x3x3xf32>
}

// -----

// Dynamic N, H, W as torch.onnx exports the shuffle (the reshape's shape
// read from the concatenation): the dims come from each input's shape_of.
// A view slice is sliced again from its operand with the unit dim
// inserted, so the reshape stays a view of a dense buffer; the
// concatenation and its shape arithmetic are gone.
// CHECK-LABEL: func.func @dynamic_shuffle
// CHECK-SAME: (%[[X:.*]]: tensor<?x8x?x?xf32>, %[[B:.*]]: tensor<?x4x?x?xf32>)
// CHECK-DAG: %[[ST:.*]] = disc.constant dense<0> : tensor<1xi64>
// CHECK-DAG: %[[EN:.*]] = disc.constant dense<4> : tensor<1xi64>
// CHECK-DAG: %[[SP:.*]] = disc.constant dense<1> : tensor<1xi64>
// CHECK: %[[DX:.*]] = disc.shape_of %[[X]]
// CHECK: %[[VX:.*]] = disc.concatenate %{{.*}}, %{{.*}}, %{{.*}} {dimension = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<5xi64>
// CHECK-NEXT: %[[RX:.*]] = disc.dynamic_reshape %[[X]], %[[VX]] {allow_zero = true} : (tensor<?x8x?x?xf32>, tensor<5xi64>) -> tensor<?x8x1x?x?xf32>
// CHECK-NEXT: %[[A:.*]] = disc.slice %[[RX]], %[[ST]], %[[EN]], %[[SP]] {axes = array<i64: 1>} : (tensor<?x8x1x?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x1x?x?xf32>
// CHECK-NEXT: %[[DB:.*]] = disc.shape_of %[[B]]
// CHECK: %[[RB:.*]] = disc.dynamic_reshape %[[B]], %{{.*}} {allow_zero = true} : (tensor<?x4x?x?xf32>, tensor<5xi64>) -> tensor<?x4x1x?x?xf32>
// CHECK-NEXT: %[[C:.*]] = disc.concatenate %[[A]], %[[RB]] {dimension = 2 : i64} : (tensor<?x4x1x?x?xf32>, tensor<?x4x1x?x?xf32>) -> tensor<?x4x2x?x?xf32>
// CHECK-NEXT: return %[[C]]
// CHECK-NOT: disc.transpose
func.func @dynamic_shuffle(%x: tensor<?x8x?x?xf32>, %b: tensor<?x4x?x?xf32>) -> tensor<?x4x2x?x?xf32> {
  %st = disc.constant dense<0> : tensor<1xi64>
  %en = disc.constant dense<4> : tensor<1xi64>
  %sp = disc.constant dense<1> : tensor<1xi64>
  %a = disc.slice %x, %st, %en, %sp {axes = array<i64: 1>} : (tensor<?x8x?x?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x?xf32>
  %c = disc.concatenate %a, %b {dimension = 1 : i64} : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x8x?x?xf32>
  %shape = disc.shape_of %c : tensor<?x8x?x?xf32> -> tensor<4xi64>
  %i0 = disc.constant dense<0> : tensor<1xi64>
  %n = disc.gather %shape, %i0 {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  %i23 = disc.constant dense<[2, 3]> : tensor<2xi64>
  %hw = disc.gather %shape, %i23 {axis = 0 : i64} : (tensor<4xi64>, tensor<2xi64>) -> tensor<2xi64>
  %gs = disc.constant dense<[2, 4]> : tensor<2xi64>
  %s = disc.concatenate %n, %gs, %hw {dimension = 0 : i64} : (tensor<1xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<5xi64>
  %r = disc.dynamic_reshape %c, %s : (tensor<?x8x?x?xf32>, tensor<5xi64>) -> tensor<?x2x4x?x?xf32>
  %t = disc.transpose %r {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<?x2x4x?x?xf32>) -> tensor<?x4x2x?x?xf32>
  return %t : tensor<?x4x2x?x?xf32>
}

// -----

// The transpose also swaps H and W: not a shuffle, unchanged.
// CHECK-LABEL: func.func @other_dims_move
// CHECK: disc.concatenate %{{.*}}, %{{.*}} {dimension = 1 : i64}
// CHECK: disc.transpose
func.func @other_dims_move(%a: tensor<2x4x3x5xf32>, %b: tensor<2x4x3x5xf32>) -> tensor<2x4x2x5x3xf32> {
  %c = disc.concatenate %a, %b {dimension = 1 : i64} : (tensor<2x4x3x5xf32>, tensor<2x4x3x5xf32>) -> tensor<2x8x3x5xf32>
  %s = disc.constant dense<[2, 2, 4, 3, 5]> : tensor<5xi64>
  %r = disc.dynamic_reshape %c, %s : (tensor<2x8x3x5xf32>, tensor<5xi64>) -> tensor<2x2x4x3x5xf32>
  %t = disc.transpose %r {permutation = array<i64: 0, 2, 1, 4, 3>} : (tensor<2x2x4x3x5xf32>) -> tensor<2x4x2x5x3xf32>
  return %t : tensor<2x4x2x5x3xf32>
}

// -----

// The split dim's outer part (4) is not the number of inputs (2): each
// group is not one input, unchanged.
// CHECK-LABEL: func.func @groups_not_inputs
// CHECK: disc.concatenate %{{.*}}, %{{.*}} {dimension = 1 : i64}
// CHECK: disc.transpose
func.func @groups_not_inputs(%a: tensor<2x4x3x3xf32>, %b: tensor<2x4x3x3xf32>) -> tensor<2x2x4x3x3xf32> {
  %c = disc.concatenate %a, %b {dimension = 1 : i64} : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x8x3x3xf32>
  %s = disc.constant dense<[2, 4, 2, 3, 3]> : tensor<5xi64>
  %r = disc.dynamic_reshape %c, %s : (tensor<2x8x3x3xf32>, tensor<5xi64>) -> tensor<2x4x2x3x3xf32>
  %t = disc.transpose %r {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<2x4x2x3x3xf32>) -> tensor<2x2x4x3x3xf32>
  return %t : tensor<2x2x4x3x3xf32>
}

// -----

// The concatenation is also a result: unchanged.
// CHECK-LABEL: func.func @concat_read_twice
// CHECK: disc.concatenate %{{.*}}, %{{.*}} {dimension = 1 : i64}
// CHECK: disc.transpose
func.func @concat_read_twice(%a: tensor<2x4x3x3xf32>, %b: tensor<2x4x3x3xf32>) -> (tensor<2x4x2x3x3xf32>, tensor<2x8x3x3xf32>) {
  %c = disc.concatenate %a, %b {dimension = 1 : i64} : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x8x3x3xf32>
  %s = disc.constant dense<[2, 2, 4, 3, 3]> : tensor<5xi64>
  %r = disc.dynamic_reshape %c, %s : (tensor<2x8x3x3xf32>, tensor<5xi64>) -> tensor<2x2x4x3x3xf32>
  %t = disc.transpose %r {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<2x2x4x3x3xf32>) -> tensor<2x4x2x3x3xf32>
  return %t, %c : tensor<2x4x2x3x3xf32>, tensor<2x8x3x3xf32>
}

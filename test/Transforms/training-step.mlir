// disc-build-training-step (docs/training.md): the marked initializers the
// loss depends on become state inputs with their initial values in public
// globals; the gradients come from the ops' rules in reverse order; the
// optimizer writes the new state as outputs.
// RUN: disc-opt %s --disc-build-training-step="loss=loss optimizer=none" | FileCheck %s --check-prefix=GRAD
// RUN: disc-opt %s --disc-build-training-step="loss=loss optimizer=sgd lr=0.5" | FileCheck %s --check-prefix=SGD
// RUN: disc-opt %s --disc-build-training-step="loss=loss optimizer=adamw" | FileCheck %s --check-prefix=ADAMW
// RUN: not disc-opt %s --disc-build-training-step="loss=nope" 2>&1 | FileCheck %s --check-prefix=NOLOSS
// RUN: not disc-opt %s --disc-build-training-step="loss=loss trainable=w9" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// loss = sum(tanh(x . w) + b), w [4, 3] and b [3] trained; `unused` is not
// on the loss's path and stays a constant.
// GRAD: memref.global "public" constant @disc_state_init_0 : memref<4x3xf32>
// GRAD: memref.global "public" constant @disc_state_init_1 : memref<3xf32>
// GRAD-LABEL: func.func @mlp
// GRAD-SAME: %[[X:.*]]: tensor<?x4xf32> {disc.dims = ["B", 4], disc.name = "x"}
// GRAD-SAME: %[[W:.*]]: tensor<4x3xf32> {disc.dims = [4, 3], disc.name = "w", disc.state, disc.state_init = @disc_state_init_0}
// GRAD-SAME: %[[B:.*]]: tensor<3xf32> {disc.dims = [3], disc.name = "b", disc.state, disc.state_init = @disc_state_init_1}
// GRAD-SAME: -> (tensor<f32> {disc.name = "loss"}, tensor<?x3xf32> {disc.name = "other"}, tensor<4x3xf32> {disc.dims = [4, 3], disc.name = "grad_w"}, tensor<3xf32> {disc.dims = [3], disc.name = "grad_b"})
// GRAD-SAME: attributes {disc.loss = "loss"}
// GRAD: %[[U:.*]] = disc.constant dense<2.000000e+00> : tensor<3xf32>
// GRAD-NOT: disc.param
// GRAD: %[[H:.*]] = disc.dot_general %[[X]], %[[W]]
// GRAD: %[[T:.*]] = disc.tanh %[[H]]
// The gradient of tanh is g * (1 - t * t); of the dot product, x^T . g.
// GRAD: %[[TT:.*]] = disc.mul %[[T]], %[[T]]
// GRAD: %[[D:.*]] = disc.sub %{{.*}}, %[[TT]]
// GRAD: %[[GH:.*]] = disc.mul %{{.*}}, %[[D]]
// GRAD: %[[GW:.*]] = disc.dot_general %[[GH]], %[[X]] {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x3xf32>, tensor<?x4xf32>) -> tensor<3x4xf32>
// GRAD: %[[GWT:.*]] = disc.transpose %[[GW]] {permutation = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// GRAD: return %{{.*}}, %{{.*}}, %[[GWT]], %{{.*}} :

// SGD-LABEL: func.func @mlp
// SGD-SAME: -> (tensor<f32> {disc.name = "loss"}, tensor<?x3xf32> {disc.name = "other"}, tensor<4x3xf32> {disc.dims = [4, 3], disc.name = "w", disc.state_update = "w"}, tensor<3xf32> {disc.dims = [3], disc.name = "b", disc.state_update = "b"})
// SGD: %[[LR:.*]] = disc.constant dense<5.000000e-01> : tensor<f32>
// SGD: %[[STEP:.*]] = disc.mul %{{.*}}, %[[LR]]
// SGD: disc.sub %arg1, %[[STEP]] : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>

// ADAMW-LABEL: func.func @mlp
// ADAMW-SAME: {disc.dims = [], disc.name = "adamw.step", disc.state}
// ADAMW-SAME: {disc.dims = [4, 3], disc.name = "w.exp_avg", disc.state}
// ADAMW-SAME: {disc.dims = [4, 3], disc.name = "w.exp_avg_sq", disc.state}
// ADAMW-SAME: disc.name = "adamw.step", disc.state_update = "adamw.step"
// ADAMW-SAME: disc.name = "w.exp_avg", disc.state_update = "w.exp_avg"
// ADAMW-SAME: disc.name = "w", disc.state_update = "w"

// NOLOSS: error: the model has no output 'nope' (outputs: 'loss', 'other')
// UNKNOWN: error: 'w9' is not a float initializer of the model (--trainable/--frozen)
func.func @mlp(%x: tensor<?x4xf32> {disc.name = "x", disc.dims = ["B", 4]})
    -> (tensor<f32> {disc.name = "loss"}, tensor<?x3xf32> {disc.name = "other"}) {
  %w = disc.constant {disc.param = "w"} dense<0.5> : tensor<4x3xf32>
  %b = disc.constant {disc.param = "b"} dense<0.25> : tensor<3xf32>
  %unused = disc.constant {disc.param = "unused"} dense<2.0> : tensor<3xf32>
  %h = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>,
      rhs_batching_dimensions = array<i64>,
      lhs_contracting_dimensions = array<i64: 1>,
      rhs_contracting_dimensions = array<i64: 0>}
      : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %t = disc.tanh %h : tensor<?x3xf32>
  %o = disc.add %t, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %l = disc.reduce sum, %o {dimensions = array<i64: 0, 1>}
      : (tensor<?x3xf32>) -> tensor<f32>
  %other = disc.mul %t, %unused : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %l, %other : tensor<f32>, tensor<?x3xf32>
}


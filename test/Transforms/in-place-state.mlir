// disc-mark-in-place-state (docs/training.md, "State"): a state update
// computed by an elementwise op after every other reader of its state is
// written into the state's buffer; one read later is not, unless
// disc-memory-schedule (which orders updates after the other readers of
// their state) moved it.
// RUN: disc-opt %s --disc-mark-in-place-state | FileCheck %s --check-prefix=ORDER
// RUN: disc-opt %s --disc-shape-simplify --disc-memory-schedule --disc-mark-in-place-state | FileCheck %s --check-prefix=SCHED

// ORDER-LABEL: func.func @step
// ORDER-SAME: -> (tensor<2x3xf32> {disc.name = "y"}, tensor<4x3xf32> {disc.in_place = 1 : i64, disc.name = "w", disc.state_update = "w"}, tensor<3xf32> {disc.name = "b", disc.state_update = "b"}, tensor<3xf32> {disc.name = "c", disc.state_update = "c"})
// ORDER: disc.sub %arg1, %{{.*}} {disc.in_place_state = 1 : i64}
// b is read after its update in program order: not in place.
// ORDER: %[[BN:.*]] = disc.sub %arg2, %{{.*}} : (
// ORDER: disc.add %arg2, %arg2
// c's update is read by the op that reads the old c: never in place.
// ORDER: %[[CN:.*]] = disc.add %arg3, %{{.*}} : (
// ORDER-NOT: disc.in_place_state

// SCHED-LABEL: func.func @step
// SCHED-SAME: tensor<4x3xf32> {disc.in_place = 1 : i64, disc.name = "w", disc.state_update = "w"}, tensor<3xf32> {disc.in_place = 2 : i64, disc.name = "b", disc.state_update = "b"}, tensor<3xf32> {disc.name = "c", disc.state_update = "c"})
// SCHED: disc.add %arg2, %arg2
// SCHED: disc.sub %arg2, %{{.*}} {disc.in_place_state = 2 : i64
func.func @step(%x: tensor<2x4xf32> {disc.name = "x"},
                %w: tensor<4x3xf32> {disc.name = "w", disc.state},
                %b: tensor<3xf32> {disc.name = "b", disc.state},
                %c: tensor<3xf32> {disc.name = "c", disc.state})
    -> (tensor<2x3xf32> {disc.name = "y"},
        tensor<4x3xf32> {disc.name = "w", disc.state_update = "w"},
        tensor<3xf32> {disc.name = "b", disc.state_update = "b"},
        tensor<3xf32> {disc.name = "c", disc.state_update = "c"}) {
  %lr = disc.constant dense<5.000000e-01> : tensor<f32>
  %h = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %gw = disc.dot_general %x, %h {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %sw = disc.mul %gw, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %wn = disc.sub %w, %sw : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %bn = disc.sub %b, %lr : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %bb = disc.add %b, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y0 = disc.add %h, %bb : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %cn = disc.add %c, %lr : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %cc = disc.mul %c, %cn : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = disc.add %y0, %cc : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y, %wn, %bn, %cn : tensor<2x3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>
}

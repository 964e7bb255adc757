// An SGD step fused into its weight-gradient MatMul (InPlaceState.h,
// accumulatingCall; docs/memory.md, "Optimizer steps in the gradient
// MatMul"): `w - lr * (X^T dY)` becomes one oneDNN call whose product is
// scaled by -lr (flags bit 6, the scale's f32 bits after the flags) and
// added to the residual w (bit 1); when the update is written into w's
// buffer, the call accumulates into that buffer instead (bit 7, no
// residual operand), and no gradient buffer exists.
// RUN: disc-opt %s --disc-mark-library-calls --disc-mark-in-place-state | FileCheck %s --check-prefix=MARK
// RUN: disc-opt %s --disc-mark-library-calls --disc-mark-in-place-state --disc-lower-to-linalg=library-calls=onednn | FileCheck %s --check-prefix=LOWER
// RUN: disc-opt %s --disc-shape-simplify --disc-fusion --disc-memory-schedule="in-place-state=1 accumulating-calls=1" | FileCheck %s --check-prefix=SCHED

// -0.5 is 0xBF000000 = 3204448256.
// MARK-LABEL: func.func @step
// MARK-SAME: tensor<4x3xf32> {disc.in_place = 1 : i64, disc.name = "w", disc.state_update = "w"}
// MARK: disc.dot_general %arg0, %[[H:.*]] {disc.library_call, disc.post_op_attrs = array<i64: 192, 3204448256>, disc.post_ops = ["scale", "sub"]
// MARK-NEXT: disc.mul {{.*}}disc.fused_into_call = 0 : i64
// MARK-NEXT: disc.sub %arg1, {{.*}}disc.fused_into_call = 1 : i64, disc.in_place_state = 1 : i64
// v is read after its update: the residual add (flags 2 | 64), a new buffer.
// MARK: disc.dot_general {{.*}}disc.post_op_attrs = array<i64: 66, 3204448256>, disc.post_ops = ["scale", "sub"]
// MARK-NOT: disc.in_place_state
// MARK: return

// LOWER-LABEL: func.func @step
// LOWER: %[[W:.+]] = bufferization.to_buffer %arg1 : tensor<4x3xf32> to memref<4x3xf32>
// LOWER: call @disc_lib_matmul_post0s({{.*}}, %c192_i64, %c3204448256_i64)
// LOWER: bufferization.to_tensor %[[W]] restrict writable
// LOWER: call @disc_lib_matmul_post2s({{.*}}, %c66_i64, %c3204448256_i64{{.*}})

// SCHED-LABEL: func.func @step
// SCHED-LABEL: func.func @late_reader
// SCHED: disc.add %arg1, %arg1
// SCHED-NEXT: disc.dot_general %arg0
// SCHED-NEXT: disc.mul
// SCHED-NEXT: disc.sub %arg1
func.func @step(%x: tensor<2x4xf32> {disc.name = "x"},
                %w: tensor<4x3xf32> {disc.name = "w", disc.state},
                %v: tensor<4x3xf32> {disc.name = "v", disc.state})
    -> (tensor<2x3xf32> {disc.name = "y"},
        tensor<4x3xf32> {disc.name = "w", disc.state_update = "w"},
        tensor<4x3xf32> {disc.name = "v", disc.state_update = "v"},
        tensor<4x3xf32> {disc.name = "z"}) {
  %lr = disc.constant dense<5.000000e-01> : tensor<f32>
  %h = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %ww = disc.add %w, %w : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %gw = disc.dot_general %x, %h {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %sw = disc.mul %gw, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %wn = disc.sub %w, %sw : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %gv = disc.dot_general %x, %h {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %sv = disc.mul %gv, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %vn = disc.sub %v, %sv : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %vv = disc.add %v, %ww : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h, %wn, %vn, %vv : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// The program order computes w's gradient first and reads w after it; the
// schedule runs the gradient with the update, after that reader.
func.func @late_reader(%x: tensor<2x4xf32> {disc.name = "x"},
                       %w: tensor<4x3xf32> {disc.name = "w", disc.state})
    -> (tensor<2x3xf32> {disc.name = "y"},
        tensor<4x3xf32> {disc.name = "w", disc.state_update = "w"},
        tensor<4x3xf32> {disc.name = "z"}) {
  %lr = disc.constant dense<5.000000e-01> : tensor<f32>
  %h = disc.dot_general %x, %w {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %gw = disc.dot_general %x, %h {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %ww = disc.add %w, %w : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %sw = disc.mul %gw, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %wn = disc.sub %w, %sw : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %h, %wn, %ww : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

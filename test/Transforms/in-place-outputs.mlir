// disc-fusion's `in-place-outputs` (the CUDA targets): a returned
// elementwise result written into the buffer of a value it reads for the
// last time, through the fused `lr * g` of an SGD update (disc.in_place_operand
// on the root and on the fused producer). Not marked: a value read again
// later, an input, a broadcast read, a result that is not returned. Then
// the step compiled for the GPU emulation against NumPy: the two updates
// take no buffer of their own (3 allocations: the two gradients and
// d2), measured peak == predicted.
// RUN: disc-opt %s --disc-shape-simplify --disc-fusion="in-place-outputs=true" | FileCheck %s --check-prefix=MARK
// RUN: disc-opt %s --disc-shape-simplify --disc-fusion | FileCheck %s --check-prefix=OFF
// RUN: rm -rf %t && %python %S/Inputs/in_place_outputs_ref.py %t
// RUN: disc-compile %s --target=cuda-emulate -o %t/emulate.so
// RUN: disc-run %t/emulate.so --input x=%t/x.pb --input dy=%t/dy.pb --input w=%t/w.pb --input b=%t/b.pb --compare '#0=%t/wn.pb' --compare '#1=%t/bn.pb' --compare '#2=%t/d2.pb' --rtol 1e-5 --atol 1e-5 | FileCheck %s --check-prefix=EXEC

// MARK-LABEL: func.func @step
// MARK: %[[GW:.+]] = disc.dot_general
// MARK: disc.mul %[[GW]], %{{.+}} {disc.fused, disc.in_place_operand = 0 : i64
// MARK-NEXT: disc.sub %arg2, %{{.+}} {disc.in_place_operand = 1 : i64
// MARK: %[[GB:.+]] = disc.reduce sum
// MARK: disc.mul %[[GB]], %{{.+}} {disc.fused, disc.in_place_operand = 0 : i64
// MARK-NEXT: disc.sub %arg3, %{{.+}} {disc.in_place_operand = 1 : i64
// dy is an input: a new buffer.
// MARK: disc.add %arg1, %arg1 {disc_shape.dims = {{.*}}} :
// MARK-LABEL: func.func @not_marked
// MARK-NOT: disc.in_place_operand
// MARK: return

// OFF-NOT: disc.in_place_operand

// EXEC-COUNT-3: compare {{.*}} PASSED
// EXEC: peak_bytes: [[PEAK:[0-9]+]]  predicted_peak_bytes: [[PEAK]]  allocs: 3

func.func @step(%x: tensor<5x4xf32> {disc.name = "x"},
                %dy: tensor<5x3xf32> {disc.name = "dy"},
                %w: tensor<4x3xf32> {disc.name = "w"},
                %b: tensor<3xf32> {disc.name = "b"})
    -> (tensor<4x3xf32> {disc.name = "wn"}, tensor<3xf32> {disc.name = "bn"},
        tensor<5x3xf32> {disc.name = "d2"}) {
  %lr = disc.constant dense<5.000000e-01> : tensor<f32>
  %gw = disc.dot_general %x, %dy {lhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batching_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<5x4xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %sw = disc.mul %gw, %lr : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %wn = disc.sub %w, %sw : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %gb = disc.reduce sum, %dy {dimensions = array<i64: 0>, keep_dims = false} : (tensor<5x3xf32>) -> tensor<3xf32>
  %sb = disc.mul %gb, %lr : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %bn = disc.sub %b, %sb : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %d2 = disc.add %dy, %dy : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
  return %wn, %bn, %d2 : tensor<4x3xf32>, tensor<3xf32>, tensor<5x3xf32>
}

// %x is an input, %y reads %g broadcast, %h reads %y (returned too)
// through its fused producer, %z is not returned, %z2 reads %z twice.
func.func @not_marked(%x: tensor<4x3xf32> {disc.name = "x"},
                      %v: tensor<3xf32> {disc.name = "v"})
    -> (tensor<4x3xf32> {disc.name = "y"}, tensor<4x3xf32> {disc.name = "h"},
        tensor<4x3xf32> {disc.name = "r"}, tensor<4xf32> {disc.name = "z2"}) {
  %g = disc.reduce sum, %x {dimensions = array<i64: 0>, keep_dims = true} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  %y = disc.add %x, %g : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %t = disc.mul %y, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = disc.add %t, %x : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = disc.add %v, %x : (tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %u = disc.reduce sum, %x {dimensions = array<i64: 1>, keep_dims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  %z = disc.mul %u, %u : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z2 = disc.add %z, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %h, %r, %z2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>
}

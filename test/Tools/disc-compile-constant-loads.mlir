// Loads of small constant globals (the exponent 2 of a Pow, bufferized into
// a 0-d global) are folded before the LLVM module is split into parts: a
// kernel in a part without the global's definition still sees the value,
// and O3 turns pow(x, 2.0) into x * x. Without the fold, kernels in the
// other parts call libm's powf once per element (Swin-T's LayerNorm
// variance: 1.5 ms instead of 0.05). Four kernels, each in a part of its
// own (the dot_generals keep them apart), share the one global.
// RUN: disc-compile %s -o %t.so --compile-jobs=8 --timing 2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: nm -D --undefined-only %t.so | FileCheck %s --check-prefix=SYMS
// RUN: disc-run %t.so --input x=3x2:ones | FileCheck %s
// The same with the entry function in a part of its own (the other path
// into the split):
// RUN: disc-compile %s -o %t.entry.so --compile-jobs=2 --fast-entry-above=0
// RUN: nm -D --undefined-only %t.entry.so | FileCheck %s --check-prefix=SYMS
// RUN: disc-run %t.entry.so --input x=3x2:ones | FileCheck %s

// TIMING: split into {{[2-9]}} parts
// SYMS-NOT: powf
// (1 + 1)^2 = 4; 4*2 (dot with ones) = 8; 8^2 * 3 = 192; 192*2 = 384;
// 384^2 - 4; * 2 = 294904; (294904^2) / 8 = 1.0871e10
// CHECK: output 0 'y': float32 [3, 2] min=1.0871e+10 max=1.0871e+10

func.func @main(%x: tensor<?x2xf32> {disc.name = "x", disc.dims = ["n", 2]})
    -> (tensor<?x2xf32> {disc.name = "y"}) {
  %two = arith.constant dense<2.0> : tensor<f32>
  %w = arith.constant dense<[[1.0, 1.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %c1 = arith.constant dense<1.0> : tensor<f32>
  %c3 = arith.constant dense<3.0> : tensor<f32>
  %c4 = arith.constant dense<4.0> : tensor<f32>
  %c8 = arith.constant dense<8.0> : tensor<f32>
  %a0 = disc.add %x, %c1 : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %a1 = disc.pow %a0, %two : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %d1 = disc.dot_general %a1, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %b0 = disc.pow %d1, %two : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %b1 = disc.mul %b0, %c3 : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %d2 = disc.dot_general %b1, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %e0 = disc.pow %d2, %two : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %e1 = disc.sub %e0, %c4 : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %d3 = disc.dot_general %e1, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %f0 = disc.pow %d3, %two : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  %y = disc.div %f0, %c8 : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

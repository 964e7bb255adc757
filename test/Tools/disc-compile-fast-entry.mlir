// --fast-entry-above=N: an entry function of more than N LLVM instructions
// is compiled in a part of its own (O1, fast code generation) next to the
// kernels' parts (O3); with 0 every model takes that path, with one
// compile thread too. The model runs the same either way: a library call
// (dot_general), a loop-nest kernel and a Gather whose check reports.
// RUN: disc-compile %s -o %t.fast.so --fast-entry-above=0 --timing 2>&1 | FileCheck %s --check-prefix=TIMING
// RUN: disc-compile %s -o %t.one.so --fast-entry-above=0 --compile-jobs=1 --verify-each
// RUN: disc-compile %s -o %t.o3.so --fast-entry-above=-1 --timing 2>&1 | FileCheck %s --check-prefix=O3
// RUN: disc-run %t.fast.so --input t=3x2:ones --input i=2:ones | FileCheck %s
// RUN: disc-run %t.one.so --input t=3x2:ones --input i=2:ones | FileCheck %s
// RUN: disc-run %t.o3.so --input t=3x2:ones --input i=2:ones | FileCheck %s
// RUN: %python -c "import numpy; numpy.save('%t.idx.npy', numpy.array([7], numpy.int64))"
// RUN: not disc-run %t.fast.so --input t=3x2:ones --input i=%t.idx.npy 2>&1 | FileCheck %s --check-prefix=BAD

// TIMING: split into {{[0-9]+}} parts and the entry function, optimize (O3; the entry O1)
// O3-NOT: the entry function
// CHECK: output 0 'y': float32 [2, 2] min=5 max=5
// BAD: Gather node 'g': index 7 is out of range [-3, 3)

func.func @main(%t: tensor<?x2xf32> {disc.name = "t", disc.dims = ["a", 2]},
                %i: tensor<?xi64> {disc.name = "i", disc.dims = ["k"]})
    -> (tensor<?x2xf32> {disc.name = "y"}) {
  %0 = disc.gather %t, %i {axis = 0 : i64}
      : (tensor<?x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
      loc("g"("Gather"("m.onnx":0:0)))
  %w = arith.constant dense<[[1.0, 1.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %m = disc.dot_general %0, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x2xf32>, tensor<2x2xf32>) -> tensor<?x2xf32>
  %a = disc.add %m, %0 : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  %y = disc.add %a, %m : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

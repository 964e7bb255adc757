// disc-compile --emit=obj writes one relocatable object with the compiled
// code and the ABI wrapper (disc_model_*, disc_check_failed, the allocation
// hooks): nothing DISC-specific is left undefined, only libc and libm
// symbols, and `cc -shared` alone turns it into a loadable model whose
// run-time checks still report (exit 2).
// RUN: disc-compile %s --emit=obj -o %t.o
// RUN: nm --defined-only %t.o | FileCheck %s --check-prefix=DEF
// RUN: nm -u %t.o | FileCheck %s --check-prefix=UNDEF --implicit-check-not=disc_ --implicit-check-not=_mlir_
// RUN: cc -shared %t.o -o %t.so -lm
// RUN: disc-run %t.so --input t=3x2:ones --input i=2:ones | FileCheck %s
// RUN: %python -c "import numpy; numpy.save('%t.idx.npy', numpy.array([7], numpy.int64))"
// RUN: not disc-run %t.so --input t=3x2:ones --input i=%t.idx.npy 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: disc-run %t.so --input t=3x2:ones --input i=%t.idx.npy > /dev/null 2>&1 || test $? -eq 2

// DEF-DAG: T disc_check_failed
// DEF-DAG: T disc_model_run
// DEF-DAG: T disc_model_signature
// DEF-DAG: T disc_model_abi_version
// DEF-DAG: T _mlir_memref_to_llvm_alloc
// UNDEF: longjmp
// CHECK: output 0 'y': float32 [2, 2] min=1 max=1
// BAD: Gather node 'g': index 7 is out of range [-3, 3)

func.func @main(%t: tensor<?x2xf32> {disc.name = "t", disc.dims = ["a", 2]},
                %i: tensor<?xi64> {disc.name = "i", disc.dims = ["k"]})
    -> (tensor<?x2xf32> {disc.name = "y"}) {
  %0 = disc.gather %t, %i {axis = 0 : i64}
      : (tensor<?x2xf32>, tensor<?xi64>) -> tensor<?x2xf32>
      loc("g"("Gather"("m.onnx":0:0)))
  return %0 : tensor<?x2xf32>
}

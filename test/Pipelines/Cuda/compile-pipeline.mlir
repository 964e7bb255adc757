// disc-compile --target=cuda and --target=cuda-emulate run
// disc-compile-pipeline and nothing else: disc-opt with the same options
// prints the same module (the GPU mapping; the emulated kernels down to the
// LLVM dialect). compile-pipeline-cubin.mlir compares the whole CUDA
// pipeline (ptxas).
// (disc-opt ends its output with an empty line: diff -B.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: disc-compile %s --emit=mlir -o %t/m.mlir
// RUN: disc-compile %t/m.mlir --target=cuda --gpu-arch=sm_90 --dim N=1:64 --emit=gpu -o %t/compile-gpu.mlir
// RUN: disc-opt %t/m.mlir --disc-compile-pipeline='target=cuda gpu-arch=sm_90 dims=N=1:64 emit=gpu model-name=m' --mlir-elide-elementsattrs-if-larger=16 --mlir-elide-resource-strings-if-larger=64 -o %t/opt-gpu.mlir
// RUN: diff -B %t/compile-gpu.mlir %t/opt-gpu.mlir
// RUN: FileCheck %s < %t/opt-gpu.mlir
// RUN: disc-compile %t/m.mlir --target=cuda-emulate --dim N=1:64 --emit=llvm-dialect -o %t/compile-emulate.mlir
// RUN: disc-opt %t/m.mlir --disc-compile-pipeline='target=cuda-emulate dims=N=1:64 emit=llvm-dialect model-name=m' --mlir-elide-elementsattrs-if-larger=16 --mlir-elide-resource-strings-if-larger=64 -o %t/opt-emulate.mlir
// RUN: diff -B %t/compile-emulate.mlir %t/opt-emulate.mlir
// RUN: FileCheck %s --check-prefix=EMULATE < %t/opt-emulate.mlir

// CHECK: module attributes {
// CHECK-SAME: disc.memory = {
// CHECK-SAME: disc.signature = {{{.*}}gpu_arch = "sm_90"{{.*}}target = "cuda"}
// CHECK: gpu.launch
// CHECK: call @disc_lib_matmul

// EMULATE: module attributes {
// EMULATE-NOT: target = "cuda"
// EMULATE: llvm.func @disc_entry(

func.func @main(%a: tensor<?x16xf32> {disc.dims = ["N", 16], disc.name = "a"}, %b: tensor<16x8xf32> {disc.name = "b"}) -> (tensor<?x8xf32> {disc.name = "y"}) {
  %e = disc.exp %a : tensor<?x16xf32>
  %m = disc.dot_general %e, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %t = disc.tanh %m : tensor<?x8xf32>
  return %t : tensor<?x8xf32>
}

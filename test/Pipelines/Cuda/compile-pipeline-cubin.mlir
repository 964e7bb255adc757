// REQUIRES: ptxas
// The whole CUDA pipeline of disc-compile (cubins from ptxas) is
// disc-compile-pipeline: disc-opt with the same options prints the same
// LLVM-dialect module, the signature attributes included.
// RUN: rm -rf %t && mkdir -p %t
// RUN: disc-compile %s --emit=mlir -o %t/m.mlir
// RUN: disc-compile %t/m.mlir --target=cuda --dim N=1:64 --emit=llvm-dialect -o %t/compile.mlir
// RUN: disc-opt %t/m.mlir --disc-compile-pipeline='target=cuda dims=N=1:64 emit=llvm-dialect model-name=m' --mlir-elide-elementsattrs-if-larger=16 --mlir-elide-resource-strings-if-larger=64 -o %t/opt.mlir
// ptxas's timings in the cubins' properties differ from run to run.
// RUN: sed -e 's/properties = {[^}]*}, //' %t/compile.mlir > %t/compile.sed.mlir
// RUN: sed -e 's/properties = {[^}]*}, //' %t/opt.mlir > %t/opt.sed.mlir
// RUN: diff -B %t/compile.sed.mlir %t/opt.sed.mlir
// RUN: FileCheck %s < %t/opt.mlir

// CHECK: module attributes {
// CHECK-SAME: disc.signature = {{{.*}}gpu_arch = "sm_80"{{.*}}target = "cuda"}
// CHECK: llvm.func @disc_entry(
// CHECK: gpu.binary @disc_entry_kernel

func.func @main(%a: tensor<?x16xf32> {disc.dims = ["N", 16], disc.name = "a"}, %b: tensor<16x8xf32> {disc.name = "b"}) -> (tensor<?x8xf32> {disc.name = "y"}) {
  %e = disc.exp %a : tensor<?x16xf32>
  %m = disc.dot_general %e, %b {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %t = disc.tanh %m : tensor<?x8xf32>
  return %t : tensor<?x8xf32>
}

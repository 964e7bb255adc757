// disc-compile runs disc-compile-pipeline and nothing else on the imported
// module: disc-opt with the same options prints the same module at every
// stage (passes, order and attributes), and the signature, memory model and
// remat candidates are module attributes.
// (disc-opt ends its output with an empty line: diff -B.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: disc-compile %s --emit=mlir -o %t/m.mlir
// RUN: disc-compile %t/m.mlir --dim N=1:64 --dim S=2:128:16 --emit=llvm-dialect -o %t/compile.mlir
// RUN: disc-opt %t/m.mlir --disc-compile-pipeline='target=cpu dims=N=1:64,S=2:128:16 emit=llvm-dialect model-name=m' --mlir-elide-elementsattrs-if-larger=16 --mlir-elide-resource-strings-if-larger=64 -o %t/opt.mlir
// RUN: diff -B %t/compile.mlir %t/opt.mlir
// RUN: FileCheck %s < %t/opt.mlir
// RUN: disc-compile %t/m.mlir --dim N=1:64 --schedule=none --remat=off --library-calls=none --emit=linalg -o %t/compile-linalg.mlir
// RUN: disc-opt %t/m.mlir --disc-compile-pipeline='dims=N=1:64 schedule=0 remat=0 library-calls=none emit=linalg model-name=m' --mlir-elide-elementsattrs-if-larger=16 --mlir-elide-resource-strings-if-larger=64 -o %t/opt-linalg.mlir
// RUN: diff -B %t/compile-linalg.mlir %t/opt-linalg.mlir
// RUN: FileCheck %s --check-prefix=LINALG < %t/opt-linalg.mlir
// RUN: disc-compile %t/m.mlir --dim N=4 --emit=mlir -o %t/compile-dims.mlir
// RUN: disc-opt %t/m.mlir --disc-compile-pipeline='dims=N=4 emit=mlir' --mlir-elide-elementsattrs-if-larger=16 --mlir-elide-resource-strings-if-larger=64 -o %t/opt-dims.mlir
// RUN: diff -B %t/compile-dims.mlir %t/opt-dims.mlir
// RUN: not disc-opt %t/m.mlir --disc-compile-pipeline='dims=Q=1:2 emit=mlir' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// CHECK: module attributes {
// CHECK-SAME: disc.memory = {
// CHECK-SAME: disc.remat = {
// CHECK-SAME: disc.signature = {abi_version = 7 : i64, inputs = [{dtype = "float32", name = "x", shape = ["N", "S", 16]}, {dtype = "float32", name = "w", shape = [16, 16]}], model = "m", outputs = [{dtype = "float32", name = "y", shape = ["?", "?", 16]}], symbols = [{max = 64 : i64, min = 1 : i64, name = "N"}, {max = 128 : i64, min = 2 : i64, name = "S"}]}
// CHECK: llvm.func @disc_entry(
// CHECK: llvm.call @disc_lib_matmul

// LINALG: module attributes {
// LINALG-SAME: disc.memory = {
// LINALG-SAME: disc.signature = {
// LINALG-NOT: disc.remat
// LINALG: linalg.generic

// UNKNOWN: error: unknown dim name 'Q' in --dim; known: N, S

func.func @main(%x: tensor<?x?x16xf32> {disc.dims = ["N", "S", 16], disc.name = "x"}, %w: tensor<16x16xf32> {disc.name = "w"}) -> (tensor<?x?x16xf32> {disc.name = "y"}) {
  %e = disc.exp %x : tensor<?x?x16xf32>
  %m = disc.dot_general %e, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %t = disc.tanh %m : tensor<?x?x16xf32>
  %m2 = disc.dot_general %t, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %s = disc.log %m2 : tensor<?x?x16xf32>
  %m3 = disc.dot_general %s, %w {lhs_batching_dimensions = array<i64>, rhs_batching_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 0>} : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %y = disc.add %m3, %e : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

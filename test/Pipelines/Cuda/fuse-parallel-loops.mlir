// The CUDA pipeline fuses adjacent loop nests over the same iteration space
// into one kernel (scf-parallel-loop-fusion before the tiling, docs/cuda.md,
// "Fusion on the GPU"): the init fill of a row sum and the sum over the row
// are one launch, where each was one. The epilogue over the same N rows
// stays a launch of its own: its buffer's allocation (and size check) lies
// between the two nests.
// RUN: disc-compile %s --target=cuda --emit=gpu -o - | FileCheck %s

// CHECK-LABEL: func.func @disc_entry
// CHECK: gpu.launch blocks
// CHECK: memref.store %cst, %[[SUM:.+]][%[[I:.+]]] : memref<?xf32>
// CHECK-NOT: gpu.terminator
// CHECK: scf.for
// CHECK-NOT: gpu.terminator
// CHECK: memref.load %[[SUM]][%[[I]]]
// CHECK-NOT: gpu.terminator
// CHECK: arith.addf
// CHECK: gpu.terminator
// CHECK: memref.alloc
// CHECK: gpu.launch blocks
// CHECK: arith.divf
// CHECK: math.exp
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch blocks
// CHECK: return
func.func @main(%a: tensor<?x16xf32> {disc.dims = ["N", 16], disc.name = "a"}) -> (tensor<?xf32> {disc.name = "y"}) {
  %s = disc.reduce sum, %a {dimensions = array<i64: 1>} : (tensor<?x16xf32>) -> tensor<?xf32>
  %n = disc.constant dense<16.0> : tensor<f32>
  %m = disc.div %s, %n : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %e = disc.exp %m : tensor<?xf32>
  return %e : tensor<?xf32>
}

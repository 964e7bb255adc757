// The CUDA pipeline fuses loop nests over the same iteration space into
// one kernel (scf-parallel-loop-fusion before the tiling, docs/cuda.md,
// "Fusion on the GPU"): the init fill of a row sum, the sum over the row
// and the epilogue over the same N rows are one launch, where each was one.
// The returned epilogue reads the sum for the last time, element for
// element: it is written into the sum's buffer (disc-fusion's
// in-place-outputs), one allocation for both. The row is 16 elements
// (static, below a warp): no row kernel.
// RUN: disc-compile %s --target=cuda --emit=gpu -o - | FileCheck %s

// CHECK-LABEL: func.func @disc_entry
// CHECK: memref.alloc
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks
// CHECK: memref.store %cst, %[[SUM:.+]][%[[I:.+]]] : memref<?xf32>
// CHECK-NOT: gpu.terminator
// CHECK: scf.for
// CHECK-NOT: gpu.terminator
// CHECK: memref.load %[[SUM]][%[[I]]]
// CHECK-NOT: gpu.terminator
// CHECK: arith.addf
// CHECK-NOT: gpu.terminator
// CHECK: arith.divf
// CHECK: math.exp
// CHECK: memref.store %{{.+}}, %[[SUM]][%[[I]]]
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

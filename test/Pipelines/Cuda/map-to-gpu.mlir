// RUN: disc-opt --convert-linalg-to-parallel-loops --disc-gpu-tile-parallel-loops --gpu-map-parallel-loops --convert-parallel-loops-to-gpu --canonicalize %s | FileCheck %s

// One launch for any shape: ceil(N*M / 256) blocks of 256 threads, the
// element count a run-time value.
// CHECK-DAG: #[[CEIL:.+]] = affine_map<()[s0] -> (s0 ceildiv 256)>
// CHECK-LABEL: func.func @exp
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[TOTAL:.+]] = arith.muli
// CHECK: %[[BLOCKS:.+]] = affine.apply #[[CEIL]]()[%[[TOTAL]]]
// CHECK: gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}} = %[[C1]], %{{.+}} = %[[C1]]) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[C256]], %{{.+}} = %[[C1]], %{{.+}} = %[[C1]])
// CHECK: arith.cmpi ult, %{{.+}}, %[[TOTAL]] : index
// CHECK: math.exp
// CHECK: gpu.terminator
func.func @exp(%a: memref<?x?xf32>, %r: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x?xf32>) outs(%r : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// A row reduction: one thread per row, a sequential loop over the row.
// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.addf
func.func @row_sum(%a: memref<?x?xf32>, %r: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<?x?xf32>) outs(%r : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

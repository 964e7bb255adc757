// RUN: disc-opt --disc-gpu-prepare-linalg %s | FileCheck %s

// A reduction over a middle axis: the parallel dims move outermost, so that
// both map to threads; the reduced dim becomes the innermost loop.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @middle_axis
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @middle_axis(%a: memref<?x?x?xf32>, %r: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : memref<?x?x?xf32>) outs(%r : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// A full reduction has no parallel dim: it runs as a one-thread kernel.
// CHECK-LABEL: func.func @full_reduction
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[C1:.+]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.+}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
func.func @full_reduction(%a: memref<?xf32>, %r: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<?xf32>) outs(%r : memref<f32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// Elementwise ops are left alone.
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
func.func @elementwise(%a: memref<?x?xf32>, %r: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x?xf32>) outs(%r : memref<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

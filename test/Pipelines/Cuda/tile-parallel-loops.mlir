// RUN: disc-opt --disc-gpu-tile-parallel-loops=block-size=128 %s | FileCheck %s

// A 2-D nest with run-time bounds becomes one loop over N*M elements, tiled
// by 128 with a constant inner bound and an in-bounds guard.
// CHECK-LABEL: func.func @nest
// CHECK: %[[TOTAL:[a-z0-9_]+]] = arith.muli %{{.+}}, %arg2 : index
// CHECK: %[[C128:[a-z0-9_]+]] = arith.constant 128 : index
// CHECK: %[[STEP:[a-z0-9_]+]] = arith.muli %{{.+}}, %[[C128]] : index
// CHECK: scf.parallel (%[[BLK:[a-z0-9_]+]]) = (%{{.+}}) to (%[[TOTAL]]) step (%[[STEP]]) {
// CHECK-NEXT: scf.parallel (%[[THR:[a-z0-9_]+]]) = (%{{.+}}) to (%[[STEP]]) step (%{{.+}}) {
// CHECK: %[[IDX:[a-z0-9_]+]] = arith.addi %[[THR]], %[[BLK]] : index
// CHECK: arith.cmpi ult, %{{.+}}, %[[TOTAL]] : index
// CHECK: scf.if
// CHECK: %[[J:[a-z0-9_]+]] = arith.remsi %[[IDX]], %arg2 : index
// CHECK: %[[I:[a-z0-9_]+]] = arith.divsi %[[IDX]], %arg2 : index
// CHECK: memref.store %{{.+}}, %arg0[%[[I]], %[[J]]]
func.func @nest(%a: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    memref.store %cst, %a[%i, %j] : memref<?x?xf32>
  }
  return
}

// A one-iteration loop (disc-gpu-prepare-linalg) stays one thread.
// CHECK-LABEL: func.func @single
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @single(%a: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %cst, %a[] : memref<f32>
  }
  return
}

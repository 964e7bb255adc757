// RUN: disc-opt --disc-check-allocations %s | FileCheck %s

// Each dynamic size is non-negative and bytes = 4 * 3 * d0 * d1 fits in
// int64: d == 0 || acc <= INT64_MAX / max(d, 1), before the allocation.
// CHECK: module attributes {disc.check_messages = ["node 'n': cannot allocate a f32 buffer of shape [{0} x 3 x {1}]: a size is negative or the byte size overflows int64"]
// CHECK-LABEL: func.func @alloc
// CHECK-SAME: (%[[D0:.+]]: index, %[[D1:.+]]: index)
// CHECK: arith.cmpi sge, %[[D0]]
// CHECK: arith.divsi
// CHECK: arith.cmpi sle
// CHECK: arith.cmpi sge, %[[D1]]
// CHECK: scf.if
// CHECK: func.call @disc_check_failed
// CHECK: memref.alloc(%[[D0]], %[[D1]]) : memref<?x3x?xf32>
func.func @alloc(%d0: index, %d1: index) -> memref<?x3x?xf32> {
  %0 = memref.alloc(%d0, %d1) : memref<?x3x?xf32> loc("n"("m.onnx":0:0))
  return %0 : memref<?x3x?xf32>
}

// Static allocations need no check.
// CHECK-LABEL: func.func @static_alloc
// CHECK-NOT: disc_check_failed
// CHECK: memref.alloc() : memref<4x4xf32>
func.func @static_alloc() -> memref<4x4xf32> {
  %0 = memref.alloc() : memref<4x4xf32>
  return %0 : memref<4x4xf32>
}

// RUN: disc-opt --disc-check-allocations %s | FileCheck %s

// With the input dim ranges recorded by disc-lower-to-linalg, the shape
// solver drops the checks of allocations whose sizes are >= 0 and whose
// byte size fits in int64 for every input in range; the others keep theirs.
// The ranges attribute is consumed.
// CHECK: module attributes {disc.check_messages = [
// CHECK-SAME: "node 'load': cannot allocate a f32 buffer of shape [{0}]
// CHECK-SAME: "node 'unbounded': cannot allocate a f32 buffer of shape [{0} x 3]
// CHECK-SAME: "node 'minus': cannot allocate a f32 buffer of shape [{0}]
// CHECK-SAME: "node 'huge': cannot allocate a f32 buffer of shape [{0} x {1}]
// CHECK-SAME: "node 'other': cannot allocate a f32 buffer of shape [{0} x 3]
// CHECK-SAME: ], disc.checks_dropped = 3 : i64}
// CHECK-NOT: disc.input_dim_ranges
module attributes {disc.input_dim_ranges = {
    f = [array<i64: 1, 64, 3, 3>, array<i64: 1, -1, 3, 3>, array<i64>,
         array<i64: 0, 4294967296>]}} {

// CHECK-LABEL: func.func @f
func.func @f(%x: memref<?x3xf32>, %y: memref<?x3xf32>, %p: memref<i64>,
             %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c70 = arith.constant 70 : index
  %n = memref.dim %x, %c0 : memref<?x3xf32>
  %m = memref.dim %y, %c0 : memref<?x3xf32>
  %k = memref.dim %z, %c0 : memref<?xf32>
  // n in [1, 64]: dropped.
  // CHECK-NOT: disc_check_failed
  // CHECK: memref.alloc(%{{.+}}) {{.*}}"same"
  %a0 = memref.alloc(%n) {name = "same"} : memref<?x3xf32>
  // n * n + 2 and (n + 1) floordiv 2 of an earlier buffer's dim: dropped.
  // CHECK-NOT: disc_check_failed
  // CHECK: memref.alloc(%{{.+}}, %{{.+}}) {{.*}}"product"
  %nn = arith.muli %n, %n : index
  %nn2 = arith.addi %nn, %c2 : index
  %a0d = memref.dim %a0, %c0 : memref<?x3xf32>
  %n1 = arith.addi %a0d, %c2 : index
  %h = arith.divsi %n1, %c2 : index
  %a1 = memref.alloc(%nn2, %h) {name = "product"} : memref<?x?xf32>
  // A size read from a tensor: kept.
  // CHECK: scf.if
  // CHECK: disc_check_failed
  // CHECK: memref.alloc(%{{.+}}) {{.*}}"load"
  %v = memref.load %p[] : memref<i64>
  %vi = arith.index_cast %v : i64 to index
  %a2 = memref.alloc(%vi) {name = "load"} : memref<?xf32> loc("load"("m.onnx":0:0))
  // m has no maximum: kept.
  // CHECK: disc_check_failed
  // CHECK: memref.alloc(%{{.+}}) {{.*}}"unbounded"
  %a3 = memref.alloc(%m) {name = "unbounded"} : memref<?x3xf32> loc("unbounded"("m.onnx":0:0))
  // n - 70 may be negative: kept.
  // CHECK: disc_check_failed
  // CHECK: memref.alloc(%{{.+}}) {{.*}}"minus"
  %nm = arith.subi %n, %c70 : index
  %a4 = memref.alloc(%nm) {name = "minus"} : memref<?xf32> loc("minus"("m.onnx":0:0))
  // k <= 2^32 but k * k * 4 bytes may exceed int64: kept; k alone fits.
  // CHECK: disc_check_failed
  // CHECK: memref.alloc(%{{.+}}, %{{.+}}) {{.*}}"huge"
  // CHECK-NOT: disc_check_failed
  // CHECK: memref.alloc(%{{.+}}) {{.*}}"k"
  %a5 = memref.alloc(%k, %k) {name = "huge"} : memref<?x?xf32> loc("huge"("m.onnx":0:0))
  %a6 = memref.alloc(%k) {name = "k"} : memref<?xf32>
  return
}

// A function without recorded ranges keeps its checks.
// CHECK-LABEL: func.func @g
// CHECK: disc_check_failed
func.func @g(%x: memref<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x3xf32>
  %a = memref.alloc(%n) : memref<?x3xf32> loc("other"("m.onnx":0:0))
  return
}
}

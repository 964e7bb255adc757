// RUN: disc-opt --disc-gpu-tile-parallel-loops="block-size=128 elements-per-thread=4" --split-input-file %s | FileCheck %s
// RUN: not disc-opt --disc-gpu-tile-parallel-loops="block-size=512 elements-per-thread=4" %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: elements-per-thread must be >= 1 with block-size * elements-per-thread <= 1024

// An elementwise nest into a fresh buffer: tiles of 512 elements, 128
// threads, each taking elements t, t+128, t+256, t+384 of its tile. In a
// full tile the four loads come first, then the four computations and
// stores; the last tile runs the four guarded copies in order.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[OUT:.+]] = memref.alloc
// CHECK: %[[C512:.+]] = arith.constant 512 : index
// CHECK: scf.parallel (%[[BLK:.+]]) = (%{{.+}}) to (%[[N:.+]]) step (%{{.+}}) {
// CHECK: %[[END:.+]] = arith.addi %[[BLK]], %{{.+}} : index
// CHECK: %[[FULL:.+]] = arith.cmpi ule, %[[END]], %[[N]] : index
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%c128{{.*}}) step (%{{.+}}) {
// CHECK: scf.if %[[FULL]] {
// CHECK: memref.load %arg0
// CHECK: memref.load %arg0
// CHECK: memref.load %arg0
// CHECK: memref.load %arg0
// CHECK-NOT: memref.load
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: memref.store %{{.+}}, %[[OUT]]
// CHECK: } else {
// CHECK: scf.if
// CHECK: memref.load %arg0
// CHECK: memref.store
// CHECK: scf.if
// CHECK: scf.if
// CHECK: scf.if
// CHECK: } {disc.elements_per_thread = 4 : i64}
func.func @elementwise(%a: memref<?xf32>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = math.exp %x : f32
    memref.store %y, %o[%i] : memref<?xf32>
    scf.reduce
  }
  return %o : memref<?xf32>
}

// -----

// In place (the stored buffer is also read) and into a buffer the function
// did not allocate: one element per thread, tiles of 128.
// CHECK-LABEL: func.func @in_place
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: scf.parallel
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step
// CHECK-NOT: disc.elements_per_thread
func.func @in_place(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %o = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %o[%i] : memref<?xf32>
    %y = math.exp %x : f32
    memref.store %y, %o[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %o[%i] : memref<?xf32>
    memref.store %x, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A nest with a loop inside (a reduction per element) keeps one element
// per thread.
// CHECK-LABEL: func.func @reduction
// CHECK-NOT: disc.elements_per_thread
func.func @reduction(%a: memref<?x8xf32>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %o = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = scf.for %j = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
      %x = memref.load %a[%i, %j] : memref<?x8xf32>
      %r = arith.addf %acc, %x : f32
      scf.yield %r : f32
    }
    memref.store %s, %o[%i] : memref<?xf32>
    scf.reduce
  }
  return %o : memref<?xf32>
}

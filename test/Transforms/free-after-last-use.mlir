// disc-free-after-last-use moves each dealloc right after the last op of
// its block that uses the buffer or a value it flows into (views, region
// users), as upstream optimize-allocation-liveness does; both passes must
// give the same IR.
// RUN: disc-opt %s --allow-unregistered-dialect --split-input-file --pass-pipeline="builtin.module(func.func(disc-free-after-last-use))" | FileCheck %s
// RUN: disc-opt %s --allow-unregistered-dialect --split-input-file --pass-pipeline="builtin.module(func.func(disc-free-after-last-use))" > %t.disc.mlir
// RUN: disc-opt %s --allow-unregistered-dialect --split-input-file --pass-pipeline="builtin.module(func.func(optimize-allocation-liveness))" > %t.upstream.mlir
// RUN: diff %t.disc.mlir %t.upstream.mlir

// CHECK-LABEL: func @views_and_regions
// CHECK:      %[[A:.*]] = memref.alloc
// CHECK:      %[[B:.*]] = memref.alloc
// CHECK:      "test.use"(%[[B]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK:      %[[V:.*]] = memref.subview %[[A]]
// CHECK:      scf.for
// CHECK:        "test.use"(%[[V]])
// CHECK:      }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK:      %[[C:.*]] = memref.alloc
// CHECK:      "test.use"(%[[C]])
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: "test.done"
// CHECK-NEXT: return
func.func @views_and_regions(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%n) : memref<?xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  "test.use"(%b) : (memref<?xf32>) -> ()
  %v = memref.subview %a[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
  scf.for %i = %c0 to %n step %c1 {
    "test.use"(%v) : (memref<4xf32, strided<[1]>>) -> ()
  }
  %c = memref.alloc(%n) : memref<?xf32>
  "test.use"(%c) : (memref<?xf32>) -> ()
  "test.done"() : () -> ()
  memref.dealloc %c : memref<?xf32>
  memref.dealloc %b : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return
}

// -----

// Two frees after the same last user keep upstream's order; a buffer freed
// in another block, or twice, stays as it is.
// CHECK-LABEL: func @same_last_user
// CHECK:      "test.use2"(%[[X:[a-z_0-9]+]], %[[Y:[a-z_0-9]+]])
// CHECK-NEXT: memref.dealloc %[[Y]]
// CHECK-NEXT: memref.dealloc %[[X]]
// CHECK:      scf.if
// CHECK-NEXT:   memref.dealloc %[[Z:[a-z_0-9]+]]
// CHECK:      "test.done"
func.func @same_last_user(%n: index, %p: i1) {
  %x = memref.alloc(%n) : memref<?xf32>
  %y = memref.alloc(%n) : memref<?xf32>
  %z = memref.alloc(%n) : memref<?xf32>
  "test.use2"(%x, %y) : (memref<?xf32>, memref<?xf32>) -> ()
  "test.use"(%z) : (memref<?xf32>) -> ()
  scf.if %p {
    memref.dealloc %z : memref<?xf32>
  }
  "test.done"() : () -> ()
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %y : memref<?xf32>
  return
}

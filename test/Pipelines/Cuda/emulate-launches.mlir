// RUN: disc-opt --split-input-file --verify-diagnostics --disc-gpu-emulate-launches %s | FileCheck %s

// Block ids and thread ids become loop induction variables (blocks outer,
// threads inner, z to x); device copies become host copies.
// CHECK-LABEL: func.func @scale
// CHECK-NOT: gpu.
// CHECK: memref.copy %{{.+}}, %[[D:.+]] : memref<4xf32> to memref<4xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1
// CHECK: scf.for %[[BX:.+]] = %{{.+}} to %[[NB:.+]] step
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1
// CHECK: scf.for %{{.+}} = %{{.+}} to %c1
// CHECK: scf.for %[[TX:.+]] = %{{.+}} to %c4 step
// CHECK: %[[I:.+]] = arith.addi %{{.+}}, %[[TX]]
// CHECK: memref.load %[[D]][%[[I]]]
// CHECK-NOT: gpu.
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @scale(%a: memref<?xf32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.get_global @w : memref<4xf32>
  %d = memref.alloc() : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %d, %g : memref<4xf32>, memref<4xf32>
  gpu.wait [%t1]
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c4, %v = %c1, %w = %c1) {
    %b = arith.muli %bx, %u : index
    %i = arith.addi %b, %tx : index
    %l = memref.load %d[%i] : memref<4xf32>
    memref.store %l, %a[%i] : memref<?xf32>
    gpu.terminator
  }
  memref.dealloc %d : memref<4xf32>
  return
}

// Kernels with barriers, shuffles or shared memory: emulate-sync.mlir.

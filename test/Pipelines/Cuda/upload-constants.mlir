// RUN: disc-opt --disc-gpu-upload-constants %s | FileCheck %s

// A kernel reading a constant gets a device copy for the launch.
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func.func @scale
// CHECK: %[[G:.+]] = memref.get_global @w : memref<4xf32>
// CHECK: %[[D:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK: %[[T1:.+]] = gpu.memcpy async [%[[T0]]] %[[D]], %[[G]] : memref<4xf32>, memref<4xf32>
// CHECK: gpu.wait [%[[T1]]]
// CHECK: gpu.launch
// CHECK: memref.load %[[D]]
// CHECK: gpu.terminator
// CHECK: memref.dealloc %[[D]] : memref<4xf32>
func.func @scale(%a: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.get_global @w : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c4, %v = %c1, %w = %c1) {
    %l = memref.load %g[%tx] : memref<4xf32>
    memref.store %l, %a[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}

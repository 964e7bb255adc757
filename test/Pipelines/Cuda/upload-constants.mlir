// RUN: disc-opt --disc-gpu-upload-constants %s | FileCheck %s

// The constants kernels read get one device copy per run: uploaded at the
// start of the function, shared by every launch, freed before the return.
// Their bytes are recorded on the function for the predicted peak.
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @v : memref<2x3xi8> = dense<1>

// CHECK-LABEL: func.func @scale
// CHECK-SAME: disc.device_constant_allocs = 2 : i64, disc.device_constant_bytes = 22 : i64
// CHECK-DAG: %[[W:.+]] = memref.get_global @w : memref<4xf32>
// CHECK-DAG: %[[DW:.+]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: %[[V:.+]] = memref.get_global @v : memref<2x3xi8>
// CHECK-DAG: %[[DV:.+]] = memref.alloc() : memref<2x3xi8>
// CHECK-DAG: gpu.memcpy async [%{{.+}}] %[[DW]], %[[W]] : memref<4xf32>, memref<4xf32>
// CHECK-DAG: gpu.memcpy async [%{{.+}}] %[[DV]], %[[V]] : memref<2x3xi8>, memref<2x3xi8>
// CHECK: gpu.launch
// CHECK: memref.load %[[DW]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.memcpy
// CHECK: %[[ROW:.+]] = memref.subview %[[DV]]
// CHECK: gpu.launch
// CHECK: memref.load %[[DW]]
// CHECK: memref.load %[[ROW]]
// CHECK: gpu.terminator
// CHECK-DAG: memref.dealloc %[[DW]] : memref<4xf32>
// CHECK-DAG: memref.dealloc %[[DV]] : memref<2x3xi8>
// CHECK: return
func.func @scale(%a: memref<4xf32>, %b: memref<3xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.get_global @w : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c4, %v = %c1, %w = %c1) {
    %l = memref.load %g[%tx] : memref<4xf32>
    memref.store %l, %a[%tx] : memref<4xf32>
    gpu.terminator
  }
  %h = memref.get_global @v : memref<2x3xi8>
  %row = memref.subview %h[1, 0] [1, 3] [1, 1] : memref<2x3xi8> to memref<3xi8, strided<[1], offset: 3>>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c4, %v = %c1, %w = %c1) {
    %l = memref.load %g[%tx] : memref<4xf32>
    memref.store %l, %a[%tx] : memref<4xf32>
    %k = memref.load %row[%c0] : memref<3xi8, strided<[1], offset: 3>>
    memref.store %k, %b[%c0] : memref<3xi8>
    gpu.terminator
  }
  return
}

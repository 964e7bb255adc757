// RUN: disc-opt --disc-gpu-upload-constants %s | FileCheck %s

// A kernel reading a constant reads the session's device copy of it,
// uploaded by the runtime on first use and kept (not a tracked allocation).
memref.global "private" constant @w : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func.func @scale
// CHECK: %[[G:.+]] = memref.get_global @w : memref<4xf32>
// CHECK: %[[B:.+]] = arith.constant 16 : i64
// CHECK: %[[D:.+]] = call @disc_device_constant_1_0(%[[G]], %[[B]]) : (memref<4xf32>, i64) -> memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: memref.load %[[D]]
// CHECK: gpu.terminator
// CHECK-NOT: memref.dealloc
// CHECK: func.func private @disc_device_constant_1_0(memref<4xf32>, i64) -> memref<4xf32> attributes {llvm.emit_c_interface}
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

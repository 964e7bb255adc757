// RUN: disc-opt --disc-gpu-small-device-buffers %s | FileCheck %s
// RUN: disc-opt --disc-gpu-small-device-buffers=emulate=true %s | FileCheck %s --check-prefix=EMU

// A small static buffer that kernels use and that does not escape (the
// memory model's stack rule) gets a per-session device slot from the
// runtime instead of a tracked allocation; a large or dynamic one and a
// returned one stay runtime allocations. Emulated: the host stack.
// CHECK-LABEL: func.func @small
// CHECK: %[[SITE:.+]] = arith.constant 0 : i64
// CHECK: %[[BYTES:.+]] = arith.constant 128 : i64
// CHECK: %[[RAW:.+]] = call @disc_device_scratch(%[[SITE]], %[[BYTES]]) : (i64, i64) -> memref<?xi8>
// CHECK: %[[B:.+]] = memref.view %[[RAW]][%{{.+}}][] : memref<?xi8> to memref<32xf32>
// CHECK: memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: %[[R:.+]] = memref.alloc() : memref<32xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[B]]
// CHECK-NOT: memref.dealloc %[[B]]
// CHECK: return %[[R]]
// CHECK: func.func private @disc_device_scratch(i64, i64) -> memref<?xi8> attributes {llvm.emit_c_interface}
// EMU-LABEL: func.func @small
// EMU: %[[B:.+]] = memref.alloca() : memref<32xf32>
// EMU-NOT: disc_device_scratch
func.func @small(%x: memref<?xf32>, %n: index) -> memref<32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<32xf32>
  %big = memref.alloc(%n) : memref<?xf32>
  %r = memref.alloc() : memref<32xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%c0] : memref<?xf32>
    memref.store %v, %b[%c0] : memref<32xf32>
    memref.store %v, %big[%c0] : memref<?xf32>
    %w = memref.load %b[%c0] : memref<32xf32>
    memref.store %w, %r[%c0] : memref<32xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<32xf32>
  memref.dealloc %big : memref<?xf32>
  return %r : memref<32xf32>
}

// RUN: disc-opt --disc-gpu-mirror-host-buffers %s | FileCheck %s

// A small device buffer that a kernel writes and the host reads (a shape
// value computed from tensor data) gets a host copy: the host reads the
// copy, which is refreshed after each launch that uses the buffer (and
// copied to the device before it, for host writes). Only the copy to the
// host is waited for: the copy to the device is queued ahead of the
// kernel on the stream.
// CHECK-LABEL: func.func @kernel_then_host
// CHECK: %[[H:.+]] = memref.alloca() : memref<2xi64>
// CHECK: %[[D:.+]] = memref.alloc() : memref<2xi64>
// CHECK: memref.store %{{.+}}, %[[H]][%{{.+}}] : memref<2xi64>
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK: gpu.memcpy async [%[[T0]]] %[[D]], %[[H]]
// CHECK-NOT: gpu.wait [
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[D]]
// CHECK: gpu.terminator
// CHECK: %[[T2:.+]] = gpu.wait async
// CHECK: %[[T3:.+]] = gpu.memcpy async [%[[T2]]] %[[H]], %[[D]]
// CHECK: gpu.wait [%[[T3]]]
// CHECK: %[[V:.+]] = memref.subview %[[H]][1] [1] [1]
// CHECK: memref.load %[[V]]
// CHECK: memref.dealloc %[[D]]
func.func @kernel_then_host(%x: memref<?xi64>, %n: i64) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.alloc() : memref<2xi64>
  memref.store %n, %d[%c0] : memref<2xi64>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%c0] : memref<?xi64>
    memref.store %v, %d[%c1] : memref<2xi64>
    gpu.terminator
  }
  %s = memref.subview %d[1] [1] [1] : memref<2xi64> to memref<1xi64, strided<[1], offset: 1>>
  %r = memref.load %s[%c0] : memref<1xi64, strided<[1], offset: 1>>
  memref.dealloc %d : memref<2xi64>
  return %r : i64
}

// A buffer only kernels touch gets no copy.
// CHECK-LABEL: func.func @kernel_only
// CHECK-NOT: memref.alloca
// CHECK-NOT: gpu.memcpy
func.func @kernel_only(%x: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d = memref.alloc() : memref<2xi64>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%c0] : memref<?xi64>
    memref.store %v, %d[%c1] : memref<2xi64>
    %w = memref.load %d[%c1] : memref<2xi64>
    memref.store %w, %x[%c0] : memref<?xi64>
    gpu.terminator
  }
  memref.dealloc %d : memref<2xi64>
  return
}

// A small input the host reads (a Reshape's shape, TopK's k) is device
// memory in a CUDA session: the host reads a copy taken at entry.
// CHECK-LABEL: func.func @input_shape
// CHECK: %[[H:.+]] = memref.alloca() : memref<2xi64>
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK: %[[T1:.+]] = gpu.memcpy async [%[[T0]]] %[[H]], %arg1
// CHECK: gpu.wait [%[[T1]]]
// CHECK: memref.reshape %arg0(%[[H]])
func.func @input_shape(%x: memref<?xf32>, %s: memref<2xi64>) -> memref<?x?xf32> {
  %r = memref.reshape %x(%s) : (memref<?xf32>, memref<2xi64>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}

// A returned small buffer the host writes (Shape as a graph output) gets
// its device copy before the return.
// CHECK-LABEL: func.func @shape_output
// CHECK: %[[H:.+]] = memref.alloca() : memref<1xi64>
// CHECK: %[[D:.+]] = memref.alloc() : memref<1xi64>
// CHECK: memref.store %{{.+}}, %[[H]]
// CHECK: gpu.memcpy async [%{{.+}}] %[[D]], %[[H]]
// CHECK: return %[[D]]
func.func @shape_output(%x: memref<?xf32>) -> memref<1xi64> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %i = arith.index_cast %n : index to i64
  %d = memref.alloc() : memref<1xi64>
  memref.store %i, %d[%c0] : memref<1xi64>
  return %d : memref<1xi64>
}

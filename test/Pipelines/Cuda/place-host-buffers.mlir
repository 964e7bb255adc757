// RUN: disc-opt --split-input-file --disc-gpu-place-host-buffers %s | FileCheck %s

// A shape tensor (Flatten's target shape) written and read only by the host,
// and a shape computation over it (a linalg op on host buffers and a
// constant), move to the host stack and host loops; the data tensor stays a
// runtime allocation (device memory) and its op stays a linalg op (a kernel).
memref.global "private" constant @c : memref<2xi64> = dense<[1, 2]>

// CHECK-LABEL: func.func @shape_tensor
// CHECK-DAG: %[[S:.+]] = memref.alloca() {alignment = 64 : i64} : memref<2xi64>
// CHECK-DAG: %[[T:.+]] = memref.alloca() : memref<2xi64>
// CHECK-NOT: memref.alloc()
// CHECK: memref.store %{{.+}}, %[[S]]
// CHECK: scf.for
// CHECK: memref.load %[[S]]
// CHECK: memref.store %{{.+}}, %[[T]]
// CHECK-NOT: linalg.generic
// CHECK: memref.reshape %{{.+}}(%[[T]])
// CHECK: %[[D:.+]] = memref.alloc(%{{.+}}) : memref<?x2xf32>
// CHECK: linalg.generic
// CHECK-NOT: memref.dealloc %[[S]]
// CHECK: memref.dealloc %[[D]]
func.func @shape_tensor(%x: memref<?xf32>, %n: i64) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.alloc() {alignment = 64 : i64} : memref<2xi64>
  memref.store %n, %s[%c0] : memref<2xi64>
  memref.store %n, %s[%c1] : memref<2xi64>
  %c = memref.get_global @c : memref<2xi64>
  %t = memref.alloc() : memref<2xi64>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s, %c : memref<2xi64>, memref<2xi64>) outs(%t : memref<2xi64>) {
  ^bb0(%a: i64, %b: i64, %o: i64):
    %q = arith.floordivsi %a, %b : i64
    linalg.yield %q : i64
  }
  %r = memref.reshape %x(%t) : (memref<?xf32>, memref<2xi64>) -> memref<?x?xf32>
  %d0 = memref.dim %r, %c0 : memref<?x?xf32>
  %d = memref.alloc(%d0) : memref<?x2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r : memref<?x?xf32>) outs(%d : memref<?x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %v = memref.load %d[%c0, %c0] : memref<?x2xf32>
  memref.dealloc %s : memref<2xi64>
  memref.dealloc %t : memref<2xi64>
  memref.dealloc %d : memref<?x2xf32>
  return %v : f32
}

// -----

// A small buffer written by a kernel-side op (it reads device data) stays a
// runtime allocation: placing it on the host would let a kernel read the
// host stack.
// CHECK-LABEL: func.func @written_from_device_data
// CHECK: %[[B:.+]] = memref.alloc() : memref<1xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[B]]
func.func @written_from_device_data(%x: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %b = memref.alloc() : memref<1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (0)>], iterator_types = ["reduction"]} ins(%x : memref<?xf32>) outs(%b : memref<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  %v = memref.load %b[%c0] : memref<1xf32>
  memref.dealloc %b : memref<1xf32>
  return %v : f32
}

// RUN: disc-opt --disc-gpu-fuse-independent-loops=max-elements=-1 --split-input-file %s | FileCheck %s
// RUN: disc-opt --disc-gpu-fuse-independent-loops=max-elements=-1 --disc-gpu-tile-parallel-loops --gpu-map-parallel-loops --convert-parallel-loops-to-gpu --canonicalize '--disc-gpu-kernel-cost=report=true' --split-input-file %s 2>&1 >/dev/null | FileCheck %s --check-prefix=COST
// RUN: disc-opt --disc-gpu-fuse-independent-loops --split-input-file %s | FileCheck %s --check-prefix=DEFAULT

// Horizontal fusion (docs/cuda.md, "Independent loop nests"): three nests
// over different spaces that share no written buffer become one nest over
// n*3 + 5 + 2*m*4 elements; a tree of disc.segment_split branches on the
// linear index picks the nest, whose indices are the offset index
// delinearized over its bounds. The allocations between them move above,
// the deallocation below (no allocation after it).
// CHECK-LABEL: func.func @disc_entry
// CHECK: %[[A:.+]] = memref.alloc(%{{.+}}) : memref<?x3xf32>
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<5xf32>
// CHECK: %[[B:.+]] = memref.alloc(%{{.+}}) : memref<2x?x4xf32>
// CHECK: %[[N3:.+]] = arith.muli %{{.+}}, %c3
// CHECK: %[[O1:.+]] = arith.addi %c0{{.*}}, %[[N3]]
// CHECK: %[[O2:.+]] = arith.addi %[[O1]], %{{.+}}
// CHECK: %[[TOTAL:.+]] = arith.addi %[[O2]], %{{.+}}
// CHECK: scf.parallel (%[[I:.+]]) = (%c0{{.*}}) to (%[[TOTAL]]) step (%c1{{.*}}) {
// CHECK-NEXT: %[[LO:.+]] = arith.cmpi ult, %[[I]], %[[O1]]
// CHECK-NEXT: scf.if %[[LO]] {
// CHECK-NEXT: %[[J:.+]] = arith.remui %[[I]], %c3
// CHECK-NEXT: %[[R:.+]] = arith.divui %[[I]], %c3
// CHECK: memref.store %{{.+}}, %[[A]][%[[R]], %[[J]]]
// CHECK: } else {
// CHECK-NEXT: %[[MID:.+]] = arith.cmpi ult, %[[I]], %[[O2]]
// CHECK-NEXT: scf.if %[[MID]] {
// CHECK-NEXT: %[[K:.+]] = arith.subi %[[I]], %[[O1]]
// CHECK: memref.store %{{.+}}, %[[OUT]][%[[K]]]
// CHECK: } else {
// CHECK-NEXT: %[[L:.+]] = arith.subi %[[I]], %[[O2]]
// CHECK-NEXT: %[[L2:.+]] = arith.remui %[[L]], %c4
// CHECK-NEXT: %[[L1R:.+]] = arith.divui %[[L]], %c4
// CHECK-NEXT: %[[L1:.+]] = arith.remui %[[L1R]], %{{.+}}
// CHECK-NEXT: %[[L0:.+]] = arith.divui %[[L1R]], %{{.+}}
// CHECK: memref.store %{{.+}}, %[[B]][%[[L0]], %[[L1]], %[[L2]]]
// CHECK: } {disc.segment_split}
// CHECK: } {disc.segment_split}
// CHECK-NOT: scf.parallel
// CHECK: memref.dealloc %arg3
// By default (max-elements=262144) only nests of static bounds join: the
// three stay apart.
// DEFAULT-LABEL: func.func @disc_entry
// DEFAULT-COUNT-3: scf.parallel
// DEFAULT-NOT: disc.segment_split
// The FLOP count follows the segments: n*3 exp + 5 adds + 8*m muls.
// COST: kernel disc_entry_kernel: ONNX node 'a, b, c': bytes m*64 + n*24 + 40, FLOPs m*8 + n*3 + 5
module attributes {disc.signature = {symbols = [{name = "n", min = 1 : i64}, {name = "m", min = 1 : i64}]}} {
func.func @disc_entry(%x: memref<?x3xf32> {disc.dims = ["n", 3]}, %y: memref<5xf32>, %z: memref<2x?x4xf32> {disc.dims = [2, "m", 4]}, %t: memref<5xf32>)
    -> (memref<?x3xf32>, memref<5xf32>, memref<2x?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %n = memref.dim %x, %c0 : memref<?x3xf32>
  %a = memref.alloc(%n) : memref<?x3xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c3) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x3xf32>
    %e = math.exp %v : f32
    memref.store %e, %a[%i, %j] : memref<?x3xf32>
    scf.reduce
  } loc("a")
  %out = memref.alloc() : memref<5xf32>
  %m = memref.dim %z, %c1 : memref<2x?x4xf32>
  %b = memref.alloc(%m) : memref<2x?x4xf32>
  scf.parallel (%k) = (%c0) to (%c5) step (%c1) {
    %v = memref.load %y[%k] : memref<5xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %out[%k] : memref<5xf32>
    scf.reduce
  } loc("b")
  memref.dealloc %t : memref<5xf32>
  scf.parallel (%p, %q, %r) = (%c0, %c0, %c0) to (%c2, %m, %c4) step (%c1, %c1, %c1) {
    %v = memref.load %z[%p, %q, %r] : memref<2x?x4xf32>
    %s = arith.mulf %v, %v : f32
    memref.store %s, %b[%p, %q, %r] : memref<2x?x4xf32>
    scf.reduce
  } loc("c")
  return %a, %out, %b : memref<?x3xf32>, memref<5xf32>, memref<2x?x4xf32>
}
}

// -----

// The second nest reads what the first writes (a dependence), the third
// is allocated after a deallocation (moving the allocation up would raise
// the live bytes there), the fourth starts at 1: four kernels.
// CHECK-LABEL: func.func @kept_apart
// CHECK-COUNT-4: scf.parallel
// CHECK-NOT: disc.segment_split
func.func @kept_apart(%x: memref<8xf32>, %y: memref<4xf32>) -> (memref<8xf32>, memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %a[%i] : memref<8xf32>
    scf.reduce
  }
  %b = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %a[%i] : memref<8xf32>
    memref.store %v, %b[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %y : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %c[%i] : memref<4xf32>
    scf.reduce
  }
  %d = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c1) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %d[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %d : memref<4xf32>
  return %a, %b, %c : memref<8xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// The second nest writes what the first reads (a write after a read):
// two kernels.
// CHECK-LABEL: func.func @write_after_read
// CHECK-COUNT-2: scf.parallel
// CHECK-NOT: disc.segment_split
func.func @write_after_read(%x: memref<4xf32>) -> (memref<8xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<4xf32>
  memref.copy %x, %a : memref<4xf32> to memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %k = arith.remui %i, %c4 : index
    %v = memref.load %a[%k] : memref<4xf32>
    memref.store %v, %b[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %a[%i] : memref<4xf32>
    scf.reduce
  }
  return %b, %a : memref<8xf32>, memref<4xf32>
}

// -----

// Static nests: the two small ones join by default, the one of 1024 * 512
// iterations (over max-elements) stays a kernel of its own.
// With max-elements=-1 the three are one nest.
// CHECK-LABEL: func.func @static_sizes
// CHECK-COUNT-1: scf.parallel
// CHECK-NOT: scf.parallel
// DEFAULT-LABEL: func.func @static_sizes
// DEFAULT: scf.parallel (%{{.+}}) = (%c0{{.*}}) to (%{{.+}}) step (%c1{{.*}}) {
// DEFAULT: } {disc.segment_split}
// DEFAULT: scf.parallel (%{{.+}}, %{{.+}}) = (%c0, %c0) to (%c1024, %c512)
// DEFAULT-NOT: disc.segment_split
func.func @static_sizes(%x: memref<4x8xf32>, %y: memref<16xf32>, %z: memref<1024x512xf32>)
    -> (memref<4x8xf32>, memref<16xf32>, memref<1024x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %a = memref.alloc() : memref<4x8xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x8xf32>
    memref.store %v, %a[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  %b = memref.alloc() : memref<16xf32>
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %v = memref.load %y[%i] : memref<16xf32>
    memref.store %v, %b[%i] : memref<16xf32>
    scf.reduce
  }
  %c = memref.alloc() : memref<1024x512xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c512) step (%c1, %c1) {
    %v = memref.load %z[%i, %j] : memref<1024x512xf32>
    memref.store %v, %c[%i, %j] : memref<1024x512xf32>
    scf.reduce
  }
  return %a, %b, %c : memref<4x8xf32>, memref<16xf32>, memref<1024x512xf32>
}

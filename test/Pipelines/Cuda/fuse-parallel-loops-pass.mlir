// RUN: disc-opt --disc-gpu-fuse-parallel-loops --split-input-file %s | FileCheck %s
// RUN: disc-opt --disc-gpu-fuse-parallel-loops=stitch-rows=false --split-input-file %s | FileCheck %s --check-prefix=NOSTITCH

// A keep-dims row sum: the fill loops over the output's unit dim, the
// reduction (output map with a constant 0 there) does not. The unit dim
// goes (its index becomes the lower bound), then both nests fuse: one loop
// over the rows that fills, then accumulates.
// CHECK-LABEL: func.func @fill_then_row_sum
// CHECK: scf.parallel (%[[I:.+]]) = (%c0) to (%[[N:.+]]) step (%c1) {
// CHECK-NEXT: memref.store %{{.+}}, %[[OUT:.+]][%[[I]], %c0]
// CHECK: scf.for
// CHECK: memref.load %[[OUT]][%[[I]], %c0]
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
func.func @fill_then_row_sum(%in: memref<?x16xf32>) -> memref<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %in, %c0 : memref<?x16xf32>
  %out = memref.alloc(%n) : memref<?x1xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c1) step (%c1, %c1) {
    memref.store %zero, %out[%i, %j] : memref<?x1xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %k] : memref<?x16xf32>
      %acc = memref.load %out[%i, %c0] : memref<?x1xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %out[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  return %out : memref<?x1xf32>
}

// -----

// A full reduction in a one-iteration loop (disc-gpu-prepare-linalg) keeps
// its loop (one thread), and fuses with its one-element fill.
// CHECK-LABEL: func.func @full_sum
// CHECK: scf.parallel (%{{.+}}) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: memref.store %{{.+}}, %[[OUT:.+]][%c0, %c0]
// CHECK: scf.for
// CHECK: memref.load %[[OUT]][%c0, %c0]
// CHECK-NOT: scf.parallel
func.func @full_sum(%in: memref<?xf32>) -> memref<1x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %in, %c0 : memref<?xf32>
  %out = memref.alloc() : memref<1x1xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c1) step (%c1, %c1) {
    memref.store %zero, %out[%i, %j] : memref<1x1xf32>
    scf.reduce
  }
  scf.parallel (%t) = (%c0) to (%c1) step (%c1) {
    scf.for %k = %c0 to %n step %c1 {
      %x = memref.load %in[%k] : memref<?xf32>
      %acc = memref.load %out[%c0, %c0] : memref<1x1xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %out[%c0, %c0] : memref<1x1xf32>
    }
    scf.reduce
  }
  return %out : memref<1x1xf32>
}

// -----

// Not fused: the second nest reads the first's result at another index
// (a shift), and an allocation after a deallocation between two nests ends
// the chain (moving it above the first nest would hold both buffers).
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-3: scf.parallel
func.func @not_fused(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %m = arith.subi %n, %c1 : index
  %t = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %t[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %i1 = arith.addi %i, %c1 : index
    %x = memref.load %t[%i1] : memref<?xf32>
    memref.store %x, %b[%i] : memref<?xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<?xf32>
  %u = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %x = memref.load %b[%i] : memref<?xf32>
    memref.store %x, %u[%i] : memref<?xf32>
    scf.reduce
  }
  memref.dealloc %u : memref<?xf32>
  return
}

// -----

// An allocation (and its size check) between two nests over the same space
// moves above the first; a deallocation between them moves below the
// second (no allocation follows it): one nest.
// CHECK-LABEL: func.func @gathered
// CHECK: memref.alloc
// CHECK: memref.alloc
// CHECK: scf.if
// CHECK: call @disc_check_failed
// CHECK: memref.alloc
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc
func.func private @disc_check_failed(i64, i64, i64, i64, i64)
func.func @gathered(%a: memref<?xf32>, %big: i1) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i64
  %n = memref.dim %a, %c0 : memref<?xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  %t = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %s[%i] : memref<?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %t[%i] : memref<?xf32>
    scf.reduce
  }
  scf.if %big {
    func.call @disc_check_failed(%z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64) -> ()
  }
  %u = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %s : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %t[%i] : memref<?xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %u[%i] : memref<?xf32>
    scf.reduce
  }
  return %t, %u : memref<?xf32>, memref<?xf32>
}

// -----

// Two reductions over the same rows of run-time length (a Softmax's max,
// then its sum of exp(x - max)): each keeps its fill, but the two stay two
// nests, so that disc-gpu-stitch-rows makes each a phase of one block per
// row. With stitch-rows=false (no row kernels), they fuse: one thread per
// row runs both loops.
// CHECK-LABEL: func.func @two_row_reductions
// CHECK: scf.parallel
// CHECK: arith.maximumf
// CHECK: scf.reduce
// CHECK: scf.parallel
// CHECK: math.exp
// CHECK: scf.reduce
// NOSTITCH-LABEL: func.func @two_row_reductions
// NOSTITCH: scf.parallel
// NOSTITCH: arith.maximumf
// NOSTITCH-NOT: scf.parallel
// NOSTITCH: math.exp
func.func @two_row_reductions(%in: memref<?x?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %in, %c0 : memref<?x?xf32>
  %d = memref.dim %in, %c1 : memref<?x?xf32>
  %m = memref.alloc(%n) : memref<?xf32>
  %s = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %ninf, %m[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %d step %c1 {
      %x = memref.load %in[%i, %k] : memref<?x?xf32>
      %acc = memref.load %m[%i] : memref<?xf32>
      %r = arith.maximumf %acc, %x : f32
      memref.store %r, %m[%i] : memref<?xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %d step %c1 {
      %x = memref.load %in[%i, %k] : memref<?x?xf32>
      %mx = memref.load %m[%i] : memref<?xf32>
      %acc = memref.load %s[%i] : memref<?xf32>
      %e = arith.subf %x, %mx : f32
      %ex = math.exp %e : f32
      %r = arith.addf %acc, %ex : f32
      memref.store %r, %s[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %m, %s : memref<?xf32>, memref<?xf32>
}

// RUN: disc-opt --disc-gpu-stitch-rows --split-input-file %s | FileCheck %s
// RUN: not disc-opt --pass-pipeline='builtin.module(func.func(disc-gpu-stitch-rows{max-block-size=48}))' %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: disc-gpu-stitch-rows: max-block-size must be a multiple of 32 in [32, 1024], got 48
// RUN: disc-opt --pass-pipeline='builtin.module(func.func(disc-gpu-stitch-rows{elements-per-thread=16}))' --split-input-file %s | FileCheck %s --check-prefix=EPT
// RUN: not disc-opt --pass-pipeline='builtin.module(func.func(disc-gpu-stitch-rows{elements-per-thread=0}))' %s 2>&1 | FileCheck %s --check-prefix=BADEPT
// BADEPT: disc-gpu-stitch-rows: elements-per-thread must be >= 1, got 0

// With 16 elements per thread the block is the smallest multiple of 32
// that covers ceil(length / 16), in [32, 256].
// EPT-LABEL: func.func @max_then_exp
// EPT: %[[LEN:.+]] = arith.maxui
// EPT: %[[A:.+]] = arith.addi %[[LEN]], %c15
// EPT: %[[P:.+]] = arith.divui %[[A]], %c16
// EPT: %[[R:.+]] = arith.addi %[[P]], %c31
// EPT: arith.divui %[[R]], %c32
// EPT: gpu.launch

// Softmax's first half: a row max, then exp(x - max) over the same rows,
// with the allocation of the second nest's output between them. One kernel
// with a block per row: the allocation moves above it; the max is strided
// partials, a shuffle butterfly, one shared slot per warp, thread 0 stores
// combine(init, total); a barrier; the elementwise phase strides over the
// row. Each strided loop is unrolled: a main loop of four copies per
// thread (the loads of all four first), then a remainder loop of one, in
// the plain loop's order (the fold gives the same bits); the max that the
// elementwise phase reads at the row is loaded once per row, by the
// threads that have an element.
// CHECK-LABEL: func.func @max_then_exp
// CHECK: %[[E:.+]] = memref.alloc(%{{.+}}) : memref<?x?xf32>
// CHECK: gpu.launch
// CHECK-SAME: threads(%[[TID:[^,]+]], %{{[^)]+}}) in (%[[BS:[^ ]+]] = %{{[^)]+}})
// CHECK-SAME: workgroup(%[[SH:.+]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %[[ROW:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[STEP:.+]] = arith.muli %[[BS]], %c4
// CHECK: %[[Q:.+]] = arith.divui %{{.+}}, %[[STEP]]
// CHECK: %[[END:.+]] = arith.muli %[[Q]], %[[STEP]]
// CHECK: %[[MAIN:.+]] = scf.for %[[B:.+]] = %{{.+}} to %[[END]] step %[[STEP]] iter_args(%[[A:.+]] = %cst{{.*}}) -> (f32) {
// CHECK: %[[J0:.+]] = arith.addi %[[B]], %[[TID]]
// CHECK: %[[V0:.+]] = memref.load %arg0[%[[ROW]], %[[J0]]]
// CHECK: memref.load
// CHECK: memref.load
// CHECK: %[[V3:.+]] = memref.load
// CHECK: %[[M0:.+]] = arith.maximumf %[[A]], %[[V0]]
// CHECK: arith.maximumf %[[M0]]
// CHECK: arith.maximumf
// CHECK: %[[M3:.+]] = arith.maximumf %{{.+}}, %[[V3]]
// CHECK: scf.yield %[[M3]]
// CHECK: } {disc.strided_main}
// CHECK: %[[RS:.+]] = arith.addi %[[END]], %[[TID]]
// CHECK: scf.for %{{.+}} = %[[RS]] to %{{.+}} step %[[BS]] iter_args(%{{.+}} = %[[MAIN]]) -> (f32) {
// CHECK: arith.maximumf
// CHECK: } {disc.strided_rest}
// CHECK: gpu.shuffle {{ *}}xor %{{.+}}, %c16_i32, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle {{ *}}xor %{{.+}}, %c1_i32, %c32_i32{{.*}} : f32
// CHECK: memref.store %{{.+}}, %[[SH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SH]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: %[[HAS:.+]] = arith.cmpi ult, %[[TID]], %{{.+}} : index
// CHECK: %[[MAX:.+]] = scf.if %[[HAS]] -> (f32) {
// CHECK: memref.load %{{.+}}[%[[ROW]], %{{.+}}] : memref<?x1xf32>
// CHECK: } else {
// CHECK: } {disc.row_invariant}
// CHECK: scf.for
// CHECK-COUNT-4: memref.load %arg0
// CHECK: arith.subf %{{.+}}, %[[MAX]]
// CHECK: math.exp
// CHECK: memref.store %{{.+}}, %[[E]]
// CHECK: } {disc.strided_main}
// CHECK: scf.for
// CHECK-NOT: memref.load %{{.+}} : memref<?x1xf32>
// CHECK: math.exp
// CHECK: memref.store %{{.+}}, %[[E]]
// CHECK: } {disc.strided_rest}
// CHECK: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
func.func @max_then_exp(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %d = memref.dim %x, %c1 : memref<?x?xf32>
  %m = memref.alloc(%n) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %ninf, %m[%i, %c0] : memref<?x1xf32>
    scf.for %j = %c0 to %d step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %a = memref.load %m[%i, %c0] : memref<?x1xf32>
      %r = arith.maximumf %a, %v : f32
      memref.store %r, %m[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  %e = memref.alloc(%n, %d) : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %d) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %a = memref.load %m[%i, %c0] : memref<?x1xf32>
    %s = arith.subf %v, %a : f32
    %r = math.exp %s : f32
    memref.store %r, %e[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  memref.dealloc %m : memref<?x1xf32>
  return %e : memref<?x?xf32>
}

// -----

// A deallocation between two nests ends the run (moving it would change
// the peak): two kernels, the second alone is a row kernel too.
// CHECK-LABEL: func.func @dealloc_ends_the_run
// CHECK: gpu.launch
// CHECK: memref.dealloc
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
func.func @dealloc_ends_the_run(%x: memref<?x?xf32>, %t: memref<?x?xf32>) -> memref<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %d = memref.dim %x, %c1 : memref<?x?xf32>
  %s = memref.alloc(%n) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i, %c0] : memref<?x1xf32>
    scf.for %j = %c0 to %d step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %a = memref.load %s[%i, %c0] : memref<?x1xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %s[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  memref.dealloc %t : memref<?x?xf32>
  %q = memref.alloc(%n) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %q[%i, %c0] : memref<?x1xf32>
    scf.for %j = %c0 to %d step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %w = memref.load %s[%i, %c0] : memref<?x1xf32>
      %p = arith.mulf %v, %w : f32
      %a = memref.load %q[%i, %c0] : memref<?x1xf32>
      %r = arith.addf %a, %p : f32
      memref.store %r, %q[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  memref.dealloc %s : memref<?x1xf32>
  return %q : memref<?x1xf32>
}

// -----

// The elementwise nest reads the reduction's result of another row (the
// next one): a block per row cannot see it, nothing changes.
// CHECK-LABEL: func.func @other_row
// CHECK-NOT: gpu.launch
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @other_row(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %d = memref.dim %x, %c1 : memref<?x?xf32>
  %s = memref.alloc(%n) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i, %c0] : memref<?x1xf32>
    scf.for %j = %c0 to %d step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %a = memref.load %s[%i, %c0] : memref<?x1xf32>
      %r = arith.addf %a, %v : f32
      memref.store %r, %s[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  %e = memref.alloc(%n, %d) : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %d) step (%c1, %c1) {
    %k = arith.addi %i, %c1 : index
    %l = arith.remui %k, %n : index
    %v = memref.load %x[%i, %j] : memref<?x?xf32>
    %a = memref.load %s[%l, %c0] : memref<?x1xf32>
    %r = arith.divf %v, %a : f32
    memref.store %r, %e[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  memref.dealloc %s : memref<?x1xf32>
  return %e : memref<?x?xf32>
}

// -----

// A combiner without a known identity (subtraction is not associative):
// the reduction stays one thread per row.
// CHECK-LABEL: func.func @no_identity
// CHECK-NOT: gpu.launch
func.func @no_identity(%x: memref<?x?xf32>) -> memref<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %d = memref.dim %x, %c1 : memref<?x?xf32>
  %s = memref.alloc(%n) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %s[%i, %c0] : memref<?x1xf32>
    scf.for %j = %c0 to %d step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %a = memref.load %s[%i, %c0] : memref<?x1xf32>
      %r = arith.subf %a, %v : f32
      memref.store %r, %s[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  return %s : memref<?x1xf32>
}

// -----

// An elementwise phase that updates a buffer in place (it loads and stores
// the same allocation): the unrolled copies keep their order (a copy's
// load after the previous copy's store), since loading first could read
// what a store of an earlier copy changes. The row max is still loaded once
// per row.
// CHECK-LABEL: func.func @in_place_phase
// CHECK: %[[E:.+]] = memref.alloc(%{{.+}}, %{{.+}}) : memref<?x?xf32>
// CHECK: gpu.launch
// CHECK: } {disc.strided_rest}
// CHECK: } {disc.row_invariant}
// CHECK: scf.for
// CHECK: memref.load %[[E]]
// CHECK-NEXT: arith.subf
// CHECK-NEXT: memref.store %{{.+}}, %[[E]]
// CHECK: memref.load %[[E]]
// CHECK-NEXT: arith.subf
// CHECK-NEXT: memref.store %{{.+}}, %[[E]]
// CHECK: } {disc.strided_main}
func.func @in_place_phase(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %d = memref.dim %x, %c1 : memref<?x?xf32>
  %e = memref.alloc(%n, %d) : memref<?x?xf32>
  memref.copy %x, %e : memref<?x?xf32> to memref<?x?xf32>
  %m = memref.alloc(%n) : memref<?x1xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %ninf, %m[%i, %c0] : memref<?x1xf32>
    scf.for %j = %c0 to %d step %c1 {
      %v = memref.load %e[%i, %j] : memref<?x?xf32>
      %a = memref.load %m[%i, %c0] : memref<?x1xf32>
      %r = arith.maximumf %a, %v : f32
      memref.store %r, %m[%i, %c0] : memref<?x1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %d) step (%c1, %c1) {
    %v = memref.load %e[%i, %j] : memref<?x?xf32>
    %a = memref.load %m[%i, %c0] : memref<?x1xf32>
    %s = arith.subf %v, %a : f32
    memref.store %s, %e[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  memref.dealloc %m : memref<?x1xf32>
  return %e : memref<?x?xf32>
}

// RUN: disc-opt --split-input-file --verify-diagnostics --disc-gpu-emulate-launches --canonicalize %s | FileCheck %s

// Kernels that synchronize their threads run as work-item loops: per
// block, one loop over the threads between two barriers; shared memory is a
// stack buffer; a value that lives across a barrier is kept per thread.
// CHECK-LABEL: func.func @barrier
// CHECK: %[[SP:.+]] = llvm.intr.stacksave
// CHECK: %[[S:.+]] = memref.alloca() {alignment = 16 : i64} : memref<64xf32>
// CHECK: %[[L:.+]] = memref.alloca() : memref<64xf32>
// CHECK: scf.for %[[B:.+]] = %c0 to %arg1
// CHECK-NEXT: scf.for %[[T:.+]] = %c0 to %c64
// CHECK: %[[V:.+]] = memref.load %arg0
// CHECK-NEXT: memref.store %[[V]], %[[S]][%[[T]]]
// CHECK-NEXT: memref.store %[[V]], %[[L]][%[[T]]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[T2:.+]] = %c0 to %c64
// CHECK-NEXT: %[[J:.+]] = arith.subi %c63, %[[T2]]
// CHECK-NEXT: %[[R:.+]] = memref.load %[[S]][%[[J]]]
// CHECK-NEXT: %[[V2:.+]] = memref.load %[[L]][%[[T2]]]
// CHECK-NEXT: arith.mulf %[[R]], %[[V2]]
// CHECK: llvm.intr.stackrestore %[[SP]]
// CHECK-NOT: gpu.
func.func @barrier(%a: memref<?xf32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) workgroup(%s : memref<64xf32, #gpu.address_space<workgroup>>) {
    %c63 = arith.constant 63 : index
    %base = arith.muli %bx, %u : index
    %i = arith.addi %base, %tx : index
    %l = memref.load %a[%i] : memref<?xf32>
    memref.store %l, %s[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %j = arith.subi %c63, %tx : index
    %r = memref.load %s[%j] : memref<64xf32, #gpu.address_space<workgroup>>
    %m = arith.mulf %r, %l : f32
    memref.store %m, %a[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A barrier in a block-uniform scf.for: the loop stays on the host around
// the thread loops; its per-thread accumulator lives in a host array
// (initialized before, copied at the end of each iteration, read after).
// CHECK-LABEL: func.func @barrier_in_for
// CHECK: %[[S:.+]] = memref.alloca() {alignment = 16 : i64} : memref<32xf32>
// CHECK: %[[ACC:.+]] = memref.alloca() : memref<32xf32>
// CHECK: %[[NEXT:.+]] = memref.alloca() : memref<32xf32>
// CHECK: scf.for %[[T:.+]] = %c0 to %c32
// CHECK-NEXT: memref.store %cst, %[[ACC]][%[[T]]]
// CHECK: scf.for %[[K:.+]] = %c0 to %arg1
// CHECK-NEXT: scf.for
// CHECK: memref.store %{{.+}}, %[[S]]
// CHECK: scf.for %[[T2:.+]] = %c0 to %c32
// CHECK-NEXT: %[[R:.+]] = memref.load %[[S]][%[[K]]]
// CHECK-NEXT: %[[A:.+]] = memref.load %[[ACC]][%[[T2]]]
// CHECK-NEXT: %[[N:.+]] = arith.addf %[[A]], %[[R]]
// CHECK-NEXT: memref.store %[[N]], %[[NEXT]][%[[T2]]]
// CHECK: scf.for %[[T3:.+]] = %c0 to %c32
// CHECK-NEXT: %[[X:.+]] = memref.load %[[NEXT]][%[[T3]]]
// CHECK-NEXT: memref.store %[[X]], %[[ACC]][%[[T3]]]
// CHECK: scf.for %[[T4:.+]] = %c0 to %c32
// CHECK-NEXT: %[[F:.+]] = memref.load %[[ACC]][%[[T4]]]
// CHECK-NEXT: memref.store %[[F]], %arg0[%[[T4]]]
func.func @barrier_in_for(%a: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c32, %v = %c1, %w = %c1) workgroup(%s : memref<32xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %l = memref.load %a[%tx] : memref<?xf32>
      memref.store %l, %s[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %r = memref.load %s[%k] : memref<32xf32, #gpu.address_space<workgroup>>
      %next = arith.addf %acc, %r : f32
      gpu.barrier
      scf.yield %next : f32
    }
    memref.store %sum, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A shuffle: every thread stores its value in an exchange array, then
// reads its source lane's (lane ^ 1 here) when the source is valid, its
// own otherwise.
// CHECK-LABEL: func.func @shuffle
// CHECK: %[[X:.+]] = memref.alloca() : memref<32xf32>
// CHECK: scf.for %[[T:.+]] = %c0 to %c32
// CHECK-NEXT: %[[V:.+]] = memref.load %arg0[%[[T]]]
// CHECK-NEXT: memref.store %[[V]], %[[X]][%[[T]]]
// CHECK: scf.for %[[T2:.+]] = %c0 to %c32
// CHECK-NEXT: %[[LANE:.+]] = arith.remui %[[T2]], %c32
// CHECK-NEXT: %[[BASE:.+]] = arith.subi %[[T2]], %[[LANE]]
// CHECK-NEXT: %[[L32:.+]] = arith.index_cast %[[LANE]]
// CHECK-NEXT: %[[SRC:.+]] = arith.xori %[[L32]], %c1_i32
// CHECK: arith.cmpi ult, %{{.+}}, %c32 : index
// CHECK-NEXT: %[[VALID:.+]] = arith.andi
// CHECK-NEXT: %[[IDX:.+]] = arith.select %[[VALID]], %{{.+}}, %[[T2]]
// CHECK-NEXT: %[[R:.+]] = memref.load %[[X]][%[[IDX]]]
// CHECK-NEXT: %[[OWN:.+]] = memref.load %[[X]][%[[T2]]]
// CHECK-NEXT: arith.select %[[VALID]], %[[R]], %[[OWN]]
func.func @shuffle(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c32, %v = %c1, %w = %c1) {
    %off = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    %l = memref.load %a[%tx] : memref<?xf32>
    %r, %ok = gpu.shuffle xor %l, %off, %width : f32
    %s = arith.select %ok, %r, %l : f32
    memref.store %s, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A condition that does not depend on the thread id (a load of shared
// memory at a fixed address) is block-uniform: thread 0's value decides a
// host scf.if around the thread loops.
// CHECK-LABEL: func.func @uniform_if
// CHECK: %[[P:.+]] = memref.alloca() : memref<32xi1>
// CHECK: memref.store %{{.+}}, %[[P]]
// CHECK: %[[C:.+]] = memref.load %[[P]][%c0]
// CHECK-NEXT: scf.if %[[C]] {
// CHECK-NEXT: scf.for
func.func @uniform_if(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c32, %v = %c1, %w = %c1) workgroup(%s : memref<32xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %l = memref.load %a[%tx] : memref<?xf32>
    memref.store %l, %s[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %first = memref.load %s[%c0] : memref<32xf32, #gpu.address_space<workgroup>>
    %p = arith.cmpf ogt, %first, %zero : f32
    scf.if %p {
      memref.store %zero, %s[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
    }
    %r = memref.load %s[%c0] : memref<32xf32, #gpu.address_space<workgroup>>
    memref.store %r, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A block-uniform scf.if with results around a barrier: each branch ends
// by storing its yielded value in the result's host array.
// CHECK-LABEL: func.func @if_results
// CHECK: %[[S:.+]] = memref.alloca() {alignment = 16 : i64} : memref<32xf32>
// CHECK: %[[RES:.+]] = memref.alloca() : memref<32xf32>
// CHECK: %[[L:.+]] = memref.alloca() : memref<32xf32>
// CHECK: scf.if %arg1 {
// CHECK: scf.for
// CHECK: scf.for %[[T:.+]] = %c0 to %c32
// CHECK-NEXT: %[[J:.+]] = arith.subi %c31, %[[T]]
// CHECK-NEXT: %[[O:.+]] = memref.load %[[S]][%[[J]]]
// CHECK-NEXT: memref.store %[[O]], %[[RES]][%[[T]]]
// CHECK: } else {
// CHECK-NEXT: scf.for %[[T2:.+]] = %c0 to %c32
// CHECK-NEXT: %[[V:.+]] = memref.load %[[L]][%[[T2]]]
// CHECK-NEXT: memref.store %[[V]], %[[RES]][%[[T2]]]
// CHECK: scf.for %[[T3:.+]] = %c0 to %c32
// CHECK-NEXT: %[[R:.+]] = memref.load %[[RES]][%[[T3]]]
// CHECK-NEXT: memref.store %[[R]], %arg0[%[[T3]]]
func.func @if_results(%a: memref<?xf32>, %flag: i1) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c32, %v = %c1, %w = %c1) workgroup(%s : memref<32xf32, #gpu.address_space<workgroup>>) {
    %l = memref.load %a[%tx] : memref<?xf32>
    %r = scf.if %flag -> (f32) {
      memref.store %l, %s[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c31 = arith.constant 31 : index
      %j = arith.subi %c31, %tx : index
      %o = memref.load %s[%j] : memref<32xf32, #gpu.address_space<workgroup>>
      scf.yield %o : f32
    } else {
      scf.yield %l : f32
    }
    memref.store %r, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A barrier under thread-dependent control flow is undefined behaviour in
// CUDA: refused, naming the op.
func.func @divergent_barrier(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) {
    %c32 = arith.constant 32 : index
    %p = arith.cmpi ult, %tx, %c32 : index
    // expected-error @+1 {{cannot emulate 'gpu.barrier' under thread-dependent control flow: the condition of this 'scf.if' depends on the thread id (every thread of a block must reach the same barrier)}}
    scf.if %p {
      // expected-note @+1 {{the gpu.barrier is here}}
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A shuffle in a loop whose trip count depends on the thread id.
func.func @divergent_shuffle(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) {
    %c0 = arith.constant 0 : index
    %off = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    %l = memref.load %a[%tx] : memref<?xf32>
    // expected-error @+1 {{cannot emulate 'gpu.shuffle' under thread-dependent control flow: the bounds of this 'scf.for' depend on the thread id (every lane of a warp must reach the same shuffle)}}
    %r = scf.for %k = %c0 to %tx step %c1 iter_args(%acc = %l) -> (f32) {
      // expected-note @+1 {{the gpu.shuffle is here}}
      %s, %ok = gpu.shuffle xor %acc, %off, %width : f32
      scf.yield %s : f32
    }
    memref.store %r, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @barrier_in_while(%a: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cannot emulate 'gpu.barrier' inside 'scf.while' (only block-uniform scf.for and scf.if)}}
    %r = scf.while (%i = %c0) : (index) -> index {
      %p = arith.cmpi ult, %i, %n : index
      scf.condition(%p) %i : index
    } do {
    ^bb0(%i: index):
      // expected-note @+1 {{the gpu.barrier is here}}
      gpu.barrier
      %j = arith.addi %i, %c1 : index
      scf.yield %j : index
    }
    gpu.terminator
  }
  return
}

// -----

// Per-thread memory cannot live across a barrier.
func.func @buffer_across_barrier(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{cannot emulate: a value of type 'memref<4xf32>' is used across a gpu.barrier or gpu.shuffle (only integers, floats and vectors are kept per thread)}}
    %buf = memref.alloca() : memref<4xf32>
    gpu.barrier
    %l = memref.load %buf[%c0] : memref<4xf32>
    memref.store %l, %a[%c0] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Subgroup reductions are not emulated (the CUDA target does not lower
// them either).
func.func @subgroup_reduce(%a: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %c0 = arith.constant 0 : index
    %l = memref.load %a[%c0] : memref<?xf32>
    // expected-error @+1 {{cannot emulate 'gpu.subgroup_reduce' (barriers, shuffles and shared memory are emulated; reductions across threads only through gpu.shuffle)}}
    %r = gpu.subgroup_reduce add %l : (f32) -> f32
    memref.store %r, %a[%c0] : memref<?xf32>
    gpu.terminator
  }
  return
}

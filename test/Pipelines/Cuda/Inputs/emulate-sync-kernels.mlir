// Kernels with shared memory, barriers and warp shuffles for
// emulate-sync-exec.test: Inputs/emulate_sync_exec.py runs each through
// disc-gpu-emulate-launches on the CPU and compares every output bit for
// bit with NumPy float32 replays of the same operation order. Each takes
// its input, its outputs, then the number of blocks.

// Tree sum in shared memory (128 threads): 7 halving steps, a barrier
// after each in a block-uniform scf.for; the loaded value lives across the
// barriers. out[i] = blockSum * in[i].
func.func @tree_sum(%in: memref<?xf32>, %out: memref<?xf32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c128, %v = %c1, %w = %c1) workgroup(%s : memref<128xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %c64 = arith.constant 64 : index
    %base = arith.muli %bx, %u : index
    %i = arith.addi %base, %tx : index
    %val = memref.load %in[%i] : memref<?xf32>
    memref.store %val, %s[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    scf.for %k = %c0 to %c7 step %c1 {
      %stride = arith.shrui %c64, %k : index
      %p = arith.cmpi ult, %tx, %stride : index
      scf.if %p {
        %j = arith.addi %tx, %stride : index
        %a = memref.load %s[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
        %b = memref.load %s[%j] : memref<128xf32, #gpu.address_space<workgroup>>
        %sum = arith.addf %a, %b : f32
        memref.store %sum, %s[%tx] : memref<128xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
    }
    %r = memref.load %s[%c0] : memref<128xf32, #gpu.address_space<workgroup>>
    %scaled = arith.mulf %r, %val : f32
    memref.store %scaled, %out[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// Shuffle-xor butterfly over each warp of 96 threads (3 warps), width 32:
// every lane gets its warp's sum. valid[i] is the first step's flag.
func.func @xor_sum(%in: memref<?xf32>, %out: memref<?xf32>, %valid: memref<?xi32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c96 = arith.constant 96 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c96, %v = %c1, %w = %c1) {
    %base = arith.muli %bx, %u : index
    %i = arith.addi %base, %tx : index
    %val = memref.load %in[%i] : memref<?xf32>
    %w32 = arith.constant 32 : i32
    %o16 = arith.constant 16 : i32
    %o8 = arith.constant 8 : i32
    %o4 = arith.constant 4 : i32
    %o2 = arith.constant 2 : i32
    %o1 = arith.constant 1 : i32
    %s1, %v1 = gpu.shuffle xor %val, %o16, %w32 : f32
    %a1 = arith.addf %val, %s1 : f32
    %s2, %v2 = gpu.shuffle xor %a1, %o8, %w32 : f32
    %a2 = arith.addf %a1, %s2 : f32
    %s3, %v3 = gpu.shuffle xor %a2, %o4, %w32 : f32
    %a3 = arith.addf %a2, %s3 : f32
    %s4, %v4 = gpu.shuffle xor %a3, %o2, %w32 : f32
    %a4 = arith.addf %a3, %s4 : f32
    %s5, %v5 = gpu.shuffle xor %a4, %o1, %w32 : f32
    %a5 = arith.addf %a4, %s5 : f32
    memref.store %a5, %out[%i] : memref<?xf32>
    %f = arith.extui %v1 : i1 to i32
    memref.store %f, %valid[%i] : memref<?xi32>
    gpu.terminator
  }
  return
}

// The same butterfly with width 16 over 64 threads (lanes 0-15 of each
// warp take part; the NVVM lowering's member mask leaves lanes 16-31 out:
// they get their own value and valid = 0).
func.func @xor_sum_w16(%in: memref<?xf32>, %out: memref<?xf32>, %valid: memref<?xi32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) {
    %base = arith.muli %bx, %u : index
    %i = arith.addi %base, %tx : index
    %val = memref.load %in[%i] : memref<?xf32>
    %w16 = arith.constant 16 : i32
    %o8 = arith.constant 8 : i32
    %o4 = arith.constant 4 : i32
    %o2 = arith.constant 2 : i32
    %o1 = arith.constant 1 : i32
    %s1, %v1 = gpu.shuffle xor %val, %o8, %w16 : f32
    %a1 = arith.addf %val, %s1 : f32
    %s2, %v2 = gpu.shuffle xor %a1, %o4, %w16 : f32
    %a2 = arith.addf %a1, %s2 : f32
    %s3, %v3 = gpu.shuffle xor %a2, %o2, %w16 : f32
    %a3 = arith.addf %a2, %s3 : f32
    %s4, %v4 = gpu.shuffle xor %a3, %o1, %w16 : f32
    %a4 = arith.addf %a3, %s4 : f32
    memref.store %a4, %out[%i] : memref<?xf32>
    %f = arith.extui %v1 : i1 to i32
    memref.store %f, %valid[%i] : memref<?xi32>
    gpu.terminator
  }
  return
}

// Shuffle-down sum over 80 threads (warps of 32, 32 and 16 threads): lane
// 0 gets its warp's sum; a lane whose source is past the warp or the block
// adds its own value. valid[i] is the first step's flag.
func.func @down_sum(%in: memref<?xf32>, %out: memref<?xf32>, %valid: memref<?xi32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c80 = arith.constant 80 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c80, %v = %c1, %w = %c1) {
    %base = arith.muli %bx, %u : index
    %i = arith.addi %base, %tx : index
    %val = memref.load %in[%i] : memref<?xf32>
    %w32 = arith.constant 32 : i32
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %o16 = arith.constant 16 : i32
    %o1 = arith.constant 1 : i32
    %s0, %v0 = gpu.shuffle down %val, %o16, %w32 : f32
    %f = arith.extui %v0 : i1 to i32
    memref.store %f, %valid[%i] : memref<?xi32>
    // Offsets 16, 8, 4, 2, 1 (a block-uniform loop with a per-thread
    // accumulator).
    %r:2 = scf.for %k = %c0 to %c5 step %c1 iter_args(%acc = %val, %off = %o16) -> (f32, i32) {
      %s, %ok = gpu.shuffle down %acc, %off, %w32 : f32
      %n = arith.addf %acc, %s : f32
      %h = arith.shrui %off, %o1 : i32
      scf.yield %n, %h : f32, i32
    }
    memref.store %r#0, %out[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// idx and up over 64 threads: out[i] = value of lane 3 of the warp,
// out2[i] = value of lane - 1 (lane 0: its own), valid[i] = up's flag.
func.func @idx_up(%in: memref<?xf32>, %out: memref<?xf32>, %out2: memref<?xf32>, %valid: memref<?xi32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) {
    %base = arith.muli %bx, %u : index
    %i = arith.addi %base, %tx : index
    %val = memref.load %in[%i] : memref<?xf32>
    %w32 = arith.constant 32 : i32
    %o3 = arith.constant 3 : i32
    %o1 = arith.constant 1 : i32
    %s1, %v1 = gpu.shuffle idx %val, %o3, %w32 : f32
    %s2, %v2 = gpu.shuffle up %val, %o1, %w32 : f32
    memref.store %s1, %out[%i] : memref<?xf32>
    memref.store %s2, %out2[%i] : memref<?xf32>
    %f = arith.extui %v2 : i1 to i32
    memref.store %f, %valid[%i] : memref<?xi32>
    gpu.terminator
  }
  return
}

// A block reduction with both (96 threads, 2-d block 32 x 3, grid-stride
// loop over 2 * nb rows of 96): a butterfly in each warp, lane 0 stores
// its warp's sum in shared memory, a barrier, then the butterfly of the 3
// warp sums in every warp (a thread past them adds 0); a barrier before
// the next row reuses the slots. Thread 0 accumulates the row sums; out[b]
// is its total.
func.func @block_sum(%in: memref<?xf32>, %out: memref<?xf32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c32, %v = %c3, %w = %c1) workgroup(%s : memref<4xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c96 = arith.constant 96 : index
    %zero = arith.constant 0.0 : f32
    %w32 = arith.constant 32 : i32
    %t0 = arith.muli %ty, %u : index
    %tid = arith.addi %t0, %tx : index
    %lane = gpu.lane_id
    %warp = gpu.subgroup_id : index
    %nw = gpu.num_subgroups : index
    %rows = arith.muli %nb, %c2 : index
    %total = scf.for %row = %bx to %rows step %x iter_args(%acc = %zero) -> (f32) {
      %rb = arith.muli %row, %c96 : index
      %i = arith.addi %rb, %tid : index
      %val = memref.load %in[%i] : memref<?xf32>
      %o16 = arith.constant 16 : i32
      %o8 = arith.constant 8 : i32
      %o4 = arith.constant 4 : i32
      %o2 = arith.constant 2 : i32
      %o1 = arith.constant 1 : i32
      %s1, %v1 = gpu.shuffle xor %val, %o16, %w32 : f32
      %a1 = arith.addf %val, %s1 : f32
      %s2, %v2 = gpu.shuffle xor %a1, %o8, %w32 : f32
      %a2 = arith.addf %a1, %s2 : f32
      %s3, %v3 = gpu.shuffle xor %a2, %o4, %w32 : f32
      %a3 = arith.addf %a2, %s3 : f32
      %s4, %v4 = gpu.shuffle xor %a3, %o2, %w32 : f32
      %a4 = arith.addf %a3, %s4 : f32
      %s5, %v5 = gpu.shuffle xor %a4, %o1, %w32 : f32
      %a5 = arith.addf %a4, %s5 : f32
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        memref.store %a5, %s[%warp] : memref<4xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %has = arith.cmpi ult, %tid, %nw : index
      %p = scf.if %has -> (f32) {
        %x0 = memref.load %s[%tid] : memref<4xf32, #gpu.address_space<workgroup>>
        scf.yield %x0 : f32
      } else {
        scf.yield %zero : f32
      }
      %q1, %u1 = gpu.shuffle xor %p, %o16, %w32 : f32
      %b1 = arith.addf %p, %q1 : f32
      %q2, %u2 = gpu.shuffle xor %b1, %o8, %w32 : f32
      %b2 = arith.addf %b1, %q2 : f32
      %q3, %u3 = gpu.shuffle xor %b2, %o4, %w32 : f32
      %b3 = arith.addf %b2, %q3 : f32
      %q4, %u4 = gpu.shuffle xor %b3, %o2, %w32 : f32
      %b4 = arith.addf %b3, %q4 : f32
      %q5, %u5 = gpu.shuffle xor %b4, %o1, %w32 : f32
      %b5 = arith.addf %b4, %q5 : f32
      gpu.barrier
      %n = arith.addf %acc, %b5 : f32
      scf.yield %n : f32
    }
    %is0 = arith.cmpi eq, %tid, %c0 : index
    scf.if %is0 {
      memref.store %total, %out[%bx] : memref<?xf32>
    }
    gpu.terminator
  }
  return
}

// Dynamic shared memory (a 64-float view) and a private attribution that
// keeps a per-thread value across the barrier (64 threads):
// out[i] = in[block reversed i] + 2 * in[i].
func.func @dyn_shared(%in: memref<?xf32>, %out: memref<?xf32>, %nb: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bytes = arith.constant 256 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%x = %nb, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c64, %v = %c1, %w = %c1) dynamic_shared_memory_size %bytes private(%p : memref<2xf32, #gpu.address_space<private>>) {
    %c0 = arith.constant 0 : index
    %c63 = arith.constant 63 : index
    %dsm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %s = memref.view %dsm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
    %base = arith.muli %bx, %u : index
    %i = arith.addi %base, %tx : index
    %val = memref.load %in[%i] : memref<?xf32>
    memref.store %val, %s[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    %two = arith.addf %val, %val : f32
    memref.store %two, %p[%c1] : memref<2xf32, #gpu.address_space<private>>
    gpu.barrier
    %j = arith.subi %c63, %tx : index
    %r = memref.load %s[%j] : memref<64xf32, #gpu.address_space<workgroup>>
    %q = memref.load %p[%c1] : memref<2xf32, #gpu.address_space<private>>
    %o = arith.addf %r, %q : f32
    memref.store %o, %out[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

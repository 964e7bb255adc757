// RUN: disc-opt '--disc-gpu-kernel-cost=report=true' %s 2>&1 >/dev/null | FileCheck %s
// RUN: disc-opt --disc-gpu-kernel-cost %s | FileCheck %s --check-prefix=ATTR

// Bytes and FLOPs of kernels and library calls as expressions of the input
// dims (docs/cuda.md, "Roofline"). n >= 1 (the signature's range).

#ceil = affine_map<()[s0] -> (s0 ceildiv 256)>
#mul = affine_map<()[s0] -> (s0 * 256)>
module attributes {disc.signature = {symbols = [{name = "n", min = 1 : i64}]}} {
  memref.global "private" constant @cw : memref<4xf32> = dense<1.0>
  func.func private @disc_lib_conv2d_post1(memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
  func.func private @disc_lib_matmul(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64)

  func.func @disc_entry(%x: memref<?x64xf32> {disc.dims = ["n", 64]}, %w: memref<1x64x32xf32>, %count: memref<index>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %c65535 = arith.constant 65535 : index
    %c16_i32 = arith.constant 16 : i32
    %c32_i32 = arith.constant 32 : i32
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %n = memref.dim %x, %c0 : memref<?x64xf32>

    // Elementwise, one thread per element behind the bound guard
    // (block.x * 256 + tid.x < n*64 with ceil(n*64 / 256) blocks): reads x,
    // writes y (2 * n*64*4 bytes); exp and add per element.
    // CHECK: kernel disc_entry_kernel: ONNX node 'exp, add': bytes n*512, FLOPs n*128
    %y = memref.alloc(%n) : memref<?x64xf32>
    %e = arith.muli %n, %c64 : index
    %g = affine.apply #ceil()[%e]
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %base = affine.apply #mul()[%bx]
      %i = arith.addi %tx, %base : index
      %in = arith.cmpi ult, %i, %e : index
      scf.if %in {
        %r = arith.divsi %i, %c64 : index
        %c = arith.remsi %i, %c64 : index
        %v = memref.load %x[%r, %c] : memref<?x64xf32>
        %ex = math.exp %v : f32
        %s = arith.addf %ex, %v : f32
        memref.store %s, %y[%r, %c] : memref<?x64xf32>
      }
      gpu.terminator
    } loc(fused["exp"("m.onnx":0:0), "add"("m.onnx":0:0)])

    // A reduction with its loop inside each thread: n rows of 64 adds;
    // reads x (n*256 bytes), writes the sums (n*4).
    // CHECK: kernel disc_entry_kernel_0: ONNX node 'sum': bytes n*260, FLOPs n*64
    %sum = memref.alloc(%n) : memref<?xf32>
    %g2 = affine.apply #ceil()[%n]
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %g2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %base = affine.apply #mul()[%bx]
      %i = arith.addi %tx, %base : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %acc = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %zero) -> f32 {
          %v = memref.load %x[%i, %j] : memref<?x64xf32>
          %a2 = arith.addf %a, %v : f32
          scf.yield %a2 : f32
        }
        memref.store %acc, %sum[%i] : memref<?xf32>
      }
      gpu.terminator
    } loc("sum"("m.onnx":0:0))

    // A row kernel: a block per row (grid-stride loop over n rows), the
    // block's 64 threads stride over the row (n*64 max), combine through a
    // shuffle (n*64) and shared memory (each thread folds the 2 warps:
    // n*64*2), thread 0 stores. Shared memory is not counted: x and the
    // maxima, n*256 + n*4 bytes.
    // CHECK: kernel disc_entry_kernel_1: ONNX node 'max': bytes n*260, FLOPs n*256
    %mx = memref.alloc(%n) : memref<?xf32>
    %rows = arith.minui %n, %c65535 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %rows, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) workgroup(%ws : memref<2xf32, #gpu.address_space<workgroup>>) {
      %t0 = arith.cmpi eq, %tx, %c0 : index
      scf.for %r = %bx to %n step %gx {
        %p = scf.for %j = %tx to %c64 step %sx iter_args(%a = %ninf) -> f32 {
          %v = memref.load %x[%r, %j] : memref<?x64xf32>
          %a2 = arith.maximumf %a, %v : f32
          scf.yield %a2 : f32
        }
        %sh, %valid = gpu.shuffle xor %p, %c16_i32, %c32_i32 : f32
        %m1 = arith.maximumf %p, %sh : f32
        %lane = arith.remui %tx, %c32 : index
        %warp = arith.divui %tx, %c32 : index
        %l0 = arith.cmpi eq, %lane, %c0 : index
        scf.if %l0 {
          memref.store %m1, %ws[%warp] : memref<2xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
        %tot = scf.for %k = %c0 to %c2 step %c1 iter_args(%a = %ninf) -> f32 {
          %v = memref.load %ws[%k] : memref<2xf32, #gpu.address_space<workgroup>>
          %a2 = arith.maximumf %a, %v : f32
          scf.yield %a2 : f32
        }
        scf.if %t0 {
          memref.store %tot, %mx[%r] : memref<?xf32>
        }
        gpu.barrier
      }
      gpu.terminator
    } loc("max"("m.onnx":0:0))

    // A row kernel phase in its unrolled form (disc-gpu-stitch-rows): the
    // main loop's four copies per thread add nothing, its remainder loop
    // stands for the row's 64 elements (a multiplication each: n*64), and
    // the row-invariant reciprocal under `tid < 64` counts once per row
    // (n). Reads x and the maxima, writes the scaled rows.
    // CHECK: kernel disc_entry_kernel_2: ONNX node 'scale': bytes n*516, FLOPs n*65
    %sc = memref.alloc(%n) : memref<?x64xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %rows, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      scf.for %r = %bx to %n step %gx {
        %has = arith.cmpi ult, %tx, %c64 : index
        %inv = scf.if %has -> (f32) {
          %m = memref.load %mx[%r] : memref<?xf32>
          %i = arith.divf %one, %m : f32
          scf.yield %i : f32
        } else {
          scf.yield %zero : f32
        } {disc.row_invariant}
        %st = arith.muli %sx, %c4 : index
        %q = arith.divui %c64, %st : index
        %end = arith.muli %q, %st : index
        %o2 = arith.muli %sx, %c2 : index
        %o3 = arith.muli %sx, %c3 : index
        scf.for %b = %c0 to %end step %st {
          %j0 = arith.addi %b, %tx : index
          %j1 = arith.addi %j0, %sx : index
          %j2 = arith.addi %j0, %o2 : index
          %j3 = arith.addi %j0, %o3 : index
          %v0 = memref.load %x[%r, %j0] : memref<?x64xf32>
          %v1 = memref.load %x[%r, %j1] : memref<?x64xf32>
          %v2 = memref.load %x[%r, %j2] : memref<?x64xf32>
          %v3 = memref.load %x[%r, %j3] : memref<?x64xf32>
          %s0 = arith.mulf %v0, %inv : f32
          memref.store %s0, %sc[%r, %j0] : memref<?x64xf32>
          %s1 = arith.mulf %v1, %inv : f32
          memref.store %s1, %sc[%r, %j1] : memref<?x64xf32>
          %s2 = arith.mulf %v2, %inv : f32
          memref.store %s2, %sc[%r, %j2] : memref<?x64xf32>
          %s3 = arith.mulf %v3, %inv : f32
          memref.store %s3, %sc[%r, %j3] : memref<?x64xf32>
        } {disc.strided_main}
        %rs = arith.addi %end, %tx : index
        scf.for %j = %rs to %c64 step %sx {
          %v = memref.load %x[%r, %j] : memref<?x64xf32>
          %s = arith.mulf %v, %inv : f32
          memref.store %s, %sc[%r, %j] : memref<?x64xf32>
        } {disc.strided_rest}
      }
      gpu.terminator
    } loc("scale"("m.onnx":0:0))

    // A size read from a buffer's data: unknown, never a guess.
    // CHECK: kernel disc_entry_kernel_3: ONNX node 'nz': bytes unknown (a buffer size that is a size read from memory), FLOPs unknown (a launch size that is a size read from memory)
    %k = memref.load %count[] : memref<index>
    %z = memref.alloc(%k) : memref<?xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %k, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %zero, %z[%bx] : memref<?xf32>
      gpu.terminator
    } loc("nz"("m.onnx":0:0))

    // cuBLAS: [1, n, 64] x [1, 64, 32] -> [1, n, 32]: 2*n*32*64 FLOPs;
    // bytes of A (n*256), B (8192) and Y (n*128).
    // CHECK: library call disc_lib_matmul: ONNX node 'mm': bytes n*384 + 8192, FLOPs n*4096
    %out = memref.alloc(%n) : memref<1x?x32xf32>
    %xa = memref.expand_shape %x [[0, 1], [2]] output_shape [1, %n, 64] : memref<?x64xf32> into memref<1x?x64xf32>
    %ca = memref.cast %xa : memref<1x?x64xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
    %cw = memref.cast %w : memref<1x64x32xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
    %co = memref.cast %out : memref<1x?x32xf32> to memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>
    %f = arith.constant 0 : i64
    call @disc_lib_matmul(%ca, %cw, %co, %f, %f) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64) -> () loc("mm"("m.onnx":0:0))

    // cuDNN: X [n, 3, 8, 8], W [16, 3, 3, 3], Y [n, 16, 8, 8] with bias and
    // Relu (flags 5): 2 * n*16*64 * 27 + 2 post-ops * n*16*64 FLOPs; bytes
    // of X (n*768), W (1728), the bias (64) and Y (n*4096).
    // CHECK: library call disc_lib_conv2d_post1: ONNX node 'conv': bytes n*4864 + 1792, FLOPs n*57344
    %img = memref.alloc(%n) : memref<?x3x8x8xf32>
    %fil = memref.alloc() : memref<16x3x3x3xf32>
    %bias = memref.alloc() : memref<16xf32>
    %res = memref.alloc(%n) : memref<?x16x8x8xf32>
    %ci = memref.cast %img : memref<?x3x8x8xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
    %cf = memref.cast %fil : memref<16x3x3x3xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
    %cr = memref.cast %res : memref<?x16x8x8xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
    %cb = memref.cast %bias : memref<16xf32> to memref<?xf32, strided<[?], offset: ?>>
    %i1 = arith.constant 1 : i64
    %flags = arith.constant 5 : i64
    call @disc_lib_conv2d_post1(%ci, %cf, %cr, %cb, %i1, %i1, %i1, %i1, %i1, %i1, %i1, %i1, %i1, %i1, %flags) : (memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> () loc("conv"("m.onnx":0:0))

    // A constant's device copy: its bytes, over PCIe.
    // CHECK: copy host-to-device: ONNX node 'c': bytes 16, FLOPs 0
    %cg = memref.get_global @cw : memref<4xf32>
    %cd = memref.alloc() : memref<4xf32>
    gpu.memcpy %cd, %cg : memref<4xf32>, memref<4xf32> loc("c"("m.onnx":0:0))
    // CHECK: kernel cost: 5 kernels, 2 library calls, 1 copies, 1 with an unknown cost
    return
  }
}

// The signature's list: expressions in the JSON form, "library" marks the
// cuBLAS/cuDNN call.
// ATTR: disc.kernels = [{bytes = ["*", "n", 512], bytes_text = "n*512", flops = ["*", "n", 128], flops_text = "n*128", library = false, name = "disc_entry_kernel", node = "exp, add", runs = "always"}
// ATTR-SAME: {bytes, bytes_text = "unknown (a buffer size that is a size read from memory)", bytes_unknown = "a buffer size that is a size read from memory", flops, flops_text
// ATTR-SAME: library = true, name = "disc_lib_matmul", node = "mm", runs = "always"}
// ATTR-SAME: {bytes = 16 : i64, bytes_text = "16", copy = "host-to-device", flops = 0 : i64, flops_text = "0", library = false, name = "memcpy", node = "c", runs = "always"}]

//===- Passes.td - DISC CUDA passes ------------------------*- tablegen -*-===//
//
// Passes of the CUDA pipeline (disc/Pipelines/CudaPipeline.h,
// docs/cuda.md): host placement of shape tensors, the GPU mapping of the
// linalg ops, device copies of constants, device-side run-time checks, the
// host-access check after the mapping and the CPU emulation of the mapped
// kernels.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_GPU_PASSES_TD
#define DISC_TRANSFORMS_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscGpuPlaceHostBuffers
    : Pass<"disc-gpu-place-host-buffers", "::mlir::func::FuncOp"> {
  let summary = "Keep small buffers only the host needs (shape tensors) on "
                "the host stack and compute them with host loops";
  let description = [{
    Runs on linalg on buffers, before the GPU mapping. On the CUDA target
    every runtime allocation is device memory. Shape tensors (Shape, shape
    arithmetic feeding Reshape/Expand/Slice, Range bounds) are small
    buffers the host reads to size allocations and launches: this pass
    keeps them on the host stack and computes them with host loops.

    Candidates are the small static allocations (static shape, identity
    layout, at most `disc::kMaxStackBufferBytes`: the memory model's stack
    rule, so the buffers moved are exactly those the model already leaves
    out of the peak, docs/memory.md) touched only by host loads and stores,
    `memref.reshape` shapes and linalg ops. Then, to a fixpoint, a candidate
    one of whose linalg ops also touches a buffer that is neither a
    candidate nor a constant is dropped: that op runs as a kernel, so the
    buffer is device memory. Linalg ops over host buffers only become host
    loops; the host buffers become `memref.alloca`s of the entry block and
    lose their deallocations. A linalg op that cannot be lowered to loops is
    reported (`cannot lower a host-side shape computation to loops`) and
    the pass fails.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect"
  ];
}

def DiscGpuPrepareLinalg
    : Pass<"disc-gpu-prepare-linalg", "::mlir::func::FuncOp"> {
  let summary = "Move parallel dims of linalg.generic outermost; wrap linalg "
                "ops without parallel dims in a one-iteration scf.parallel";
  let description = [{
    Prepares linalg ops on buffers for the GPU mapping. A `linalg.generic`
    whose reduction dims come before parallel ones (a reduction over a
    middle axis) gets its parallel dims moved outermost
    (`linalg::interchangeGenericOp`), so that all of them map to threads;
    the order in which each output element is accumulated is unchanged. An
    op without a parallel dim (a full reduction, a rank-0 elementwise op) is
    wrapped in a one-iteration `scf.parallel`, so that it, too, runs as a
    (one-thread) kernel instead of on the host. Ops already inside an
    `scf.parallel` or a `gpu.launch` are left alone. A failed interchange is
    reported (`cannot move the parallel dims outermost`) and the pass fails.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"
  ];
}

def DiscGpuFuseParallelLoops
    : Pass<"disc-gpu-fuse-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Fuse adjacent scf.parallel nests over the same iteration "
                "space into one (one kernel)";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops` (and CSE, so that equal
    bounds are the same values), before `disc-gpu-tile-parallel-loops`.
    First, every `scf.parallel` outside another one loses its dimensions
    of one iteration (constant bounds and step), the induction variable
    replaced by the lower bound, keeping at least one dimension: a
    keep-dims reduction's init fill (a loop over the output's unit dim)
    and the reduction (whose output map has a constant 0 there) then have
    the same loops, and a one-iteration loop of `disc-gpu-prepare-linalg`
    stays a loop (one thread). Then upstream's `naivelyFuseParallelOps`
    (the algorithm of `scf-parallel-loop-fusion`, with MLIR's alias
    analysis) fuses adjacent nests with the same bounds and steps when
    the second reads what the first wrote only at the same indices: a
    reduction's fill and the reduction, an in-place elementwise epilogue
    over the same rows. Only adjacent nests fuse: an allocation, a
    deallocation or a call between two ends the chain, so the allocation
    order, and with it the memory model's peak, stays (docs/cuda.md,
    "Fusion on the GPU"). With `stitch-rows` (disc-gpu-stitch-rows runs
    next), two adjacent nests that both hold a reduction loop of 32 or
    more (or a run-time number of) iterations stay apart: each becomes a
    phase of one row kernel instead of one thread per row running both.
    Reports no errors.
  }];
  let options = [
    Option<"stitchRows", "stitch-rows", "bool", /*default=*/"true",
           "Keep adjacent long reduction nests apart for "
           "disc-gpu-stitch-rows">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DiscGpuFuseIndependentLoops
    : Pass<"disc-gpu-fuse-independent-loops", "::mlir::func::FuncOp"> {
  let summary = "Adjacent independent scf.parallel nests over different "
                "iteration spaces as one nest (one kernel)";
  let description = [{
    Horizontal fusion: runs after `disc-gpu-stitch-rows`, before
    `disc-gpu-tile-parallel-loops`. Nests that neither read nor write a
    buffer another one writes (MLIR's alias analysis; two different
    buffers never alias when one is an allocation), each with zero lower
    bounds, unit steps, no results, no nested `scf.parallel` and at most
    `max-elements` iterations (static bounds; a negative value: any
    bounds), are brought together the way `disc-gpu-fuse-parallel-loops`
    does it (allocations and pure ops above the first, deallocations below
    the last, never an allocation above a deallocation, so the memory
    model's peak stays) and become one 1-D nest over the sum of their
    element counts. A binary tree of `scf.if` on the linear index (marked
    `disc.segment_split`, which the FLOP count of disc-gpu-kernel-cost
    follows) picks the former nest; its indices are the offset index
    delinearized over its bounds. The parameter updates of a training
    step written into their gradients' buffers (disc-fusion's
    `in-place-outputs`) become one launch instead of one per parameter
    (docs/cuda.md, "Independent loop nests"). The fused nest runs one
    element per thread (its branches keep it from the tiling's four), so
    by default only nests small enough for the launch to dominate their
    time join. Reports no errors.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"262144",
           "Largest static iteration count of a nest that joins (a "
           "negative value: any, run-time bounds included)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def DiscGpuStitchRows
    : Pass<"disc-gpu-stitch-rows", "::mlir::func::FuncOp"> {
  let summary = "Row reductions and the nests over the same rows as one "
                "kernel with a block per row";
  let description = [{
    Runs after `disc-gpu-fuse-parallel-loops`, before
    `disc-gpu-tile-parallel-loops`. A run of outermost `scf.parallel` nests
    over the same rows (the same leading bounds) that holds at least one
    reduction over the innermost dims (a nest over the rows whose body
    folds a perfectly nested `scf.for` chain into one output element with a
    commutative, associative combiner of f32 or i32: add, mul, max, min,
    and, or, xor) becomes one `gpu.launch` with one block per row (a
    grid-stride loop over the rows; grid = min(rows, 65535)) and the nests
    as phases separated by `gpu.barrier`: elementwise nests over the rows
    and the row stride over the row with the block's threads; a reduction
    folds strided partial values from the combiner's identity, combines
    them through a `gpu.shuffle xor` butterfly in each warp and one
    shared-memory slot per warp, and thread 0 runs the nest's own code with
    its loops replaced by one combination with the total; a nest over the
    rows alone runs on thread 0. The block size is the row length rounded
    up to a multiple of 32, clamped to [32, `max-block-size`], computed at
    run time. Between two nests only allocations, their size checks and
    pure ops may lie (they move above the kernel); a deallocation, a call
    or any other op ends the run, so buffers live as before and the memory
    model's peak stays. A nest with a run-time check or a call, a buffer
    written by the run that is not an allocation, or an access of such a
    buffer at another row leaves the run as it is (docs/cuda.md, "Row
    kernels"). A `max-block-size` that is not a multiple of 32 in
    [32, 1024] is reported and the pass fails.
  }];
  let options = [
    Option<"maxBlockSize", "max-block-size", "int64_t", /*default=*/"256",
           "Most threads per block of a row kernel">,
    Option<"elementsPerThread", "elements-per-thread", "int64_t",
           /*default=*/"1",
           "Row elements per thread the block size aims at: the block is "
           "the smallest multiple of 32 with at most this many elements of "
           "the longest phase per thread, in [32, max-block-size] (smaller "
           "blocks keep more rows in flight per multiprocessor)">
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect"
  ];
}

def DiscGpuTileParallelLoops
    : Pass<"disc-gpu-tile-parallel-loops", "::mlir::func::FuncOp"> {
  let summary = "Collapse outermost scf.parallel nests to 1-D and tile them "
                "by the GPU block size";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops`. Collapses every outermost
    `scf.parallel` (not inside another one or a `gpu.launch`) to one
    dimension and tiles it by `block-size` with a constant inner bound and
    an in-bounds guard (`scf::tileParallelLoop` without min/max bounds), so
    that `gpu-map-parallel-loops` maps the outer loop to blocks and the
    inner one to threads: blocks = ceil(elements / block-size), threads =
    block-size, guarded by `index < elements`. Bounds stay run-time values:
    one kernel serves every shape. A one-iteration loop
    (`disc-gpu-prepare-linalg`) stays one thread.

    With `elements-per-thread` F > 1, a nest whose body is straight-line
    (no regions; side effects only loads and stores) and stores only into
    buffers allocated in the function that the body does not read is tiled
    by block-size * F: thread t of a block takes elements t, t +
    block-size, ... of its tile (each load instruction of a warp stays
    coalesced), blocks = ceil(elements / (block-size * F)). In a tile
    inside the bounds the F copies run unguarded with the loads of every
    copy first, so a thread has F independent loads in flight (a
    memory-bound kernel needs several per thread to approach the HBM
    bandwidth, by Little's law); the last tile runs the guarded copies in
    order. Other nests keep one element per thread. A `block-size` outside
    [1, 1024], or F < 1 or block-size * F > 1024, is reported and the pass
    fails.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"elementsPerThread", "elements-per-thread", "int64_t",
           /*default=*/"1",
           "Elements per thread of a straight-line elementwise nest">
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"
  ];
}

def DiscGpuDeviceChecks : Pass<"disc-gpu-device-checks", "ModuleOp"> {
  let summary = "Run-time checks inside kernels record the failure in a "
                "device error word and skip the guarded code";
  let description = [{
    Runs after the GPU mapping. A run-time check (RuntimeChecks.h) inside a
    kernel cannot stop the run as on the host. This pass turns

    ```mlir
    scf.if %fail { func.call @disc_check_failed(%id, %v0, %v1, %v2, %v3) }
    ```

    inside a `gpu.launch` into a compare-and-swap of 1 + id into word 0 of
    the device error word `@disc_check_error` (a `memref<5xi64>` global
    created on first use; the first failure wins, and its thread then
    stores the values into words 1..4), and wraps the rest of the block in
    `scf.if !%fail`, so the thread never performs the access the check
    guards (an out-of-range Gather index reads nothing); values the block's
    terminator uses are yielded, zero when skipped. The host reads the word
    where it waits for the stream anyway (before it reads device data, and
    once at the end of the run), not after each launch, and fails the run
    with the same message as on the CPU (docs/cuda.md, "Synchronization").

    Errors: `unexpected form of a run-time check inside a kernel` (the call
    is not alone in an `scf.if` without results and else branch, or has
    not 5 operands), and a guarded value of a type with no zero (neither
    index, integer nor float); the pass then fails.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DiscGpuUploadConstants : Pass<"disc-gpu-upload-constants", "ModuleOp"> {
  let summary = "Copy the constants a gpu.launch reads to device buffers";
  let description = [{
    Runs after the GPU mapping (not for `--target=cuda-emulate`, whose
    kernels read the constants in place). Constants live in model.so's host
    memory. A kernel that reads one (a `memref.get_global`, possibly through
    views) gets the runtime's device copy of it: `func.call
    @disc_device_constant_<rank>_<k>(%global, %bytes)` (a C-interface
    function of the model wrapper over `disc_ral_context.device_constant`,
    declared once per memref type), which uploads the constant on the
    session's first request and keeps it, outside the tracked peak, like
    model.so's constants on the CPU (docs/memory.md). The view chain is
    re-taken on the device copy for the uses inside the launch. A constant
    without a static shape and the identity layout is reported (`a kernel
    reads a constant of type ... that has no device copy`) and the pass
    fails.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect",
    "::mlir::func::FuncDialect", "::mlir::arith::ArithDialect"
  ];
}

def DiscGpuUploadLibraryCallOperands
    : Pass<"disc-gpu-upload-library-call-operands", "::mlir::ModuleOp"> {
  let summary = "Give cuBLAS/cuDNN library calls the session's device copies "
                "of the host constants they read";
  let description = [{
    Runs after the GPU mapping. A library call of the CUDA target
    (`disc_lib_*`: cuBLAS/cuDNN, disc/Conversion/CudaLibraryCalls.h) runs
    on device memory, so each constant of model.so a call reads (Conv
    weights, a bias) is read from the session's device copy, as
    `disc-gpu-upload-constants` does for kernels: `func.call
    @disc_device_constant_<rank>_<k>(%global, %bytes)` once per constant at
    the start of the function (the runtime uploads it on the session's
    first request and keeps it, outside the tracked peak like model.so's
    constants on the CPU); the view chain is re-taken on the copy. A
    constant of a dynamic shape or a non-identity layout is reported and
    the pass fails.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"
  ];
}

def DiscGpuMirrorHostBuffers
    : Pass<"disc-gpu-mirror-host-buffers", "::mlir::func::FuncOp"> {
  let summary = "Give small device buffers that the host also reads or "
                "writes a host copy, synchronized around each launch that "
                "uses them";
  let description = [{
    Runs after the GPU mapping. A small static device buffer (an allocation
    outside kernels, or an entry argument such as a Reshape's shape or
    TopK's k, copied to the device by the runtime) that the host also reads
    or writes gets a host copy (`memref.alloca` in the entry block); the
    host accesses use the copy. Kernels and host code stay coherent through
    `gpu.memcpy`s on the stream: device to host after each launch that uses
    the buffer, host to device before it when the host writes the buffer,
    and before a `func.return` of a buffer the host wrote. An entry
    argument is copied to the host first. Only a device-to-host copy is
    followed by a wait (`gpu.wait`): the host reads its result next; a
    host-to-device copy is queued on the stream ahead of the kernels that
    read it (docs/cuda.md, "Synchronization"). Small is the memory model's
    stack rule (see `disc-gpu-place-host-buffers`). Reports no errors.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect"
  ];
}

def DiscGpuSmallDeviceBuffers
    : Pass<"disc-gpu-small-device-buffers", "ModuleOp"> {
  let summary = "Small static non-escaping device buffers in per-session "
                "device slots (the CPU's stack rule)";
  let description = [{
    Runs after the GPU mapping. The remaining small static allocations of
    each function's entry block that do not escape (the memory model's
    stack buffers, `disc::kMaxStackBufferBytes`) get a per-session device
    slot from the runtime: a `memref.view` of `func.call
    @disc_device_scratch(%site, %bytes)`, outside the tracked peak like the
    CPU's stack. With `emulate` (`--target=cuda-emulate`), they become
    `memref.alloca`s of the host stack instead. Their deallocations are
    removed. Reports no errors.
  }];
  let options = [
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "Use the host stack (CPU emulation)">
  ];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect", "::mlir::func::FuncDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def DiscGpuKernelCost : Pass<"disc-gpu-kernel-cost", "ModuleOp"> {
  let summary = "Bytes and FLOPs of every kernel and cuBLAS/cuDNN call as "
                "expressions of the input dims";
  let description = [{
    After the GPU mapping, for every `gpu.launch` of the entry (named as
    `gpu-kernel-outlining` will name it), every `disc_lib_*` call and every
    `gpu.memcpy` (its bytes and direction): the
    compulsory global-memory bytes (each distinct device buffer the kernel
    reads counted once at its full size, plus each it writes; shared and
    private memory not counted) and the floating-point operations executed
    by all threads (loops multiplied by their trip counts, block- and
    grid-stride loops by their totals, bound guards and thread-0 branches
    by the threads that take them; `math.*` functions count 1 each, an FMA
    2); GEMM 2*B*M*N*K, convolutions 2 * output elements * filter elements
    per output channel, post-ops one per output element each. Both are
    expressions of the model's input dims (the signature's names, `max` and
    `min` where a launch size needs them), or unknown with the reason.
    Stored as the module's `disc.kernels` (the signature's `kernels` list,
    docs/cuda.md "Roofline"); with `report`, printed to stderr
    (`disc-compile --target=cuda --report-codegen`). Changes no other IR.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print one line per kernel and library call to stderr">,
    Option<"entry", "entry", "std::string", /*default=*/"\"disc_entry\"",
           "Entry function">
  ];
}

def DiscGpuCheckHostAccess : Pass<"disc-gpu-check-host-access", "ModuleOp"> {
  let summary = "Reject host code that touches device memory after GPU "
                "mapping";
  let description = [{
    Runs at the end of the GPU mapping. The host code may then only compute
    sizes and launch kernels. Reported as not supported on `--target=cuda`
    yet, with the ONNX node the op comes from: a host load or store of
    device memory, a linalg op or `memref.copy` that was not mapped to a
    kernel, a call with no CUDA lowering (anything but the run-time check
    failure, the device constants and scratch slots, the rematerialization
    points and the `disc_lib_*` library calls), a library call that reads
    host memory, a kernel that reads a host stack buffer (allowed with
    `emulate`: emulated kernels run on the host), and a call or an
    allocation inside a kernel. On any of them the module gets
    `disc.cuda_unsupported` (disc-compile then exits 2, unsupported input,
    rather than 1) and the pass fails.
  }];
  let options = [
    Option<"emulate", "emulate", "bool", /*default=*/"false",
           "Kernels run on the host (CPU emulation): they may read host "
           "memory">
  ];
}

def DiscGpuEmulateLaunches : Pass<"disc-gpu-emulate-launches", "ModuleOp"> {
  let summary = "Turn every gpu.launch into host loops over block and thread "
                "ids";
  let description = [{
    `disc-compile --target=cuda-emulate` (docs/cuda.md, "Emulation"): on the
    IR after the GPU mapping (`--emit=gpu`), every `gpu.launch` becomes host
    loops over the block ids (z, y, x) and, inside, the thread ids (z, y,
    x): the kernel body runs once per (block, thread), with the ids and
    extents the launch would give it. Device copies (`gpu.memcpy`) become
    `memref.copy`; the `gpu.wait`s vanish. The device error word of the
    run-time checks (`disc-gpu-device-checks`) is read after each launch
    (the runtime of a real launch reads it later, at its next wait, with the
    same message for a model whose checks can fail in one launch): a
    recorded failure is cleared and reported through `disc_check_failed`.
    The result continues with the CPU pipeline's tail.

    A kernel with `gpu.barrier`, `gpu.shuffle`, lane or subgroup ids,
    workgroup or private attributions or `gpu.dynamic_shared_memory` runs as
    work-item loops (the loop fission of POCL and CuPBoP): per block, its
    body is cut at every barrier and shuffle into segments, each a loop nest
    over all threads of the block (z, y, x). An `scf.for`/`scf.if` around a
    barrier or shuffle must be block-uniform (bounds or condition
    independent of the thread id) and stays a host loop/branch with the
    segments of its body inside. Values that live across a cut are kept in
    per-thread host arrays (ids, constants and side-effect-free arithmetic
    on them are recomputed instead); a shuffle exchanges values through a
    host array with the semantics of its NVVM lowering (`valid` included);
    shared and private memory are stack buffers of the host function.
    Kernels without any of these keep the single loop nest.

    Errors (the pass then fails): an asynchronous launch or a cluster; a
    kernel body of more than one block; a barrier or shuffle under
    thread-dependent control flow (named) or inside another region op; a
    non-scalar value live across a barrier; `gpu.subgroup_reduce`,
    `gpu.all_reduce` and any other `gpu` op in the body.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def DiscGpuNameKernels : Pass<"disc-gpu-name-kernels", "ModuleOp"> {
  let summary = "Give each outlined kernel its module's name";
  let description = [{
    Runs right after `gpu-kernel-outlining`, which puts each kernel in a
    `gpu.module` of its own named `<func>_kernel`, `<func>_kernel_0`, ...
    (the names `disc-gpu-kernel-cost` records in the signature's
    "kernels") but names every `gpu.func` inside `<func>_kernel`. Each
    kernel `gpu.func` is renamed to its module's name and the
    `gpu.launch_func` ops that launch it are updated, so that the symbol
    the runtime launches (`cuModuleGetFunction`) names the kernel uniquely:
    the device times of a traced run (docs/cuda.md, "Kernel times") and the
    driver's own tools see `disc_entry_kernel_3`, not one name for all.
    A module with several kernels keeps their names. Fails on a name that
    is taken in the module.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // DISC_TRANSFORMS_GPU_PASSES_TD

//===- Passes.td - DISC CPU passes -------------------------*- tablegen -*-===//
//
// Passes of the CPU pipeline (disc/Pipelines/CpuPipeline.h) on linalg and
// scf on buffers and on the LLVM dialect. The CUDA pipeline shares the
// bufferization part (disc-fuse-marked-producers, disc-copy-to-linalg) and,
// for `--target=cuda-emulate`, the tail.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_CPU_PASSES_TD
#define DISC_TRANSFORMS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscFuseMarkedProducers
    : Pass<"disc-fuse-marked-producers", "::mlir::func::FuncOp"> {
  let summary = "Fuse the generics marked by disc-fusion into their consumers";
  let description = [{
    Runs on linalg on tensors, after `disc-lower-to-linalg`. Fuses every
    `linalg.generic` tagged by `disc-fusion` (`disc.fused`,
    disc/Transforms/Fusion.h) into its single consumer with linalg's
    elementwise fusion (`linalg::fuseElementwiseOps`), last producer first,
    so that a chain folds into one loop nest whatever the consumer became.
    `tensor.dim` ops of a producer's result read its destination instead,
    which has the same shape. A producer read through `tensor.extract` in
    the body of its consumer (a depthwise convolution, which reads its
    input in place) is computed at that read instead: its inputs are read
    at the positions its indexing maps give, and its body is cloned there.

    The memory model already counts the producer's result as never stored,
    so a tagged generic that cannot be fused is a compiler bug, reported as
    an error rather than left to break the predicted peak: `disc-fusion:
    fused producer has N uses`, `disc-fusion: producer cannot be fused into
    <op>`, `disc-fusion: linalg fusion failed` or `disc-fusion: cannot fuse
    into an element read: <why>`; the pass then fails.
  }];
}

def DiscRegenerateInPlace
    : Pass<"disc-regenerate-in-place", "::mlir::func::FuncOp"> {
  let summary = "Compute a recompute's result in its regenerated buffer";
  let description = [{
    Runs on linalg on tensors, after `disc-fuse-marked-producers`. A
    regenerate point of `disc-remat` copies the recomputed value into the
    buffer it hands to the later uses
    (`bufferization.materialize_in_destination`). Where `disc-remat` marked
    that copy `disc.regenerate_in_place` (the recompute ends in an
    elementwise op lowered to one loop nest; docs/memory.md,
    "Rematerialization"), the loop nest's fresh destination
    (`tensor.empty`) is replaced by that buffer, so the value is computed in
    place and neither the extra buffer nor the copy exist. The memory
    model's recompute points already leave the result out, so a marked copy
    that cannot be rewritten is a compiler bug, reported as an error
    (`disc-regenerate-in-place: ...`); the pass then fails.
  }];
}

def DiscWriteStateInPlace
    : Pass<"disc-write-state-in-place", "::mlir::func::FuncOp"> {
  let summary = "Compute the in-place state updates in the state's buffer";
  let description = [{
    Runs on linalg on tensors, after `disc-fuse-marked-producers`. For each
    result marked `disc.in_place` by `disc-mark-in-place-state` (the index
    of the state input it updates; disc/Transforms/InPlaceState.h), the
    loop nest that computes it writes the state input instead of a fresh
    destination (`tensor.empty`), so one-shot bufferization computes it in
    the input's buffer and the function returns that buffer. The memory
    model counts no allocation for it, so a marked result that cannot be
    rewritten is a compiler bug, reported as an error
    (`disc-write-state-in-place: ...`); the pass then fails. Every other
    tensor argument is marked `bufferization.writable = false`: the
    caller's buffers are read-only, and an op whose destination is an
    argument (a scatter's `data`) works on a copy.
  }];
}

def DiscReturnStateInPlace
    : Pass<"disc-return-state-in-place", "::mlir::func::FuncOp"> {
  let summary = "Return the in-place state updates as the input's buffer";
  let description = [{
    Runs after the buffer deallocation pipeline. Ownership-based
    deallocation returns a copy (`bufferization.clone`) of a function
    argument, since the caller owns the results; for a result marked
    `disc.in_place` (see `disc-write-state-in-place`) the runtime keeps the
    state input's buffer, so the argument itself is returned and the copy
    dropped. A marked result that is not the state input's buffer at this
    point is a compiler bug, reported as an error
    (`disc-return-state-in-place: ...`); the pass then fails.
  }];
}

def DiscPromoteSmallBuffers
    : Pass<"disc-promote-small-buffers", "::mlir::func::FuncOp"> {
  let summary = "Move small static non-escaping buffers to the stack";
  let description = [{
    Runs on memrefs after bufferization, before deallocation. Each
    `memref.alloc` of the function's entry block with a static shape, the
    identity layout and at most `disc::kMaxStackBufferBytes` payload bytes
    (the memory model's stack rule) that no returned value aliases
    (`BufferViewFlowAnalysis`) becomes a `memref.alloca` with the same
    alignment. Shape tensors and the index shapes of reshapes then never
    reach the runtime's allocator, whatever canonicalization folded
    (docs/memory.md). Only the entry block, so no alloca sits in a loop.
    CPU only: a device kernel cannot read the host stack. Reports no errors.
  }];
}

def DiscFreeAfterLastUse
    : Pass<"disc-free-after-last-use", "::mlir::func::FuncOp"> {
  let summary = "Move each dealloc right after the last use of its buffer";
  let description = [{
    Runs on memrefs after the ownership-based deallocation pipeline, which
    frees at the end of the block. For every op with one Allocate effect
    whose result has exactly one user with a Free effect, in the same
    block, the free moves right after the last op of that block that
    uses the buffer or a value it flows into (`BufferViewFlowAnalysis`:
    views, casts, region arguments), so the live bytes follow the op
    order (docs/memory.md). The same rewrite as upstream
    `optimize-allocation-liveness`, in linear time: every last user is
    found on the block's op order before any free moves (upstream
    moves each free at once, which invalidates the order that the next
    allocation's comparisons renumber: 6.8 s of Swin-B's compile).
    Reports no errors.
  }];
}

def DiscCopyToLinalg : Pass<"disc-copy-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Rewrite memref.copy into linalg.copy";
  let description = [{
    Rewrites every `memref.copy` into a `linalg.copy` of the same source and
    target, so that copies become plain loops instead of calls into MLIR's
    C runner utilities, which a model.so does not link. Reports no errors.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def DiscStitchRows : Pass<"disc-stitch-rows", "::mlir::func::FuncOp"> {
  let summary = "Run a row reduction and the nests over its rows in one loop over the rows";
  let description = [{
    Runs on linalg on buffers, after `disc-free-after-last-use` and
    `disc-copy-to-linalg`, before `disc-outline-kernels` (CPU only;
    `disc-gpu-stitch-rows` is the CUDA counterpart). A run of loop nests
    with only pure ops, allocations and run-time checks between them
    (`scf.if`s of `disc_check_failed` calls), one of them a row reduction (a
    `linalg.generic` whose parallel loops all come before its reduced
    loops: a Softmax's max and sum, a LayerNorm's mean and variance), the
    others over the same rows (their first loops parallel, of the same
    extents: the reduction's accumulator fills, the elementwise nests that
    read or write the rows), becomes one `scf.for` over the rows at
    the position of the last nest, whose body runs every nest in program
    order on the row's size-1 subviews of its operands (an operand that
    indexes every row dim with contiguous rows through a view of its row
    dims collapsed into one, indexed by the loop variable; the others at
    the row's own indices). A row of several hundred floats then stays in
    the L1 cache between the nests instead of streaming the whole matrix
    once per nest. This is the "stitch" fusion of BladeDISC (Zheng et al.,
    EuroMLSys 2021; AStitch, ASPLOS 2022).

    Rows of fewer than 256 elements keep the separate nests: there the
    per-row cost of each nest (a vector remainder, a horizontal reduction)
    outweighs the reuse (docs/performance.md, "Row kernels"). A row length
    known at compile time decides then; a dynamic one at run time, in an
    `scf.if` marked `disc.row_versions` whose then branch holds the row
    loop and whose else branch the nests (`disc-outline-kernels` outlines
    each branch's nests).

    Conditions: every operand indexes the row dims it uses as its leading
    dims, in order (a row is one contiguous slice of it); the nests have
    no memory access or `linalg.index` in their bodies; every buffer they
    write is an allocation they access only directly, at the row's own
    indices, so that one row's nests touch only that row of it, and every
    other operand views a known buffer (an allocation, global or argument)
    that no nest writes; at least two of the nests run over whole rows (a
    mean's sum and its division in place on `[rows, 1]` stay apart). The ops
    between the nests stay where they are and no deallocation or call is
    crossed: the allocator sees the same allocations and frees in the same
    order, and the memory model's peak holds (docs/memory.md). The row
    loop is an `scf.for` from 0 by 1 over the rows flattened, marked
    `disc.row_loop`: `disc-parallelize-kernels` runs it in chunks of rows.
    Reports no errors.
  }];
  let statistics = [
    Statistic<"numKernels", "row-kernels", "Row kernels made">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DiscOutlineKernels : Pass<"disc-outline-kernels", "ModuleOp"> {
  let summary = "Move each top-level loop nest into its own function";
  let description = [{
    Runs on linalg and scf on buffers. Moves every top-level loop nest of
    each single-block function (a linalg op on buffers, an `scf.for`, or an
    `scf.if` without results that holds one; an `scf.if` of run-time checks
    only stays inline) into its own private function `disc_kernel_<n>` and
    calls it in place. The `scf.if` of `disc-stitch-rows` that chooses
    between a row loop and separate nests (`disc.row_versions`) stays
    inline too, and each loop nest of its branches becomes a kernel. Buffers and scalars defined above become arguments;
    constants and `memref.get_global`s are cloned in. Allocations and
    deallocations stay in the caller, so what reaches the allocator and in
    which order does not change (docs/memory.md).

    The kernels keep LLVM's optimizer and code generator away from one huge
    function (their cost grows faster than the function's size), and let
    the emitter compile the module in parallel parts (ModelEmitter.cpp).
    They are marked `noinline` when translated to LLVM IR.

    Each kernel gets `disc.noalias_params`: the LLVM parameter index of the
    aligned pointer of every memref argument whose buffer no other argument
    views (a memref of rank r becomes 3 + 2r parameters: the allocated and
    aligned pointers, the offset, sizes and strides). The emitter turns
    them into `noalias`, so LLVM may keep a reduction's accumulator in a
    register and vectorize without run-time alias checks. Nothing is marked
    when some buffer's origin is unknown. Reports no errors.
  }];
}

def DiscParallelizeKernels : Pass<"disc-parallelize-kernels", "ModuleOp"> {
  let summary = "Run the outer parallel loop of outlined kernels in chunks";
  let description = [{
    Runs after `disc-outline-kernels`, on linalg on buffers
    (docs/performance.md, "Threads"). A kernel `disc_kernel_<n>` with one
    call, whose loop nest is one linalg op with a parallel outer loop that
    indexes every output (so iterations of that loop write disjoint
    elements), runs over a chunk [lo, hi) of that loop, or of the first two
    such loops flattened row-major (a batch of 1 leaves the second to
    split), given as two more `index` arguments (linalg's TilingInterface:
    subviews of the operands, `linalg.index` offset). A third new argument,
    computed at the call from the other loops' sizes, is the smallest chunk
    worth a thread; the one call passes [0, n). The kernel is marked
    `disc.parallel` for `disc-lower-parallel-calls`.

    Kernels with little static work (fewer than 32768 iterations in all, or
    fewer than two chunks of 16384 iterations: a parallel region costs a
    few microseconds for the wake-up and join of the OpenMP team), with
    anything but pure arithmetic in their body (run-time checks report
    through the context and unwind, which a worker thread must not; calls),
    or whose inputs may alias an output through another view or indexing
    stay serial. A kernel whose loop nest is the row loop of
    `disc-stitch-rows` (`disc.row_loop`: rows independent by construction)
    runs over a chunk [lo, hi) of its rows, the smallest chunk
    16384 elements' worth of the longest row a written buffer has; with
    all sizes static, fewer than two rows or buffers of fewer than 32768
    elements stay serial. A tiling failure is reported as
    `disc-parallelize-kernels: tiling failed` and the pass fails.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DiscDedupeKernels : Pass<"disc-dedupe-kernels", "ModuleOp"> {
  let summary = "Call one function for every set of identical kernels";
  let description = [{
    Runs after `disc-outline-kernels` (and `disc-parallelize-kernels`).
    Kernels `disc_kernel_<n>` whose bodies are structurally identical (the
    same ops in the same order with the same operand structure, result and
    argument types, attributes and properties; locations are ignored), with
    the same function type and the same discardable attributes
    (`disc.noalias_params`, `disc.parallel`), become one function: every
    call of a duplicate calls the kernel with the lowest number instead, and
    the duplicates are erased. Sizes are not compared beyond the types: a
    dynamic dim is an argument, so two nodes of different dynamic sizes
    share one kernel.

    The calls keep their own locations, so the trace points
    (`disc-insert-trace-points`) and `--report-codegen` still name each
    call's ONNX node. A run-time check inside a kernel passes its own
    message id as a constant, so kernels of nodes with checks stay apart
    and a failing check names its node. Candidates are grouped by a hash of
    the body (OperationEquivalence::computeHash), then compared with
    OperationEquivalence::isRegionEquivalentTo.

    Repeated blocks of a network (Transformer layers, ResNet stages at one
    width) lower to the same loop nests, and LLVM's optimizer and code
    generator then compile each distinct one once (docs/performance.md,
    "Compile time"). Reports no errors.
  }];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels before the merge">,
    Statistic<"numDistinct", "distinct", "Kernels after the merge">
  ];
}

def DiscLowerTopLevelIfs : Pass<"disc-lower-top-level-ifs", "ModuleOp"> {
  let summary = "Lower the scf.if ops of function bodies to branches in linear time";
  let description = [{
    Every `scf.if` without results whose parent is a `func.func` (in the
    model's entry function: the run-time checks that stay inline, see
    `disc-outline-kernels`) becomes `cf.cond_br` to its then (and else)
    blocks, which branch to the rest of the block, as `convert-scf-to-cf`
    does; nested regions are left to `convert-scf-to-cf`.

    The ifs of a block are lowered from the last to the first, so each
    split moves only the ops up to the previous one: linear in the size of
    the function. `convert-scf-to-cf` splits the block at every `scf.if`
    through the dialect conversion, which moves every later op one by one
    and records each move to be able to roll it back: quadratic time and
    memory in the number of checks of a large graph (docs/performance.md,
    "Compile time"). Reports no errors.
  }];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect"];
}

def DiscReassociateReductions
    : Pass<"disc-reassociate-reductions", "::mlir::func::FuncOp"> {
  let summary = "Allow reassociation on the combiners of float reductions";
  let description = [{
    Runs on linalg on buffers. Adds the `reassoc` and `contract` fast-math
    flags to the combiner of every float reduction: the op of a reduction
    `linalg.generic`'s body that reads an output block argument (the
    accumulator). Without them LLVM keeps a sum or max over the reduced dim
    a scalar chain; with them the loop vectorizer splits it into vector
    lanes and combines them at the end, which changes the summation order
    only (the e2e tolerances hold, docs/performance.md). Reports no errors.
  }];
}

def DiscApproximateMath
    : Pass<"disc-approximate-math", "::mlir::func::FuncOp"> {
  let summary = "Polynomial approximations of f32 exp, tanh and erf";
  let description = [{
    Runs on loops, before the math dialect is lowered to LLVM. Replaces f32
    `math.exp`, `math.tanh` and `math.erf` by MLIR's polynomial
    approximations (`populateMathPolynomialApproximationPatterns`:
    Cephes-style range reduction and minimax polynomials, a few ulp), so
    they are inline arithmetic that LLVM vectorizes instead of scalar libm
    calls. Fails only when the greedy rewrite does not converge.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DiscInsertTracePoints : Pass<"disc-insert-trace-points", "ModuleOp"> {
  let summary = "Call the runtime's trace entry around kernels and library calls";
  let description = [{
    Runs after disc-outline-kernels. Around every call of a kernel
    (`disc_kernel_<n>`) or a library call (`disc_lib_*`) in the functions
    that are not kernels, inserts `disc_trace_op(id, 0)` before and
    `disc_trace_op(id, 1)` after (the model wrapper forwards them to
    `disc_ral_context.trace_op`, which is NULL unless the session records a
    trace: a call and one test per trace point). Ids count from 0 in walk
    order; the module gets `disc.trace_points`, one dictionary per id: `name` (the ONNX node
    of the call's location, else the callee), `op_type` (the ONNX op type,
    or ""), `kind` ("kernel" or "library") and `op` (the index of the op in
    the memory model's order, from the location metadata of
    disc-attach-memory-model; -1 when unknown). The emitter writes the table
    into the signature ("trace_points", docs/runtime-abi.md). Allocations
    stay where they are (docs/memory.md). Reports no errors.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def DiscLowerParallelCalls : Pass<"disc-lower-parallel-calls", "ModuleOp"> {
  let summary = "Call marked kernels through the runtime's parallel_for";
  let description = [{
    Runs on the LLVM dialect, after the lowering of the kernels that
    `disc-parallelize-kernels` marked `disc.parallel`. Each call of a marked
    kernel becomes a call of the model's `disc_parallel_for(body, env, n,
    min_chunk)` (ModelEmitter's wrapper, forwarding to
    `disc_ral_context.parallel_for`): the call's arguments go into a stack
    struct `env`, and the body `disc_parallel_body_<n>(env, lo, hi)` loads
    them and calls the kernel on [lo, hi). A chunk computes its elements
    exactly as the whole loop does (same inner loops), so results do not
    depend on the number of threads; nothing is allocated in a chunk.
    Reports no errors.
  }];
}

def DiscWidenBoolAccesses : Pass<"disc-widen-bool-accesses", "ModuleOp"> {
  let summary = "Load and store booleans in memory as bytes";
  let description = [{
    Runs on the LLVM dialect. A memref of `i1` holds one byte per element
    (the lowering's element size); its scalar `llvm.load`/`llvm.store` of
    `i1` become an `i8` load followed by `llvm.trunc` and an `llvm.zext`
    followed by an `i8` store. The same bytes are read and written (the
    stored byte is 0 or 1), but LLVM's loop vectorizer can now load eight
    or more mask bytes at once (`<N x i8>`): a vector of `i1` in memory is
    bit-packed, so for `i1` it loaded byte by byte and assembled the mask
    vector element by element (a causal-mask `Where` over 24,576 elements
    took 35 us on the 2-layer GPT training step). Loads and stores of
    vectors of `i1` are left alone. Reports no errors.
  }];
}

def DiscExpandBF16 : Pass<"disc-expand-bf16", "ModuleOp"> {
  let summary = "bf16 arithmetic in f32 and bf16 conversions as bit operations";
  let description = [{
    Runs on the arith dialect, before its conversion to LLVM. x86 has no
    bf16 arithmetic, and LLVM lowers a conversion to bf16 to a library
    call (`__truncsfbf2`) that the system's libgcc may lack. Every arith
    operation on bf16 computes in f32 between an `arith.extf` and an
    `arith.truncf` (upstream `arith-emulate-unsupported-floats`, so the
    result is rounded once, as ONNX Runtime and PyTorch do); then every
    `arith.extf` from bf16 becomes a 16-bit shift and every `arith.truncf`
    to bf16 an integer round to nearest even (upstream
    `populateExpandBFloat16Patterns`). Modules without bf16 are unchanged.
    Reports no errors.
  }];
  let dependentDialects = ["arith::ArithDialect", "vector::VectorDialect"];
}

#endif // DISC_TRANSFORMS_CPU_PASSES_TD

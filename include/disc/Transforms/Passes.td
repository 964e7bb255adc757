//===- Passes.td - DISC transformation passes ---------------*- tablegen -*-===//
#ifndef DISC_TRANSFORMS_PASSES_TD
#define DISC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscShapePropagate : Pass<"disc-shape-propagate", "ModuleOp"> {
  let summary = "Give every dynamic dim a symbolic expression (disc_shape)";
  let description = [{
    Creates one `disc_shape.symbolic_dim` per distinct input dim name
    (`disc.dims` argument attributes), then walks each function and assigns
    every dim of every value an affine expression over root symbols, seeing
    through shape computations (shape_of, gather, concatenate,
    dynamic_reshape with 0/-1, slice, expand, range, select/compare, i64
    arithmetic). Data-dependent sizes get fresh symbols. Writes the
    `disc_shape.dims` annotations and `disc_shape.constraint` ops
    (docs/symbolic-shapes.md). Runs on the disc dialect; reports no errors.
  }];
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

def DiscShapeSimplify : Pass<"disc-shape-simplify", "ModuleOp"> {
  let summary = "Merge equal symbolic dims, make provably static dims static";
  let description = [{
    Runs the shape analysis with the solver, merges provably equal symbols,
    rewrites result types whose dims are provably constant into static dims
    (and the function signature consistently), folds `disc.shape_of` whose
    entries are all constant into `disc.constant`, and re-annotates
    (docs/symbolic-shapes.md). Runs on the disc dialect after
    disc-shape-propagate; reports no errors.
  }];
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

def DiscStripShapeAnnotations : Pass<"disc-strip-shape-annotations", "ModuleOp"> {
  let summary = "Remove disc_shape annotations, symbols and constraints";
  let description = [{
    Removes the `disc_shape.dims` annotations of ops and function
    arguments, the `disc_shape.symbolic_dim` symbols and the
    `disc_shape.constraint` ops that disc-shape-propagate and
    disc-shape-simplify wrote, once the lowering (which re-runs the
    analysis) no longer needs them. Reports no errors.
  }];
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

def DiscFusion : Pass<"disc-fusion", "ModuleOp"> {
  let summary = "Mark elementwise producers fused into their single consumer";
  let description = [{
    Runs on the disc dialect, after disc-shape-propagate and
    disc-shape-simplify (docs/memory.md, "Fusion"). Recomputes, in every
    single-block function, the `disc.fused` marks of the producers that the
    CPU pipeline fuses into their single consumer (disc/Transforms/Fusion.h).
    A producer qualifies when

     * it is an elementwise op (unary, binary, compare, select, convert),
     * its result has exactly one use, by an elementwise op or by a
       reduction in the same block,
     * neither op is versioned by the lowering: every dynamic operand dim is
       proven equal to its result dim (the symbolic shape analysis), or is
       the only possibly non-1 source of that dim, so both become plain
       `linalg.generic` ops,
     * for a reduction consumer, some operand of the producer covers every
       loop of the reduction without broadcasting (linalg keeps the loop
       bounds).

    Chains fuse transitively: in `exp(x - m) -> sum`, the sub fuses into the
    exp and the exp into the sum; one loop nest reads x and m. Each group of
    fused producers is then moved to just before its root, so that a group
    is a contiguous run of ops.

    A marked producer never touches memory: the memory model gives its
    result no buffer and counts its operand reads at its consumer, the
    lowering tags its `linalg.generic`, and disc-fuse-marked-producers fuses
    every tagged generic into its consumer (and fails if one is left).

    With `depthwise` = `all` or `cuda`, depthwise convolutions
    (`disc.conv` with `isDepthwise()`) are chosen as generated loops that
    read their input in place, with their neighbours fused
    (`disc.depthwise_loops` on the op; `all`: every one, for the CUDA
    targets without library calls; `cuda`: those where a cuDNN call
    would leave an elementwise op to a kernel of its own, an activation
    after the convolution other than a bias, residual add or ReLU, or a
    producer of its input other than those; a heuristic: a wrong guess
    costs a kernel, never a result). For each such
    convolution, an elementwise producer whose single use is its input is
    marked too (the convolution applies it to each element it reads, so
    its result is never stored), and the elementwise ops after it (each
    the single reader of the value before it, that value unbroadcast) get
    `disc.in_place_operand`: they write that value's buffer, so on the GPU
    they and the convolution are one kernel when the op order puts no
    allocation between them. Any other value of `depthwise` is an error.

    With `in-place-outputs`, a returned elementwise result whose loop nest
    reads a value for the last time, element for element (that value one
    use, the same type, made by an op that owns its buffer: not a view),
    writes that value's buffer, directly or through fused elementwise
    producers: `disc.in_place_operand` on the root and on those producers.
    An SGD update `p - lr * g` of a training step is written into its
    gradient's buffer: no buffer is allocated between the updates, so on
    the GPU they become one kernel (disc-gpu-fuse-independent-loops).
  }];
  let options = [
    Option<"depthwise", "depthwise", "std::string", /*default=*/"\"off\"",
           "Depthwise convolutions as generated loops with their "
           "elementwise producer and consumers fused: off, all, or cuda "
           "(where a cuDNN call would leave them to kernels of their own)">,
    Option<"inPlaceOutputs", "in-place-outputs", "bool", /*default=*/"false",
           "Returned elementwise results written into the buffer of an "
           "operand they read last">,
  ];
}

def DiscRecomputeElementwise
    : Pass<"disc-recompute-elementwise", "ModuleOp"> {
  let summary = "Recompute cheap elementwise values at their distant uses";
  let description = [{
    Runs on the disc dialect before disc-fusion (docs/memory.md,
    "Recomputing cheap values"). For each pure elementwise op whose result
    has uses separated by a gap of at least `min-gap` ops (the forward and
    the backward pass of a training step), the uses after the largest gap
    read a copy of the op made right before each of them instead of the
    kept result, when the copies can read only values that are live at the
    distant uses anyway: block arguments, constants, values read at the
    last distant use or at most 8 ops before it. A leaf that is not live
    there is recomputed too when it is itself a cheap elementwise op, up to
    `max-ops` ops in all. No live range grows by more than those few ops
    while the value's own buffer dies at its last near use, and the copies
    compute the same bits. Each distant user gets its own copy (disc-fusion then fuses
    it into an elementwise or reduction user), or one copy before the first
    when there are more than 4. Values returned by the function, used in
    nested regions, or static and smaller than 256 elements are left alone.

    With `near-window` N > 0, an elementwise value whose every reader is an
    elementwise op or a reduction at most N ops after it, and whose own
    fused chain reads at most one tensor with as many elements as the value
    (the others broadcast along some dim, or constants), is recomputed at
    each read (one copy per operand read): softmax's `exp(x - max)` read by
    the sum and the division, LayerNorm's `x - mean` read twice by the
    variance and once by the normalization. The value's buffer is gone and
    the one full-size tensor it reads lives those few ops longer (the
    broadcast ones too), so the live bytes within the window fall by the
    value's size less the broadcast leaves'. On the GPU the normalization
    becomes one row kernel (docs/cuda.md, "Row kernels").
    The source of the idea: Chen et al., "Training Deep Nets with Sublinear
    Memory Cost" (2016), recomputing cheap ops instead of storing them.
    Reports no errors.
  }];
  let options = [
    Option<"minGap", "min-gap", "unsigned", /*default=*/"16",
           "Fewest ops between the last near use and the first distant use">,
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"1",
           "Most ops recomputed for one value (more lowers the peak "
           "further but can raise the minimum peak that rematerialization "
           "reaches, docs/memory.md)">,
    Option<"nearWindow", "near-window", "unsigned", /*default=*/"0",
           "Also recompute, at each reader, an elementwise value whose "
           "readers are all elementwise ops or reductions within this many "
           "ops of it and that reads one tensor of its size plus "
           "broadcast ones (softmax's exp(x - max), LayerNorm's x - mean): "
           "no buffer for it, and each reader fuses its copy (0: off; the "
           "CUDA targets use 8, so that a row kernel takes the whole "
           "normalization)">,
  ];
  let statistics = [
    Statistic<"numRecomputed", "num-recomputed",
              "Values recomputed at their distant uses">,
  ];
}

def DiscWidenNarrowFloats : Pass<"disc-widen-narrow-floats", "ModuleOp"> {
  let summary = "Reductions, products and pooling on f16/bf16 compute in f32";
  let description = [{
    An op of the Linear, Pooling or Reduction lowering family (dot_general,
    conv, pool, reduce, cumsum, ...) whose operands or results are f16 or
    bf16 takes its float operands through `disc.convert` to f32 and its
    narrow results from an f32 copy of the op, converted back. Those ops
    accumulate in their element type, so in f16 a sum of 4096 ones gave
    3968 and the element count of a mean over 65,536 values overflowed
    f16; ONNX Runtime and PyTorch accumulate such ops in f32. The result is
    rounded once, to the op's type. Elementwise ops are left alone (one
    rounding either way); the conversions fuse into their neighbours. Runs
    before the shape analysis. Reports no errors.
  }];
  let statistics = [
    Statistic<"numWidened", "num-widened", "Ops computed in f32">,
  ];
}

def DiscFoldTransposedConcat
    : Pass<"disc-fold-transposed-concat", "ModuleOp"> {
  let summary = "Channel shuffles as one concatenation";
  let description = [{
    A channel shuffle (ShuffleNet; torch.onnx exports
    `x.view(N, G, C/G, H, W).transpose(1, 2)`) concatenates G tensors along
    dim k, splits dim k into [G, S] and moves the G dim inward. When every
    input holds exactly one of the G groups (its dim k is S) and the
    transpose keeps the order of the other dims, the result is the
    concatenation of the inputs, each reshaped with a dim of size 1 where
    the transpose puts the group dim, along that dim:

    ```
    transpose(reshape(concat(a0..aG-1, k), [.., G, S, ..]), p)
        == concat(reshape(a0, [.., 1 at q, ..]), .., q),  p[q] == k
    ```

    The reshapes are views, so the shuffled tensor is written once, by one
    copy per input, and the concatenated tensor in between (a buffer and a
    transposing copy) is gone. Dims are compared with the symbolic shape
    analysis; the concatenation and the reshape must have no other reader.
    Runs before disc-shape-simplify, which gives the new ops their shapes.
  }];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Transposed concatenations folded">,
  ];
}

def DiscFoldPadIntoWindow : Pass<"disc-fold-pad-into-window", "func::FuncOp"> {
  let summary = "Zero padding of a Conv or average pooling input as its padding";
  let description = [{
    Exporters write the padding of a Conv or of an average pooling that
    counts the padding (torch.onnx for `avg_pool2d(count_include_pad=True)`
    with padding, Inception-v3's pooling branches; tf2onnx for `SAME`
    padding) as a separate ONNX Pad:

    ```
    conv(pad(x, p, 0), w, padding q)  == conv(x, w, padding p + q)
    pool avg(pad(x, p, 0), padding 0) == pool avg(x, padding p,
                                                  count_include_pad)
    ```

    when the Pad is constant-mode with the constant value +0, its pads are
    constants that leave the batch and channels dims alone, and (for the
    pooling) the pooling has no padding and no `ceil_mode` of its own, so
    that every window lies in the padded input, and each pad is below the
    window (as oneDNN's pooling takes it). A Pad is folded only when every
    reader takes it (Convs and poolings reading it as their input), and is
    then erased: folding some readers only would keep both the padded copy
    and its operand live. The padded copy is gone and the ops read `x`
    (oneDNN pads inside its kernels; the generated loops test the bounds).
    The compile pipeline runs it on the CPU target only, before the symbolic
    shapes are annotated (cuDNN takes symmetric padding only: a folded
    tf2onnx SAME Pad would turn its call into loops).
  }];
  let statistics = [
    Statistic<"numFolded", "num-folded", "Pads folded into Conv or pooling">,
  ];
}

def DiscSqueezeExciteNhwc : Pass<"disc-squeeze-excite-nhwc", "func::FuncOp"> {
  let summary = "Squeeze-excite blocks between Conv calls on channels-last views";
  let description = [{
    A squeeze-excite block (MobileNetV3, EfficientNet) reads a Conv's value
    `x` [N, C, D1..Dk] (after its bias and activation) twice: a global
    pooling over D1..Dk, and a per-channel scale `x * s` (`s` [N or 1, C,
    1, .., 1]) read only by Convs. oneDNN's kernels take NHWC; the loop
    nests in between would read and write NCHW, so each block paid a
    reorder out of the Conv and one into the next. This pass reads `x`
    through one transpose to channels-last: the pooling reduces the spatial
    dims of that view (its keep-dims result transposed back: a [N, 1.., C]
    buffer is also the [N, C, 1..] one), the scale multiplies it by `s`
    viewed channels-last, and the product is transposed back for its
    Convs. A Conv value read only by global poolings (a classifier's last
    Conv) is read the same way. Only values of the entry block that a Conv
    writes through ops disc-mark-library-calls fuses as post-ops (bias,
    activations) are taken, and a value whose spatial dims are all 1 is
    left alone; disc-mark-library-calls then makes every one of these
    transposes a view (the Conv writing or reading NHWC), so the block runs
    on NHWC data with no copy. Runs on the disc dialect before the symbolic shapes
    are annotated, for the oneDNN CPU target (the pass is correct anywhere:
    a transpose that does not become a view is a copy).
  }];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten",
              "Poolings and scales moved to channels-last views">,
  ];
}

def DiscFormConvBackwardFilter
    : Pass<"disc-form-conv-backward-filter", "func::FuncOp"> {
  let summary = "Filter gradients of convolutions as one backward-weights op";
  let description = [{
    The gradient rule of disc.conv (lib/Dialect/Disc/IR/DiscGradients.cpp)
    writes a one-group convolution's filter gradient portably: both
    operands transposed to [C, N, ..] and [OC, N, ..], a convolution with
    the strides and dilations swapped, sliced to the kernel size and
    transposed back. This pass replaces that chain with
    disc.conv_backward_filter on the input and the output gradient, which
    runs as oneDNN's backward-weights primitive: no transposed copies of
    two activation-sized tensors, and a kernel made for the shape (the
    swapped convolution has the batch as its reduction channels and the
    output's spatial size as its window). Run on the oneDNN CPU target
    only, before fusion and the memory schedule. docs/training.md.
  }];
  let statistics = [
    Statistic<"numFormed", "num-formed", "Filter gradients replaced">,
  ];
}

def DiscMemorySchedule : Pass<"disc-memory-schedule", "ModuleOp"> {
  let summary = "Reorder ops to lower the symbolic peak memory";
  let description = [{
    Chooses a topological order of each function's top-level ops that
    lowers the peak of live bytes, with byte sizes as symbolic expressions
    of the input dims (the memory model, after disc-shape-propagate and
    disc-shape-simplify). Candidate orders come from several heuristics
    (BladeDISC++ memory-priority list scheduling, XLA-style depth-first
    post-orders); the shape constraint solver compares their peaks
    (canonical forms, then Z3 under the `--dim` ranges). An order replaces
    program order only when its peak is proven no higher for every shape in
    range; an UNKNOWN between two such orders is broken by the LIKELY
    values, and a tie keeps the earlier one. Deterministic. Ops with memory
    effects keep their relative order. With `remarks`, a remark per
    function names the chosen candidate. Runs on the disc dialect; reports
    no errors. See docs/memory.md, "Op scheduling".
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark per function naming the chosen heuristic and the "
           "peak of every candidate at the sample point">,
    Option<"inPlaceState", "in-place-state", "bool", /*default=*/"false",
           "Count a training state update that disc-mark-in-place-state "
           "may write into the state's buffer as allocating nothing, so "
           "that running it early frees its gradient">,
    Option<"accumulatingCalls", "accumulating-calls", "bool",
           /*default=*/"false",
           "With in-place-state: the weight-gradient MatMul of an SGD "
           "update (`w - lr * dW`) runs right before it and allocates "
           "nothing, as the oneDNN MatMul call that accumulates the "
           "scaled product into the state (disc-mark-library-calls) will">,
  ];
  let dependentDialects = ["::mlir::disc_shape::DiscShapeDialect"];
}

def DiscMarkInPlaceState : Pass<"disc-mark-in-place-state", "ModuleOp"> {
  let summary = "Mark the state updates written into the state's buffer";
  let description = [{
    In a training step (disc-build-training-step), marks each output that
    updates a state input and can be written into that input's buffer in
    the current op order: a top-level elementwise op (not fused into
    another op or a library call) with the state's static type, after
    every other reader of the state and of its views. The op gets
    `disc.in_place_state` (the input's index) and the function result
    `disc.in_place`; the memory model gives it no allocation and no copy at
    the return, and the CPU lowering (disc-write-state-in-place) computes
    it in the input's buffer, which the function returns. Runs after
    disc-memory-schedule (which orders the updates after the other
    readers) and the library-call marking, before the memory model is
    attached. See docs/training.md, "State". Reports no errors.
  }];
}

def DiscRemat : Pass<"disc-remat", "ModuleOp"> {
  let summary = "Insert rematerialization evict/regenerate points";
  let description = [{
    Runs after disc-memory-schedule on the final op order. A tensor whose
    next use is far away (at least `min-gap` ops) and whose producer
    subgraph can be recomputed from values live at that use anyway (inputs,
    constants, buffers used later that are not candidates themselves),
    within `max-ops` ops and `max-flops-per-byte` FLOPs per payload byte
    (a symbolic bound proven with the solver), becomes a candidate: a call
    `disc_remat_evict_<id>` after its last use before the gap, and before
    the next use a call `disc_remat_regenerate`, a fresh buffer and an
    `scf.if` that recomputes the value into it when the runtime evicted it.
    The runtime decides (docs/memory.md, "Rematerialization"). With
    `remarks`, a remark names each candidate and each rejected long-gap
    tensor with the reason. Runs on the disc dialect, after
    disc-shape-propagate and disc-shape-simplify; the scheme follows
    BladeDISC++ (compile-time candidates, run-time eviction decisions).
    Reports no errors.
  }];
  let options = [
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"12",
           "Most ops recomputed for one candidate">,
    Option<"maxFlopsPerByte", "max-flops-per-byte", "int64_t",
           /*default=*/"512",
           "Bound on the recompute FLOPs per payload byte of the candidate">,
    Option<"minGap", "min-gap", "unsigned", /*default=*/"3",
           "Fewest ops between the last use before the gap and the next use">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark per candidate and per rejected long-gap tensor">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DiscBuildTrainingStep : Pass<"disc-build-training-step", "ModuleOp"> {
  let summary = "Turn a forward model with a loss into one training step";
  let description = [{
    Runs on the imported disc dialect, before every other pass (the
    importer marks the float initializers with `disc.param`). In the entry
    function:

     * the trainable parameters (every marked constant from which the loss
       output `loss` is reachable, or the names in `trainable`, minus those
       in `frozen`) become inputs held by the runtime session
       (`disc.state`, initial value in a public `memref.global`);
     * the gradients of the loss with respect to them are built in reverse
       program order from each op's gradient rule
       (DiscOpInterface::buildGradient; lib/Dialect/Disc/IR/DiscGradients.cpp),
       seeded with 1 and summed where a value has several uses;
     * `optimizer` `none` returns them as outputs `grad_<name>`; `sgd`,
       `momentum` and `adamw` append the updated parameters (and the
       momentum / first and second moments / step count, more state) as
       outputs that replace their state after the run (`disc.state_update`),
       with the update rules of `torch.optim.SGD` and `torch.optim.AdamW`
       (Loshchilov & Hutter, "Decoupled Weight Decay Regularization").

    The backward ops are ordinary disc ops with symbolic shapes: one compile
    serves every input shape, and the memory schedule and
    rematerialization see the whole step. Errors (each names the node or
    name): no output called `loss`, a loss with more than one element, an
    unknown `trainable`/`frozen` name, an op on the path from a parameter
    to the loss without a gradient rule.
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"",
           "Name of the scalar output to minimize">,
    ListOption<"trainable", "trainable", "std::string",
               "Initializers to train (default: every float initializer the "
               "loss depends on)">,
    ListOption<"frozen", "frozen", "std::string",
               "Initializers not to train">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "none, sgd, momentum or adamw">,
    Option<"lr", "lr", "double", /*default=*/"0.01", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum factor (momentum)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (L2 for sgd and momentum, decoupled for adamw)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "First moment decay (adamw)">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Second moment decay (adamw)">,
    Option<"eps", "eps", "double", /*default=*/"1e-8",
           "Denominator term (adamw)">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // DISC_TRANSFORMS_PASSES_TD

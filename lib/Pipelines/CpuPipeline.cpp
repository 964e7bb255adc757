//===- CpuPipeline.cpp - disc dialect to the LLVM dialect on CPU ----------===//
//
// disc → linalg on tensors → one-shot bufferization → ownership-based buffer
// deallocation → loops → LLVM dialect. Allocations use the generic
// `_mlir_memref_to_llvm_*` functions, which the generated model wrapper
// routes to the runtime context (docs/runtime-abi.md).
//
//===----------------------------------------------------------------------===//
#include "disc/Pipelines/CpuPipeline.h"

#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

Value mlir::disc::bufferRoot(Value v) {
  while (true) {
    if (isa<BlockArgument>(v))
      return v;
    Operation *def = v.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(def))
      return v;
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    if (isa<memref::CastOp, memref::ReinterpretCastOp, memref::CollapseShapeOp,
            memref::ExpandShapeOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    return Value();
  }
}

namespace {
/// Rewrites `memref.copy` into `linalg.copy`, so copies become plain loops
/// instead of calls into MLIR's C runner utilities (which a model.so does
/// not link).
struct CopyToLinalgPass
    : public PassWrapper<CopyToLinalgPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CopyToLinalgPass)
  StringRef getArgument() const final { return "disc-copy-to-linalg"; }
  StringRef getDescription() const final {
    return "Rewrite memref.copy into linalg.copy";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};

/// Moves small static buffers of the function's entry block that do not
/// escape (shape tensors, index shapes of reshapes) to the stack, so they
/// never reach the runtime's allocator whatever canonicalization folded
/// (docs/memory.md). Runs after bufferization, before deallocation. The
/// size rule is the memory model's (disc::kMaxStackBufferBytes); only the
/// entry block, so no alloca sits in a loop.
struct PromoteSmallBuffersPass
    : public PassWrapper<PromoteSmallBuffersPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PromoteSmallBuffersPass)
  StringRef getArgument() const final { return "disc-promote-small-buffers"; }
  StringRef getDescription() const final {
    return "Move small static non-escaping buffers to the stack";
  }
  static int64_t elementBytes(Type t) {
    if (t.isIntOrFloat())
      return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
    if (t.isIndex())
      return 8;
    return -1;
  }
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    BufferViewFlowAnalysis aliases(func);
    SmallVector<Value> returned;
    func.walk([&](func::ReturnOp r) {
      llvm::append_range(returned, r.getOperands());
    });
    SmallVector<memref::AllocOp> allocs;
    for (Operation &op : func.getBody().front())
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      int64_t elt = elementBytes(type.getElementType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() || elt < 0 ||
          type.getNumElements() * elt > disc::kMaxStackBufferBytes)
        continue;
      auto aliasSet = aliases.resolve(alloc.getResult());
      if (llvm::any_of(returned, [&](Value v) { return aliasSet.contains(v); }))
        continue;
      OpBuilder b(alloc);
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), type,
                                             alloc.getAlignmentAttr());
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};
/// Fuses every linalg.generic tagged by disc-fusion (Fusion.h) into its
/// single consumer with linalg's elementwise fusion, last producer first,
/// so that a chain folds into one loop nest whatever the consumer became.
/// The memory model already counts the producer's result as never stored:
/// a tagged generic that cannot be fused is a compiler bug, reported as an
/// error rather than left to break the predicted peak.
struct FuseMarkedProducersPass
    : public PassWrapper<FuseMarkedProducersPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseMarkedProducersPass)
  StringRef getArgument() const final { return "disc-fuse-marked-producers"; }
  StringRef getDescription() const final {
    return "Fuse the generics marked by disc-fusion into their consumers";
  }
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> marked;
    getOperation().walk([&](linalg::GenericOp g) {
      if (disc::isFusedProducer(g))
        marked.push_back(g);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp producer : llvm::reverse(marked)) {
      Value r = producer->getResult(0);
      // Sizes the lowering read from the result (broadcast checks) come
      // from the destination instead, which has the same shape.
      Value init = producer.getDpsInitOperand(0)->get();
      for (OpOperand &u : llvm::make_early_inc_range(r.getUses()))
        if (auto dim = dyn_cast<tensor::DimOp>(u.getOwner())) {
          rewriter.setInsertionPoint(dim);
          rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, init, dim.getIndex());
        }
      if (!r.hasOneUse()) {
        producer.emitError("disc-fusion: fused producer has ")
            << std::distance(r.use_begin(), r.use_end()) << " uses";
        return signalPassFailure();
      }
      OpOperand &use = *r.use_begin();
      Operation *consumer = use.getOwner();
      if (!linalg::areElementwiseOpsFusable(&use)) {
        producer.emitError("disc-fusion: producer cannot be fused into ")
            << consumer->getName();
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(consumer);
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &use);
      if (failed(fused)) {
        producer.emitError("disc-fusion: linalg fusion failed");
        return signalPassFailure();
      }
      for (auto [orig, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(orig, replacement, [&](OpOperand &u) {
          return u.getOwner() != producer && u.getOwner() != consumer;
        });
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
    }
  }
};

/// Moves every top-level loop nest of the entry function (a linalg op on
/// buffers, or an `scf.for`/`scf.if` without results) into its own private
/// function `disc_kernel_<n>` and calls it in place. Buffers and scalars
/// defined above become arguments; constants and globals are cloned in.
/// Allocations and deallocations stay in the caller, so what reaches the
/// allocator and in which order does not change (docs/memory.md). The
/// kernels keep LLVM's optimizer and code generator away from one huge
/// function (their cost grows faster than the function's size), and let
/// the emitter compile the module in parallel parts (ModelEmitter.cpp).
/// They are marked `noinline` when translated to LLVM IR.
struct OutlineKernelsPass
    : public PassWrapper<OutlineKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineKernelsPass)
  StringRef getArgument() const final { return "disc-outline-kernels"; }
  StringRef getDescription() const final {
    return "Move each top-level loop nest into its own function";
  }
  static bool isClonable(Operation *op) {
    return op->hasTrait<OpTrait::ConstantLike>() ||
           isa<memref::GetGlobalOp>(op);
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    unsigned next = 0;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal() || func.getBody().getBlocks().size() != 1)
        continue;
      SmallVector<Operation *> kernels;
      for (Operation &op : func.getBody().front()) {
        if (op.getNumResults() != 0 || op.getNumRegions() == 0)
          continue;
        // Loop nests only: an scf.if of run-time checks stays inline.
        bool loops = isa<linalg::LinalgOp, scf::ForOp>(op);
        if (isa<scf::IfOp>(op))
          op.walk([&](Operation *inner) {
            loops |= isa<linalg::LinalgOp, scf::ForOp>(inner);
          });
        if (loops)
          kernels.push_back(&op);
      }
      for (Operation *op : kernels)
        outline(module, symbols, op, next++);
    }
  }
  /// Writes `disc.noalias_params` on the kernel: the LLVM parameter index
  /// of the aligned pointer of every memref argument whose buffer no other
  /// argument views (a memref of rank r becomes 3 + 2r parameters: the
  /// allocated and aligned pointers, the offset, sizes and strides). The
  /// emitter turns them into `noalias`, so LLVM may keep a reduction's
  /// accumulator in a register and vectorize without run-time alias checks.
  /// Nothing is marked when some buffer's origin is unknown.
  static void setNoAliasParams(func::FuncOp kernel, ArrayRef<Value> inputs) {
    SmallVector<Value> roots;
    for (Value v : inputs) {
      if (!isa<MemRefType>(v.getType())) {
        roots.push_back(Value());
        continue;
      }
      Value root = disc::bufferRoot(v);
      if (!root)
        return;
      roots.push_back(root);
    }
    SmallVector<int32_t> params;
    int32_t param = 0;
    for (auto [i, v] : llvm::enumerate(inputs)) {
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type) {
        ++param;
        continue;
      }
      if (llvm::count(roots, roots[i]) == 1)
        params.push_back(param + 1);
      param += 3 + 2 * type.getRank();
    }
    if (!params.empty())
      kernel->setAttr("disc.noalias_params",
                      DenseI32ArrayAttr::get(kernel.getContext(), params));
  }
  void outline(ModuleOp module, SymbolTable &symbols, Operation *op,
               unsigned n) {
    // Values the op reads that are defined outside it.
    llvm::SetVector<Value> inputs;
    auto collect = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (def && isClonable(def) && def->getNumOperands() == 0)
        return;
      inputs.insert(v);
    };
    for (Value v : op->getOperands())
      collect(v);
    auto outside = [&](Value v) {
      return !op->isAncestor(v.getParentBlock()->getParentOp());
    };
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (outside(v))
          collect(v);
    });
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> types;
    for (Value v : inputs)
      types.push_back(v.getType());
    auto kernel = func::FuncOp::create(b, op->getLoc(),
                                       "disc_kernel_" + std::to_string(n),
                                       b.getFunctionType(types, {}));
    kernel.setPrivate();
    symbols.insert(kernel);
    Block *body = kernel.addEntryBlock();
    IRMapping map;
    for (auto [v, arg] : llvm::zip(inputs, body->getArguments()))
      map.map(v, arg);
    b.setInsertionPointToStart(body);
    // Constants and globals used by the op are cloned in.
    auto cloneDefs = [&](Value v) {
      if (map.contains(v) || !outside(v))
        return;
      Operation *def = v.getDefiningOp();
      if (def && isClonable(def) && def->getNumOperands() == 0)
        b.clone(*def, map);
    };
    for (Value v : op->getOperands())
      cloneDefs(v);
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        cloneDefs(v);
    });
    b.clone(*op, map);
    func::ReturnOp::create(b, op->getLoc());
    setNoAliasParams(kernel, inputs.getArrayRef());
    OpBuilder caller(op);
    func::CallOp::create(caller, op->getLoc(), kernel, inputs.getArrayRef());
    op->erase();
  }
};
/// Allows reassociation (and contraction) on the combiner of every float
/// reduction: the op of a reduction generic's body that reads the output
/// block argument (the accumulator). Without it LLVM keeps a sum or max
/// over the reduced dim a scalar chain; with it the loop vectorizer splits
/// it into vector lanes and combines them at the end, which changes the
/// summation order only (the e2e tolerances hold, docs/performance.md).
struct ReassociateReductionsPass
    : public PassWrapper<ReassociateReductionsPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReassociateReductionsPass)
  StringRef getArgument() const final { return "disc-reassociate-reductions"; }
  StringRef getDescription() const final {
    return "Allow reassociation on the combiners of float reductions";
  }
  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp g) {
      if (g.getNumReductionLoops() == 0)
        return;
      Block &body = g.getRegion().front();
      for (BlockArgument acc :
           body.getArguments().drop_front(g.getNumDpsInputs()))
        for (Operation *user : acc.getUsers())
          if (auto fm = dyn_cast<arith::ArithFastMathInterface>(user))
            if (isa<FloatType>(acc.getType()))
              user->setAttr(
                  fm.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(
                      user->getContext(), fm.getFastMathFlagsAttr().getValue() |
                                              arith::FastMathFlags::reassoc |
                                              arith::FastMathFlags::contract));
    });
  }
};

/// Replaces f32 exp, tanh and erf by MLIR's polynomial approximations
/// (`populateMathPolynomialApproximationPatterns`: Cephes-style range
/// reduction and minimax polynomials, a few ulp), so they are inline
/// arithmetic that LLVM vectorizes instead of scalar libm calls.
struct ApproximateMathPass
    : public PassWrapper<ApproximateMathPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMathPass)
  StringRef getArgument() const final { return "disc-approximate-math"; }
  StringRef getDescription() const final {
    return "Polynomial approximations of f32 exp, tanh and erf";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, math::MathDialect,
                    vector::VectorDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return name == math::ExpOp::getOperationName() ||
             name == math::TanhOp::getOperationName() ||
             name == math::ErfOp::getOperationName();
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::disc::buildDiscBufferizedLinalgPipeline(
    OpPassManager &pm, const CpuPipelineOptions &options,
    bool promoteSmallBuffers) {
  // Symbolic shapes: annotate, make provably static dims static. The
  // lowering re-runs the analysis (with the user ranges still in the module)
  // to drop broadcast versions between proven-equal dims; the annotations
  // go afterwards.
  pm.addPass(createDiscShapePropagate());
  pm.addPass(createDiscShapeSimplify());
  // Fusion decisions before the op order and the memory model see the
  // graph (docs/memory.md, "Fusion").
  if (options.fusion)
    pm.addPass(createDiscFusion());
  // Op order for a lower symbolic peak; lowering, canonicalize, CSE and
  // bufferization keep the relative order of the ops (docs/memory.md).
  if (options.memorySchedule)
    pm.addPass(createDiscMemorySchedule());
  DiscLowerToLinalgOptions lowering;
  lowering.libraryCallsOption = options.libraryCalls;
  pm.addPass(createDiscLowerToLinalg(lowering));
  pm.addPass(createDiscStripShapeAnnotations());
  pm.addNestedPass<func::FuncOp>(std::make_unique<FuseMarkedProducersPass>());
  // No CSE on tensors: it would merge the `tensor.empty` destinations (and
  // their fills) of different ops, and bufferization would then write ops
  // into each other's buffers or insert copies, breaking the memory model
  // (docs/memory.md: every op result gets its own allocation). CSE runs
  // after bufferization instead, where allocations are never merged.
  // linalg-fuse-elementwise-ops is left out: it miscompiles the keep_dims
  // reductions (constant-0 output maps) that LayerNormalization produces.
  // DISC's own fusion pass (disc-fusion) replaces it.
  pm.addPass(createCanonicalizerPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Recurrent layers yield each step's new state (a fresh tensor) from an
  // scf.for; the deallocation pipeline frees the previous one.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  if (promoteSmallBuffers)
    pm.addNestedPass<func::FuncOp>(std::make_unique<PromoteSmallBuffersPass>());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Every dynamic allocation: sizes non-negative, byte size within int64.
  pm.addPass(createDiscCheckAllocations());
  // Ownership-based deallocation frees at the end of the block; move each
  // dealloc right after the last use of the buffer and of its views, so the
  // live bytes follow the op order (docs/memory.md).
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOptimizeAllocationLivenessPass());
  pm.addNestedPass<func::FuncOp>(std::make_unique<CopyToLinalgPass>());
}

void mlir::disc::buildDiscCpuPipeline(OpPassManager &pm,
                                      const CpuPipelineOptions &options) {
  buildDiscBufferizedLinalgPipeline(pm, options, /*promoteSmallBuffers=*/true);
  buildDiscCpuLoopsToLLVMPipeline(pm, options.parallelKernels);
}

void mlir::disc::buildDiscCpuLoopsToLLVMPipeline(OpPassManager &pm,
                                                 bool parallelKernels) {
  pm.addPass(std::make_unique<OutlineKernelsPass>());
  if (parallelKernels)
    pm.addPass(createParallelizeKernelsPass());
  pm.addNestedPass<func::FuncOp>(std::make_unique<ReassociateReductionsPass>());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(std::make_unique<ApproximateMathPass>());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToFuncs()); // math.ipowi and friends
  // LLVM intrinsics first (rsqrt has no libm function); libm for the rest.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (parallelKernels)
    pm.addPass(createLowerParallelCallsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::disc::registerDiscPipelines() {
  PassRegistration<CopyToLinalgPass>();
  PassRegistration<PromoteSmallBuffersPass>();
  PassRegistration<OutlineKernelsPass>();
  PassRegistration<FuseMarkedProducersPass>();
  PassRegistration<ReassociateReductionsPass>();
  PassRegistration<ApproximateMathPass>();
  registerParallelKernelsPasses();
  PassPipelineRegistration<>(
      "disc-cpu-pipeline", "Lower the disc dialect to the LLVM dialect",
      [](OpPassManager &pm) { buildDiscCpuPipeline(pm); });
}

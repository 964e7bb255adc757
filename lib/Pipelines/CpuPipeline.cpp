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
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

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
  // Op order for a lower symbolic peak; lowering, canonicalize, CSE and
  // bufferization keep the relative order of the ops (docs/memory.md).
  if (options.memorySchedule)
    pm.addPass(createDiscMemorySchedule());
  DiscLowerToLinalgOptions lowering;
  lowering.libraryCallsOption = options.libraryCalls;
  pm.addPass(createDiscLowerToLinalg(lowering));
  pm.addPass(createDiscStripShapeAnnotations());
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

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
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
  pm.addPass(createCanonicalizerPass());
}

void mlir::disc::registerDiscPipelines() {
  PassRegistration<CopyToLinalgPass>();
  PassRegistration<PromoteSmallBuffersPass>();
  PassPipelineRegistration<>(
      "disc-cpu-pipeline", "Lower the disc dialect to the LLVM dialect",
      [](OpPassManager &pm) { buildDiscCpuPipeline(pm); });
}

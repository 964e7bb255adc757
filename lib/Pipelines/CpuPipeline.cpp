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
#include "disc/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
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
} // namespace

void mlir::disc::buildDiscCpuPipeline(OpPassManager &pm,
                                      StringRef libraryCalls) {
  // Symbolic shapes: annotate, make provably static dims static. The
  // lowering re-runs the analysis (with the user ranges still in the module)
  // to drop broadcast versions between proven-equal dims; the annotations
  // go afterwards.
  pm.addPass(createDiscShapePropagate());
  pm.addPass(createDiscShapeSimplify());
  DiscLowerToLinalgOptions lowering;
  lowering.libraryCallsOption = libraryCalls.str();
  pm.addPass(createDiscLowerToLinalg(lowering));
  pm.addPass(createDiscStripShapeAnnotations());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
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
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Every dynamic allocation: sizes non-negative, byte size within int64.
  pm.addPass(createDiscCheckAllocations());
  pm.addNestedPass<func::FuncOp>(std::make_unique<CopyToLinalgPass>());

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
  PassPipelineRegistration<>(
      "disc-cpu-pipeline", "Lower the disc dialect to the LLVM dialect",
      [](OpPassManager &pm) { buildDiscCpuPipeline(pm); });
}

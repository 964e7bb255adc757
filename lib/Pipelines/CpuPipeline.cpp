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
#include "disc/Transforms/CPU/Passes.h"
#include "disc/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::disc::buildDiscBufferizedLinalgPipeline(
    OpPassManager &pm, const CpuPipelineOptions &options,
    bool promoteSmallBuffers) {
  // Symbolic shapes: annotate, make provably static dims static. The
  // lowering re-runs the analysis (with the user ranges still in the module)
  // to drop broadcast versions between proven-equal dims; the annotations
  // go afterwards.
  if (options.shapePasses) {
    pm.addPass(createDiscShapePropagate());
    pm.addPass(createDiscFoldTransposedConcat());
    pm.addNestedPass<func::FuncOp>(createDiscFoldPadIntoWindow());
    pm.addPass(createDiscShapeSimplify());
  }
  // Fusion decisions before the op order and the memory model see the
  // graph (docs/memory.md, "Fusion").
  if (options.fusion)
    pm.addPass(createDiscFusion(options.fusionOptions));
  // Op order for a lower symbolic peak; lowering, canonicalize, CSE and
  // bufferization keep the relative order of the ops (docs/memory.md).
  if (options.memorySchedule)
    pm.addPass(createDiscMemorySchedule());
  DiscLowerToLinalgOptions lowering;
  lowering.libraryCallsOption = options.libraryCalls;
  pm.addPass(createDiscLowerToLinalg(lowering));
  pm.addPass(createDiscStripShapeAnnotations());
  pm.addNestedPass<func::FuncOp>(createDiscFuseMarkedProducers());
  pm.addNestedPass<func::FuncOp>(createDiscRegenerateInPlace());
  // Training state updated in the state's buffer (disc-mark-in-place-state).
  pm.addNestedPass<func::FuncOp>(createDiscWriteStateInPlace());
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
    pm.addNestedPass<func::FuncOp>(createDiscPromoteSmallBuffers());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addNestedPass<func::FuncOp>(createDiscReturnStateInPlace());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Every dynamic allocation: sizes non-negative, byte size within int64.
  pm.addPass(createDiscCheckAllocations());
  // Ownership-based deallocation frees at the end of the block; move each
  // dealloc right after the last use of the buffer and of its views, so the
  // live bytes follow the op order (docs/memory.md).
  pm.addNestedPass<func::FuncOp>(createDiscFreeAfterLastUse());
  pm.addNestedPass<func::FuncOp>(createDiscCopyToLinalg());
}

void mlir::disc::buildDiscCpuPipeline(OpPassManager &pm,
                                      const CpuPipelineOptions &options) {
  buildDiscBufferizedLinalgPipeline(pm, options, /*promoteSmallBuffers=*/true);
  // Row reductions with the nests over their rows, one row at a time.
  if (options.stitchRows)
    pm.addNestedPass<func::FuncOp>(createDiscStitchRows());
  buildDiscCpuLoopsToLLVMPipeline(pm, options.parallelKernels);
}

void mlir::disc::buildDiscCpuLoopsToLLVMPipeline(OpPassManager &pm,
                                                 bool parallelKernels) {
  pm.addPass(createDiscOutlineKernels());
  // Trace points around the kernels and library calls (docs/memory.md,
  // "Timeline"): inert unless a session records a trace.
  pm.addPass(createDiscInsertTracePoints());
  if (parallelKernels)
    pm.addPass(createDiscParallelizeKernels());
  // One function per distinct loop nest: repeated blocks of a network are
  // optimized and compiled once (the calls keep their own locations).
  pm.addPass(createDiscDedupeKernels());
  pm.addNestedPass<func::FuncOp>(createDiscReassociateReductions());

  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createDiscApproximateMath());
  pm.addPass(createLowerAffinePass());
  // The entry function's inline checks in linear time (convert-scf-to-cf
  // is quadratic in their number); the kernels' loops are left to it.
  pm.addPass(createDiscLowerTopLevelIfs());
  pm.addPass(createSCFToControlFlowPass());
  HostToLLVMOptions host;
  host.parallelCalls = parallelKernels;
  buildDiscHostToLLVMPipeline(pm, host);
}

void mlir::disc::buildDiscHostToLLVMPipeline(OpPassManager &pm,
                                             const HostToLLVMOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createDiscExpandBF16());
  if (options.mathToFuncs)
    pm.addPass(createConvertMathToFuncs()); // math.ipowi and friends
  // LLVM intrinsics first (rsqrt has no libm function); libm for the rest.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  // Allocations first, through the generic `_mlir_memref_to_llvm_*`
  // functions that the model wrapper routes to the session's allocator (the
  // device allocator on CUDA): gpu-to-llvm also converts the memref ops it
  // finds, to plain malloc/free, which would put every buffer in host memory.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  if (options.gpuToLLVM)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Boolean masks loaded as bytes, so that LLVM vectorizes their loads.
  pm.addPass(createDiscWidenBoolAccesses());
  if (options.parallelCalls)
    pm.addPass(createDiscLowerParallelCalls());
  pm.addPass(createCanonicalizerPass());
}

void mlir::disc::registerDiscPipelines() {
  PassPipelineRegistration<>(
      "disc-cpu-pipeline", "Lower the disc dialect to the LLVM dialect",
      [](OpPassManager &pm) { buildDiscCpuPipeline(pm); });
}

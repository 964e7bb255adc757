//===- CompilePipeline.cpp - disc-compile-pipeline ------------------------===//
#include "disc/Pipelines/CompilePipeline.h"

#include "disc/Conversion/Passes.h"
#include "disc/Pipelines/CpuPipeline.h"
#include "disc/Pipelines/CudaPipeline.h"
#include "disc/Target/Passes.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::disc::buildDiscCompilePipeline(
    OpPassManager &pm, const CompilePipelineOptions &options) {
  EmitStage emit = options.emit;
  if (!options.training.empty()) {
    std::unique_ptr<Pass> training = createDiscBuildTrainingStep();
    if (failed(training->initializeOptions(options.training,
                                           [](const llvm::Twine &msg) {
                                             llvm::errs() << msg << "\n";
                                             return failure();
                                           })))
      llvm::report_fatal_error("bad disc-build-training-step options");
    pm.addPass(std::move(training));
  }
  DiscAttachDimRangesOptions dimRanges;
  dimRanges.dims.assign(options.dims.begin(), options.dims.end());
  dimRanges.forceDynamic = options.forceDynamic;
  pm.addPass(createDiscAttachDimRanges(dimRanges));
  if (emit == EmitStage::Mlir)
    return;
  // f16/bf16 reductions, products and pooling accumulate in f32.
  pm.addPass(createDiscWidenNarrowFloats());
  // Channel shuffles as one concatenation (a graph rewrite the symbolic
  // shapes below then annotate).
  pm.addPass(createDiscFoldTransposedConcat());
  // CPU: zero Pads in front of Convs and average poolings as their padding
  // (cuDNN takes symmetric padding only: a folded tf2onnx SAME pad would
  // turn its call into loops), and squeeze-excite blocks on NHWC views
  // between oneDNN's NHWC Conv calls.
  if (options.target == CompileTarget::Cpu) {
    pm.addNestedPass<func::FuncOp>(createDiscFoldPadIntoWindow());
    if (options.libraryCalls == LibraryCallMode::OneDnn)
      pm.addNestedPass<func::FuncOp>(createDiscSqueezeExciteNhwc());
  }
  // Symbolic shapes, once; a specialized dim (NAME=VALUE) becomes static.
  pm.addPass(createDiscShapeSimplify());
  if (emit == EmitStage::Shapes)
    return;
  // The op order is chosen before the memory model is built, so that it
  // describes the order that runs; fusion decisions come first, so the
  // schedule and the memory model see the fused graph.
  // Cheap elementwise values read again long after they are made (the
  // backward pass) are recomputed there from values live anyway, before
  // fusion fuses the copies into their readers.
  CompileTarget target = options.target;
  bool inPlaceState = options.inPlaceState && target == CompileTarget::Cpu;
  // Library calls and their post-ops are marked on the final order, so the
  // memory model sees them (docs/memory.md). CUDA: cuBLAS/cuDNN; the
  // emulated kernels (cuda-emulate) run MatMul/Conv as generated loops.
  std::string libraryCalls = "none";
  if (options.libraryCalls == LibraryCallMode::OneDnn)
    libraryCalls = target == CompileTarget::Cpu    ? "onednn"
                   : target == CompileTarget::Cuda ? "cuda"
                                                   : "none";
  // oneDNN's backward-weights primitive for the filter gradients.
  if (libraryCalls == "onednn")
    pm.addNestedPass<func::FuncOp>(createDiscFormConvBackwardFilter());
  if (options.recomputeElementwise) {
    // On the GPU, normalizations recompute their centered values at each
    // reader, so that one row kernel takes each (docs/cuda.md).
    DiscRecomputeElementwiseOptions recompute;
    if (target != CompileTarget::Cpu)
      recompute.nearWindow = 8;
    pm.addPass(createDiscRecomputeElementwise(recompute));
  }
  if (options.fusion) {
    // On the CUDA targets: depthwise convolutions as one kernel with their
    // producer and epilogue, returned results written into a dying
    // operand's buffer (cudaFusionOptions). On the CPU oneDNN takes the
    // depthwise convolutions, and as loops the padded copy is faster.
    pm.addPass(createDiscFusion(target == CompileTarget::Cpu
                                    ? DiscFusionOptions()
                                    : cudaFusionOptions(libraryCalls)));
  }
  if (options.schedule) {
    DiscMemoryScheduleOptions schedule;
    schedule.inPlaceState = inPlaceState;
    // oneDNN MatMul calls fuse an SGD step into the weight gradient.
    schedule.accumulatingCalls = inPlaceState && libraryCalls == "onednn";
    pm.addPass(createDiscMemorySchedule(schedule));
  }
  if (libraryCalls == "onednn")
    pm.addNestedPass<func::FuncOp>(createDiscMarkLibraryCalls());
  if (libraryCalls == "cuda")
    pm.addNestedPass<func::FuncOp>(createDiscMarkCudaLibraryCalls());
  if (target == CompileTarget::Cuda && options.reportLibraryCalls)
    pm.addPass(createDiscReportLibraryCalls());
  // Training state updated in its own buffers where the final order allows
  // (the CPU session passes its state buffers to the model as they are).
  if (inPlaceState)
    pm.addPass(createDiscMarkInPlaceState());
  if (emit == EmitStage::Memory)
    return;
  // The memory model describes the run with nothing evicted; the remat
  // candidates come from the same order (on CUDA the runtime recomputes an
  // evicted candidate or offloads it to host memory, docs/cuda.md).
  // cuBLAS/cuDNN workspaces are taken only where the allocator grants them
  // (docs/cuda.md, "Memory accounting"): no required temporaries.
  DiscAttachMemoryModelOptions memory;
  memory.libraryTemporaries =
      !usesCudaLibraryCalls(target, options.libraryCalls);
  pm.addPass(createDiscAttachMemoryModel(memory));
  if (options.remat) {
    DiscAttachRematOptions remat;
    remat.maxOps = options.rematMaxOps;
    remat.libraryTemporaries = memory.libraryTemporaries;
    pm.addPass(createDiscAttachRemat(remat));
  }
  DiscAttachSignatureOptions signature;
  signature.modelName = options.modelName;
  signature.target = target == CompileTarget::Cpu    ? "cpu"
                     : target == CompileTarget::Cuda ? "cuda"
                                                     : "cuda-emulate";
  signature.gpuArch = options.gpuArch;
  pm.addPass(createDiscAttachSignature(signature));

  if (emit == EmitStage::Linalg) {
    pm.addPass(createDiscStripShapeAnnotations());
    DiscLowerToLinalgOptions lowering;
    lowering.libraryCallsOption = libraryCalls;
    pm.addPass(createDiscLowerToLinalg(lowering));
    return;
  }
  if (target == CompileTarget::Cpu) {
    CpuPipelineOptions cpu;
    cpu.shapePasses = false;
    cpu.fusion = false;
    cpu.memorySchedule = false;
    cpu.libraryCalls = libraryCalls;
    cpu.stitchRows = options.stitchRows;
    buildDiscCpuPipeline(pm, cpu);
    return;
  }
  CudaPipelineOptions cuda;
  cuda.shapePasses = false;
  cuda.fusion = false;
  cuda.memorySchedule = false;
  cuda.gpuArch = options.gpuArch;
  cuda.elementsPerThread = options.gpuElementsPerThread;
  cuda.rowElementsPerThread = options.gpuRowElementsPerThread;
  cuda.libraryCalls = libraryCalls;
  cuda.reportKernelCosts = options.reportLibraryCalls;
  if (target == CompileTarget::CudaEmulate)
    cuda.stop = CudaPipelineOptions::Stop::Emulate;
  if (emit == EmitStage::Gpu)
    cuda.stop = CudaPipelineOptions::Stop::AfterMapping;
  buildDiscCudaPipeline(pm, cuda);
}

void mlir::disc::registerDiscCompilePipeline() {
  registerDiscTargetPasses();
  PassPipelineRegistration<CompilePipelineOptions>(
      "disc-compile-pipeline",
      "What disc-compile runs: the imported disc dialect to the final module "
      "(signature, memory model and remat candidates as module attributes)",
      buildDiscCompilePipeline);
}

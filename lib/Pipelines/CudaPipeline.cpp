//===- CudaPipeline.cpp - disc dialect to host code plus CUDA kernels -----===//
//
// The CUDA target (docs/cuda.md). The front is the CPU pipeline's (disc →
// linalg → bufferization); then every linalg op becomes an scf.parallel
// nest, collapsed to one dimension and tiled by the block size, so that a
// launch covers any shape: blocks = ceil(elements / blockSize), threads =
// blockSize, guarded by `index < elements`. A reduction keeps its reduced
// dims as a sequential loop inside each thread. Upstream MLIR does the rest:
// gpu-map-parallel-loops, convert-parallel-loops-to-gpu, gpu-kernel-outlining,
// convert-gpu-to-nvvm, gpu-module-to-binary (PTX, then ptxas into a cubin).
//
//===----------------------------------------------------------------------===//
#include "disc/Pipelines/CudaPipeline.h"

#include "disc/Pipelines/CpuPipeline.h"
#include "disc/Transforms/GPU/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;

void mlir::disc::buildDiscCudaPipeline(OpPassManager &pm,
                                       const CudaPipelineOptions &options) {
  CpuPipelineOptions front;
  front.shapePasses = options.shapePasses;
  front.memorySchedule = options.memorySchedule;
  front.fusion = options.fusion;
  // MatMul/Conv through cuBLAS/cuDNN ("cuda"), or generated loops ("none").
  front.libraryCalls = options.libraryCalls;
  front.fusionOptions = cudaFusionOptions(options.libraryCalls);
  buildDiscBufferizedLinalgPipeline(pm, front, /*promoteSmallBuffers=*/false);

  bool emulate = options.stop == CudaPipelineOptions::Stop::Emulate;
  // Shape tensors stay on the host (disc-gpu-place-host-buffers).
  pm.addNestedPass<func::FuncOp>(createDiscGpuPlaceHostBuffers());
  // GPU mapping.
  pm.addNestedPass<func::FuncOp>(createDiscGpuPrepareLinalg());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  if (options.fuseParallelLoops) {
    // Equal bounds must be the same values (memref.dim of the buffers each
    // nest was built from): CSE first. Only adjacent nests fuse (an
    // allocation, a library call or a remat point between two ends the
    // chain), so the allocation order, and with it the memory model's
    // peak, stays.
    pm.addNestedPass<func::FuncOp>(createCSEPass());
    DiscGpuFuseParallelLoopsOptions fuse;
    fuse.stitchRows = options.stitchRows;
    pm.addNestedPass<func::FuncOp>(createDiscGpuFuseParallelLoops(fuse));
  }
  if (options.stitchRows) {
    DiscGpuStitchRowsOptions stitch;
    stitch.maxBlockSize = options.blockSize;
    // Sixteen row elements per thread by default (a block of 64 threads
    // for a row of 1024): more rows in flight per multiprocessor
    // (docs/cuda.md, "Row kernels").
    stitch.elementsPerThread = options.rowElementsPerThread;
    pm.addNestedPass<func::FuncOp>(createDiscGpuStitchRows(stitch));
  }
  // Independent nests over different spaces as one kernel (horizontal
  // fusion): after the row kernels, which it leaves alone.
  if (options.fuseParallelLoops)
    pm.addNestedPass<func::FuncOp>(createDiscGpuFuseIndependentLoops());
  DiscGpuTileParallelLoopsOptions tiling;
  tiling.blockSize = options.blockSize;
  // Four elements per thread in straight-line elementwise nests by default
  // (loads in flight; docs/cuda.md, "Elementwise kernels"); the pass
  // rejects a tile over 1024 elements.
  tiling.elementsPerThread =
      std::max<int64_t>(1, std::min<int64_t>(options.elementsPerThread,
                                             1024 / options.blockSize));
  pm.addNestedPass<func::FuncOp>(createDiscGpuTileParallelLoops(tiling));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createDiscGpuDeviceChecks());
  // Emulated kernels read the constants in place.
  if (!emulate)
    pm.addPass(createDiscGpuUploadConstants());
  pm.addPass(createDiscGpuUploadLibraryCallOperands());
  pm.addNestedPass<func::FuncOp>(createDiscGpuMirrorHostBuffers());
  DiscGpuSmallDeviceBuffersOptions small;
  small.emulate = emulate;
  pm.addPass(createDiscGpuSmallDeviceBuffers(small));
  pm.addPass(createCanonicalizerPass());
  // Bytes and FLOPs of every kernel and library call for the signature
  // (docs/cuda.md, "Roofline").
  DiscGpuKernelCostOptions cost;
  cost.report = options.reportKernelCosts;
  pm.addPass(createDiscGpuKernelCost(cost));
  DiscGpuCheckHostAccessOptions check;
  check.emulate = emulate;
  pm.addPass(createDiscGpuCheckHostAccess(check));
  if (options.stop == CudaPipelineOptions::Stop::AfterMapping)
    return;
  if (emulate) {
    // The mapped kernels as host loops (disc-gpu-emulate-launches), then the
    // CPU tail.
    pm.addPass(createDiscGpuEmulateLaunches());
    pm.addPass(createCanonicalizerPass());
    buildDiscCpuLoopsToLLVMPipeline(pm);
    return;
  }

  // Kernels: outline, NVVM, cubin.
  pm.addPass(createConvertMathToFuncs()); // math.ipowi and friends
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // Constants, dims and index compares move into the kernels, so that the
  // kernel compiler sees them: a delinearization by a constant row length
  // folds into the address, a division by a constant into a reciprocal.
  // Without it every such value is a kernel parameter (a 64-bit division
  // per element in a collapsed nest).
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createDiscGpuNameKernels());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.gpuArch;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "bin"; // PTX through ptxas into a cubin
  // The toolkit gives ptxas and libdevice (math functions); without it,
  // MLIR looks for ptxas on PATH.
  binary.toolkitPath = options.cudaPath;
  if (binary.toolkitPath.empty())
    if (const char *env = std::getenv("CUDA_PATH"))
      binary.toolkitPath = env;
  if (binary.toolkitPath.empty() &&
      llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas"))
    binary.toolkitPath = "/usr/local/cuda";
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // Host code: as on CPU (math.ipowi and friends are functions already),
  // plus gpu.launch_func → runtime calls.
  HostToLLVMOptions host;
  host.mathToFuncs = false;
  host.gpuToLLVM = true;
  buildDiscHostToLLVMPipeline(pm, host);
}

mlir::disc::DiscFusionOptions
mlir::disc::cudaFusionOptions(llvm::StringRef libraryCalls) {
  DiscFusionOptions fusion;
  fusion.depthwise = libraryCalls == "cuda" ? "cuda" : "all";
  fusion.inPlaceOutputs = true;
  return fusion;
}

void mlir::disc::registerDiscCudaPipeline() {
  PassPipelineRegistration<>(
      "disc-cuda-pipeline",
      "Lower the disc dialect to host LLVM dialect with sm_80 cubins",
      [](OpPassManager &pm) { buildDiscCudaPipeline(pm); });
}

void mlir::disc::registerDiscCudaExtensions(DialectRegistry &registry) {
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

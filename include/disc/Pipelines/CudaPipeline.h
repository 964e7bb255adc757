//===- CudaPipeline.h - disc dialect to a model.so with CUDA kernels -*- C++
//-*-===//
#ifndef DISC_PIPELINES_CUDAPIPELINE_H
#define DISC_PIPELINES_CUDAPIPELINE_H

#include "disc/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::disc {

/// Choices of the CUDA pipeline (`disc-compile --target=cuda`).
struct CudaPipelineOptions {
  /// Run the shape passes first (see CpuPipelineOptions).
  bool shapePasses = true;
  /// Run disc-memory-schedule (see CpuPipelineOptions).
  bool memorySchedule = true;
  /// Run disc-fusion (see CpuPipelineOptions): false when the caller fused
  /// already, or chose no fusion, so the memory model saw the same graph.
  bool fusion = true;
  /// GPU architecture of the cubins (`--gpu-arch`): "sm_80", "sm_90", ...
  std::string gpuArch = "sm_80";
  /// CUDA toolkit (ptxas, libdevice); empty: $CUDA_PATH, else
  /// /usr/local/cuda when it has ptxas, else ptxas from PATH.
  std::string cudaPath;
  /// MatMul/Gemm/Conv: "cuda" (cuBLAS/cuDNN library calls where the op
  /// fits, disc/Conversion/CudaLibraryCalls.h) or "none" (generated loops).
  std::string libraryCalls = "cuda";
  /// Threads per block of the generated kernels.
  int64_t blockSize = 256;
  /// Elements per thread of straight-line elementwise nests
  /// (disc-gpu-tile-parallel-loops; blockSize * elementsPerThread <= 1024;
  /// docs/cuda.md, "Elementwise kernels").
  int64_t elementsPerThread = 4;
  /// Row elements per thread that size a row kernel's block
  /// (disc-gpu-stitch-rows; docs/cuda.md, "Row kernels").
  int64_t rowElementsPerThread = 16;
  /// Fuse adjacent parallel loop nests with the same iteration space into
  /// one kernel (disc-gpu-fuse-parallel-loops, before the tiling): a
  /// reduction's init fill with the reduction, elementwise ops over the
  /// same output shape whose second reads the first's result at the same
  /// index (docs/cuda.md, "Fusion on the GPU").
  bool fuseParallelLoops = true;
  /// Row reductions with the nests over the same rows as one kernel with a
  /// block per row (disc-gpu-stitch-rows, docs/cuda.md, "Row kernels").
  bool stitchRows = true;
  /// Print every kernel's and library call's bytes and FLOPs expressions
  /// to stderr (disc-gpu-kernel-cost, `--report-codegen`); the signature
  /// gets them either way.
  bool reportKernelCosts = false;
  /// Where to stop: after the GPU mapping (gpu.launch ops in the host
  /// function, the IR `--emit=gpu` prints), or the whole way to the LLVM
  /// dialect with the cubins embedded. `Emulate` continues from the mapped
  /// IR with every gpu.launch as host loops over block and thread ids and
  /// the CPU pipeline's tail: a CPU model that runs the kernels as mapped
  /// (`--target=cuda-emulate`, docs/cuda.md).
  enum class Stop { AfterMapping, LLVM, Emulate } stop = Stop::LLVM;
};

/// disc → linalg on buffers (shared with the CPU pipeline) → parallel loops
/// → every loop nest collapsed to one dimension, tiled by `blockSize`, and
/// mapped to blocks × threads with run-time bounds (one launch serves every
/// shape) → gpu.launch → kernels outlined → NVVM → cubin (ptxas from the
/// CUDA toolkit, through gpu-module-to-binary) → host code calling the
/// runtime's device entries (docs/cuda.md). Ops that would need the host to
/// read device memory fail with an error naming the ONNX node.
void buildDiscCudaPipeline(OpPassManager &pm,
                           const CudaPipelineOptions &options = {});

/// Registers the CUDA pass pipeline (`disc-cuda-pipeline`). The passes
/// (disc-gpu-*) are registered by registerDiscGpuTransformsPasses
/// (disc/Transforms/GPU).
void registerDiscCudaPipeline();

/// disc-fusion's options on the CUDA targets for `libraryCalls` ("cuda" or
/// "none"): `depthwise` "cuda" (depthwise convolutions as one kernel where
/// a cuDNN call would leave an activation to a kernel of its own) or "all"
/// (every one, without library calls; docs/cuda.md, "Depthwise
/// convolutions"), and `in-place-outputs` (the updates of a training step
/// written into their gradients' buffers become one kernel;
/// "Independent loop nests").
DiscFusionOptions cudaFusionOptions(llvm::StringRef libraryCalls);

/// Registers what the CUDA pipeline needs in a context: the NVVM target
/// attribute's serialization and the GPU dialects' translation to LLVM IR.
void registerDiscCudaExtensions(DialectRegistry &registry);

} // namespace mlir::disc

#endif // DISC_PIPELINES_CUDAPIPELINE_H

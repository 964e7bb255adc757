//===- CpuPipeline.h - disc dialect to a loadable model.so on CPU -*- C++
//-*-===//
#ifndef DISC_PIPELINES_CPUPIPELINE_H
#define DISC_PIPELINES_CPUPIPELINE_H

#include "disc/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::disc {

/// Choices of the CPU pipeline.
struct CpuPipelineOptions {
  /// Run disc-shape-propagate and disc-shape-simplify first (false when the
  /// caller annotated the shapes already: disc-compile-pipeline).
  bool shapePasses = true;
  /// Run disc-memory-schedule (`disc-compile --schedule=memory`); false
  /// keeps program order (`--schedule=none`).
  bool memorySchedule = true;
  /// "onednn": f32 MatMul/Gemm/Conv call the runtime's oneDNN module
  /// (`disc-compile --library-calls=onednn`); "none": everything becomes
  /// loops.
  std::string libraryCalls = "onednn";
  /// Run disc-fusion after the shape passes (false when the caller already
  /// did, before building the memory model: `disc-compile`).
  bool fusion = true;
  /// disc-fusion's options: the defaults on the CPU (oneDNN takes the
  /// depthwise convolutions, and as loops their padded copy is faster
  /// there), cudaFusionOptions on the CUDA targets.
  DiscFusionOptions fusionOptions;
  /// Run the outlined loop nests with a parallel outer loop on the
  /// session's threads (disc-parallelize-kernels).
  bool parallelKernels = true;
  /// Run a row reduction and the loop nests over its rows in one loop over
  /// the rows (disc-stitch-rows).
  bool stitchRows = true;
};

/// disc → linalg/tensor → one-shot bufferization (+ ownership-based buffer
/// deallocation) → loops → LLVM dialect. Allocations go through the runtime
/// (docs/runtime-abi.md). Registered as `disc-cpu-pipeline`.
void buildDiscCpuPipeline(OpPassManager &pm,
                          const CpuPipelineOptions &options = {});

/// The part shared with the CUDA pipeline: disc → linalg on tensors →
/// bufferization and deallocation → linalg on buffers (memref.copy as
/// linalg.copy). `promoteSmallBuffers` moves small static buffers to the
/// stack (CPU only: a device kernel cannot read the host stack).
void buildDiscBufferizedLinalgPipeline(OpPassManager &pm,
                                       const CpuPipelineOptions &options,
                                       bool promoteSmallBuffers);

/// The CPU pipeline's tail: linalg and scf on buffers (outlined loop
/// nests) → LLVM dialect. Also ends the CUDA emulation
/// (`--target=cuda-emulate`). `parallelKernels`: kernels with a parallel
/// outer loop run through `disc_ral_context.parallel_for` (CPU target only).
void buildDiscCpuLoopsToLLVMPipeline(OpPassManager &pm,
                                     bool parallelKernels = false);

/// What the host code's lowering to the LLVM dialect runs besides the
/// passes that the CPU and CUDA targets share.
struct HostToLLVMOptions {
  /// math.ipowi and friends as functions (the CUDA pipeline converts them
  /// before it outlines the kernels).
  bool mathToFuncs = true;
  /// gpu.launch_func and the other host-side GPU ops as runtime calls
  /// (CUDA).
  bool gpuToLLVM = false;
  /// disc-lower-parallel-calls (CPU with parallel kernels).
  bool parallelCalls = false;
};

/// The tail shared by the CPU pipeline and the CUDA host code: memrefs,
/// math, arith, index, control flow and functions on the host → LLVM
/// dialect. Allocations go through the generic `_mlir_memref_to_llvm_*`
/// functions, which the model wrapper routes to the session's allocator.
void buildDiscHostToLLVMPipeline(OpPassManager &pm,
                                 const HostToLLVMOptions &options);

/// Registers the CPU pass pipeline (`disc-cpu-pipeline`). The passes are
/// registered by registerDiscCpuTransformsPasses (disc/Transforms/CPU).
void registerDiscPipelines();

} // namespace mlir::disc

#endif // DISC_PIPELINES_CPUPIPELINE_H

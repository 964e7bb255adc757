//===- CpuPipeline.h - disc dialect to a loadable model.so on CPU -*- C++
//-*-===//
#ifndef DISC_PIPELINES_CPUPIPELINE_H
#define DISC_PIPELINES_CPUPIPELINE_H

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
  /// Run the outlined loop nests with a parallel outer loop on the
  /// session's threads (disc-parallelize-kernels, ParallelKernels.cpp).
  bool parallelKernels = true;
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

/// disc-parallelize-kernels: outlined kernels whose loop nest has a
/// parallel outer loop take a chunk [lo, hi) of it and the smallest chunk
/// worth a thread as three more arguments and are marked `disc.parallel`
/// (ParallelKernels.cpp).
std::unique_ptr<Pass> createParallelizeKernelsPass();
/// disc-lower-parallel-calls: on the LLVM dialect, each call of a marked
/// kernel becomes a call of `disc_parallel_for` with a body function and
/// its arguments in a stack struct.
std::unique_ptr<Pass> createLowerParallelCallsPass();
void registerParallelKernelsPasses();

/// Registers DISC pass pipelines (`disc-cpu-pipeline`).
void registerDiscPipelines();

/// The buffer a memref value views on the CPU path: its allocation, global
/// or block argument, through views, casts and reshapes; null when it comes
/// from anything else (a loop result, a call). Used for the kernels'
/// `noalias` parameters (disc-outline-kernels) and to keep kernels whose
/// inputs view their output serial (disc-parallelize-kernels).
Value bufferRoot(Value v);

} // namespace mlir::disc

#endif // DISC_PIPELINES_CPUPIPELINE_H

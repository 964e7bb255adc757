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
  /// session's threads (disc-parallelize-kernels).
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

/// Registers the CPU pass pipeline (`disc-cpu-pipeline`). The passes are
/// registered by registerDiscCpuTransformsPasses (disc/Transforms/CPU).
void registerDiscPipelines();

/// What `emitModelArtifact` writes.
enum class EmitKind { LLVM, Object, Library };

/// Writes the artifact of a module already lowered to the LLVM dialect:
/// LLVM IR text, `model.so` (object + generated C wrapper with the ABI
/// entry points and signature JSON, linked with the system `cc -shared`),
/// or the same two as one relocatable object (`cc -r`) that needs only libc
/// and libm. `signatureJson` is embedded as
/// `disc_model_signature()`. `sanitize` is a comma-separated list of
/// sanitizers ("address", "undefined"; empty = none, docs/reliability.md):
/// "address" instruments the compiled code with LLVM's AddressSanitizer
/// pass, and both go to the C wrapper's compiler (`-fsanitize=`); such a
/// model.so loads only into a process that carries the sanitizer runtimes.
/// Errors are reported on the module and failure() is returned. With
/// `timing`, the phases (translation to LLVM IR, LLVM optimization, machine
/// code emission, linking) are timed as nested scopes of it
/// (`disc-compile --timing`). A `model.so` is compiled in `jobs` parallel
/// parts (0: one per hardware thread; 1: one object). With
/// `codegenReport`, one line per loop-nest kernel (an op's loop nest that
/// got no library call) says whether LLVM's loop vectorizer vectorized it,
/// with the op's location, then a summary (`disc-compile --report-codegen`).
LogicalResult emitModelArtifact(ModuleOp module, llvm::StringRef entryName,
                                llvm::StringRef signatureJson,
                                llvm::StringRef outputPath, EmitKind kind,
                                llvm::StringRef sanitize = {},
                                TimingScope *timing = nullptr,
                                unsigned jobs = 0,
                                llvm::raw_ostream *codegenReport = nullptr);

/// Builds the signature JSON (docs/runtime-abi.md) from the entry function's
/// `disc.name` / `disc.dims` argument and result attributes. Must run on
/// the disc-level module, before lowering.
FailureOr<std::string> buildSignatureJson(ModuleOp module,
                                          llvm::StringRef entryName,
                                          llvm::StringRef modelName);

} // namespace mlir::disc

#endif // DISC_PIPELINES_CPUPIPELINE_H

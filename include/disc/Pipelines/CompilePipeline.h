//===- CompilePipeline.h - what disc-compile runs ---------------*- C++ -*-===//
//
// `disc-compile-pipeline` takes the imported disc-dialect module (entry
// `disc_entry`) to the final module: `--dim` ranges, symbolic shapes,
// fusion, op scheduling, library-call marking, the memory model,
// rematerialization and the signature as module attributes, then the CPU or
// CUDA lowering. `disc-compile` runs exactly this pipeline, so
// `disc-opt --disc-compile-pipeline='...'` reproduces it (docs/cli.md).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_PIPELINES_COMPILEPIPELINE_H
#define DISC_PIPELINES_COMPILEPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::disc {

/// `--target`: the host CPU, CUDA kernels, or the CUDA kernels run as host
/// loops (a CPU model, docs/cuda.md).
enum class CompileTarget { Cpu, Cuda, CudaEmulate };

/// `--emit`: where the output is taken. The IR stages cut the pipeline
/// (Mlir after the `--dim` ranges, Shapes after the shape passes, Memory
/// after the library-call marking, Linalg after disc-lower-to-linalg, Gpu
/// after the GPU mapping); LlvmDialect, Llvm, Obj and Lib run it whole.
enum class EmitStage {
  Mlir,
  Shapes,
  Memory,
  Linalg,
  Gpu,
  LlvmDialect,
  Llvm,
  Obj,
  Lib
};

/// `--library-calls`: f32 MatMul/Gemm/Conv as runtime library calls
/// (oneDNN; cuBLAS/cuDNN on the CUDA target; none on cuda-emulate) or
/// generated loops.
enum class LibraryCallMode { OneDnn, None };

/// Whether MatMul/Gemm/Conv become cuBLAS/cuDNN calls: their workspaces
/// are taken only where the allocator grants them, so the memory model
/// adds no temporaries for them (`library-temporaries=false`).
inline bool usesCudaLibraryCalls(CompileTarget target, LibraryCallMode mode) {
  return target == CompileTarget::Cuda && mode == LibraryCallMode::OneDnn;
}

/// The choices of `disc-compile` that shape the IR. Textual form:
/// `disc-compile-pipeline{target=cuda gpu-arch=sm_90 dims=N=1:64,H=1:512
/// schedule=0 remat=1 ...}`.
struct CompilePipelineOptions
    : public PassPipelineOptions<CompilePipelineOptions> {
  Option<CompileTarget> target{
      *this, "target", llvm::cl::desc("cpu, cuda or cuda-emulate"),
      llvm::cl::init(CompileTarget::Cpu),
      llvm::cl::values(clEnumValN(CompileTarget::Cpu, "cpu", "host CPU"),
                       clEnumValN(CompileTarget::Cuda, "cuda", "CUDA kernels"),
                       clEnumValN(CompileTarget::CudaEmulate, "cuda-emulate",
                                  "CUDA kernels as host loops"))};
  Option<std::string> gpuArch{*this, "gpu-arch",
                              llvm::cl::desc("sm_NN of the CUDA kernels"),
                              llvm::cl::init("sm_80")};
  Option<int64_t> gpuElementsPerThread{
      *this, "gpu-elements-per-thread",
      llvm::cl::desc("Elements per thread of the elementwise CUDA kernels "
                     "(1, 2 or 4)"),
      llvm::cl::init(4)};
  Option<int64_t> gpuRowElementsPerThread{
      *this, "gpu-row-elements-per-thread",
      llvm::cl::desc("Row elements per thread that size a CUDA row "
                     "kernel's block (>= 1)"),
      llvm::cl::init(16)};
  Option<EmitStage> emit{
      *this, "emit", llvm::cl::desc("Stage after which the pipeline stops"),
      llvm::cl::init(EmitStage::Lib),
      llvm::cl::values(
          clEnumValN(EmitStage::Mlir, "mlir", "after the --dim ranges"),
          clEnumValN(EmitStage::Shapes, "shapes", "after the shape passes"),
          clEnumValN(EmitStage::Memory, "memory",
                     "after the library-call marking"),
          clEnumValN(EmitStage::Linalg, "linalg", "after disc-lower-to-linalg"),
          clEnumValN(EmitStage::Gpu, "gpu", "after the GPU mapping"),
          clEnumValN(EmitStage::LlvmDialect, "llvm-dialect", "whole"),
          clEnumValN(EmitStage::Llvm, "llvm", "whole"),
          clEnumValN(EmitStage::Obj, "obj", "whole"),
          clEnumValN(EmitStage::Lib, "lib", "whole (default)"))};
  ListOption<std::string> dims{
      *this, "dims",
      llvm::cl::desc("Input dim ranges NAME=MIN:MAX[:LIKELY] or NAME=VALUE")};
  Option<bool> forceDynamic{
      *this, "force-dynamic",
      llvm::cl::desc("Named input dims without a range may be 0"),
      llvm::cl::init(false)};
  Option<bool> fusion{*this, "fusion", llvm::cl::desc("Run disc-fusion"),
                      llvm::cl::init(true)};
  Option<bool> recomputeElementwise{
      *this, "recompute-elementwise",
      llvm::cl::desc("Run disc-recompute-elementwise (before disc-fusion)"),
      llvm::cl::init(true)};
  Option<bool> stitchRows{*this, "stitch-rows",
                          llvm::cl::desc("Run disc-stitch-rows (CPU target)"),
                          llvm::cl::init(true)};
  Option<bool> schedule{*this, "schedule",
                        llvm::cl::desc("Run disc-memory-schedule"),
                        llvm::cl::init(true)};
  Option<bool> remat{*this, "remat", llvm::cl::desc("Run disc-attach-remat"),
                     llvm::cl::init(true)};
  Option<bool> inPlaceState{
      *this, "in-place-state",
      llvm::cl::desc("target=cpu: write the training state updates into the "
                     "state's buffers (disc-mark-in-place-state)"),
      llvm::cl::init(true)};
  Option<unsigned> rematMaxOps{
      *this, "remat-max-ops",
      llvm::cl::desc("Most ops recomputed for one remat candidate"),
      llvm::cl::init(12)};
  Option<LibraryCallMode> libraryCalls{
      *this, "library-calls", llvm::cl::desc("onednn or none"),
      llvm::cl::init(LibraryCallMode::OneDnn),
      llvm::cl::values(
          clEnumValN(LibraryCallMode::OneDnn, "onednn", "library calls"),
          clEnumValN(LibraryCallMode::None, "none", "generated loops"))};
  Option<std::string> modelName{
      *this, "model-name",
      llvm::cl::desc("Model name in the signature (disc-compile: the input "
                     "file's stem)"),
      llvm::cl::init("model")};
  Option<std::string> training{
      *this, "training",
      llvm::cl::desc("Options of disc-build-training-step, which then runs "
                     "first (empty: the forward model)"),
      llvm::cl::init("")};
  Option<bool> reportLibraryCalls{
      *this, "report-library-calls",
      llvm::cl::desc("target=cuda: print the cuBLAS/cuDNN choices to stderr"),
      llvm::cl::init(false)};
};

/// Adds the passes of `disc-compile` for `options` to `pm` (a ModuleOp pass
/// manager).
void buildDiscCompilePipeline(OpPassManager &pm,
                              const CompilePipelineOptions &options);

/// Registers `disc-compile-pipeline` and the disc-attach-* passes.
void registerDiscCompilePipeline();

} // namespace mlir::disc

#endif // DISC_PIPELINES_COMPILEPIPELINE_H

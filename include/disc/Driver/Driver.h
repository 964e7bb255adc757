//===- Driver.h - compile a model once into a model.so ----------*- C++ -*-===//
//
// The library behind `disc-compile` (docs/cli.md): options, the import of an
// ONNX model or a disc-dialect `.mlir` file, `disc-compile-pipeline`
// (disc/Pipelines/CompilePipeline.h) and the output of the requested stage.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_DRIVER_DRIVER_H
#define DISC_DRIVER_DRIVER_H

#include "disc/Pipelines/CompilePipeline.h"
#include "disc/Target/Signature.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::disc {

/// Exit codes of `disc-compile` and results of compileModel.
enum CompileStatus : int {
  /// The requested output was written.
  CompileOk = 0,
  /// The compiler failed (a pass, the memory model, LLVM, the linker).
  CompileFailed = 1,
  /// Bad usage or bad input: an unknown option value, a missing or
  /// malformed model, an unsupported op.
  CompileBadInput = 2,
};

/// Every choice of one `disc-compile` run; the defaults are the flags'.
/// `--train` and its flags: the options of disc-build-training-step
/// (docs/training.md).
struct TrainingOptions {
  bool enabled = false;
  /// The scalar output to minimize (`--loss`).
  std::string loss;
  /// `--trainable` / `--frozen`: initializer names.
  std::vector<std::string> trainable, frozen;
  /// none, sgd, momentum or adamw (`--optimizer`).
  std::string optimizer = "sgd";
  double lr = 0.01, momentum = 0.9, weightDecay = 0.0, beta1 = 0.9,
         beta2 = 0.999, eps = 1e-8;
  /// The options as disc-build-training-step's option text.
  std::string passOptions() const;
};

struct CompileOptions {
  /// The model: an ONNX file, or a disc-dialect `.mlir` file whose first
  /// public function is the entry.
  std::string inputPath;
  /// Where the output goes; "-" (stdout) for the textual stages only.
  std::string outputPath = "-";
  CompileTarget target = CompileTarget::Cpu;
  /// GPU architecture "sm_NN", NN >= 50 (target cuda).
  std::string gpuArch = "sm_80";
  /// Elements per thread of elementwise kernels, 1, 2 or 4
  /// (`--gpu-elements-per-thread`, target cuda; docs/cuda.md).
  int64_t gpuElementsPerThread = 4;
  /// Row elements per thread that sizes a row kernel's block, >= 1
  /// (`--gpu-row-elements-per-thread`, target cuda; docs/cuda.md).
  int64_t gpuRowElementsPerThread = 16;
  EmitStage emit = EmitStage::Lib;
  /// `--dim` entries, NAME=MIN:MAX[:LIKELY] or NAME=VALUE (parseDimRange).
  std::vector<std::string> dims;
  /// disc-memory-schedule (`--schedule=memory`); false keeps program order.
  bool memorySchedule = true;
  /// Rematerialization candidates (`--remat=on`).
  bool remat = true;
  /// Most ops recomputed for one candidate (`--remat-max-ops`).
  unsigned rematMaxOps = 12;
  /// Training state updates written into the state's buffers
  /// (`--in-place-state`, target cpu).
  bool inPlaceState = true;
  /// Every ONNX graph input dim dynamic (`--force-dynamic`).
  bool forceDynamic = false;
  /// Comma-separated sanitizers: address, undefined, fuzzer-no-link.
  std::string sanitize;
  LibraryCallMode libraryCalls = LibraryCallMode::OneDnn;
  /// Print the compile-time tree to stderr (`--timing`).
  bool timing = false;
  /// disc-fusion (`--fusion`).
  bool fusion = true;
  /// disc-recompute-elementwise (`--recompute-elementwise`).
  bool recomputeElementwise = true;
  /// disc-stitch-rows on the CPU target (`--stitch-rows`).
  bool stitchRows = true;
  /// Kernel and library-call report on stderr (`--report-codegen`).
  bool reportCodegen = false;
  /// Threads compiling the LLVM module (0: one per hardware thread).
  unsigned compileJobs = 0;
  /// Compile an entry function of more than this many LLVM instructions
  /// at O1 with fast code generation (`--fast-entry-above`; < 0: never;
  /// emitModelArtifact).
  int64_t fastEntryAbove = 50000;
  /// Verify the module after every pass of the pipeline (`--verify-each`),
  /// so that invalid IR is reported with the pass that made it. Off, the
  /// imported module and the pipeline's result are verified once each: on
  /// Swin-B (13,185 ONNX nodes) verifying after each of the ~100 passes is
  /// 8 of the pipeline's 24 s. Default: on in builds with assertions.
#ifdef NDEBUG
  bool verifyEach = false;
#else
  bool verifyEach = true;
#endif
  /// A training step instead of the forward model (`--train`).
  TrainingOptions training;
  /// Where the errors and the diagnostics that explain them go (and the
  /// `--report-codegen` report); null: stderr. The Python module collects
  /// them into the message of its exception (docs/python.md).
  llvm::raw_ostream *errorStream = nullptr;
  /// Progress of the compile (disc-compile's progress line): called with
  /// the phase running now ("import", "pass disc-fusion", "translate to
  /// LLVM IR", "LLVM optimization", "code generation", "link") and, in
  /// code generation, the kernels compiled so far and their total (both 0
  /// elsewhere). May be called from the code generation threads at once.
  /// Empty: no calls.
  std::function<void(llvm::StringRef phase, int64_t done, int64_t total)>
      progress;
};

/// `--target`: "cpu", "cuda" or "cuda-emulate"; otherwise the error
/// "unsupported --target 'NAME' (supported: cpu, cuda, cuda-emulate)".
llvm::Expected<CompileTarget> parseCompileTarget(llvm::StringRef name);

/// `--library-calls`: "onednn" or "none"; otherwise the error
/// "unsupported --library-calls 'NAME' (supported: onednn, none)".
llvm::Expected<LibraryCallMode> parseLibraryCallMode(llvm::StringRef name);

/// Prints `err` as "disc-compile: error: MESSAGE" to stderr; returns
/// CompileBadInput.
int reportUsageError(llvm::Error err);

/// Registers MLIR's printer, context and pass manager command-line options
/// and hides every option outside `category` (and --help, --version) from
/// `--help`; `--help-hidden` lists them all.
void registerCompileCLOptions(llvm::cl::OptionCategory &category);

/// The pipeline options of `options` for a model called `modelName` (what
/// `disc-opt --disc-compile-pipeline='...'` takes to reproduce the run).
void getCompilePipelineOptions(const CompileOptions &options,
                               llvm::StringRef modelName,
                               CompilePipelineOptions &pipeline);

/// Compiles `options.inputPath` as `disc-compile` does: checks the options,
/// imports the model (entry renamed `disc_entry`), checks the `--dim` names
/// against the entry's dims, runs disc-compile-pipeline (with the MLIR pass
/// manager command-line options) and writes the `options.emit` output to
/// `options.outputPath`. Errors are printed to stderr as "disc-compile:
/// error: ..." after the diagnostics that explain them. Returns a
/// CompileStatus. Errors go to `options.errorStream` when set.
int compileModel(const CompileOptions &options);

} // namespace mlir::disc

#endif // DISC_DRIVER_DRIVER_H

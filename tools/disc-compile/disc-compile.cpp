//===- disc-compile.cpp - compile an ONNX model once into a model.so ------===//
//
// disc-compile MODEL.onnx -o MODEL.so [--target=cpu|cuda] [--gpu-arch=sm_80]
//              [--emit=mlir|shapes|memory|linalg|gpu|llvm-dialect|llvm|obj|lib]
//              [--dim NAME=MIN:MAX[:LIKELY]] [--dim NAME=VALUE] ...
//              [--schedule=memory|none] [--remat=on|off]
//              [--train --loss NAME [--optimizer=sgd|momentum|adamw|none] ...]
//
// Also accepts a disc-dialect `.mlir` file as input (used by lit tests).
// Exit codes: 0 ok, 1 compiler failure, 2 bad usage or bad input (malformed
// model, unsupported op). The flags fill disc::CompileOptions (Driver.h).
//
//===----------------------------------------------------------------------===//
#include "disc/Driver/Driver.h"
#include "llvm/Support/InitLLVM.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace cl = llvm::cl;
namespace disc = mlir::disc;
using disc::EmitStage;

static disc::CompileOptions options;

/// `--help` lists this category; the others are in `--help-hidden`.
static cl::OptionCategory cat("DISC options");
static cl::opt<std::string, true>
    inputPath(cl::Positional, cl::desc("<model.onnx>"), cl::Required,
              cl::location(options.inputPath), cl::cat(cat));
static cl::opt<std::string, true> outputPath("o", cl::desc("Output file"),
                                             cl::value_desc("path"),
                                             cl::location(options.outputPath),
                                             cl::cat(cat));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu, cuda, or cuda-emulate (the mapped CUDA "
                    "kernels run as host loops: a CPU model, docs/cuda.md)"),
           cl::init("cpu"), cl::cat(cat));
static cl::opt<std::string, true> gpuArch(
    "gpu-arch",
    cl::desc("GPU architecture of the CUDA kernels (--target=cuda): sm_80, "
             "sm_90, ..."),
    cl::value_desc("sm_NN"), cl::location(options.gpuArch), cl::cat(cat));
static cl::opt<int64_t, true> gpuElementsPerThread(
    "gpu-elements-per-thread",
    cl::desc("Elements per thread of the elementwise CUDA kernels: 1, 2 or "
             "4 (default 4; docs/cuda.md, \"Elementwise kernels\")"),
    cl::location(options.gpuElementsPerThread), cl::cat(cat));
static cl::opt<int64_t, true> gpuRowElementsPerThread(
    "gpu-row-elements-per-thread",
    cl::desc("Row elements per thread that size a CUDA row kernel's block "
             "(default 16; docs/cuda.md, \"Row kernels\")"),
    cl::location(options.gpuRowElementsPerThread), cl::cat(cat));
static cl::opt<EmitStage, true> emit(
    "emit", cl::desc("What to write"), cl::location(options.emit),
    cl::values(
        clEnumValN(EmitStage::Mlir, "mlir", "disc dialect after import"),
        clEnumValN(EmitStage::Shapes, "shapes",
                   "symbolic shape of every value (after "
                   "disc-shape-propagate and disc-shape-simplify)"),
        clEnumValN(EmitStage::Memory, "memory",
                   "live bytes of every op in the final order and the peak "
                   "(docs/memory.md)"),
        clEnumValN(EmitStage::Linalg, "linalg", "after disc-lower-to-linalg"),
        clEnumValN(EmitStage::Gpu, "gpu",
                   "--target=cuda: after the mapping to gpu.launch (blocks "
                   "and threads), before NVVM"),
        clEnumValN(EmitStage::LlvmDialect, "llvm-dialect",
                   "MLIR LLVM dialect after lowering"),
        clEnumValN(EmitStage::Llvm, "llvm", "LLVM IR"),
        clEnumValN(EmitStage::Obj, "obj", "object file"),
        clEnumValN(EmitStage::Lib, "lib", "loadable model.so (default)")),
    cl::cat(cat));
static cl::list<std::string, std::vector<std::string>>
    dims("dim",
         cl::desc("Range of a named input dim: NAME=MIN:MAX[:LIKELY], or "
                  "NAME=VALUE to specialize it (repeatable)"),
         cl::value_desc("NAME=MIN:MAX[:LIKELY]"), cl::location(options.dims),
         cl::cat(cat));
enum class Schedule { Memory, None };
static cl::opt<Schedule> schedule(
    "schedule", cl::desc("Op order"),
    cl::values(clEnumValN(Schedule::Memory, "memory",
                          "reorder ops to lower the symbolic peak memory "
                          "(disc-memory-schedule, default)"),
               clEnumValN(Schedule::None, "none", "keep program order")),
    cl::cat(cat));
enum class Remat { On, Off };
static cl::opt<Remat> rematMode(
    "remat", cl::desc("Rematerialization candidates (docs/memory.md)"),
    cl::values(clEnumValN(Remat::On, "on",
                          "evict/regenerate points the runtime uses under a "
                          "memory limit (disc-remat, default)"),
               clEnumValN(Remat::Off, "off", "none")),
    cl::cat(cat));
static cl::opt<unsigned, true> rematMaxOps(
    "remat-max-ops",
    cl::desc("Most ops recomputed for one rematerialization candidate"),
    cl::location(options.rematMaxOps), cl::cat(cat));
static cl::opt<bool, true> forceDynamic(
    "force-dynamic",
    cl::desc("Make every dim of every ONNX graph input dynamic, named "
             "<input>_d<i> (the conformance runner's dynamic mode); a 1-D "
             "input used only as a rank-determining operand (a shape, axes, "
             "pads, repeats, split or slice bounds) keeps its static length"),
    cl::location(options.forceDynamic), cl::cat(cat));
#ifndef DISC_DEFAULT_SANITIZE
#define DISC_DEFAULT_SANITIZE ""
#endif
static cl::opt<std::string, true> sanitize(
    "sanitize",
    cl::desc("Instrument the compiled model: a list of address, undefined, "
             "fuzzer-no-link (libFuzzer coverage) (docs/reliability.md); the "
             "model.so then loads only into a sanitized process. Default: "
             "the DISC_SANITIZE setting of this build"),
    cl::value_desc("list"), cl::location(options.sanitize),
    cl::init(DISC_DEFAULT_SANITIZE), cl::cat(cat));
static cl::opt<std::string> libraryCalls(
    "library-calls",
    cl::desc("Library for f32 MatMul/Gemm/Conv: onednn (runtime library "
             "calls, default; cuBLAS/cuDNN on --target=cuda) or none "
             "(generated loops)"),
    cl::value_desc("onednn|none"), cl::init("onednn"), cl::cat(cat));
static cl::opt<bool, true> timing(
    "timing",
    cl::desc("Print where the compile time goes to stderr: import, shape "
             "analysis, scheduling, every MLIR pass, LLVM optimization, "
             "machine code emission and linking (wall and user time)"),
    cl::location(options.timing), cl::cat(cat));
static cl::opt<bool, true>
    fusion("fusion",
           cl::desc("Fuse elementwise producers into their single consumer "
                    "(disc-fusion, docs/memory.md; default true)"),
           cl::location(options.fusion), cl::cat(cat));
static cl::opt<bool, true> recomputeElementwise(
    "recompute-elementwise",
    cl::desc("Recompute cheap elementwise values at their distant uses from "
             "values live there anyway instead of keeping them "
             "(disc-recompute-elementwise, docs/memory.md; default true)"),
    cl::location(options.recomputeElementwise), cl::cat(cat));
static cl::opt<bool, true> stitchRows(
    "stitch-rows",
    cl::desc("Run a row reduction (Softmax, LayerNorm) and the loop nests "
             "over its rows in one loop over the rows (disc-stitch-rows, "
             "CPU target; default true)"),
    cl::location(options.stitchRows), cl::cat(cat));
static cl::opt<bool, true> reportCodegen(
    "report-codegen",
    cl::desc("Print to stderr every loop-nest kernel (an op that got no "
             "library call) with its ONNX node, whether LLVM vectorized it "
             "and whether it runs on the session's threads (parallel), then "
             "a summary"),
    cl::location(options.reportCodegen), cl::cat(cat));
static cl::opt<unsigned, true> compileJobs(
    "compile-jobs",
    cl::desc("Threads that optimize and compile the LLVM module, in at "
             "least as many parts (default 0: one per hardware thread; 1: "
             "one part)"),
    cl::location(options.compileJobs), cl::cat(cat));

static cl::opt<int64_t, true> fastEntryAbove(
    "fast-entry-above",
    cl::desc("Optimize the entry function (the host code that calls the "
             "kernels and libraries) at O1 with fast code generation, in a "
             "part of its own, when it has more than N LLVM instructions "
             "(default 50000; -1: never)"),
    cl::location(options.fastEntryAbove), cl::cat(cat));
static cl::opt<bool, true> verifyEach(
    "verify-each",
    cl::desc("Verify the module after every pass, naming the pass that made "
             "invalid IR (default: only in builds with assertions; "
             "otherwise the imported and the final module are verified)"),
    cl::location(options.verifyEach), cl::cat(cat));

// Training (docs/training.md).
static cl::opt<bool, true>
    train("train",
          cl::desc("Compile one training step: gradients of --loss by "
                   "reverse-mode differentiation and an optimizer update of "
                   "the parameters, which the session holds"),
          cl::location(options.training.enabled), cl::cat(cat));
static cl::opt<std::string, true>
    loss("loss", cl::desc("The scalar output to minimize"),
         cl::value_desc("NAME"), cl::location(options.training.loss),
         cl::cat(cat));
static cl::list<std::string, std::vector<std::string>> trainable(
    "trainable",
    cl::desc("Initializers to train (default: every float initializer the "
             "loss depends on)"),
    cl::value_desc("NAME,..."), cl::CommaSeparated,
    cl::location(options.training.trainable), cl::cat(cat));
static cl::list<std::string, std::vector<std::string>>
    frozen("frozen", cl::desc("Initializers not to train"),
           cl::value_desc("NAME,..."), cl::CommaSeparated,
           cl::location(options.training.frozen), cl::cat(cat));
static cl::opt<std::string, true> optimizer(
    "optimizer",
    cl::desc("sgd (default), momentum, adamw, or none (the gradients as "
             "outputs grad_<name>)"),
    cl::location(options.training.optimizer), cl::cat(cat));
static cl::opt<double, true> lr("lr", cl::desc("Learning rate (0.01)"),
                                cl::location(options.training.lr),
                                cl::cat(cat));
static cl::opt<double, true> momentum("momentum",
                                      cl::desc("Momentum factor (0.9)"),
                                      cl::location(options.training.momentum),
                                      cl::cat(cat));
static cl::opt<double, true> weightDecay(
    "weight-decay",
    cl::desc("Weight decay (0): L2 for sgd and momentum, decoupled for adamw"),
    cl::location(options.training.weightDecay), cl::cat(cat));
static cl::opt<double, true> beta1("beta1",
                                   cl::desc("adamw first moment decay (0.9)"),
                                   cl::location(options.training.beta1),
                                   cl::cat(cat));
static cl::opt<double, true>
    beta2("beta2", cl::desc("adamw second moment decay (0.999)"),
          cl::location(options.training.beta2), cl::cat(cat));
static cl::opt<double, true> eps("eps",
                                 cl::desc("adamw denominator term (1e-8)"),
                                 cl::location(options.training.eps),
                                 cl::cat(cat));
static cl::opt<bool, true> inPlaceState(
    "in-place-state",
    cl::desc("Write the state updates into the state's own buffers where the "
             "op order allows (target=cpu; default true)"),
    cl::location(options.inPlaceState), cl::cat(cat));

namespace {

/// The progress line on a terminal: once the compile has run for 2 s
/// (DISC_COMPILE_PROGRESS_DELAY seconds, for tests),
/// "disc-compile: PHASE [K/N kernels compiled] (T s)" on stderr, rewritten
/// in place (carriage return, erase to the end of the line) every 0.2 s
/// and erased when the compile ends, so only the compiler's own output
/// stays. Only made when stderr is a terminal (isatty).
class ProgressLine {
public:
  ProgressLine() : start_(std::chrono::steady_clock::now()) {
    if (const char *d = std::getenv("DISC_COMPILE_PROGRESS_DELAY")) {
      char *end = nullptr;
      double v = std::strtod(d, &end);
      if (end != d && v >= 0)
        delay_ = v;
    }
    ticker_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() { stop(); }

  /// CompileOptions::progress.
  void update(llvm::StringRef phase, int64_t done, int64_t total) {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = phase.str();
    done_ = done;
    total_ = total;
  }

  /// Stops redrawing and erases the line.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_)
        return;
      stopping_ = true;
    }
    wake_.notify_all();
    ticker_.join();
    if (drawn_)
      writeAll("\r\033[K");
  }

private:
  static void writeAll(const std::string &s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::write(STDERR_FILENO, s.data() + off, s.size() - off);
      if (n <= 0)
        return;
      off += static_cast<size_t>(n);
    }
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(200));
      if (stopping_)
        break;
      double s = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start_)
                     .count();
      if (s < delay_)
        continue;
      std::string line = "disc-compile: " + phase_;
      if (total_ > 0)
        line += " " + std::to_string(done_) + "/" + std::to_string(total_) +
                " kernels compiled";
      char buf[32];
      std::snprintf(buf, sizeof buf, " (%.0f s)", s);
      line += buf;
      // One terminal line: no wrap, or the carriage return would redraw
      // only its last part.
      struct winsize ws {};
      size_t cols = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col
                        ? ws.ws_col
                        : 80;
      if (line.size() >= cols)
        line.resize(cols - 1);
      writeAll("\r" + line + "\033[K");
      drawn_ = true;
    }
  }

  std::chrono::steady_clock::time_point start_;
  double delay_ = 2.0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
  std::string phase_ = "starting";
  int64_t done_ = 0, total_ = 0;
  bool stopping_ = false;
  bool drawn_ = false;
};

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  disc::registerCompileCLOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "DISC model compiler\n");
  auto parsedTarget = disc::parseCompileTarget(target);
  if (!parsedTarget)
    return disc::reportUsageError(parsedTarget.takeError());
  auto parsedLibraryCalls = disc::parseLibraryCallMode(libraryCalls);
  if (!parsedLibraryCalls)
    return disc::reportUsageError(parsedLibraryCalls.takeError());
  options.target = *parsedTarget;
  options.libraryCalls = *parsedLibraryCalls;
  options.memorySchedule = schedule == Schedule::Memory;
  options.remat = rematMode == Remat::On;
  if (!::isatty(STDERR_FILENO))
    return disc::compileModel(options);
  ProgressLine progress;
  options.progress = [&](llvm::StringRef phase, int64_t done, int64_t total) {
    progress.update(phase, done, total);
  };
  int code = disc::compileModel(options);
  progress.stop();
  return code;
}

//===- disc-compile.cpp - compile an ONNX model once into a model.so ------===//
//
// disc-compile MODEL.onnx -o MODEL.so [--target=cpu|cuda] [--gpu-arch=sm_80]
//              [--emit=mlir|shapes|memory|linalg|gpu|llvm-dialect|llvm|obj|lib]
//              [--dim NAME=MIN:MAX[:LIKELY]] [--dim NAME=VALUE] ...
//              [--schedule=memory|none] [--remat=on|off]
//
// Also accepts a disc-dialect `.mlir` file as input (used by lit tests).
// Exit codes: 0 ok, 1 compiler failure, 2 bad usage or bad input (malformed
// model, unsupported op).
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/CudaLibraryCalls.h"
#include "disc/Conversion/Passes.h"
#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"
#include "disc/Frontend/Onnx/OnnxImporter.h"
#include "disc/InitAll.h"
#include "disc/Pipelines/CpuPipeline.h"
#include "disc/Pipelines/CudaPipeline.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/Remat.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

/// Every disc-compile option carries `cl::cat(discCategory)`: `--help` lists
/// this category only; LLVM's and MLIR's own flags stay accepted and are
/// listed by `--help-hidden`.
static cl::OptionCategory discCategory("DISC options");

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required, cl::cat(discCategory));
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::init("-"),
                                       cl::cat(discCategory));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu, cuda, or cuda-emulate (the mapped CUDA "
                    "kernels run as host loops: a CPU model, docs/cuda.md)"),
           cl::init("cpu"), cl::cat(discCategory));
static cl::opt<std::string>
    gpuArch("gpu-arch",
            cl::desc("GPU architecture of the CUDA kernels (--target=cuda): "
                     "sm_80, sm_90, ..."),
            cl::value_desc("sm_NN"), cl::init("sm_80"), cl::cat(discCategory));
enum class Emit {
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
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Lib),
    cl::values(clEnumValN(Emit::Mlir, "mlir", "disc dialect after import"),
               clEnumValN(Emit::Shapes, "shapes",
                          "symbolic shape of every value (after "
                          "disc-shape-propagate and disc-shape-simplify)"),
               clEnumValN(Emit::Memory, "memory",
                          "live bytes of every op in the final order and "
                          "the peak (docs/memory.md)"),
               clEnumValN(Emit::Linalg, "linalg", "after disc-lower-to-linalg"),
               clEnumValN(Emit::Gpu, "gpu",
                          "--target=cuda: after the mapping to gpu.launch "
                          "(blocks and threads), before NVVM"),
               clEnumValN(Emit::LlvmDialect, "llvm-dialect",
                          "MLIR LLVM dialect after lowering"),
               clEnumValN(Emit::Llvm, "llvm", "LLVM IR"),
               clEnumValN(Emit::Obj, "obj", "object file"),
               clEnumValN(Emit::Lib, "lib", "loadable model.so (default)")),
    cl::cat(discCategory));

static cl::list<std::string>
    dimOptions("dim",
               cl::desc("Range of a named input dim: NAME=MIN:MAX[:LIKELY], or "
                        "NAME=VALUE to specialize it (repeatable)"),
               cl::value_desc("NAME=MIN:MAX[:LIKELY]"), cl::cat(discCategory));

enum class Schedule { Memory, None };
static cl::opt<Schedule> schedule(
    "schedule", cl::desc("Op order"), cl::init(Schedule::Memory),
    cl::values(clEnumValN(Schedule::Memory, "memory",
                          "reorder ops to lower the symbolic peak memory "
                          "(disc-memory-schedule, default)"),
               clEnumValN(Schedule::None, "none", "keep program order")),
    cl::cat(discCategory));

enum class Remat { On, Off };
static cl::opt<Remat> rematMode(
    "remat", cl::desc("Rematerialization candidates (docs/memory.md)"),
    cl::init(Remat::On),
    cl::values(clEnumValN(Remat::On, "on",
                          "evict/regenerate points the runtime uses under "
                          "a memory limit (disc-remat, default)"),
               clEnumValN(Remat::Off, "off", "none")),
    cl::cat(discCategory));

static cl::opt<unsigned> rematMaxOps(
    "remat-max-ops",
    cl::desc("Most ops recomputed for one rematerialization candidate"),
    cl::init(disc::RematOptions().maxOps), cl::cat(discCategory));

static cl::opt<bool> forceDynamic(
    "force-dynamic",
    cl::desc("Make every dim of every ONNX graph input dynamic, named "
             "<input>_d<i> (the conformance runner's dynamic mode); a 1-D "
             "input used only as a rank-determining operand (a shape, axes, "
             "pads, repeats, split or slice bounds) keeps its static length"),
    cl::init(false), cl::cat(discCategory));

#ifndef DISC_DEFAULT_SANITIZE
#define DISC_DEFAULT_SANITIZE ""
#endif
static cl::opt<std::string> sanitize(
    "sanitize",
    cl::desc("Instrument the compiled model: a list of address, undefined, "
             "fuzzer-no-link (libFuzzer coverage) (docs/reliability.md); the "
             "model.so then loads only into a sanitized process. Default: "
             "the DISC_SANITIZE setting of this build"),
    cl::value_desc("list"), cl::init(DISC_DEFAULT_SANITIZE),
    cl::cat(discCategory));

static cl::opt<std::string> libraryCalls(
    "library-calls",
    cl::desc("Library for f32 MatMul/Gemm/Conv: onednn (runtime library "
             "calls, default; cuBLAS/cuDNN on --target=cuda) or none "
             "(generated loops)"),
    cl::value_desc("onednn|none"), cl::init("onednn"), cl::cat(discCategory));

static cl::opt<bool> timing(
    "timing",
    cl::desc("Print where the compile time goes to stderr: import, shape "
             "analysis, scheduling, every MLIR pass, LLVM optimization, "
             "machine code emission and linking (wall and user time)"),
    cl::init(false), cl::cat(discCategory));

static cl::opt<bool>
    fusion("fusion",
           cl::desc("Fuse elementwise producers into their single consumer "
                    "(disc-fusion, docs/memory.md; default true)"),
           cl::init(true), cl::cat(discCategory));

static cl::opt<bool> reportCodegen(
    "report-codegen",
    cl::desc("Print to stderr every loop-nest kernel (an op that got no "
             "library call) with its ONNX node, whether LLVM vectorized it "
             "and whether it runs on the session's threads (parallel), then "
             "a summary"),
    cl::init(false), cl::cat(discCategory));

static cl::opt<unsigned> compileJobs(
    "compile-jobs",
    cl::desc("Threads that optimize and compile the LLVM module, in as many "
             "parts (default 0: one per hardware thread)"),
    cl::init(0), cl::cat(discCategory));

static disc::RematOptions rematOptions() {
  disc::RematOptions options;
  options.maxOps = rematMaxOps;
  return options;
}

/// CUDA: the device copies of the constants that kernels read live through
/// the whole run (disc-gpu-upload-constants, docs/cuda.md). Their bytes,
/// known only after the lowering, are added to every peak expression of
/// the signature's memory model, and their buffers to its allocation count.
static void addDeviceConstantBytes(ModuleOp module, StringRef entry,
                                   FailureOr<std::string> &signature) {
  Operation *f = SymbolTable::lookupSymbolIn(module, entry);
  auto bytes = f ? f->getAttrOfType<IntegerAttr>("disc.device_constant_bytes")
                 : IntegerAttr();
  auto allocs = f ? f->getAttrOfType<IntegerAttr>("disc.device_constant_allocs")
                  : IntegerAttr();
  if (!bytes || !allocs)
    return;
  llvm::Expected<llvm::json::Value> sig = llvm::json::parse(*signature);
  if (!sig) {
    llvm::consumeError(sig.takeError());
    return;
  }
  llvm::json::Object *memory =
      sig->getAsObject() ? sig->getAsObject()->getObject("memory") : nullptr;
  if (!memory)
    return;
  int64_t n = bytes.getInt();
  memory->try_emplace("device_constant_bytes", n);
  if (auto numAllocs = memory->getInteger("num_allocs"))
    (*memory)["num_allocs"] = *numAllocs + allocs.getInt();
  if (llvm::json::Array *peaks = memory->getArray("peak_bytes"))
    for (llvm::json::Value &e : *peaks)
      e = llvm::json::Array{"+", std::move(e), n};
  if (llvm::json::Array *texts = memory->getArray("peak_bytes_text"))
    for (llvm::json::Value &t : *texts)
      if (auto str = t.getAsString())
        t = (*str + " + " + llvm::Twine(n)).str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << *sig;
  *signature = std::move(text);
}

static int fail(int code, const llvm::Twine &msg) {
  llvm::errs() << "disc-compile: error: " << msg << "\n";
  return code;
}

static LogicalResult printModule(ModuleOp module) {
  std::string err;
  auto out = openOutputFile(outputPath, &err);
  if (!out) {
    llvm::errs() << err << "\n";
    return failure();
  }
  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(16);
  flags.elideLargeResourceString(64);
  module.print(out->os(), flags);
  out->keep();
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  // --help shows DISC's options; the rest move to --help-hidden.
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *opt = entry.second;
    if (!llvm::is_contained(opt->Categories, &discCategory) &&
        !opt->ArgStr.starts_with("help") && opt->ArgStr != "version" &&
        opt->getOptionHiddenFlag() == cl::NotHidden)
      opt->setHiddenFlag(cl::Hidden);
  }
  cl::ParseCommandLineOptions(argc, argv, "DISC model compiler\n");
  if (target != "cpu" && target != "cuda" && target != "cuda-emulate")
    return fail(2, "unsupported --target '" + target +
                       "' (supported: cpu, cuda, cuda-emulate)");
  {
    llvm::StringRef arch(gpuArch);
    unsigned sm = 0;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, sm) || sm < 50)
      return fail(2, "unsupported --gpu-arch '" + gpuArch +
                         "' (expected sm_NN with NN >= 50, e.g. sm_80, sm_90)");
  }
  if (emit == Emit::Gpu && target == "cpu")
    return fail(2, "--emit=gpu needs --target=cuda");
  if (libraryCalls != "onednn" && libraryCalls != "none")
    return fail(2, "unsupported --library-calls '" + libraryCalls +
                       "' (supported: onednn, none)");
  {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(sanitize).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef s : parts)
      if (s != "address" && s != "undefined" && s != "fuzzer-no-link")
        return fail(2, "unsupported --sanitize '" + s +
                           "' (supported: address, undefined, "
                           "fuzzer-no-link)");
  }
  if (!llvm::sys::fs::exists(inputPath))
    return fail(2, "no such file: " + inputPath);

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  disc::registerAllDiscDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Print errors as they come; keep the output ordered and complete.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  // --timing: one tree of scopes, printed when `timingManager` goes away.
  DefaultTimingManager timingManager;
  timingManager.setEnabled(timing);
  timingManager.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope rootTimer = timingManager.getRootScope();
  TimingScope importTimer = rootTimer.nest("import");

  OwningOpRef<ModuleOp> module;
  // The entry gets a name that cannot clash with a host program's `main`.
  const std::string entry = "disc_entry";
  if (llvm::StringRef(inputPath).ends_with(".mlir")) {
    module =
        parseSourceFile<ModuleOp>(inputPath, sourceMgr, ParserConfig(&context));
    if (module) {
      // The first public function is the entry.
      func::FuncOp first;
      for (auto f : module->getOps<func::FuncOp>())
        if (f.isPublic() && !f.isExternal()) {
          first = f;
          break;
        }
      if (!first)
        return fail(2, "no public function in '" + inputPath + "'");
      if (first.getSymName() != entry &&
          failed(SymbolTable::replaceAllSymbolUses(
              first, StringAttr::get(&context, entry), *module)))
        return fail(2, "cannot rename the entry function");
      first.setSymName(entry);
    }
  } else {
    disc::OnnxImportOptions options;
    options.entryName = entry;
    options.forceDynamicInputs = forceDynamic;
    module = disc::importOnnxModel(context, inputPath, options);
  }
  if (!module)
    return fail(2, "could not import '" + inputPath + "'");
  importTimer.stop();

  // --dim: ranges of named input dims, recorded as disc_shape.symbolic_dim
  // ops that the shape passes and the signature read.
  if (!dimOptions.empty()) {
    auto f = module->lookupSymbol<func::FuncOp>(entry);
    llvm::SmallVector<std::string> known;
    llvm::StringSet<> knownSet;
    for (unsigned i = 0, e = f ? f.getNumArguments() : 0; i < e; ++i)
      if (auto dims = f.getArgAttrOfType<ArrayAttr>(i, "disc.dims"))
        for (Attribute d : dims)
          if (auto s = dyn_cast<StringAttr>(d))
            if (knownSet.insert(s.getValue()).second)
              known.push_back(s.str());
    llvm::StringMap<disc::DimRange> ranges;
    for (const std::string &opt : dimOptions) {
      auto [name, spec] = llvm::StringRef(opt).split('=');
      llvm::SmallVector<llvm::StringRef> parts;
      spec.split(parts, ':');
      disc::DimRange r;
      int64_t v[3] = {0, 0, 0};
      bool bad = name.empty() || spec.empty() || parts.size() > 3;
      for (size_t i = 0; !bad && i < parts.size(); ++i)
        bad = parts[i].trim().getAsInteger(10, v[i]) || v[i] < 0;
      if (bad)
        return fail(2, "bad --dim '" + opt +
                           "' (expected NAME=MIN:MAX[:LIKELY] or NAME=VALUE)");
      if (!knownSet.contains(name)) {
        std::string list;
        for (auto &k : known)
          list += (list.empty() ? "" : ", ") + k;
        return fail(2, "unknown dim name '" + name + "' in --dim; known: " +
                           (list.empty() ? std::string("(none)") : list));
      }
      r.min = v[0];
      r.max = parts.size() == 1 ? v[0] : v[1];
      if (parts.size() == 3)
        r.likely = v[2];
      if (*r.max < r.min ||
          (r.likely && (*r.likely < r.min || *r.likely > *r.max)))
        return fail(2, "bad --dim '" + opt +
                           "': empty range or likely "
                           "value outside it");
      ranges[name] = r;
    }
    OpBuilder b(&context);
    b.setInsertionPointToStart(module->getBody());
    unsigned n = 0;
    for (auto &r : ranges) {
      auto op = disc_shape::SymbolicDimOp::create(
          b, module->getLoc(), b.getStringAttr("dim" + std::to_string(n++)),
          b.getStringAttr(r.getKey()), b.getI64IntegerAttr(r.getValue().min),
          b.getI64IntegerAttr(*r.getValue().max),
          r.getValue().likely ? b.getI64IntegerAttr(*r.getValue().likely)
                              : IntegerAttr(),
          b.getUnitAttr(), UnitAttr());
      (void)op;
    }
  }

  // --force-dynamic is the conformance mode where any stored input must run
  // through one artifact, empty tensors included: its dims (without a
  // --dim range) may be 0, while a dim an ONNX model names is at least 1
  // by default (docs/symbolic-shapes.md).
  if (forceDynamic) {
    auto f = module->lookupSymbol<func::FuncOp>(entry);
    llvm::StringSet<> ranged;
    for (auto dim : module->getOps<disc_shape::SymbolicDimOp>())
      if (dim.getName())
        ranged.insert(*dim.getName());
    OpBuilder b(&context);
    b.setInsertionPointToStart(module->getBody());
    unsigned n = 0;
    for (unsigned i = 0, e = f ? f.getNumArguments() : 0; i < e; ++i)
      if (auto dims = f.getArgAttrOfType<ArrayAttr>(i, "disc.dims"))
        for (Attribute d : dims)
          if (auto s = dyn_cast<StringAttr>(d))
            if (ranged.insert(s.getValue()).second)
              disc_shape::SymbolicDimOp::create(
                  b, module->getLoc(),
                  b.getStringAttr("forced" + std::to_string(n++)), s,
                  b.getI64IntegerAttr(0), IntegerAttr(), IntegerAttr(),
                  b.getUnitAttr(), UnitAttr());
  }

  if (emit == Emit::Mlir)
    return failed(printModule(*module)) ? 1 : 0;

  // Symbolic shapes before the signature is taken: a specialized dim
  // (--dim NAME=VALUE) becomes static.
  {
    TimingScope shapeTimer = rootTimer.nest("symbolic shapes");
    auto t0 = std::chrono::steady_clock::now();
    if (failed(disc::annotateShapes(*module, /*simplify=*/true)))
      return fail(1, "shape propagation failed");
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    if (emit == Emit::Shapes) {
      std::string err;
      auto out = openOutputFile(outputPath, &err);
      if (!out)
        return fail(1, err);
      if (failed(disc::printShapes(*module, entry, out->os())))
        return fail(1, "could not print shapes");
      out->os() << "propagate+simplify: " << llvm::format("%.2f", ms)
                << " ms\n";
      out->keep();
      return 0;
    }
  }

  // The op order is chosen before the memory model is printed or carried
  // in the signature, so both describe the order that runs.
  // Fusion decisions come first: the schedule and the memory model see
  // the fused graph.
  if (fusion) {
    TimingScope fusionTimer = rootTimer.nest("fusion");
    PassManager fpm(&context);
    fpm.addPass(disc::createDiscFusionPass());
    if (failed(fpm.run(*module)))
      return fail(1, "fusion failed");
  }
  if (schedule == Schedule::Memory) {
    TimingScope scheduleTimer = rootTimer.nest("memory schedule");
    PassManager spm(&context);
    spm.addPass(disc::createDiscMemorySchedule());
    if (failed(spm.run(*module)))
      return fail(1, "memory scheduling failed");
  }

  // Library calls and their post-ops are marked on the final order, so the
  // memory model sees them (docs/memory.md). On CUDA: cuBLAS/cuDNN; the
  // emulated kernels (cuda-emulate) run MatMul/Conv as generated loops.
  bool cuda = target != "cpu";
  std::string libraryMode = libraryCalls;
  if (target == "cuda" && libraryMode == "onednn")
    libraryMode = "cuda";
  else if (target == "cuda-emulate")
    libraryMode = "none";
  if (libraryMode != "none") {
    PassManager lpm(&context);
    if (libraryMode == "cuda")
      lpm.addNestedPass<func::FuncOp>(disc::createDiscMarkCudaLibraryCalls());
    else
      lpm.addNestedPass<func::FuncOp>(disc::createDiscMarkLibraryCalls());
    if (failed(lpm.run(*module)))
      return fail(1, "marking library calls failed");
  }
  if (target == "cuda" && reportCodegen)
    if (auto f = module->lookupSymbol<func::FuncOp>(entry))
      disc::reportCudaLibraryCalls(f, llvm::errs());

  if (emit == Emit::Memory) {
    std::string err;
    auto out = openOutputFile(outputPath, &err);
    if (!out)
      return fail(1, err);
    if (failed(disc::printMemory(*module, entry, out->os())))
      return fail(1, "could not print the memory model");
    if (rematMode == Remat::On)
      disc::printRematCandidates(*module, entry, rematOptions(), out->os());
    out->keep();
    return 0;
  }

  std::string modelName = llvm::sys::path::stem(inputPath).str();
  FailureOr<std::string> signature =
      disc::buildSignatureJson(*module, entry, modelName);
  if (failed(signature))
    return fail(2, "could not build the model signature");
  // The predicted peak (docs/memory.md) rides in the signature.
  {
    TimingScope memoryTimer = rootTimer.nest("memory model");
    FailureOr<llvm::json::Object> memory =
        disc::buildMemoryJson(*module, entry);
    llvm::Expected<llvm::json::Value> sig = llvm::json::parse(*signature);
    if (failed(memory) || !sig || !sig->getAsObject()) {
      if (!sig)
        llvm::consumeError(sig.takeError());
      return fail(1, "could not build the memory model");
    }
    sig->getAsObject()->try_emplace("memory", std::move(*memory));
    // Rematerialization candidates of the final order (after the memory
    // model above, which describes the run with nothing evicted). On CUDA
    // the runtime recomputes an evicted candidate or offloads it to host
    // memory (docs/cuda.md).
    if (rematMode == Remat::On) {
      FailureOr<llvm::json::Object> rematJson =
          disc::applyRematToEntry(*module, entry, rematOptions());
      if (failed(rematJson))
        return fail(1, "rematerialization failed");
      sig->getAsObject()->try_emplace("remat", std::move(*rematJson));
    }
    if (target == "cuda") {
      sig->getAsObject()->try_emplace("target", "cuda");
      sig->getAsObject()->try_emplace("gpu_arch", gpuArch.getValue());
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    os << *sig;
    *signature = std::move(text);
  }

  if (auto f = module->lookupSymbol<func::FuncOp>(entry)) {
    // The signature now lives in the JSON; drop the frontend's attributes
    // but the dim names: they match the --dim ranges to the input dims in
    // the lowering's shape analysis.
    for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i) {
      Attribute dims = f.getArgAttr(i, "disc.dims");
      f.setArgAttrs(i, DictionaryAttr::get(&context));
      if (dims)
        f.setArgAttr(i, "disc.dims", dims);
    }
    for (unsigned i = 0, e = f.getNumResults(); i < e; ++i)
      f.setResultAttrs(i, DictionaryAttr::get(&context));
    f->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  }
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return fail(2, "bad pass manager options");
  TimingScope loweringTimer = rootTimer.nest("lowering (MLIR passes)");
  if (timing)
    pm.enableTiming(loweringTimer);
  if (emit == Emit::Linalg) {
    pm.addPass(disc::createDiscStripShapeAnnotations());
    disc::DiscLowerToLinalgOptions lowering;
    lowering.libraryCallsOption = libraryMode;
    pm.addPass(disc::createDiscLowerToLinalg(lowering));
  } else if (target == "cuda" || target == "cuda-emulate") {
    disc::CudaPipelineOptions cudaOptions;
    cudaOptions.memorySchedule = false; // scheduled above
    cudaOptions.fusion = false;         // marked above
    cudaOptions.gpuArch = gpuArch;
    cudaOptions.libraryCalls = libraryMode;
    if (target == "cuda-emulate")
      cudaOptions.stop = disc::CudaPipelineOptions::Stop::Emulate;
    if (emit == Emit::Gpu)
      cudaOptions.stop = disc::CudaPipelineOptions::Stop::AfterMapping;
    disc::buildDiscCudaPipeline(pm, cudaOptions);
  } else {
    disc::CpuPipelineOptions pipelineOptions;
    pipelineOptions.memorySchedule = false; // scheduled above
    pipelineOptions.libraryCalls = libraryCalls;
    pipelineOptions.fusion = false; // marked above
    disc::buildDiscCpuPipeline(pm, pipelineOptions);
  }
  if (failed(pm.run(*module)))
    // An op the CUDA target cannot run yet is bad input (exit 2); the
    // error above names the ONNX node.
    return fail((*module)->hasAttr("disc.cuda_unsupported") ? 2 : 1,
                "lowering failed");
  loweringTimer.stop();
  if (emit == Emit::Linalg || emit == Emit::Gpu || emit == Emit::LlvmDialect)
    return failed(printModule(*module)) ? 1 : 0;
  if (cuda)
    addDeviceConstantBytes(*module, entry, signature);

  disc::EmitKind kind = emit == Emit::Llvm  ? disc::EmitKind::LLVM
                        : emit == Emit::Obj ? disc::EmitKind::Object
                                            : disc::EmitKind::Library;
  if (outputPath == "-" && kind != disc::EmitKind::LLVM)
    return fail(2, "-o is required for --emit=obj and --emit=lib");
  TimingScope emitTimer = rootTimer.nest("emit");
  if (failed(disc::emitModelArtifact(*module, entry, *signature, outputPath,
                                     kind, sanitize, &emitTimer, compileJobs,
                                     reportCodegen ? &llvm::errs() : nullptr)))
    return fail(1, "could not write '" + outputPath + "'");
  return 0;
}

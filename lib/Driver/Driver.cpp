//===- Driver.cpp - compile a model once into a model.so ------------------===//
#include "disc/Driver/Driver.h"

#include "disc/Frontend/Onnx/OnnxImporter.h"
#include "disc/InitAll.h"
#include "disc/Target/ModelEmitter.h"
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/Remat.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
using namespace mlir::disc;

/// The entry gets a name that cannot clash with a host program's `main`.
static constexpr llvm::StringLiteral kEntry = "disc_entry";

/// The value of `choices` named `name`, or the error "unsupported
/// --OPTION 'NAME' (supported: ...)" that lists the names.
template <typename T>
static llvm::Expected<T>
parseChoice(StringRef option, StringRef name,
            ArrayRef<std::pair<StringRef, T>> choices) {
  for (const auto &[choice, value] : choices)
    if (choice == name)
      return value;
  return llvm::createStringError(
      "unsupported --" + option + " '" + name + "' (supported: " +
      llvm::join(llvm::make_first_range(choices), ", ") + ")");
}

llvm::Expected<CompileTarget> mlir::disc::parseCompileTarget(StringRef name) {
  return parseChoice<CompileTarget>(
      "target", name,
      {{"cpu", CompileTarget::Cpu},
       {"cuda", CompileTarget::Cuda},
       {"cuda-emulate", CompileTarget::CudaEmulate}});
}

llvm::Expected<LibraryCallMode>
mlir::disc::parseLibraryCallMode(StringRef name) {
  return parseChoice<LibraryCallMode>(
      "library-calls", name,
      {{"onednn", LibraryCallMode::OneDnn}, {"none", LibraryCallMode::None}});
}

void mlir::disc::getCompilePipelineOptions(const CompileOptions &options,
                                           StringRef modelName,
                                           CompilePipelineOptions &pipeline) {
  pipeline.target = options.target;
  pipeline.gpuArch = options.gpuArch;
  pipeline.gpuElementsPerThread = options.gpuElementsPerThread;
  pipeline.gpuRowElementsPerThread = options.gpuRowElementsPerThread;
  pipeline.emit = options.emit;
  pipeline.dims = ArrayRef<std::string>(options.dims);
  pipeline.forceDynamic = options.forceDynamic;
  pipeline.fusion = options.fusion;
  pipeline.recomputeElementwise = options.recomputeElementwise;
  pipeline.stitchRows = options.stitchRows;
  pipeline.schedule = options.memorySchedule;
  pipeline.remat = options.remat;
  pipeline.rematMaxOps = options.rematMaxOps;
  pipeline.inPlaceState = options.inPlaceState;
  pipeline.libraryCalls = options.libraryCalls;
  pipeline.modelName = modelName.str();
  pipeline.reportLibraryCalls = options.reportCodegen;
  if (options.training.enabled)
    pipeline.training = options.training.passOptions();
}

std::string mlir::disc::TrainingOptions::passOptions() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto list = [&](StringRef key, const std::vector<std::string> &names) {
    if (!names.empty())
      os << " " << key << "=" << llvm::join(names, ",");
  };
  os << "loss=" << loss << " optimizer=" << optimizer;
  list("trainable", trainable);
  list("frozen", frozen);
  os << " lr=" << llvm::format("%.17g", lr)
     << " momentum=" << llvm::format("%.17g", momentum)
     << " weight-decay=" << llvm::format("%.17g", weightDecay)
     << " beta1=" << llvm::format("%.17g", beta1)
     << " beta2=" << llvm::format("%.17g", beta2)
     << " eps=" << llvm::format("%.17g", eps);
  return text;
}

/// Prints "disc-compile: error: MSG" to `os`; returns `code`.
static int fail(llvm::raw_ostream &os, int code, const llvm::Twine &msg) {
  os << "disc-compile: error: " << msg << "\n";
  return code;
}

int mlir::disc::reportUsageError(llvm::Error err) {
  return fail(llvm::errs(), CompileBadInput, llvm::toString(std::move(err)));
}

void mlir::disc::registerCompileCLOptions(llvm::cl::OptionCategory &category) {
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *opt = entry.second;
    if (!llvm::is_contained(opt->Categories, &category) &&
        !opt->ArgStr.starts_with("help") && opt->ArgStr != "version" &&
        opt->getOptionHiddenFlag() == llvm::cl::NotHidden)
      opt->setHiddenFlag(llvm::cl::Hidden);
  }
}

/// Checks the options that need no model; CompileOk or the failure's code.
static int checkOptions(const CompileOptions &options, llvm::raw_ostream &os) {
  StringRef arch(options.gpuArch);
  unsigned sm = 0;
  if (!arch.consume_front("sm_") || arch.getAsInteger(10, sm) || sm < 50)
    return fail(os, CompileBadInput,
                "unsupported --gpu-arch '" + options.gpuArch +
                    "' (expected sm_NN with NN >= 50, e.g. sm_80, sm_90)");
  if (options.emit == EmitStage::Gpu && options.target == CompileTarget::Cpu)
    return fail(os, CompileBadInput, "--emit=gpu needs --target=cuda");
  int64_t ept = options.gpuElementsPerThread;
  if (ept != 1 && ept != 2 && ept != 4)
    return fail(os, CompileBadInput,
                "unsupported --gpu-elements-per-thread " + std::to_string(ept) +
                    " (expected 1, 2 or 4: a tile of 256 threads holds at "
                    "most 1024 elements)");
  if (options.gpuRowElementsPerThread < 1)
    return fail(os, CompileBadInput,
                "unsupported --gpu-row-elements-per-thread " +
                    std::to_string(options.gpuRowElementsPerThread) +
                    " (expected at least 1)");
  SmallVector<StringRef> parts;
  StringRef(options.sanitize).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef s : parts)
    if (s != "address" && s != "undefined" && s != "fuzzer-no-link")
      return fail(os, CompileBadInput,
                  "unsupported --sanitize '" + s +
                      "' (supported: address, undefined, "
                      "fuzzer-no-link)");
  const TrainingOptions &t = options.training;
  if (t.enabled && t.loss.empty())
    return fail(os, CompileBadInput,
                "--train needs --loss NAME (the scalar "
                "output to minimize)");
  if (t.enabled && t.optimizer != "none" && t.optimizer != "sgd" &&
      t.optimizer != "momentum" && t.optimizer != "adamw")
    return fail(os, CompileBadInput,
                "unsupported --optimizer '" + t.optimizer +
                    "' (supported: none, sgd, momentum, "
                    "adamw)");
  if (t.enabled && (!(t.lr > 0) || t.momentum < 0 || t.weightDecay < 0 ||
                    !(t.beta1 >= 0 && t.beta1 < 1) ||
                    !(t.beta2 >= 0 && t.beta2 < 1) || !(t.eps > 0)))
    return fail(os, CompileBadInput,
                "bad optimizer setting (expected --lr > 0, --momentum >= 0, "
                "--weight-decay >= 0, 0 <= --beta1, --beta2 < 1, --eps > 0)");
  // The names travel in disc-build-training-step's option text, where a
  // space, comma, '=' or brace would split or end a value.
  auto badName = [](StringRef name) {
    return name.find_first_of(" \t\n,={}'\"") != StringRef::npos;
  };
  std::vector<std::string> names(t.trainable);
  names.insert(names.end(), t.frozen.begin(), t.frozen.end());
  names.push_back(t.loss);
  for (const std::string &name : names)
    if (badName(name))
      return fail(os, CompileBadInput,
                  "unsupported name '" + name +
                      "' in --loss, --trainable or --frozen (no spaces, "
                      "commas, '=', braces or quotes)");
  if (!t.enabled &&
      (!t.loss.empty() || !t.trainable.empty() || !t.frozen.empty()))
    return fail(os, CompileBadInput,
                "--loss, --trainable and --frozen need "
                "--train");
  if (!llvm::sys::fs::exists(options.inputPath))
    return fail(os, CompileBadInput, "no such file: " + options.inputPath);
  return CompileOk;
}

/// Parses a disc-dialect file into `module` and renames its first public
/// function to the entry name; CompileOk (`module` null when the parser
/// failed) or the failure's code.
static int importMlir(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                      StringRef path, OwningOpRef<ModuleOp> &module,
                      llvm::raw_ostream &os) {
  module = parseSourceFile<ModuleOp>(path, sourceMgr, ParserConfig(&context));
  if (!module)
    return CompileOk;
  func::FuncOp first;
  for (auto f : module->getOps<func::FuncOp>())
    if (f.isPublic() && !f.isExternal()) {
      first = f;
      break;
    }
  if (!first)
    return fail(os, CompileBadInput, "no public function in '" + path + "'");
  if (first.getSymName() != kEntry &&
      failed(SymbolTable::replaceAllSymbolUses(
          first, StringAttr::get(&context, kEntry), *module)))
    return fail(os, CompileBadInput, "cannot rename the entry function");
  first.setSymName(kEntry);
  return CompileOk;
}

/// `dims` (the --dim entries) and, for each optional tensor input of the
/// entry (`disc.optional`) whose count dim they do not name, `<dim>=0:1`.
static std::vector<std::string> optionalCountDims(ModuleOp module,
                                                  ArrayRef<std::string> dims) {
  std::vector<std::string> out(dims.begin(), dims.end());
  auto entry = module.lookupSymbol<func::FuncOp>(kEntry);
  if (!entry)
    return out;
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    if (!entry.getArgAttr(i, "disc.optional"))
      continue;
    auto dimNames = entry.getArgAttrOfType<ArrayAttr>(i, "disc.dims");
    auto count = dimNames && !dimNames.empty()
                     ? dyn_cast<StringAttr>(dimNames[0])
                     : StringAttr();
    if (!count)
      continue;
    std::string prefix = count.str() + "=";
    if (llvm::none_of(dims, [&](const std::string &d) {
          return StringRef(d).starts_with(prefix);
        }))
      out.push_back(prefix + "0:1");
  }
  return out;
}

/// The `--dim` entries are well formed and name dims of the entry's inputs
/// (disc-attach-dim-ranges inserts them); CompileOk or the failure's code.
static int checkDims(ModuleOp module, ArrayRef<std::string> dims,
                     llvm::raw_ostream &os) {
  llvm::Expected<llvm::StringMap<DimRange>> ranges =
      parseEntryDimRanges(module.lookupSymbol<func::FuncOp>(kEntry), dims);
  if (!ranges)
    return fail(os, CompileBadInput, llvm::toString(ranges.takeError()));
  return CompileOk;
}

static LogicalResult printModule(ModuleOp module, StringRef path,
                                 llvm::raw_ostream &os) {
  std::string err;
  auto out = openOutputFile(path, &err);
  if (!out) {
    os << err << "\n";
    return failure();
  }
  OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(16);
  flags.elideLargeResourceString(64);
  module.print(out->os(), flags);
  out->keep();
  return success();
}

namespace {
/// Records the first pass that failed: its stage names the error.
struct FailedPassRecorder : public PassInstrumentation {
  std::string *argument;
  explicit FailedPassRecorder(std::string *argument) : argument(argument) {}
  void runAfterPassFailed(Pass *pass, Operation *) override {
    if (argument->empty())
      *argument = pass->getArgument().str();
  }
};

/// Reports each pass of the pipeline as a phase to `progress`.
struct PassProgress : public PassInstrumentation {
  const std::function<void(StringRef, int64_t, int64_t)> &progress;
  explicit PassProgress(
      const std::function<void(StringRef, int64_t, int64_t)> &progress)
      : progress(progress) {}
  void runBeforePass(Pass *pass, Operation *) override {
    StringRef name = pass->getArgument();
    if (name.empty())
      name = pass->getName();
    progress(("pass " + name).str(), 0, 0);
  }
};
} // namespace

/// The exit code and message of a pipeline failure in `pass`.
static int pipelineFailure(ModuleOp module, StringRef pass,
                           llvm::raw_ostream &os) {
  static const struct {
    StringRef pass;
    int code;
    const char *message;
  } kStages[] = {
      {"disc-attach-dim-ranges", CompileBadInput, "bad --dim"},
      {"disc-shape-simplify", CompileFailed, "shape propagation failed"},
      {"disc-fusion", CompileFailed, "fusion failed"},
      {"disc-memory-schedule", CompileFailed, "memory scheduling failed"},
      {"disc-mark-library-calls", CompileFailed,
       "marking library calls failed"},
      {"disc-mark-cuda-library-calls", CompileFailed,
       "marking library calls failed"},
      {"disc-build-training-step", CompileBadInput,
       "could not build the training step"},
      {"disc-attach-memory-model", CompileFailed,
       "could not build the memory model"},
      {"disc-attach-remat", CompileFailed, "rematerialization failed"},
      {"disc-attach-signature", CompileBadInput,
       "could not build the model signature"},
  };
  for (const auto &stage : kStages)
    if (pass == stage.pass)
      return fail(os, stage.code, stage.message);
  // An op the CUDA target cannot run yet is bad input (exit 2); the error
  // above names the ONNX node.
  return fail(os,
              module->hasAttr("disc.cuda_unsupported") ? CompileBadInput
                                                       : CompileFailed,
              "lowering failed");
}

int mlir::disc::compileModel(const CompileOptions &options) {
  llvm::raw_ostream &os =
      options.errorStream ? *options.errorStream : llvm::errs();
  if (int code = checkOptions(options, os))
    return code;
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllDiscDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Print errors as they come; keep the output ordered and complete.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, os);

  // --timing: one tree of scopes, printed when `timingManager` goes away.
  DefaultTimingManager timingManager;
  timingManager.setEnabled(options.timing);
  timingManager.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope rootTimer = timingManager.getRootScope();
  TimingScope importTimer = rootTimer.nest("import");
  if (options.progress)
    options.progress("import", 0, 0);
  OwningOpRef<ModuleOp> module;
  StringRef input = options.inputPath;
  if (input.ends_with(".mlir")) {
    if (int code = importMlir(context, sourceMgr, input, module, os))
      return code;
  } else {
    OnnxImportOptions importOptions;
    importOptions.entryName = kEntry.str();
    importOptions.forceDynamicInputs = options.forceDynamic;
    importOptions.markParameters = options.training.enabled;
    module = importOnnxModel(context, input, importOptions);
  }
  if (!module)
    return fail(os, CompileBadInput, "could not import '" + input + "'");
  importTimer.stop();
  if (int code = checkDims(*module, options.dims, os))
    return code;
  // The count dim of an optional tensor input (OnnxImporter) ranges over
  // [0, 1] unless a --dim says otherwise.
  std::vector<std::string> dims = optionalCountDims(*module, options.dims);

  CompilePipelineOptions pipelineOptions;
  getCompilePipelineOptions(options, llvm::sys::path::stem(input),
                            pipelineOptions);
  pipelineOptions.dims = ArrayRef<std::string>(dims);
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return fail(os, CompileBadInput, "bad pass manager options");
  std::string failedPass;
  pm.addInstrumentation(std::make_unique<FailedPassRecorder>(&failedPass));
  if (options.progress)
    pm.addInstrumentation(std::make_unique<PassProgress>(options.progress));
  pm.enableVerifier(options.verifyEach);
  TimingScope pipelineTimer = rootTimer.nest("disc-compile-pipeline");
  if (options.timing)
    pm.enableTiming(pipelineTimer);
  buildDiscCompilePipeline(pm, pipelineOptions);
  auto t0 = std::chrono::steady_clock::now();
  if (failed(pm.run(*module)))
    return pipelineFailure(*module, failedPass, os);
  // Without --verify-each, the one check of what the passes made.
  if (!options.verifyEach && failed(verify(*module)))
    return fail(os, CompileFailed,
                "the lowered module is invalid (a compiler bug; --verify-each "
                "names the pass that made it)");
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  pipelineTimer.stop();

  EmitStage emit = options.emit;
  if (emit == EmitStage::Mlir || emit == EmitStage::Linalg ||
      emit == EmitStage::Gpu || emit == EmitStage::LlvmDialect)
    return failed(printModule(*module, options.outputPath, os)) ? CompileFailed
                                                                : CompileOk;
  if (emit == EmitStage::Shapes || emit == EmitStage::Memory) {
    std::string err;
    auto out = openOutputFile(options.outputPath, &err);
    if (!out)
      return fail(os, CompileFailed, err);
    if (emit == EmitStage::Shapes) {
      if (failed(printShapes(*module, kEntry, out->os())))
        return fail(os, CompileFailed, "could not print shapes");
      out->os() << "propagate+simplify: " << llvm::format("%.2f", ms)
                << " ms\n";
    } else {
      if (failed(printMemory(*module, kEntry, out->os())))
        return fail(os, CompileFailed, "could not print the memory model");
      if (options.remat) {
        RematOptions remat;
        remat.maxOps = options.rematMaxOps;
        // As the compile (CompilePipeline): no required temporaries for
        // cuBLAS/cuDNN calls.
        remat.libraryTemporaries =
            !usesCudaLibraryCalls(options.target, options.libraryCalls);
        printRematCandidates(*module, kEntry, remat, out->os());
      }
    }
    out->keep();
    return CompileOk;
  }

  EmitKind kind = emit == EmitStage::Llvm  ? EmitKind::LLVM
                  : emit == EmitStage::Obj ? EmitKind::Object
                                           : EmitKind::Library;
  if (options.outputPath == "-" && kind != EmitKind::LLVM)
    return fail(os, CompileBadInput,
                "-o is required for --emit=obj and --emit=lib");
  TimingScope emitTimer = rootTimer.nest("emit");
  if (failed(emitModelArtifact(*module, kEntry, options.outputPath, kind,
                               options.sanitize, &emitTimer,
                               options.compileJobs,
                               options.reportCodegen ? &os : nullptr,
                               options.progress, options.fastEntryAbove)))
    return fail(os, CompileFailed,
                "could not write '" + options.outputPath + "'");
  return CompileOk;
}

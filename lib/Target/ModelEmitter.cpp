//===- ModelEmitter.cpp - LLVM IR, object and model.so emission -----------===//
//
// Turns a module lowered to the LLVM dialect into the artifact described in
// docs/runtime-abi.md: LLVM IR is optimized for the host CPU (O3), compiled to
// an object file, and linked with a generated C wrapper (ABI entry points,
// signature JSON, allocation hooks into the runtime context: the fixed
// ModelWrapper.c around a generated part) by the system C compiler driver
// (`cc -shared`), as onnx-mlir does.
//
//===----------------------------------------------------------------------===//
#include "disc/Target/ModelEmitter.h"
#include "disc/Target/RuntimeSymbols.h"
#include "disc/Target/Signature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/ConstantFolding.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Instrumentation/AddressSanitizer.h"
#include "llvm/Transforms/Instrumentation/SanitizerCoverage.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <atomic>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace mlir;

//===----------------------------------------------------------------------===//
// Object code
//===----------------------------------------------------------------------===//

static std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(
    std::string &error,
    llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    features += (f.second ? "+" : "-") + f.first().str() + ",";
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features, options, llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!tm)
    error = "cannot create a target machine for " + triple.str();
  return tm;
}

//===----------------------------------------------------------------------===//
// C wrapper
//===----------------------------------------------------------------------===//

/// The wrapper's fixed files, embedded at build time
/// (lib/Target/CMakeLists.txt) and written next to the generated wrapper.c
/// that includes them; abi.h at the path ModelWrapper.c includes it by.
static const struct {
  const char *path;
  const char *text;
} kWrapperFiles[] = {
    {
        "disc/runtime/abi.h",
#include "abi.inc"
    },
    {
        "ModelWrapper.c",
#include "ModelWrapper.inc"
    },
    {
        "ModelWrapperCuda.c",
#include "ModelWrapperCuda.inc"
    },
};

/// Writes `s` as the body of a C string literal.
static void writeCString(llvm::raw_ostream &os, StringRef s) {
  os << '"';
  os.write_escaped(s, /*UseHexEscapes=*/true);
  os << '"';
}

/// Writes `_mlir_ciface_<name>`, the C-interface function that the compiled
/// code calls for a library call (`x`, `w`, `y` of rank `rank`, then the
/// bias of rank 1 and the residual of rank `rank` when present, then
/// `numAttrs` int64 attributes): it forwards to disc_library_call
/// (ModelWrapper.c) with call id `id`, an abi.h macro. Without `weights`
/// the operands are `x` and `y` alone (pooling).
static void writeLibraryCall(llvm::raw_ostream &os, StringRef name,
                             StringRef id, int rank, int numAttrs, bool bias,
                             bool residual, bool weights = true) {
  auto attrNames = [&](StringRef prefix) {
    for (int i = 0; i < numAttrs; ++i)
      os << (i || !prefix.empty() ? ", " : "") << prefix << "a" << i;
  };
  os << "DISC_HIDDEN void _mlir_ciface_" << name << "(void *x, "
     << (weights ? "void *w, " : "") << "void *y" << (bias ? ", void *b" : "")
     << (residual ? ", void *r" : "");
  attrNames("int64_t ");
  os << ") {\n  void *ops[] = {x, " << (weights ? "w, " : "") << "y"
     << (bias ? ", b" : "") << (residual ? ", r" : "")
     << "};\n  int32_t ranks[] = {" << rank << ", " << rank
     << (weights ? ", " + std::to_string(rank) : "") << (bias ? ", 1" : "");
  if (residual)
    os << ", " << rank;
  os << "};\n  int64_t attrs[] = {";
  attrNames("");
  os << "};\n  disc_library_call(" << id << ", "
     << 2 + weights + bias + residual << ", ops, ranks, " << numAttrs
     << ", attrs);\n}\n";
}

/// Every library-call entry the lowering may call (LibraryCalls.h; the same
/// in every model.so, hidden): MatMul and Conv with 1-3 spatial dims,
/// without and with post-ops (`_post<flags & 3>`: the flags word, then the
/// bias and residual operands of flags bits 0 and 1; suffix `c`: the clip
/// bounds follow the flags; MatMul only, suffix `s`: the product's scale
/// follows them), ConvTranspose likewise (the oneDNN runtime takes its
/// flags word alone, `_post0` with NHWC bits; the CUDA one the post-ops of
/// a Conv), and pooling (`disc_lib_pool<k>d`).
static void writeLibraryCalls(llvm::raw_ostream &os) {
  struct Family {
    std::string name;
    StringRef id;
    int rank, numAttrs;
    bool postOps;
    bool scale = false;
  };
  SmallVector<Family> families = {
      {disc::kLibMatmulFn.str(), "DISC_LIB_MATMUL", 3, 2, true, true}};
  for (int k = 1; k <= 3; ++k) {
    families.push_back({(disc::kLibConvPrefix + Twine(k) + "d").str(),
                        "DISC_LIB_CONV", k + 2, 2 + 4 * k, true});
    families.push_back({(disc::kLibConvTransposePrefix + Twine(k) + "d").str(),
                        "DISC_LIB_CONV_TRANSPOSE", k + 2, 2 + 4 * k, true});
    families.push_back(
        {(disc::kLibConvBackwardFilterPrefix + Twine(k) + "d").str(),
         "DISC_LIB_CONV_BACKWARD_FILTER", k + 2, 4 * k, false});
    families.push_back({(disc::kLibConvIntPrefix + Twine(k) + "d").str(),
                        "DISC_LIB_CONV_INT", k + 2, 2 + 4 * k, false});
  }
  // Pooling: x and y, then {kind, window[k], strides[k], pads_begin[k],
  // flags}.
  for (int k = 1; k <= 3; ++k)
    writeLibraryCall(os, (disc::kLibPoolPrefix + Twine(k) + "d").str(),
                     "DISC_LIB_POOL", k + 2, 2 + 3 * k, false, false,
                     /*weights=*/false);
  for (const Family &f : families) {
    writeLibraryCall(os, f.name, f.id, f.rank, f.numAttrs, false, false);
    for (int m = 0; m < (f.postOps ? (f.scale ? 16 : 8) : 1); ++m)
      writeLibraryCall(os,
                       f.name + "_post" + std::to_string(m & 3) +
                           (m & 4 ? "c" : "") + (m & 8 ? "s" : ""),
                       f.id, f.rank,
                       f.numAttrs + 1 + (m & 4 ? 2 : 0) + (m & 8 ? 1 : 0),
                       m & 1, m & 2);
  }
}

/// The generated wrapper.c of one model (lib/Target/ModelWrapper.c says
/// what it defines around that file): `signature` (the JSON), the message
/// templates of the run-time checks (RuntimeChecks.h) by check id, the
/// entry `entryName` with `numInputs` inputs and outputs of ranks
/// `outputRanks`, the evict points of the remat candidates `rematIds`, and
/// on the CUDA target the device constant functions `deviceConstantFns`
/// (name, rank).
static std::string
generateWrapper(StringRef entryName, StringRef signature, size_t numInputs,
                ArrayRef<int64_t> outputRanks,
                ArrayRef<std::string> checkMessages, ArrayRef<int64_t> rematIds,
                ArrayRef<std::pair<std::string, int64_t>> deviceConstantFns,
                bool cuda) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "/* Generated by disc-compile: the model's part of its C wrapper "
        "(ModelWrapper.c). */\n";
  if (cuda)
    os << "#define DISC_MODEL_CUDA 1\n";
  os << "static const char disc_signature[] = ";
  writeCString(os, signature);
  os << ";\nstatic const char *const disc_check_messages[] = {\n";
  for (const std::string &m : checkMessages) {
    os << "  ";
    writeCString(os, m);
    os << ",\n";
  }
  os << "  0};\n\n#include \"ModelWrapper.c\"\n\n";

  os << "extern void _mlir_ciface_" << entryName << "(void *results";
  for (size_t i = 0; i < numInputs; ++i)
    os << ", void *in" << i;
  int64_t words = 0;
  for (int64_t r : outputRanks)
    words += 3 + 2 * r;
  os << ");\n\nstatic void disc_run_entry(void **inputs, void **outputs) {\n"
     << "  int64_t results[" << std::max<int64_t>(words, 1) << "];\n"
     << "  _mlir_ciface_" << entryName << "(results";
  for (size_t i = 0; i < numInputs; ++i)
    os << ", inputs[" << i << "]";
  os << ");\n";
  int64_t offset = 0;
  for (auto [i, r] : llvm::enumerate(outputRanks)) {
    os << "  memcpy(outputs[" << i << "], results + " << offset << ", "
       << 8 * (3 + 2 * r) << ");\n";
    offset += 3 + 2 * r;
  }
  os << "}\n\n";

  writeLibraryCalls(os);
  for (int64_t k : rematIds)
    os << "DISC_HIDDEN void _mlir_ciface_" << disc::kRematEvictPrefix << k
       << "(int64_t id, void *const *desc) {\n  disc_remat_evict(id, "
          "desc);\n}\n";
  if (cuda)
    for (const auto &[name, rank] : deviceConstantFns)
      os << "DISC_HIDDEN void _mlir_ciface_" << name
         << "(int64_t *result, const int64_t *host, int64_t bytes) {\n"
         << "  disc_device_constant_memref(result, host, bytes, " << rank
         << ");\n}\n";
  return s;
}

/// Instruments every function defined in `module` as clang does after its
/// optimization pipeline: `coverage` adds libFuzzer's edge coverage (inline
/// 8-bit counters, PC table, comparison tracing; clang's
/// -fsanitize=fuzzer-no-link), `asan` LLVM's AddressSanitizer pass, which
/// checks every access to memory the model gets from the runtime allocator
/// and to its stack frames.
static void instrumentModule(llvm::Module &module, llvm::TargetMachine *tm,
                             bool asan, bool coverage) {
  if (asan)
    for (llvm::Function &f : module)
      if (!f.isDeclaration())
        f.addFnAttr(llvm::Attribute::SanitizeAddress);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (coverage) {
    llvm::SanitizerCoverageOptions options;
    options.CoverageType = llvm::SanitizerCoverageOptions::SCK_Edge;
    options.Inline8bitCounters = true;
    options.PCTable = true;
    options.TraceCmp = true;
    mpm.addPass(llvm::SanitizerCoveragePass(options));
  }
  if (asan)
    mpm.addPass(llvm::AddressSanitizerPass(llvm::AddressSanitizerOptions()));
  mpm.run(module, mam);
}

/// Returns the heap memory freed so far to the operating system (glibc keeps
/// it in the main thread's arena otherwise, where the code generation
/// threads, which allocate from arenas of their own, cannot reuse it).
static void releaseFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

/// Replaces every load from a constant global with a known initializer (a
/// scalar such as the exponent of `Pow(x, 2)` or a LayerNorm's epsilon,
/// bufferized into a 0-d `memref.global`) by the loaded value. Done on the
/// whole module before it is split into parts: SplitModule leaves a global
/// defined in one part and declared in the others, where O3 could no longer
/// fold the load, nor then `pow(x, 2.0)` into `x * x` (Swin-T's LayerNorm
/// variance took 1.5 ms instead of 0.05 in a part without its exponent).
static void foldConstantGlobalLoads(llvm::Module &m) {
  const llvm::DataLayout &dl = m.getDataLayout();
  SmallVector<llvm::LoadInst *> loads;
  for (llvm::Function &f : m)
    for (llvm::Instruction &i : llvm::instructions(f))
      if (auto *load = dyn_cast<llvm::LoadInst>(&i))
        if (load->isSimple())
          loads.push_back(load);
  for (llvm::LoadInst *load : loads) {
    llvm::APInt offset(dl.getIndexTypeSizeInBits(load->getPointerOperandType()),
                       0);
    const llvm::Value *base =
        load->getPointerOperand()->stripAndAccumulateConstantOffsets(
            dl, offset, /*AllowNonInbounds=*/true);
    auto *global = dyn_cast<llvm::GlobalVariable>(base);
    if (!global || !global->isConstant() || !global->hasDefinitiveInitializer())
      continue;
    llvm::Constant *value = llvm::ConstantFoldLoadFromConstPtr(
        const_cast<llvm::GlobalVariable *>(global), load->getType(), offset,
        dl);
    if (!value)
      continue;
    load->replaceAllUsesWith(value);
    load->eraseFromParent();
  }
}

/// Gives every multi-dimensional constant global backed by a resource blob
/// (the ONNX initializers) a flat `!llvm.array<N x T>` type over the same
/// blob. The translation to LLVM IR then builds one `ConstantDataArray`
/// from the raw bytes per global, instead of one per innermost row nested
/// in arrays of arrays (3.7 million uniqued constants for ResNet-18's 11.7
/// million weights, which LLVM's optimizer and code generator then walk
/// again). Users only take the global's address (`llvm.mlir.addressof`,
/// opaque pointers) and index it through GEPs that carry their own element
/// type, so the layout in memory is unchanged.
static void flattenConstantGlobals(ModuleOp module) {
  module.walk([](LLVM::GlobalOp global) {
    auto value =
        dyn_cast_or_null<DenseResourceElementsAttr>(global.getValueOrNull());
    if (!value || value.getType().getRank() <= 1)
      return;
    Type elt = global.getGlobalType();
    while (auto arr = dyn_cast<LLVM::LLVMArrayType>(elt))
      elt = arr.getElementType();
    // ConstantDataArray holds f16/f32/f64 and i8/i16/i32/i64 only.
    if (!elt.isF16() && !elt.isF32() && !elt.isF64() && !elt.isInteger(8) &&
        !elt.isInteger(16) && !elt.isInteger(32) && !elt.isInteger(64))
      return;
    ShapedType type = value.getType();
    int64_t n = type.getNumElements();
    global.setGlobalType(LLVM::LLVMArrayType::get(elt, n));
    global.setValueAttr(DenseResourceElementsAttr::get(
        RankedTensorType::get({n}, type.getElementType()),
        value.getRawHandle()));
  });
}

/// Constants of at least this many bytes go to model.so as raw bytes.
constexpr int64_t kRawConstantBytes = 64 * 1024;

/// Moves the bytes of every large constant global (an ONNX initializer of
/// at least kRawConstantBytes, not named in `keep`) out of the module:
/// each is written to `dir`/cN.bin, the global becomes an external
/// declaration, and `asmText` gets its definition, a hidden symbol of
/// read-only data that `.incbin`s the file, for the link step to assemble.
/// LLVM's code generator otherwise emits the bytes itself (ViT-B/16's 346
/// MB of weights: most of a 40 s compile), and the parallel split copies
/// them into every part's bitcode. Users only take the globals' addresses.
static LogicalResult externalizeLargeConstants(ModuleOp module, StringRef dir,
                                               const llvm::StringSet<> &keep,
                                               std::string &asmText) {
  llvm::raw_string_ostream os(asmText);
  int64_t n = 0;
  WalkResult r = module.walk([&](LLVM::GlobalOp global) {
    auto value =
        dyn_cast_or_null<DenseResourceElementsAttr>(global.getValueOrNull());
    StringRef name = global.getSymName();
    LLVM::Linkage linkage = global.getLinkage();
    if (!value || !global.getConstant() || keep.contains(name) ||
        (linkage != LLVM::Linkage::Private &&
         linkage != LLVM::Linkage::Internal &&
         linkage != LLVM::Linkage::External) ||
        !llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return WalkResult::advance();
    AsmResourceBlob *blob = value.getRawHandle().getBlob();
    if (!blob || (int64_t)blob->getData().size() < kRawConstantBytes)
      return WalkResult::advance();
    ArrayRef<char> data = blob->getData();
    std::string path = (dir + "/c" + Twine(n++) + ".bin").str();
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    if (ec) {
      global.emitError("cannot write ") << path << ": " << ec.message();
      return WalkResult::interrupt();
    }
    out.write(data.data(), data.size());
    out.close();
    uint64_t align = std::max<uint64_t>(global.getAlignment().value_or(64), 64);
    os << "  .section .rodata." << name << ",\"a\",@progbits\n"
       << "  .globl " << name << "\n  .hidden " << name << "\n  .type " << name
       << ",@object\n  .p2align " << llvm::Log2_64(align) << "\n"
       << name << ":\n  .incbin \"" << path << "\"\n  .size " << name << ", "
       << data.size() << "\n";
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    return WalkResult::advance();
  });
  if (n)
    os << "  .section .note.GNU-stack,\"\",@progbits\n";
  return failure(r.wasInterrupted());
}

/// The data symbols that a training step's signature names as the initial
/// values of its state inputs (`init`, docs/runtime-abi.md "Training
/// state"): the runtime reads them with dlsym, so model.so exports them.
static llvm::StringSet<> stateInitSymbols(StringRef signatureJson) {
  llvm::StringSet<> names;
  llvm::Expected<llvm::json::Value> sig = llvm::json::parse(signatureJson);
  if (!sig) {
    llvm::consumeError(sig.takeError());
    return names;
  }
  const llvm::json::Object *root = sig->getAsObject();
  const llvm::json::Array *inputs = root ? root->getArray("inputs") : nullptr;
  if (!inputs)
    return names;
  for (const llvm::json::Value &input : *inputs)
    if (const llvm::json::Object *entry = input.getAsObject())
      if (std::optional<StringRef> init = entry->getString("init");
          init && *init != "zeros")
        names.insert(*init);
  return names;
}

/// Collects the loop vectorizer's remarks per function: true when some loop
/// of the function was vectorized, false when the vectorizer saw loops but
/// vectorized none (functions without an entry had no loop it considered).
struct VectorizeRemarks : public llvm::DiagnosticHandler {
  llvm::StringMap<bool> &vectorized;
  explicit VectorizeRemarks(llvm::StringMap<bool> &v) : vectorized(v) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo &di) override {
    auto *r = dyn_cast<llvm::DiagnosticInfoOptimizationBase>(&di);
    if (!r || r->getPassName() != "loop-vectorize")
      return false;
    bool &v = vectorized[r->getFunction().getName()];
    v |= di.getKind() == llvm::DK_OptimizationRemark;
    return true;
  }
  bool isAnalysisRemarkEnabled(StringRef) const override { return false; }
  bool isMissedOptRemarkEnabled(StringRef pass) const override {
    return pass == "loop-vectorize";
  }
  bool isPassedOptRemarkEnabled(StringRef pass) const override {
    return pass == "loop-vectorize";
  }
  bool isAnyRemarkEnabled() const override { return true; }
};

/// Counts the kernels (`disc_kernel_<n>`) as the code generator finishes
/// them: added after the passes of `addPassesToEmitFile`, it runs on each
/// function right after its machine code is emitted (the legacy pass
/// manager runs the code generator's function passes function by
/// function).
struct KernelCodegenCounter : public llvm::FunctionPass {
  static char ID;
  std::function<void()> onKernel;
  explicit KernelCodegenCounter(std::function<void()> onKernel)
      : llvm::FunctionPass(ID), onKernel(std::move(onKernel)) {}
  bool runOnFunction(llvm::Function &f) override {
    if (f.getName().starts_with(disc::kKernelPrefix))
      onKernel();
    return false;
  }
  void getAnalysisUsage(llvm::AnalysisUsage &au) const override {
    au.setPreservesAll();
  }
  llvm::StringRef getPassName() const override {
    return "DISC kernel codegen counter";
  }
};
char KernelCodegenCounter::ID = 0;

/// Runs `argv` and returns its exit status, or -1 when it could not start.
static int runProgram(ArrayRef<StringRef> argv, std::string &error) {
  return llvm::sys::ExecuteAndWait(argv[0], argv, std::nullopt, {}, 0, 0,
                                   &error);
}

LogicalResult mlir::disc::emitModelArtifact(
    ModuleOp module, StringRef entryName, StringRef outputPath, EmitKind kind,
    StringRef sanitize, TimingScope *timing, unsigned jobs,
    llvm::raw_ostream *codegenReport, const EmitProgressFn &progress,
    int64_t fastEntryAbove) {
  // One nested scope per phase; empty (no-op) scopes without `timing`.
  auto phase = [&](StringRef name) {
    if (progress)
      progress(name, 0, 0);
    return timing ? timing->nest(name) : TimingScope();
  };
  SmallVector<StringRef> sanitizers;
  sanitize.split(sanitizers, ',', -1, /*KeepEmpty=*/false);
  for (StringRef s : sanitizers)
    if (s != "address" && s != "undefined" && s != "fuzzer-no-link")
      return module.emitError("unsupported sanitizer '")
             << s << "' (supported: address, undefined, fuzzer-no-link)";
  // Run-time checks (RuntimeChecks.h): the message templates go into the
  // wrapper; the kept (call sites left after folding) and dropped counts
  // into the signature.
  SmallVector<std::string> checkMessages;
  int64_t checksDropped = 0, checksKept = 0;
  if (auto arr = module->getAttrOfType<ArrayAttr>(disc::kCheckMessagesAttr))
    for (Attribute a : arr)
      checkMessages.push_back(cast<StringAttr>(a).str());
  if (auto n = module->getAttrOfType<IntegerAttr>(disc::kChecksDroppedAttr))
    checksDropped = n.getInt();
  module->removeAttr(disc::kCheckMessagesAttr);
  module->removeAttr(disc::kChecksDroppedAttr);
  // Input dim names kept for the lowering's shape analysis: not LLVM's.
  module.walk([](FunctionOpInterface f) {
    for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i)
      f.removeArgAttr(i, "disc.dims");
  });
  module.walk([&](Operation *op) {
    if (auto callee = op->getAttrOfType<FlatSymbolRefAttr>("callee"))
      if (callee.getValue() == disc::kCheckFailedFn)
        ++checksKept;
  });
  checksDropped +=
      std::max<int64_t>(0, (int64_t)checkMessages.size() - checksKept);
  // Evict entry points the compiled code calls (one per candidate).
  SmallVector<int64_t> rematIds;
  module.walk([&](Operation *op) {
    auto sym = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    int64_t k;
    if (sym && sym.getValue().starts_with(disc::kRematEvictPrefix) &&
        !sym.getValue()
             .drop_front(disc::kRematEvictPrefix.size())
             .getAsInteger(10, k))
      rematIds.push_back(k);
  });
  llvm::sort(rematIds);
  rematIds.erase(llvm::unique(rematIds), rematIds.end());
  // Device copies of constants (CUDA): disc_device_constant_<rank>_<k>.
  SmallVector<std::pair<std::string, int64_t>> deviceConstantFns;
  module.walk([&](Operation *op) {
    auto sym = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    int64_t rank;
    if (!sym || !sym.getValue().starts_with(disc::kDeviceConstantPrefix))
      return;
    StringRef rest =
        sym.getValue().drop_front(disc::kDeviceConstantPrefix.size());
    if (!rest.split('_').first.getAsInteger(10, rank))
      deviceConstantFns.push_back({sym.getValue().str(), rank});
  });
  llvm::sort(deviceConstantFns);
  deviceConstantFns.erase(llvm::unique(deviceConstantFns),
                          deviceConstantFns.end());
  // The signature JSON, serialized once from the attributes of the
  // disc-attach-* passes; the wrapper takes the entry's ranks from them.
  FailureOr<std::string> signatureJson =
      disc::serializeSignature(module, entryName, checksKept, checksDropped);
  if (failed(signatureJson))
    return failure();
  SmallVector<int64_t> inRanks, outRanks;
  disc::getSignatureRanks(module, inRanks, outRanks);
  bool cuda = disc::isCudaSignature(module);
  for (StringRef name : {disc::kSignatureAttrName, disc::kMemoryAttrName,
                         disc::kRematAttrName, disc::kTracePointsAttr})
    module->removeAttr(name);

  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  // --report-codegen: where each kernel (one per loop nest of an op, see
  // disc-outline-kernels) came from.
  std::vector<std::pair<std::string, std::string>> kernels;
  llvm::StringSet<> parallelKernels;
  module.walk([&](LLVM::LLVMFuncOp f) {
    if (f->removeAttr("disc.parallel"))
      parallelKernels.insert(f.getName());
  });
  if (codegenReport)
    module.walk([&](LLVM::LLVMFuncOp f) {
      if (f.isExternal() || !f.getName().starts_with(disc::kKernelPrefix))
        return;
      std::string loc;
      llvm::raw_string_ostream os(loc);
      f.getLoc().print(os);
      kernels.push_back({f.getName().str(), loc});
    });
  SmallVector<llvm::StringMap<bool>> vectorized(1);
  llvm::LLVMContext llvmContext;
  if (codegenReport)
    llvmContext.setDiagnosticHandler(
        std::make_unique<VectorizeRemarks>(vectorized[0]));
  // The compiled code goes to a temporary directory, from which model.so
  // (--emit=lib) or one relocatable object with the wrapper (--emit=obj)
  // is linked; removed on every return.
  SmallString<128> tmpDir;
  struct RemoveDir {
    SmallString<128> &path;
    ~RemoveDir() {
      if (!path.empty())
        llvm::sys::fs::remove_directories(path);
    }
  } removeTmpDir{tmpDir};
  std::string rawConstantsAsm;
  if (kind != EmitKind::LLVM) {
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("disc-compile", tmpDir))
      return module.emitError("cannot create a temporary directory: ")
             << ec.message();
    if (failed(externalizeLargeConstants(
            module, tmpDir, stateInitSymbols(*signatureJson), rawConstantsAsm)))
      return failure();
  }
  TimingScope translateTimer = phase("translate to LLVM IR");
  flattenConstantGlobals(module);
  // Kernel pointers to distinct buffers (disc-outline-kernels).
  module.walk([&](LLVM::LLVMFuncOp f) {
    auto params = f->getAttrOfType<DenseI32ArrayAttr>("disc.noalias_params");
    if (!params)
      return;
    for (int32_t i : params.asArrayRef())
      if (i < static_cast<int32_t>(f.getNumArguments()) &&
          isa<LLVM::LLVMPointerType>(f.getArgument(i).getType()))
        f.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                     UnitAttr::get(f.getContext()));
    f->removeAttr("disc.noalias_params");
  });
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "disc_model");
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  // The LLVM dialect module is not read again: its memory goes to LLVM's
  // optimization and code generation (on a 10,000-op training step the two
  // modules together were most of the compile's peak resident set).
  for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
    op.erase();
  releaseFreedMemory();
  translateTimer.stop();

  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine(error);
  if (!tm)
    return module.emitError(error);
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  // Only the wrapper's entry points are exported from model.so, and the
  // initial values of a training step's state (public memref.globals).
  llvm::StringSet<> stateInits = stateInitSymbols(*signatureJson);
  for (const auto &name : stateInits) {
    llvm::GlobalVariable *init = llvmModule->getGlobalVariable(name.getKey());
    if (!init || init->isDeclaration() || init->hasLocalLinkage())
      return emitError(module.getLoc(), "the initial value '")
             << name.getKey()
             << "' of a state input is not a public global of the module";
  }
  for (llvm::GlobalValue &gv : llvmModule->global_values())
    if (!gv.isDeclaration() && !stateInits.contains(gv.getName()))
      gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
  // Kernels (disc-outline-kernels) stay separate functions.
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration() && f.getName().starts_with(disc::kKernelPrefix))
      f.addFnAttr(llvm::Attribute::NoInline);
  bool asan = llvm::is_contained(sanitizers, "address");
  bool coverage = llvm::is_contained(sanitizers, "fuzzer-no-link");
  // Optimizes the whole module at O3, then adds the sanitizer
  // instrumentation.
  auto optimize = [&]() -> LogicalResult {
    TimingScope optTimer = phase("LLVM optimization (O3)");
    if (llvm::Error err =
            makeOptimizingTransformer(3, 0, tm.get())(llvmModule.get()))
      return module.emitError("LLVM optimization failed: ")
             << llvm::toString(std::move(err));
    optTimer.stop();
    if (asan || coverage)
      instrumentModule(*llvmModule, tm.get(), asan, coverage);
    return success();
  };

  if (kind == EmitKind::LLVM) {
    if (failed(optimize()))
      return failure();
    auto out = openOutputFile(outputPath, &error);
    if (!out)
      return module.emitError(error);
    llvmModule->print(out->os(), nullptr);
    out->keep();
    return success();
  }

  std::string objPath = (tmpDir + "/model.o").str();
  // The module is split into `parts` partitions (whole functions and
  // globals; SplitModule externalizes locals as hidden symbols), each
  // optimized and compiled to its own object in its own thread and
  // LLVMContext, as LLVM's parallel LTO code generation does; all objects
  // are linked into model.so (--emit=lib) or one relocatable object
  // (--emit=obj).
  unsigned numFunctions = 0;
  int64_t numKernels = 0;
  auto isKernel = [](const llvm::Function &f) {
    return !f.isDeclaration() && f.getName().starts_with(disc::kKernelPrefix);
  };
  for (llvm::Function &f : *llvmModule) {
    numFunctions += !f.isDeclaration();
    numKernels += isKernel(f);
  }
  // Kernels compiled so far, for `progress`.
  std::atomic<int64_t> kernelsDone{0};
  auto codegenProgress = [&](int64_t done) {
    if (progress)
      progress("code generation", done, numKernels);
  };
  // Threads, and parts: at least one per thread, more for a large module so
  // that each thread holds at most about kInstructionsPerPart instructions
  // through O3 and code generation at a time.
  unsigned threads =
      jobs ? jobs : llvm::hardware_concurrency().compute_thread_count();
  // The entry function is the graph's host code: the calls into the
  // kernels and libraries, the shape arithmetic and the checks between
  // them, straight-line and run once per model run. On a large graph it is
  // one function of 100,000s of instructions that O3 and code generation
  // take most of the compile on (Swin-B: 182,000 instructions, 15 s of the
  // 42 s, on one thread) for no measurable run time: above
  // `fastEntryAbove` it goes to a part of its own, optimized at O1 and
  // compiled with CodeGenOptLevel::None (fast instruction selection and
  // register allocation; 3.6 s), next to the kernels' parts at O3.
  llvm::Function *entryFn = llvmModule->getFunction(entryName);
  bool largeEntry =
      entryFn && !entryFn->isDeclaration() && !entryFn->hasComdat() &&
      fastEntryAbove >= 0 &&
      entryFn->getInstructionCount() > static_cast<uint64_t>(fastEntryAbove);
  for (const llvm::GlobalAlias &alias : llvmModule->aliases())
    largeEntry &= alias.getAliaseeObject() != entryFn;
  uint64_t numInstructions = 0;
  for (llvm::Function &f : *llvmModule)
    if (!largeEntry || &f != entryFn)
      numInstructions += f.getInstructionCount();
  if (largeEntry)
    --numFunctions; // the others are split into parts
  constexpr uint64_t kInstructionsPerPart = 50000;
  unsigned parts = std::min<uint64_t>(
      numFunctions,
      std::max<uint64_t>(
          threads, llvm::divideCeil(numInstructions, kInstructionsPerPart)));
  if (threads <= 1)
    parts = std::min(parts, 1u);
  if (largeEntry)
    parts = std::max(parts, 1u); // the rest, kernels or not
  SmallVector<std::string> objPaths;
  if (parts <= 1 && !largeEntry) {
    objPaths.push_back(objPath);
    if (failed(optimize()))
      return failure();
    TimingScope codegenTimer = phase("machine code emission");
    codegenProgress(0);
    auto out = openOutputFile(objPath, &error);
    if (!out)
      return module.emitError(error);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, out->os(), nullptr,
                                llvm::CodeGenFileType::ObjectFile))
      return module.emitError("the target cannot emit object files");
    if (progress)
      codegen.add(
          new KernelCodegenCounter([&] { codegenProgress(kernelsDone += 1); }));
    codegen.run(*llvmModule);
    out->keep();
  } else {
    TimingScope splitTimer =
        phase("split into " + std::to_string(parts) +
              (largeEntry ? " parts and the entry function, optimize (O3; the "
                            "entry O1) and emit in parallel"
                          : " parts, optimize (O3) and emit in parallel"));
    SmallVector<SmallString<0>> bitcode;
    // A linkonce definition (e.g. math-to-funcs' `__mlir_math_ipowi_i64`)
    // goes to one part while its users may be in others: O3 would drop it
    // there as unused. weak_odr keeps it (and still merges duplicates).
    for (llvm::GlobalValue &g : llvmModule->global_values())
      if (g.hasLinkOnceLinkage())
        g.setLinkage(llvm::GlobalValue::WeakODRLinkage);
    foldConstantGlobalLoads(*llvmModule);
    // The large entry function's part (bitcode[0]): its definition alone,
    // everything it refers to declared. Locals become hidden globals first,
    // as SplitModule makes them, so both sides link.
    if (largeEntry) {
      for (llvm::GlobalValue &g : llvmModule->global_values()) {
        if (!g.hasName())
          g.setName("__disc_split_unnamed");
        if (!g.hasLocalLinkage())
          continue;
        g.setLinkage(llvm::GlobalValue::ExternalLinkage);
        g.setVisibility(llvm::GlobalValue::HiddenVisibility);
      }
      llvm::ValueToValueMapTy map;
      std::unique_ptr<llvm::Module> entryPart =
          llvm::CloneModule(*llvmModule, map, [&](const llvm::GlobalValue *g) {
            return g == entryFn;
          });
      entryFn->deleteBody();
      bitcode.emplace_back();
      llvm::raw_svector_ostream os(bitcode.back());
      llvm::WriteBitcodeToFile(*entryPart, os);
    }
    llvm::SplitModule(
        *llvmModule, parts,
        [&](std::unique_ptr<llvm::Module> part) {
          bitcode.emplace_back();
          llvm::raw_svector_ostream os(bitcode.back());
          llvm::WriteBitcodeToFile(*part, os);
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
    llvmModule.reset();
    releaseFreedMemory();
    SmallVector<std::string> errors(bitcode.size());
    vectorized.resize(bitcode.size());
    // Target machines are created here: target registration is not
    // thread-safe.
    SmallVector<std::unique_ptr<llvm::TargetMachine>> tms;
    auto isEntryPart = [&](size_t i) { return largeEntry && i == 0; };
    for (size_t i = 0; i < bitcode.size(); ++i) {
      tms.push_back(createHostTargetMachine(
          error, isEntryPart(i) ? llvm::CodeGenOptLevel::None
                                : llvm::CodeGenOptLevel::Aggressive));
      if (!tms.back())
        return module.emitError(error);
    }
    codegenProgress(0);
    llvm::DefaultThreadPool pool(
        llvm::hardware_concurrency(std::min<size_t>(threads, bitcode.size())));
    for (size_t i = 0; i < bitcode.size(); ++i) {
      objPaths.push_back((tmpDir + "/part" + std::to_string(i) + ".o").str());
      pool.async([&, i] {
        std::string &err = errors[i];
        llvm::LLVMContext ctx;
        if (codegenReport)
          ctx.setDiagnosticHandler(
              std::make_unique<VectorizeRemarks>(vectorized[i]));
        llvm::Expected<std::unique_ptr<llvm::Module>> m =
            llvm::parseBitcodeFile(
                llvm::MemoryBufferRef(
                    llvm::StringRef(bitcode[i].data(), bitcode[i].size()),
                    "part"),
                ctx);
        if (!m) {
          err = llvm::toString(m.takeError());
          return;
        }
        llvm::TargetMachine *partTm = tms[i].get();
        if (llvm::Error e = makeOptimizingTransformer(isEntryPart(i) ? 1 : 3, 0,
                                                      partTm)(m->get())) {
          err = "LLVM optimization failed: " + llvm::toString(std::move(e));
          return;
        }
        if (asan || coverage)
          instrumentModule(**m, partTm, asan, coverage);
        std::error_code ec;
        llvm::raw_fd_ostream out(objPaths[i], ec);
        if (ec) {
          err = "cannot write " + objPaths[i] + ": " + ec.message();
          return;
        }
        llvm::legacy::PassManager codegen;
        if (partTm->addPassesToEmitFile(codegen, out, nullptr,
                                        llvm::CodeGenFileType::ObjectFile)) {
          err = "the target cannot emit object files";
          return;
        }
        if (progress)
          codegen.add(new KernelCodegenCounter(
              [&] { codegenProgress(kernelsDone += 1); }));
        codegen.run(**m);
      });
    }
    pool.wait();
    for (const std::string &err : errors)
      if (!err.empty())
        return module.emitError(err);
  }
  if (codegenReport) {
    unsigned numVectorized = 0;
    for (auto &[name, loc] : kernels) {
      bool vec = false;
      for (const llvm::StringMap<bool> &m : vectorized)
        if (auto it = m.find(name); it != m.end())
          vec |= it->second;
      numVectorized += vec;
      bool parallel = parallelKernels.contains(name);
      *codegenReport << "codegen: " << name << " "
                     << (vec ? "vectorized" : "scalar")
                     << (parallel ? " parallel" : "") << " " << loc << "\n";
    }
    *codegenReport << "codegen: " << kernels.size() << " loop-nest kernels, "
                   << numVectorized << " vectorized by LLVM, "
                   << kernels.size() - numVectorized << " scalar, "
                   << parallelKernels.size()
                   << " parallel (outer loop on the session's threads)\n";
  }

  TimingScope linkTimer = phase("wrapper and link (cc)");
  // The generated wrapper.c includes the fixed files next to it.
  auto writeFile = [&](StringRef path, StringRef text) -> LogicalResult {
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(path)))
      return module.emitError("cannot create a directory for ")
             << path << ": " << ec.message();
    auto out = openOutputFile(path, &error);
    if (!out)
      return module.emitError(error);
    out->os() << text;
    out->keep();
    return success();
  };
  for (const auto &file : kWrapperFiles)
    if (failed(writeFile((tmpDir + "/" + file.path).str(), file.text)))
      return failure();
  std::string wrapperPath = (tmpDir + "/wrapper.c").str();
  if (failed(writeFile(wrapperPath,
                       generateWrapper(entryName, *signatureJson,
                                       inRanks.size(), outRanks, checkMessages,
                                       rematIds, deviceConstantFns, cuda))))
    return failure();
  // A sanitized wrapper is compiled by clang-22 when present, so that its
  // instrumentation matches the LLVM 22 pass used on the object above.
  llvm::ErrorOr<std::string> cc =
      std::make_error_code(std::errc::no_such_file_or_directory);
  if (!sanitizers.empty())
    cc = llvm::sys::findProgramByName("clang-22");
  if (!cc)
    cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return module.emitError("no C compiler driver 'cc' on PATH");
  SmallString<256> absOut(outputPath);
  llvm::sys::fs::make_absolute(absOut);
  std::string outStr = absOut.str().str();
  std::string wrapperInput = wrapperPath;
  int status = 0;
  if (!sanitizers.empty()) {
    // Compile the wrapper instrumented, then link without the sanitizer
    // runtimes: the host process provides them (one copy per process).
    std::string flag = "-fsanitize=" + sanitize.str();
    wrapperInput = (tmpDir + "/wrapper.o").str();
    SmallVector<StringRef> compile = {*cc,
                                      "-c",
                                      "-fPIC",
                                      "-O1",
                                      "-fno-omit-frame-pointer",
                                      flag,
                                      "-fno-sanitize-recover=all",
                                      "-o",
                                      wrapperInput,
                                      wrapperPath};
    status = runProgram(compile, error);
  } else if (kind == EmitKind::Object) {
    wrapperInput = (tmpDir + "/wrapper.o").str();
    SmallVector<StringRef> compile = {*cc,  "-c",         "-fPIC",    "-O2",
                                      "-o", wrapperInput, wrapperPath};
    status = runProgram(compile, error);
  }
  // --emit=obj: one relocatable object (ld -r) holding the compiled code
  // and the wrapper, i.e. the whole model ABI; it needs only libc and libm
  // (docs/cli.md).
  SmallVector<StringRef> argv = {*cc,  "-shared", "-fPIC",     "-O2",
                                 "-o", outStr,    wrapperInput};
  if (kind == EmitKind::Object)
    argv = {*cc, "-r", "-nostdlib", "-o", outStr, wrapperInput};
  for (const std::string &obj : objPaths)
    argv.push_back(obj);
  // The large constants' bytes (externalizeLargeConstants).
  std::string rawConstantsPath = (tmpDir + "/constants.s").str();
  if (!rawConstantsAsm.empty()) {
    if (failed(writeFile(rawConstantsPath, rawConstantsAsm)))
      return failure();
    argv.push_back(rawConstantsPath);
  }
  if (kind == EmitKind::Library)
    argv.push_back("-lm");
  if (status == 0)
    status = runProgram(argv, error);
  llvm::sys::fs::remove_directories(tmpDir);
  if (status != 0)
    return module.emitError("linking ")
           << (kind == EmitKind::Object ? "the object" : "model.so")
           << " with '" << *cc << "' failed (status " << status << ") "
           << error;
  return success();
}

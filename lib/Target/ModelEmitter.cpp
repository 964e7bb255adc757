//===- ModelEmitter.cpp - LLVM IR, object and model.so emission -----------===//
//
// Turns a module lowered to the LLVM dialect into the artifact described in
// docs/runtime-abi.md: LLVM IR is optimized for the host CPU (O3), compiled to
// an object file, and linked with a generated C wrapper (ABI entry points,
// signature JSON, allocation hooks into the runtime context) by the system C
// compiler driver (`cc -shared`), as onnx-mlir does.
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
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
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
#include "llvm/Transforms/Utils/SplitModule.h"

using namespace mlir;

/// The text of runtime/include/disc/runtime/abi.h (lib/Target/CMakeLists.txt).
static const char kAbiHeader[] =
#include "AbiHeader.inc"
    ;

//===----------------------------------------------------------------------===//
// Object code
//===----------------------------------------------------------------------===//

static std::unique_ptr<llvm::TargetMachine>
createHostTargetMachine(std::string &error) {
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
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    error = "cannot create a target machine for " + triple.str();
  return tm;
}

/// The functions that MLIR's gpu-to-llvm lowering calls (the `mgpu*` API of
/// MLIR's CUDA runtime wrappers), implemented over the runtime context of
/// the current run (docs/cuda.md): modules are only recorded when model.so
/// is loaded (its constructors run before any context exists); the runtime
/// loads each cubin on its first launch, on the session's device and
/// stream. Streams are the session's one stream.
static std::string generateGpuRuntimeShims() {
  return R"c(/* CUDA target: MLIR's gpu runtime calls over the runtime context. */
typedef struct disc_gpu_module {
  const void *image;
  const char *kernel;
} disc_gpu_module;

DISC_HIDDEN void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  disc_gpu_module *m = (disc_gpu_module *)calloc(1, sizeof *m);
  if (m)
    m->image = data;
  return m;
}
DISC_HIDDEN void mgpuModuleUnload(void *module) { free(module); }
/* One kernel per module (gpu-kernel-outlining). */
DISC_HIDDEN void *mgpuModuleGetFunction(void *module, const char *name) {
  disc_gpu_module *m = (disc_gpu_module *)module;
  if (m && !m->kernel)
    m->kernel = name;
  return m;
}
DISC_HIDDEN void *mgpuStreamCreate(void) { return disc_ctx; }
DISC_HIDDEN void mgpuStreamDestroy(void *stream) { (void)stream; }
/* The image of the last launch, whose device error word (run-time checks
   inside kernels, disc-gpu-device-checks) is read after the stream
   synchronization that follows every launch. */
static __thread const void *disc_last_image;
DISC_HIDDEN void mgpuStreamSynchronize(void *stream) {
  (void)stream;
  int32_t st = disc_ctx->device_sync ? disc_ctx->device_sync(disc_ctx->self)
                                     : 4;
  if (st != 0)
    longjmp(*disc_jmp, (int)st);
  const void *image = disc_last_image;
  disc_last_image = 0;
  if (image && disc_ctx->device_check) {
    int64_t w[5] = {0, 0, 0, 0, 0};
    st = disc_ctx->device_check(disc_ctx->self, image, w);
    if (st < 0)
      longjmp(*disc_jmp, (int)-st);
    if (st == 1)
      disc_check_failed(w[0] - 1, w[1], w[2], w[3], w[4]);
  }
}
DISC_HIDDEN void mgpuLaunchKernel(void *function, int64_t gx, int64_t gy,
                                  int64_t gz, int64_t bx, int64_t by,
                                  int64_t bz, int32_t shared, void *stream,
                                  void **params, void **extra,
                                  size_t num_params) {
  (void)stream;
  (void)extra;
  (void)num_params;
  disc_gpu_module *m = (disc_gpu_module *)function;
  if (!disc_ctx->device_launch)
    disc_fail(4, "this CUDA model runs only in a session with a CUDA device");
  if (!m || !m->image)
    disc_fail(4, "CUDA kernel image missing (out of memory at load time)");
  int64_t grid[3] = {gx, gy, gz};
  int64_t block[3] = {bx, by, bz};
  int32_t st = disc_ctx->device_launch(disc_ctx->self, m->image, m->kernel,
                                       grid, block, shared, params);
  if (st != 0)
    longjmp(*disc_jmp, (int)st);
  disc_last_image = m->image;
}
DISC_HIDDEN void mgpuMemcpy(void *dst, void *src, size_t bytes,
                            void *stream) {
  (void)stream;
  if (!disc_ctx->device_copy)
    disc_fail(4, "this CUDA model runs only in a session with a CUDA device");
  int32_t st = disc_ctx->device_copy(disc_ctx->self, dst, src, (int64_t)bytes);
  if (st != 0)
    longjmp(*disc_jmp, (int)st);
}

)c";
}

/// CUDA target: the device copies of constants that kernels read
/// (disc-gpu-upload-constants). `names` are the C-interface functions
/// `disc_device_constant_<rank>_<k>(memref<T>, i64 bytes) -> memref<T>`:
/// each returns the argument's descriptor with the runtime's device copy
/// of the data (`disc_ral_context.device_constant`) as its pointers.
static std::string
generateDeviceConstantShims(ArrayRef<std::pair<std::string, int64_t>> names) {
  std::string s;
  llvm::raw_string_ostream os(s);
  // Small device buffers (disc-gpu-small-device-buffers): memref<?xi8>.
  os << "\nDISC_HIDDEN void _mlir_ciface_disc_device_scratch(int64_t *result, "
        "int64_t site, int64_t bytes) {\n"
        "  if (!disc_ctx->device_scratch)\n"
        "    disc_fail(4, \"this CUDA model runs only in a session with a "
        "CUDA device\");\n"
        "  void *device = 0;\n"
        "  int32_t st = disc_ctx->device_scratch(disc_ctx->self, site, bytes, "
        "&device);\n"
        "  if (st != 0)\n    longjmp(*disc_jmp, (int)st);\n"
        "  result[0] = result[1] = (int64_t)(intptr_t)device;\n"
        "  result[2] = 0;\n  result[3] = bytes;\n  result[4] = 1;\n}\n";
  if (names.empty())
    return s;
  os << "\nstatic void *disc_device_constant(const void *host, int64_t "
        "bytes) {\n"
        "  if (!disc_ctx->device_constant)\n"
        "    disc_fail(4, \"this CUDA model runs only in a session with a "
        "CUDA device\");\n"
        "  void *device = 0;\n"
        "  int32_t st = disc_ctx->device_constant(disc_ctx->self, host, "
        "bytes, &device);\n"
        "  if (st != 0)\n    longjmp(*disc_jmp, (int)st);\n"
        "  return device;\n}\n";
  for (const auto &[name, rank] : names)
    os << "DISC_HIDDEN void _mlir_ciface_" << name
       << "(int64_t *result, const int64_t *host, int64_t bytes) {\n"
       << "  memcpy(result, host, " << 8 * (3 + 2 * rank) << ");\n"
       << "  void *d = disc_device_constant((const void *)(intptr_t)host[1], "
          "bytes);\n"
       << "  result[0] = result[1] = (int64_t)(intptr_t)d;\n"
       << "  result[2] = 0;\n}\n";
  return s;
}

/// The C source linked into model.so next to the compiled object: the ABI
/// entry points of docs/runtime-abi.md. `inputRanks`/`outputRanks` give the
/// rank of each entry argument/result; `checkMessages` the templates of the
/// run-time checks (RuntimeChecks.h), indexed by check id.
static std::string generateWrapper(StringRef entryName, StringRef signature,
                                   ArrayRef<int64_t> inputRanks,
                                   ArrayRef<int64_t> outputRanks,
                                   ArrayRef<std::string> checkMessages,
                                   ArrayRef<int64_t> rematIds, bool cuda) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "/* Generated by disc-compile: DISC model ABI entry points. */\n"
        "#include <setjmp.h>\n#include <stdint.h>\n#include <stdio.h>\n"
        "#include <stdlib.h>\n#include <string.h>\n\n";
  // abi.h is the only definition of the ABI: its text goes first.
  os << kAbiHeader << "\n";
  os << "#define DISC_HIDDEN __attribute__((visibility(\"hidden\")))\n"
        "#define DISC_EXPORT __attribute__((visibility(\"default\")))\n"
        "static __thread disc_ral_context *disc_ctx;\n"
        "static __thread jmp_buf *disc_jmp;\n\n"
        "/* Reports `message` to the runtime and unwinds to disc_model_run,\n"
        "   which returns `status`. Compiled frames hold no resources: the\n"
        "   runtime frees every buffer still allocated. */\n"
        "static void disc_fail(int32_t status, const char *message) {\n"
        "  disc_ctx->error(disc_ctx->self, status, message);\n"
        "  longjmp(*disc_jmp, (int)status);\n}\n\n"
        "static void *disc_alloc(uint64_t n, int64_t align) {\n"
        "  char msg[128];\n"
        "  if (n > (uint64_t)INT64_MAX) {\n"
        "    snprintf(msg, sizeof msg, \"allocation of %llu bytes exceeds "
        "the int64 range\", (unsigned long long)n);\n"
        "    disc_fail(1, msg);\n  }\n"
        "  void *p = disc_ctx->alloc(disc_ctx->self, (int64_t)n, align);\n"
        "  if (!p && n) {\n"
        "    snprintf(msg, sizeof msg, \"out of memory: allocation of %llu "
        "bytes failed\", (unsigned long long)n);\n"
        "    disc_fail(2, msg);\n  }\n"
        "  return p;\n}\n\n"
        "DISC_HIDDEN void *_mlir_memref_to_llvm_alloc(uint64_t n) {\n"
        "  return disc_alloc(n, 64);\n}\n"
        "DISC_HIDDEN void *_mlir_memref_to_llvm_aligned_alloc(uint64_t a, "
        "uint64_t n) {\n"
        "  return disc_alloc(n, a < 64 ? 64 : (int64_t)a);\n}\n"
        "DISC_HIDDEN void _mlir_memref_to_llvm_free(void *p) {\n"
        "  disc_ctx->free(disc_ctx->self, p);\n}\n\n";
  // Kernels with a parallel outer loop (disc-parallelize-kernels): the
  // body runs on the session's threads, or inline without them.
  os << "DISC_HIDDEN void disc_parallel_for(void (*body)(void *, int64_t, "
        "int64_t),\n"
        "                                   void *env, int64_t n, int64_t "
        "min_chunk) {\n"
        "  if (disc_ctx->parallel_for)\n"
        "    disc_ctx->parallel_for(disc_ctx->self, body, env, n, "
        "min_chunk);\n"
        "  else if (n > 0)\n"
        "    body(env, 0, n);\n}\n\n";
  // Library calls (LibraryCalls.h): the compiled code calls
  // _mlir_ciface_disc_lib_*; each forwards to the context. On failure the
  // runtime has recorded the reason; the run stops with its status.
  os << "static void disc_library_call(int32_t id, void *x, void *w, void "
        "*y,\n"
        "                              int32_t rank, int32_t nattrs, const "
        "int64_t *attrs) {\n"
        "  void *ops[3] = {x, w, y};\n"
        "  int32_t ranks[3] = {rank, rank, rank};\n"
        "  if (!disc_ctx->library_call)\n"
        "    disc_fail(4, \"the runtime has no library calls\");\n"
        "  int32_t st = disc_ctx->library_call(disc_ctx->self, id, 3, ops, "
        "ranks,\n"
        "                                      nattrs, attrs);\n"
        "  if (st != 0)\n    longjmp(*disc_jmp, (int)st);\n}\n\n"
        "DISC_HIDDEN void _mlir_ciface_disc_lib_matmul(void *a, void *b, void "
        "*c,\n"
        "                                           int64_t ta, int64_t tb) "
        "{\n"
        "  int64_t attrs[2] = {ta, tb};\n"
        "  disc_library_call(1, a, b, c, 3, 2, attrs);\n}\n";
  // `_post0`: with the flags word (only the NHWC bits, docs/runtime-abi.md).
  for (int k = 1; k <= 3; ++k)
    for (bool flags : {false, true}) {
      int n = 2 + 4 * k + (flags ? 1 : 0);
      os << "DISC_HIDDEN void _mlir_ciface_disc_lib_conv_transpose" << k
         << (flags ? "d_post0" : "d") << "(void *x, void *w, void *y";
      for (int i = 0; i < n; ++i)
        os << ", int64_t a" << i;
      os << ") {\n  int64_t attrs[" << n << "] = {";
      for (int i = 0; i < n; ++i)
        os << (i ? ", a" : "a") << i;
      os << "};\n  disc_library_call(3, x, w, y, " << k + 2 << ", " << n
         << ", attrs);\n}\n";
    }
  // With post-ops (docs/runtime-abi.md): bias [N] and/or residual
  // operands after the output, one more attribute (the post-op flags).
  os << "static void disc_library_call_n(int32_t id, int32_t n, void "
        "*const *ops,\n"
        "                                const int32_t *ranks, int32_t "
        "nattrs,\n"
        "                                const int64_t *attrs) {\n"
        "  if (!disc_ctx->library_call)\n"
        "    disc_fail(4, \"the runtime has no library calls\");\n"
        "  int32_t st = disc_ctx->library_call(disc_ctx->self, id, n, ops, "
        "ranks,\n"
        "                                      nattrs, attrs);\n"
        "  if (st != 0)\n    longjmp(*disc_jmp, (int)st);\n}\n\n";
  // Suffix `c`: the clip bounds follow the flags (two more attributes).
  for (int m = 0; m < 8; ++m) {
    for (int k = 0; k <= 3; ++k) { // k == 0: matmul, else conv{k}d
      int rank = k == 0 ? 3 : k + 2;
      int nattrs = (k == 0 ? 3 : 3 + 4 * k) + (m & 4 ? 2 : 0);
      os << "DISC_HIDDEN void _mlir_ciface_disc_lib_"
         << (k == 0 ? std::string("matmul") : "conv" + std::to_string(k) + "d")
         << "_post" << (m & 3) << (m & 4 ? "c" : "")
         << "(void *x, void *w, void *y";
      if (m & 1)
        os << ", void *b";
      if (m & 2)
        os << ", void *r";
      for (int i = 0; i < nattrs; ++i)
        os << ", int64_t a" << i;
      os << ") {\n  void *ops[] = {x, w, y" << ((m & 1) ? ", b" : "")
         << ((m & 2) ? ", r" : "") << "};\n  int32_t ranks[] = {" << rank
         << ", " << rank << ", " << rank << ((m & 1) ? ", 1" : "");
      if (m & 2)
        os << ", " << rank;
      os << "};\n  int64_t attrs[] = {";
      for (int i = 0; i < nattrs; ++i)
        os << (i ? ", a" : "a") << i;
      os << "};\n  disc_library_call_n(" << (k == 0 ? 1 : 2) << ", "
         << 3 + (m & 1) + ((m >> 1) & 1) << ", ops, ranks, " << nattrs
         << ", attrs);\n}\n";
    }
  }
  for (int k = 1; k <= 3; ++k) {
    os << "DISC_HIDDEN void _mlir_ciface_disc_lib_conv" << k
       << "d(void *x, void *w, void *y";
    for (int i = 0; i < 2 + 4 * k; ++i)
      os << ", int64_t a" << i;
    os << ") {\n  int64_t attrs[" << 2 + 4 * k << "] = {";
    for (int i = 0; i < 2 + 4 * k; ++i)
      os << (i ? ", a" : "a") << i;
    os << "};\n  disc_library_call(2, x, w, y, " << k + 2 << ", " << 2 + 4 * k
       << ", attrs);\n}\n";
  }
  os << "\n";
  // Run-time check messages; "{k}" stands for the k-th value.
  os << "static const char *const disc_check_messages[] = {\n";
  for (const std::string &m : checkMessages) {
    os << "  \"";
    os.write_escaped(m, /*UseHexEscapes=*/true);
    os << "\",\n";
  }
  os << "  0};\n\n"
        "DISC_HIDDEN void disc_check_failed(int64_t id, int64_t v0, "
        "int64_t v1, int64_t v2, int64_t v3) {\n"
        "  int64_t v[4] = {v0, v1, v2, v3};\n"
        "  char msg[1024];\n"
        "  size_t n = 0;\n"
        "  const char *t = id >= 0 && id < (int64_t)(sizeof "
        "disc_check_messages / sizeof *disc_check_messages) - 1\n"
        "                      ? disc_check_messages[id]\n"
        "                      : \"run-time check failed\";\n"
        "  for (; *t && n + 24 < sizeof msg; ++t) {\n"
        "    if (t[0] == '{' && t[1] >= '0' && t[1] <= '3' && t[2] == '}') {\n"
        "      n += (size_t)snprintf(msg + n, sizeof msg - n, \"%lld\",\n"
        "                            (long long)v[t[1] - '0']);\n"
        "      t += 2;\n"
        "      continue;\n"
        "    }\n"
        "    msg[n++] = *t;\n"
        "  }\n"
        "  msg[n] = 0;\n"
        "  disc_fail(1, msg);\n}\n\n";
  // Rematerialization points (disc-remat): the evict call of candidate k
  // passes its memref descriptor; the block's base pointer comes first.
  os << "DISC_HIDDEN int32_t disc_remat_regenerate(int64_t id) {\n"
        "  if (!disc_ctx->remat_regenerate)\n    return 0; /* recompute */\n"
        "  int32_t st = disc_ctx->remat_regenerate(disc_ctx->self, "
        "(int32_t)id);\n"
        "  if (st < 0)\n    longjmp(*disc_jmp, (int)-st);\n"
        "  return st;\n}\n"
        "DISC_HIDDEN void disc_remat_regenerated(int64_t id) {\n"
        "  if (disc_ctx->remat_regenerated)\n"
        "    disc_ctx->remat_regenerated(disc_ctx->self, (int32_t)id);\n}\n"
        "static void disc_remat_evict(int64_t id, void *const *desc) {\n"
        "  if (!disc_ctx->remat_evict)\n    return;\n"
        "  int32_t st = disc_ctx->remat_evict(disc_ctx->self, (int32_t)id, "
        "desc[0]);\n"
        "  if (st != 0)\n    longjmp(*disc_jmp, (int)st);\n}\n";
  for (int64_t k : rematIds)
    os << "DISC_HIDDEN void _mlir_ciface_disc_remat_evict_" << k
       << "(int64_t id, void *const *desc) {\n  disc_remat_evict(id, "
          "desc);\n}\n";
  os << "\n";
  os << "extern void _mlir_ciface_" << entryName << "(void *results";
  for (size_t i = 0; i < inputRanks.size(); ++i)
    os << ", void *in" << i;
  os << ");\n\n";
  int64_t words = 0;
  for (int64_t r : outputRanks)
    words += 3 + 2 * r;
  if (cuda)
    os << generateGpuRuntimeShims();
  os << "DISC_EXPORT int32_t disc_model_abi_version(void) {\n"
        "  return DISC_MODEL_ABI_VERSION;\n}\n\n";
  os << "static const char disc_signature[] = \"";
  os.write_escaped(signature, /*UseHexEscapes=*/true);
  os << "\";\nDISC_EXPORT const char *disc_model_signature(void) {\n"
        "  return disc_signature;\n}\n\n";
  os << "DISC_EXPORT int32_t disc_model_run(disc_ral_context *ctx, "
        "void **inputs, void **outputs) {\n"
     << "  int64_t results[" << std::max<int64_t>(words, 1) << "];\n"
     << "  disc_ral_context *saved = disc_ctx;\n"
     << "  jmp_buf *savedJmp = disc_jmp;\n"
     << "  jmp_buf jmp;\n"
     << "  disc_ctx = ctx;\n"
     << "  disc_jmp = &jmp;\n"
     << "  int status = setjmp(jmp);\n"
     << "  if (status != 0) {\n"
     << "    disc_ctx = saved;\n"
     << "    disc_jmp = savedJmp;\n"
     << "    return (int32_t)status;\n"
     << "  }\n"
     << "  _mlir_ciface_" << entryName << "(results";
  for (size_t i = 0; i < inputRanks.size(); ++i)
    os << ", inputs[" << i << "]";
  os << ");\n  disc_ctx = saved;\n  disc_jmp = savedJmp;\n";
  int64_t offset = 0;
  for (auto [i, r] : llvm::enumerate(outputRanks)) {
    os << "  memcpy(outputs[" << i << "], results + " << offset << ", "
       << 8 * (3 + 2 * r) << ");\n";
    offset += 3 + 2 * r;
  }
  os << "  return 0;\n}\n";
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

/// Runs `argv` and returns its exit status, or -1 when it could not start.
static int runProgram(ArrayRef<StringRef> argv, std::string &error) {
  return llvm::sys::ExecuteAndWait(argv[0], argv, std::nullopt, {}, 0, 0,
                                   &error);
}

LogicalResult mlir::disc::emitModelArtifact(ModuleOp module,
                                            StringRef entryName,
                                            StringRef outputPath, EmitKind kind,
                                            StringRef sanitize,
                                            TimingScope *timing, unsigned jobs,
                                            llvm::raw_ostream *codegenReport) {
  // One nested scope per phase; empty (no-op) scopes without `timing`.
  auto phase = [&](StringRef name) {
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
  for (StringRef name :
       {disc::kSignatureAttrName, disc::kMemoryAttrName, disc::kRematAttrName})
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
  translateTimer.stop();

  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine(error);
  if (!tm)
    return module.emitError(error);
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(tm->getTargetTriple());
  // Only the wrapper's entry points are exported from model.so.
  for (llvm::GlobalValue &gv : llvmModule->global_values())
    if (!gv.isDeclaration())
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

  // The compiled code goes to a temporary directory, from which model.so
  // (--emit=lib) or one relocatable object with the wrapper (--emit=obj)
  // is linked.
  SmallString<128> tmpDir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("disc-compile", tmpDir))
    return module.emitError("cannot create a temporary directory: ")
           << ec.message();
  std::string objPath = (tmpDir + "/model.o").str();
  // The module is split into `parts` partitions (whole functions and
  // globals; SplitModule externalizes locals as hidden symbols), each
  // optimized and compiled to its own object in its own thread and
  // LLVMContext, as LLVM's parallel LTO code generation does; all objects
  // are linked into model.so (--emit=lib) or one relocatable object
  // (--emit=obj).
  unsigned numFunctions = 0;
  for (llvm::Function &f : *llvmModule)
    numFunctions += !f.isDeclaration();
  unsigned parts = std::min(
      numFunctions,
      jobs ? jobs : llvm::hardware_concurrency().compute_thread_count());
  SmallVector<std::string> objPaths;
  if (parts <= 1) {
    objPaths.push_back(objPath);
    if (failed(optimize()))
      return failure();
    TimingScope codegenTimer = phase("machine code emission");
    auto out = openOutputFile(objPath, &error);
    if (!out)
      return module.emitError(error);
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, out->os(), nullptr,
                                llvm::CodeGenFileType::ObjectFile))
      return module.emitError("the target cannot emit object files");
    codegen.run(*llvmModule);
    out->keep();
  } else {
    TimingScope splitTimer = phase("split into " + std::to_string(parts) +
                                   " parts, optimize (O3) and emit in "
                                   "parallel");
    SmallVector<SmallString<0>> bitcode;
    llvm::SplitModule(
        *llvmModule, parts,
        [&](std::unique_ptr<llvm::Module> part) {
          bitcode.emplace_back();
          llvm::raw_svector_ostream os(bitcode.back());
          llvm::WriteBitcodeToFile(*part, os);
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
    llvmModule.reset();
    SmallVector<std::string> errors(bitcode.size());
    vectorized.resize(bitcode.size());
    // Target machines are created here: target registration is not
    // thread-safe.
    SmallVector<std::unique_ptr<llvm::TargetMachine>> tms;
    for (size_t i = 0; i < bitcode.size(); ++i) {
      tms.push_back(createHostTargetMachine(error));
      if (!tms.back())
        return module.emitError(error);
    }
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(parts));
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
        if (llvm::Error e = makeOptimizingTransformer(3, 0, partTm)(m->get())) {
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
  std::string wrapperPath = (tmpDir + "/wrapper.c").str();
  {
    auto out = openOutputFile(wrapperPath, &error);
    if (!out)
      return module.emitError(error);
    out->os() << generateWrapper(entryName, *signatureJson, inRanks, outRanks,
                                 checkMessages, rematIds, cuda);
    if (cuda)
      out->os() << generateDeviceConstantShims(deviceConstantFns);
    out->keep();
  }
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
  if (kind == EmitKind::Library)
    argv.push_back("-lm");
  if (status == 0)
    status = runProgram(argv, error);
  if (wrapperInput != wrapperPath)
    llvm::sys::fs::remove(wrapperInput);
  llvm::sys::fs::remove(wrapperPath);
  for (const std::string &obj : objPaths)
    llvm::sys::fs::remove(obj);
  llvm::sys::fs::remove(tmpDir);
  if (status != 0)
    return module.emitError("linking ")
           << (kind == EmitKind::Object ? "the object" : "model.so")
           << " with '" << *cc << "' failed (status " << status << ") "
           << error;
  return success();
}

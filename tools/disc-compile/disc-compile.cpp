//===- disc-compile.cpp - compile an ONNX model once into a model.so ------===//
//
// disc-compile MODEL.onnx -o MODEL.so [--target=cpu]
//              [--emit=mlir|linalg|llvm-dialect|llvm|obj|lib]
//
// Also accepts a disc-dialect `.mlir` file as input (used by lit tests).
// Exit codes: 0 ok, 1 compiler failure, 2 bad usage or bad input (malformed
// model, unsupported op).
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Passes.h"
#include "disc/Frontend/Onnx/OnnxImporter.h"
#include "disc/InitAll.h"
#include "disc/Pipelines/CpuPipeline.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required);
static cl::opt<std::string> outputPath("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::init("-"));
static cl::opt<std::string> target("target", cl::desc("Target: cpu"),
                                   cl::init("cpu"));
enum class Emit { Mlir, Linalg, LlvmDialect, Llvm, Obj, Lib };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Lib),
    cl::values(clEnumValN(Emit::Mlir, "mlir", "disc dialect after import"),
               clEnumValN(Emit::Linalg, "linalg", "after disc-lower-to-linalg"),
               clEnumValN(Emit::LlvmDialect, "llvm-dialect",
                          "MLIR LLVM dialect after lowering"),
               clEnumValN(Emit::Llvm, "llvm", "LLVM IR"),
               clEnumValN(Emit::Obj, "obj", "object file"),
               clEnumValN(Emit::Lib, "lib", "loadable model.so (default)")));

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
  cl::ParseCommandLineOptions(argc, argv, "DISC model compiler\n");
  if (target != "cpu")
    return fail(2, "unsupported --target '" + target + "' (supported: cpu)");
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

  OwningOpRef<ModuleOp> module;
  // The entry gets a name that cannot clash with a host program's `main`.
  const std::string entry = "disc_entry";
  if (llvm::StringRef(inputPath).ends_with(".mlir")) {
    module = parseSourceFile<ModuleOp>(inputPath, sourceMgr, ParserConfig(&context));
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
    module = disc::importOnnxModel(context, inputPath, options);
  }
  if (!module)
    return fail(2, "could not import '" + inputPath + "'");

  if (emit == Emit::Mlir)
    return failed(printModule(*module)) ? 1 : 0;

  std::string modelName = llvm::sys::path::stem(inputPath).str();
  FailureOr<std::string> signature =
      disc::buildSignatureJson(*module, entry, modelName);
  if (failed(signature))
    return fail(2, "could not build the model signature");

  if (auto f = module->lookupSymbol<func::FuncOp>(entry)) {
    // The signature now lives in the JSON; drop the frontend's attributes.
    for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i)
      f.setArgAttrs(i, DictionaryAttr::get(&context));
    for (unsigned i = 0, e = f.getNumResults(); i < e; ++i)
      f.setResultAttrs(i, DictionaryAttr::get(&context));
    f->setAttr("llvm.emit_c_interface", UnitAttr::get(&context));
  }
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return fail(2, "bad pass manager options");
  if (emit == Emit::Linalg)
    pm.addPass(disc::createDiscLowerToLinalg());
  else
    disc::buildDiscCpuPipeline(pm);
  if (failed(pm.run(*module)))
    return fail(1, "lowering failed");
  if (emit == Emit::Linalg || emit == Emit::LlvmDialect)
    return failed(printModule(*module)) ? 1 : 0;

  disc::EmitKind kind = emit == Emit::Llvm  ? disc::EmitKind::LLVM
                        : emit == Emit::Obj ? disc::EmitKind::Object
                                            : disc::EmitKind::Library;
  if (outputPath == "-" && kind != disc::EmitKind::LLVM)
    return fail(2, "-o is required for --emit=obj and --emit=lib");
  if (failed(disc::emitModelArtifact(*module, entry, *signature, outputPath,
                                     kind)))
    return fail(1, "could not write '" + outputPath + "'");
  return 0;
}

//===- ModelPasses.cpp - attach the parts of a model's signature ----------===//
//
// The disc-attach-* passes (disc/Target/Passes.td): `--dim` ranges as
// symbolic dims, and the signature, memory model and rematerialization
// candidates of the entry as module attributes that the model emitter
// serializes (disc/Target/Signature.h).
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/CudaLibraryCalls.h"
#include "disc/Target/Passes.h"
#include "disc/Target/Signature.h"
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/Remat.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCATTACHDIMRANGES
#define GEN_PASS_DEF_DISCATTACHMEMORYMODEL
#define GEN_PASS_DEF_DISCATTACHREMAT
#define GEN_PASS_DEF_DISCATTACHSIGNATURE
#define GEN_PASS_DEF_DISCREPORTLIBRARYCALLS
#include "disc/Target/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

/// The dim names of the entry's `disc.dims` argument attributes, in order
/// of first appearance.
static SmallVector<std::string> entryDimNames(func::FuncOp f) {
  SmallVector<std::string> names;
  llvm::StringSet<> seen;
  for (unsigned i = 0, e = f ? f.getNumArguments() : 0; i < e; ++i)
    if (auto dims = f.getArgAttrOfType<ArrayAttr>(i, "disc.dims"))
      for (Attribute d : dims)
        if (auto s = dyn_cast<StringAttr>(d))
          if (seen.insert(s.getValue()).second)
            names.push_back(s.str());
  return names;
}

struct AttachDimRangesPass
    : public disc::impl::DiscAttachDimRangesBase<AttachDimRangesPass> {
  using DiscAttachDimRangesBase::DiscAttachDimRangesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto f = module.lookupSymbol<func::FuncOp>(entry);
    SmallVector<std::string> known = entryDimNames(f);
    llvm::StringSet<> knownSet;
    for (const std::string &k : known)
      knownSet.insert(k);
    // Later entries for a name replace earlier ones.
    llvm::StringMap<disc::DimRange> ranges;
    for (const std::string &spec : dims) {
      llvm::Expected<disc::NamedDimRange> r = disc::parseDimRange(spec);
      if (!r) {
        module.emitError(llvm::toString(r.takeError()));
        return signalPassFailure();
      }
      if (!knownSet.contains(r->name)) {
        module.emitError("unknown dim name '")
            << r->name << "' in --dim; known: "
            << (known.empty() ? std::string("(none)")
                              : llvm::join(known, ", "));
        return signalPassFailure();
      }
      ranges[r->name] = r->range;
    }
    OpBuilder b(&getContext());
    b.setInsertionPointToStart(module.getBody());
    unsigned n = 0;
    for (auto &r : ranges)
      disc_shape::SymbolicDimOp::create(
          b, module.getLoc(), b.getStringAttr("dim" + std::to_string(n++)),
          b.getStringAttr(r.getKey()), b.getI64IntegerAttr(r.getValue().min),
          b.getI64IntegerAttr(*r.getValue().max),
          r.getValue().likely ? b.getI64IntegerAttr(*r.getValue().likely)
                              : IntegerAttr(),
          b.getUnitAttr(), UnitAttr());
    if (!forceDynamic)
      return;
    // --force-dynamic is the conformance mode where any stored input must
    // run through one artifact, empty tensors included: its dims (without a
    // range) may be 0, while a dim an ONNX model names is at least 1 by
    // default (docs/symbolic-shapes.md).
    llvm::StringSet<> ranged;
    for (auto dim : module.getOps<disc_shape::SymbolicDimOp>())
      if (dim.getName())
        ranged.insert(*dim.getName());
    b.setInsertionPointToStart(module.getBody());
    n = 0;
    for (const std::string &name : known)
      if (ranged.insert(name).second)
        disc_shape::SymbolicDimOp::create(
            b, module.getLoc(), b.getStringAttr("forced" + std::to_string(n++)),
            b.getStringAttr(name), b.getI64IntegerAttr(0), IntegerAttr(),
            IntegerAttr(), b.getUnitAttr(), UnitAttr());
  }
};

struct AttachMemoryModelPass
    : public disc::impl::DiscAttachMemoryModelBase<AttachMemoryModelPass> {
  using DiscAttachMemoryModelBase::DiscAttachMemoryModelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<llvm::json::Object> memory = disc::buildMemoryJson(module, entry);
    if (failed(memory))
      return signalPassFailure();
    module->setAttr(disc::kMemoryAttrName,
                    disc::jsonToAttribute(
                        &getContext(), llvm::json::Value(std::move(*memory))));
  }
};

struct AttachRematPass
    : public disc::impl::DiscAttachRematBase<AttachRematPass> {
  using DiscAttachRematBase::DiscAttachRematBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    disc::RematOptions options;
    options.maxOps = maxOps;
    FailureOr<llvm::json::Object> remat =
        disc::applyRematToEntry(module, entry, options);
    if (failed(remat))
      return signalPassFailure();
    module->setAttr(disc::kRematAttrName,
                    disc::jsonToAttribute(
                        &getContext(), llvm::json::Value(std::move(*remat))));
  }
};

struct AttachSignaturePass
    : public disc::impl::DiscAttachSignatureBase<AttachSignaturePass> {
  using DiscAttachSignatureBase::DiscAttachSignatureBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<llvm::json::Object> sig =
        disc::buildSignature(module, entry, modelName);
    if (failed(sig))
      return signalPassFailure();
    if (target == "cuda") {
      sig->try_emplace("target", "cuda");
      sig->try_emplace("gpu_arch", gpuArch.getValue());
    }
    module->setAttr(
        disc::kSignatureAttrName,
        disc::jsonToAttribute(ctx, llvm::json::Value(std::move(*sig))));
    auto f = module.lookupSymbol<func::FuncOp>(entry);
    if (!f)
      return;
    // The signature now lives in `disc.signature`; drop the frontend's
    // attributes but the dim names: they match the --dim ranges to the input
    // dims in the lowering's shape analysis.
    for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i) {
      Attribute dims = f.getArgAttr(i, "disc.dims");
      f.setArgAttrs(i, DictionaryAttr::get(ctx));
      if (dims)
        f.setArgAttr(i, "disc.dims", dims);
    }
    for (unsigned i = 0, e = f.getNumResults(); i < e; ++i)
      f.setResultAttrs(i, DictionaryAttr::get(ctx));
    f->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  }
};

struct ReportLibraryCallsPass
    : public disc::impl::DiscReportLibraryCallsBase<ReportLibraryCallsPass> {
  using DiscReportLibraryCallsBase::DiscReportLibraryCallsBase;

  void runOnOperation() override {
    if (auto f = getOperation().lookupSymbol<func::FuncOp>(entry))
      disc::reportCudaLibraryCalls(f, llvm::errs());
    markAllAnalysesPreserved();
  }
};

} // namespace

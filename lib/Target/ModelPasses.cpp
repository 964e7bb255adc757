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
#include "disc/Target/RuntimeSymbols.h"
#include "disc/Target/Signature.h"
#include "disc/Transforms/InPlaceState.h"
#include "disc/Transforms/MemoryModel.h"
#include "disc/Transforms/Remat.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
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

/// Sets the module attribute `name` of `module` to `json`, or fails when
/// building it failed (the error is reported).
static LogicalResult attachJson(ModuleOp module, StringRef name,
                                FailureOr<llvm::json::Object> json) {
  if (failed(json))
    return failure();
  module->setAttr(name,
                  disc::jsonToAttribute(module.getContext(),
                                        llvm::json::Value(std::move(*json))));
  return success();
}

struct AttachDimRangesPass
    : public disc::impl::DiscAttachDimRangesBase<AttachDimRangesPass> {
  using DiscAttachDimRangesBase::DiscAttachDimRangesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto f = module.lookupSymbol<func::FuncOp>(entry);
    llvm::Expected<llvm::StringMap<disc::DimRange>> ranges =
        disc::parseEntryDimRanges(f, dims);
    if (!ranges) {
      module.emitError(llvm::toString(ranges.takeError()));
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    b.setInsertionPointToStart(module.getBody());
    unsigned n = 0;
    for (auto &r : *ranges)
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
    for (const std::string &name : disc::getEntryDimNames(f))
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
    if (failed(attachJson(getOperation(), disc::kMemoryAttrName,
                          disc::buildMemoryJson(getOperation(), entry,
                                                /*stackPlacement=*/true,
                                                libraryTemporaries))))
      return signalPassFailure();
    tagProgramPoints();
  }

  /// Records in each top-level op's location its index in the memory
  /// model's order (MemoryModel::programOrder, the order of the "remat"
  /// live bytes), as `disc.op` metadata of a FusedLoc: inside the frontend's
  /// `NameLoc(node, child)` (the node name stays the outer NameLoc), else
  /// around the location. The lowering keeps locations, so the trace
  /// points of the kernels know their program point
  /// (disc-insert-trace-points).
  void tagProgramPoints() {
    auto f = getOperation().lookupSymbol<func::FuncOp>(entry);
    if (!f || f.getBody().empty())
      return;
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    int64_t i = 0;
    for (Operation &op : f.getBody().front().without_terminator()) {
      auto meta = b.getDictionaryAttr(
          b.getNamedAttr(disc::kOpIndexLocKey, b.getI64IntegerAttr(i++)));
      Location loc = op.getLoc();
      if (auto n = dyn_cast<NameLoc>(loc))
        op.setLoc(NameLoc::get(n.getName(),
                               FusedLoc::get({n.getChildLoc()}, meta, ctx)));
      else
        op.setLoc(FusedLoc::get({loc}, meta, ctx));
    }
  }
};

struct AttachRematPass
    : public disc::impl::DiscAttachRematBase<AttachRematPass> {
  using DiscAttachRematBase::DiscAttachRematBase;

  void runOnOperation() override {
    disc::RematOptions options;
    options.maxOps = maxOps;
    options.libraryTemporaries = libraryTemporaries;
    if (failed(attachJson(
            getOperation(), disc::kRematAttrName,
            disc::applyRematToEntry(getOperation(), entry, options))))
      signalPassFailure();
  }
};

struct AttachSignaturePass
    : public disc::impl::DiscAttachSignatureBase<AttachSignaturePass> {
  using DiscAttachSignatureBase::DiscAttachSignatureBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto f = module.lookupSymbol<func::FuncOp>(entry);
    if (!f) {
      module.emitError("no entry function '") << entry << "'";
      return signalPassFailure();
    }
    FailureOr<llvm::json::Object> sig = disc::buildSignature(f, modelName);
    if (succeeded(sig) && target == "cuda") {
      sig->try_emplace("target", "cuda");
      sig->try_emplace("gpu_arch", gpuArch.getValue());
    }
    if (failed(attachJson(module, disc::kSignatureAttrName, std::move(sig))))
      return signalPassFailure();
    // The signature now lives in `disc.signature`; drop the frontend's
    // attributes but the dim names: they match the --dim ranges to the input
    // dims in the lowering's shape analysis.
    for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i) {
      Attribute dims = f.getArgAttr(i, "disc.dims");
      f.setArgAttrs(i, DictionaryAttr::get(ctx));
      if (dims)
        f.setArgAttr(i, "disc.dims", dims);
    }
    // ... and the state updates the lowering writes in place
    // (disc/Transforms/InPlaceState.h).
    for (unsigned i = 0, e = f.getNumResults(); i < e; ++i) {
      Attribute inPlace = f.getResultAttr(i, disc::kInPlaceResultAttrName);
      f.setResultAttrs(i, DictionaryAttr::get(ctx));
      if (inPlace)
        f.setResultAttr(i, disc::kInPlaceResultAttrName, inPlace);
    }
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

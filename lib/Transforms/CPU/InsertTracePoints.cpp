//===- InsertTracePoints.cpp - disc-insert-trace-points -------------------===//
//
// Brackets every kernel call and library call of the model's functions
// with `disc_trace_op(id, 0)` / `disc_trace_op(id, 1)` and records, per id,
// where the call came from (`disc.trace_points`): the ONNX node and op type
// of its location and the op's index in the memory model's order (the
// location metadata disc-attach-memory-model adds). The runtime turns the
// calls into the slices of a trace (docs/memory.md, "Timeline").
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCINSERTTRACEPOINTS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

/// What a location says about the op it belongs to.
struct LocInfo {
  std::string name;
  std::string opType;
  int64_t op = -1;
};

/// Fills `info` from `loc`: the first NameLoc gives the node name (its
/// child NameLoc, the frontend's `NameLoc(node, NameLoc(op type, file))`,
/// the op type) and the first `disc.op` metadata the op index.
void readLoc(Location loc, LocInfo &info) {
  if (auto n = dyn_cast<NameLoc>(loc)) {
    if (info.name.empty()) {
      info.name = n.getName().str();
      Location child = n.getChildLoc();
      if (auto fused = dyn_cast<FusedLoc>(child))
        if (!fused.getLocations().empty())
          child = fused.getLocations().front();
      if (auto type = dyn_cast<NameLoc>(child))
        info.opType = type.getName().str();
    }
    readLoc(n.getChildLoc(), info);
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto dict = dyn_cast_or_null<DictionaryAttr>(fused.getMetadata()))
      if (auto index = dict.getAs<IntegerAttr>(disc::kOpIndexLocKey))
        if (info.op < 0)
          info.op = index.getInt();
    for (Location l : fused.getLocations())
      readLoc(l, info);
    return;
  }
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    readLoc(site.getCallee(), info);
}

struct InsertTracePointsPass
    : public disc::impl::DiscInsertTracePointsBase<InsertTracePointsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<func::CallOp> calls;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (f.isExternal() || f.getName().starts_with(disc::kKernelPrefix))
        continue;
      f.walk([&](func::CallOp call) {
        StringRef callee = call.getCallee();
        if (callee.starts_with(disc::kKernelPrefix) ||
            callee.starts_with(disc::kLibraryCallPrefix))
          calls.push_back(call);
      });
    }
    if (calls.empty())
      return;
    OpBuilder b(ctx);
    Type i64 = b.getI64Type();
    auto fnType = b.getFunctionType({i64, i64}, {});
    if (!module.lookupSymbol<func::FuncOp>(disc::kTraceOpFn)) {
      b.setInsertionPointToStart(module.getBody());
      auto decl =
          func::FuncOp::create(b, module.getLoc(), disc::kTraceOpFn, fnType);
      decl.setPrivate();
    }
    SmallVector<Attribute> table;
    for (auto [id, call] : llvm::enumerate(calls)) {
      LocInfo info;
      readLoc(call.getLoc(), info);
      bool library = call.getCallee().starts_with(disc::kLibraryCallPrefix);
      if (info.name.empty())
        info.name = call.getCallee().str();
      table.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name", b.getStringAttr(info.name)),
          b.getNamedAttr("op_type", b.getStringAttr(info.opType)),
          b.getNamedAttr("kind",
                         b.getStringAttr(library ? "library" : "kernel")),
          b.getNamedAttr("op", b.getI64IntegerAttr(info.op)),
      }));
      Location loc = call.getLoc();
      auto emit = [&](int64_t phase) {
        Value idv = arith::ConstantOp::create(
            b, loc, b.getI64IntegerAttr(static_cast<int64_t>(id)));
        Value ph =
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(phase));
        func::CallOp::create(b, loc, disc::kTraceOpFn, TypeRange{},
                             ValueRange{idv, ph});
      };
      b.setInsertionPoint(call);
      emit(0);
      b.setInsertionPointAfter(call);
      emit(1);
    }
    module->setAttr(disc::kTracePointsAttr, b.getArrayAttr(table));
  }
};

} // namespace

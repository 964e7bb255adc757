//===- RuntimeChecks.cpp - Run-time contract checks emitted by the lowering
//===//

#include "RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::disc;

/// The NameLocs of `loc`, outermost first: the importer gives every op of
/// an ONNX node `NameLoc(node name, NameLoc(op type, file))`.
static SmallVector<StringRef, 2> namesOf(Location loc) {
  SmallVector<StringRef, 2> names;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l))
      names.push_back(n.getName().getValue());
    return names.size() == 2 ? WalkResult::interrupt() : WalkResult::advance();
  });
  return names;
}

std::string mlir::disc::nodeNameOf(Location loc) {
  SmallVector<StringRef, 2> names = namesOf(loc);
  return names.empty() ? std::string() : names[0].str();
}

RuntimeChecks::RuntimeChecks(ModuleOp module) : module(module) {
  if (auto arr = module->getAttrOfType<ArrayAttr>(kCheckMessagesAttr))
    messages.assign(arr.begin(), arr.end());
  if (auto n = module->getAttrOfType<IntegerAttr>(kChecksDroppedAttr))
    dropped = n.getInt();
}

static func::FuncOp getOrCreateFailFn(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(kCheckFailedFn))
    return f;
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> args(1 + kMaxCheckValues, b.getI64Type());
  auto f = func::FuncOp::create(b, module.getLoc(), kCheckFailedFn,
                                b.getFunctionType(args, {}));
  f.setPrivate();
  return f;
}

void RuntimeChecks::check(OpBuilder &b, Location loc, Value ok,
                          StringRef onnxOp, StringRef what, ValueRange values) {
  assert(values.size() <= kMaxCheckValues && "too many check values");
  // Bodies built in a scratch module (type probing) get no check; the body
  // of an op under construction (its region not yet owned by an op) does.
  Block *block = b.getInsertionBlock();
  Operation *top = block ? block->getParentOp() : nullptr;
  while (top && top->getParentOp())
    top = top->getParentOp();
  if (top && isa<ModuleOp>(top) && top != module.getOperation())
    return;
  if (matchPattern(ok, m_One())) {
    ++dropped;
    return;
  }
  SmallVector<StringRef, 2> names = namesOf(loc);
  std::string node = names.empty() ? std::string() : names[0].str();
  std::string text = names.size() == 2 ? names[1].str() : onnxOp.str();
  if (!node.empty())
    text += (text.empty() ? "node '" : " node '") + node + "'";
  text += (text.empty() ? "" : ": ") + what.str();
  int64_t id = messages.size();
  messages.push_back(b.getStringAttr(text));
  func::FuncOp fn = getOrCreateFailFn(module);

  Value notOk = arith::XOrIOp::create(
      b, loc, ok, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  scf::IfOp::create(b, loc, notOk, [&](OpBuilder &tb, Location tl) {
    SmallVector<Value> args;
    args.push_back(arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(id)));
    for (Value v : values) {
      if (v.getType().isIndex())
        v = arith::IndexCastOp::create(tb, tl, tb.getI64Type(), v);
      else if (v.getType().getIntOrFloatBitWidth() < 64)
        v = arith::ExtSIOp::create(tb, tl, tb.getI64Type(), v);
      args.push_back(v);
    }
    while (args.size() < 1 + kMaxCheckValues)
      args.push_back(
          arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(0)));
    func::CallOp::create(tb, tl, fn, args);
    scf::YieldOp::create(tb, tl);
  });
}

void RuntimeChecks::finish() {
  Builder b(module.getContext());
  module->setAttr(kCheckMessagesAttr, b.getArrayAttr(messages));
  module->setAttr(kChecksDroppedAttr, b.getI64IntegerAttr(dropped));
}

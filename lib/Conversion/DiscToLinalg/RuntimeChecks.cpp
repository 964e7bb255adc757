//===- RuntimeChecks.cpp - Run-time contract checks emitted by the lowering ===//

#include "RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::disc;

std::string mlir::disc::nodeNameOf(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
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
                          StringRef onnxOp, StringRef what,
                          ValueRange values) {
  assert(values.size() <= kMaxCheckValues && "too many check values");
  if (matchPattern(ok, m_One())) {
    ++dropped;
    return;
  }
  std::string node = nodeNameOf(loc);
  std::string text = onnxOp.str();
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
      args.push_back(arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(0)));
    func::CallOp::create(tb, tl, fn, args);
    scf::YieldOp::create(tb, tl);
  });
}

void RuntimeChecks::finish() {
  Builder b(module.getContext());
  module->setAttr(kCheckMessagesAttr, b.getArrayAttr(messages));
  module->setAttr(kChecksDroppedAttr, b.getI64IntegerAttr(dropped));
}

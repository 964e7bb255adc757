//===- WidenNarrowFloats.cpp - disc-widen-narrow-floats -------------------===//
//
// Reductions, products and pooling on f16/bf16 compute in f32: the float
// operands are converted to f32 and the narrow results come from an f32
// copy of the op, converted back (Passes.td).
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCWIDENNARROWFLOATS
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

bool isNarrowFloat(Type t) {
  Type e = getElementTypeOrSelf(t);
  return e.isF16() || e.isBF16();
}

/// `t` with an f32 element type when it is a tensor of f16/bf16.
Type widened(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  if (!tt || !isNarrowFloat(tt))
    return t;
  return tt.clone(Float32Type::get(t.getContext()));
}

struct WidenNarrowFloatsPass
    : disc::impl::DiscWidenNarrowFloatsBase<WidenNarrowFloatsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](DiscOpInterface op) {
      LoweringFamily f = op.getLoweringFamily();
      if (f != LoweringFamily::Linear && f != LoweringFamily::Pooling &&
          f != LoweringFamily::Reduction)
        return;
      Operation *o = op.getOperation();
      if (llvm::any_of(o->getOperandTypes(), isNarrowFloat) ||
          llvm::any_of(o->getResultTypes(), isNarrowFloat))
        ops.push_back(o);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      for (OpOperand &use : op->getOpOperands()) {
        Type w = widened(use.get().getType());
        if (w != use.get().getType())
          use.set(ConvertOp::create(b, op->getLoc(), w, use.get()));
      }
      b.setInsertionPointAfter(op);
      for (OpResult r : op->getResults()) {
        Type narrow = r.getType();
        Type w = widened(narrow);
        if (w == narrow)
          continue;
        r.setType(w);
        auto back = ConvertOp::create(b, op->getLoc(), narrow, r);
        r.replaceAllUsesExcept(back, back);
      }
      ++numWidened;
    }
  }
};

} // namespace

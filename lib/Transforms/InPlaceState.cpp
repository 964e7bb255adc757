//===- InPlaceState.cpp - disc-mark-in-place-state ------------------------===//
//
// The state updates of a training step that are written into the state's
// own buffer (InPlaceState.h; docs/training.md, "State").
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/InPlaceState.h"

#include "disc/Conversion/LibraryCallAttrs.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/TrainingStep.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCMARKINPLACESTATE
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

SmallVector<Operation *> mlir::disc::stateReaders(const StateUpdate &u) {
  Block *body = u.arg.getOwner();
  SmallVector<Operation *> readers;
  llvm::DenseSet<Operation *> seen;
  SmallVector<Value> work = {u.arg};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *top = body->findAncestorOpInBlock(*use.getOwner());
      if (!top || top == body->getTerminator())
        continue;
      // A view's readers read the state's buffer too.
      if (isa<DynamicReshapeOp, ExpandOp, SliceOp>(top) &&
          top == use.getOwner())
        for (Value r : top->getResults())
          work.push_back(r);
      Operation *root = getFusionRoot(top);
      if (root != u.op && seen.insert(root).second)
        readers.push_back(root);
    }
  }
  return readers;
}

Operation *mlir::disc::accumulatingCall(Operation *op, BlockArgument arg) {
  auto idx = op->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr);
  if (!idx || !isa<AddOp, SubOp>(op) || op->getNumOperands() != 2 ||
      op->getOperand(1 - idx.getInt()) != arg)
    return nullptr;
  Operation *mul = op->getOperand(idx.getInt()).getDefiningOp();
  auto mulIdx =
      mul ? mul->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr) : nullptr;
  if (!mulIdx || !isa<MulOp>(mul))
    return nullptr;
  Operation *call = mul->getOperand(mulIdx.getInt()).getDefiningOp();
  auto flags =
      call ? call->getAttrOfType<DenseI64ArrayAttr>(kPostOpAttrsAttr) : nullptr;
  if (!isa_and_nonnull<DotGeneralOp>(call) || !flags || flags.empty() ||
      !(flags[0] & kMatmulScaleFlag))
    return nullptr;
  return call;
}

Operation *mlir::disc::scaledGradientDot(const StateUpdate &u) {
  Operation *op = u.op;
  if (!isa<AddOp, SubOp>(op) || op->getNumOperands() != 2)
    return nullptr;
  unsigned ri = op->getOperand(0) == u.arg ? 0 : 1;
  if (op->getOperand(ri) != u.arg || op->getOperand(1 - ri) == u.arg ||
      (isa<SubOp>(op) && ri != 0))
    return nullptr;
  Value scaled = op->getOperand(1 - ri);
  auto mul = scaled.getDefiningOp<MulOp>();
  if (!mul || !scaled.hasOneUse() || mul->getBlock() != op->getBlock())
    return nullptr;
  for (unsigned i = 0; i < 2; ++i) {
    auto dot = mul->getOperand(i).getDefiningOp<DotGeneralOp>();
    DenseElementsAttr c;
    if (!dot || !dot->getResult(0).hasOneUse() ||
        dot->getBlock() != op->getBlock() ||
        !matchPattern(mul->getOperand(1 - i), m_Constant(&c)) || !c.isSplat() ||
        !c.getElementType().isF32() || dot.getType() != scaled.getType())
      continue;
    return dot;
  }
  return nullptr;
}

SmallVector<StateUpdate> mlir::disc::findStateUpdates(func::FuncOp func) {
  SmallVector<StateUpdate> updates;
  if (!func.getBody().hasOneBlock())
    return updates;
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  llvm::DenseMap<StringRef, BlockArgument> stateByName;
  for (BlockArgument a : func.getArguments())
    if (func.getArgAttr(a.getArgNumber(), kStateAttrName))
      if (auto n =
              func.getArgAttrOfType<StringAttr>(a.getArgNumber(), "disc.name"))
        stateByName[n.getValue()] = a;
  llvm::DenseMap<Value, unsigned> returned;
  for (Value v : ret->getOperands())
    ++returned[v];
  llvm::DenseMap<BlockArgument, unsigned> updateCount;
  SmallVector<StateUpdate> candidates;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, kStateUpdateAttrName);
    if (!name)
      continue;
    BlockArgument arg = stateByName.lookup(name.getValue());
    if (!arg)
      continue;
    ++updateCount[arg];
    Value v = ret->getOperand(i);
    Operation *def = v.getDefiningOp();
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!def || def->getBlock() != &body || def->getNumResults() != 1 ||
        !def->hasTrait<OpTrait::disc::Elementwise>() || isFusedProducer(def) ||
        (def->hasAttr(kFusedIntoCallAttr) && !accumulatingCall(def, arg)) ||
        !type || !type.hasStaticShape() || type != arg.getType() ||
        returned.lookup(v) != 1 || returned.lookup(arg) != 0)
      continue;
    candidates.push_back({def, i, arg});
  }
  for (const StateUpdate &u : candidates) {
    if (updateCount.lookup(u.arg) != 1)
      continue;
    // The ops that depend on the update (top-level, by fusion root).
    llvm::DenseSet<Operation *> after;
    SmallVector<Operation *> work = {u.op};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      for (Value r : op->getResults())
        for (Operation *user : r.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (top && top != ret && after.insert(top).second)
            work.push_back(top);
        }
    }
    bool cycle = llvm::any_of(stateReaders(u), [&](Operation *r) {
      return after.contains(r) || r == u.op;
    });
    if (!cycle)
      updates.push_back(u);
  }
  return updates;
}

namespace {
struct MarkInPlaceStatePass
    : public disc::impl::DiscMarkInPlaceStateBase<MarkInPlaceStatePass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp func) {
      if (!func.getBody().hasOneBlock())
        return;
      Block &body = func.getBody().front();
      llvm::DenseMap<Operation *, unsigned> position;
      for (auto [i, op] : llvm::enumerate(body.without_terminator()))
        position[&op] = i;
      for (const StateUpdate &u : findStateUpdates(func)) {
        unsigned at = position.lookup(u.op);
        if (llvm::any_of(stateReaders(u),
                         [&](Operation *r) { return position.lookup(r) > at; }))
          continue;
        OpBuilder b(func.getContext());
        IntegerAttr index = b.getI64IntegerAttr(u.arg.getArgNumber());
        u.op->setAttr(kInPlaceStateAttrName, index);
        func.setResultAttr(u.result, kInPlaceResultAttrName, index);
        // A MatMul call computing the update accumulates into the state's
        // buffer instead of reading it as a residual operand.
        if (Operation *call = accumulatingCall(u.op, u.arg)) {
          SmallVector<int64_t> attrs(
              call->getAttrOfType<DenseI64ArrayAttr>(kPostOpAttrsAttr)
                  .asArrayRef());
          attrs[0] = (attrs[0] & ~int64_t(2)) | kMatmulAccumulateFlag;
          call->setAttr(kPostOpAttrsAttr, b.getDenseI64ArrayAttr(attrs));
        }
      }
    });
  }
};
} // namespace

//===- RegenerateInPlace.cpp - disc-regenerate-in-place -------------------===//
//
// A rematerialization regenerate point (disc-remat) computes the evicted
// value again and copies it into the buffer the later uses read. Where
// disc-remat marked that copy (the recompute ends in an elementwise op that
// lowers to one loop nest), the loop nest writes the buffer directly: its
// `tensor.empty` destination is replaced by the buffer, so one-shot
// bufferization computes the value in place and the copy folds away. The
// recompute points of the memory model leave that result out, so a marked
// copy that cannot be rewritten is an error, never a silent difference
// between predicted and measured peak.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "disc/Transforms/Remat.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCREGENERATEINPLACE
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Makes the loop nest that computes `copy`'s source write its destination;
/// an error when the source is not the only result of a linalg.generic
/// whose destination is a `tensor.empty` of the same type read by nothing
/// else.
static LogicalResult
computeInDestination(bufferization::MaterializeInDestinationOp copy) {
  auto fail = [&](const Twine &why) {
    return copy.emitError("disc-regenerate-in-place: ") << why;
  };
  auto generic = copy.getSource().getDefiningOp<linalg::GenericOp>();
  if (!generic || generic->getNumResults() != 1 ||
      generic->getBlock() != copy->getBlock())
    return fail("the recomputed value is not computed by one loop nest");
  OpOperand *init = generic.getDpsInitOperand(0);
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  if (!empty || !empty->hasOneUse())
    return fail("the loop nest does not write a fresh destination");
  Value dest = copy.getDest();
  if (dest.getType() != empty.getType())
    return fail("the destination's type differs from the loop nest's");
  // The payload must not read the destination's initial contents.
  if (generic.payloadUsesValueFromOperand(init))
    return fail("the loop nest reads its destination");
  init->set(dest);
  empty->erase();
  copy->removeAttr(disc::kRegenerateInPlaceAttr);
  return success();
}

namespace {
struct RegenerateInPlacePass
    : public disc::impl::DiscRegenerateInPlaceBase<RegenerateInPlacePass> {
  void runOnOperation() override {
    SmallVector<bufferization::MaterializeInDestinationOp> marked;
    getOperation().walk([&](bufferization::MaterializeInDestinationOp op) {
      if (op->hasAttr(disc::kRegenerateInPlaceAttr))
        marked.push_back(op);
    });
    for (auto copy : marked)
      if (failed(computeInDestination(copy)))
        return signalPassFailure();
  }
};
} // namespace

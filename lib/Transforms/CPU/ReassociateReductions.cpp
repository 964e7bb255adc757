//===- ReassociateReductions.cpp - disc-reassociate-reductions ------------===//
//
// Allows reassociation (and contraction) on the combiner of every float
// reduction: the op of a reduction generic's body that reads the output
// block argument (the accumulator). Without it LLVM keeps a sum or max
// over the reduced dim a scalar chain; with it the loop vectorizer splits
// it into vector lanes and combines them at the end, which changes the
// summation order only (the e2e tolerances hold, docs/performance.md).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCREASSOCIATEREDUCTIONS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Adds `reassoc` and `contract` to the fast-math flags of the float ops of
/// `g`'s body that read an accumulator (an output block argument).
static void allowReassociation(linalg::GenericOp g) {
  if (g.getNumReductionLoops() == 0)
    return;
  Block &body = g.getRegion().front();
  for (BlockArgument acc : body.getArguments().drop_front(g.getNumDpsInputs()))
    for (Operation *user : acc.getUsers())
      if (auto fm = dyn_cast<arith::ArithFastMathInterface>(user))
        if (isa<FloatType>(acc.getType()))
          user->setAttr(
              fm.getFastMathAttrName(),
              arith::FastMathFlagsAttr::get(
                  user->getContext(), fm.getFastMathFlagsAttr().getValue() |
                                          arith::FastMathFlags::reassoc |
                                          arith::FastMathFlags::contract));
}

namespace {
struct ReassociateReductionsPass
    : public disc::impl::DiscReassociateReductionsBase<
          ReassociateReductionsPass> {
  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp g) { allowReassociation(g); });
  }
};
} // namespace

//===- FuseMarkedProducers.cpp - disc-fuse-marked-producers ---------------===//
//
// Fuses every linalg.generic tagged by disc-fusion (Fusion.h) into its
// single consumer with linalg's elementwise fusion, last producer first,
// so that a chain folds into one loop nest whatever the consumer became.
// The memory model already counts the producer's result as never stored:
// a tagged generic that cannot be fused is a compiler bug, reported as an
// error rather than left to break the predicted peak.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "disc/Transforms/Fusion.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCFUSEMARKEDPRODUCERS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Fuses the tagged `producer` into its single consumer; an error when it
/// has several uses or linalg cannot fuse it.
static LogicalResult fuseIntoConsumer(RewriterBase &rewriter,
                                      linalg::GenericOp producer) {
  Value r = producer->getResult(0);
  // Sizes the lowering read from the result (broadcast checks) come
  // from the destination instead, which has the same shape.
  Value init = producer.getDpsInitOperand(0)->get();
  for (OpOperand &u : llvm::make_early_inc_range(r.getUses()))
    if (auto dim = dyn_cast<tensor::DimOp>(u.getOwner())) {
      rewriter.setInsertionPoint(dim);
      rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, init, dim.getIndex());
    }
  if (!r.hasOneUse())
    return producer.emitError("disc-fusion: fused producer has ")
           << std::distance(r.use_begin(), r.use_end()) << " uses";
  OpOperand &use = *r.use_begin();
  Operation *consumer = use.getOwner();
  if (!linalg::areElementwiseOpsFusable(&use))
    return producer.emitError("disc-fusion: producer cannot be fused into ")
           << consumer->getName();
  rewriter.setInsertionPoint(consumer);
  FailureOr<linalg::ElementwiseOpFusionResult> fused =
      linalg::fuseElementwiseOps(rewriter, &use);
  if (failed(fused))
    return producer.emitError("disc-fusion: linalg fusion failed");
  for (auto [orig, replacement] : fused->replacements)
    rewriter.replaceUsesWithIf(orig, replacement, [&](OpOperand &u) {
      return u.getOwner() != producer && u.getOwner() != consumer;
    });
  rewriter.eraseOp(consumer);
  if (producer->use_empty())
    rewriter.eraseOp(producer);
  return success();
}

namespace {
struct FuseMarkedProducersPass
    : public disc::impl::DiscFuseMarkedProducersBase<FuseMarkedProducersPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> marked;
    getOperation().walk([&](linalg::GenericOp g) {
      if (disc::isFusedProducer(g))
        marked.push_back(g);
    });
    // Last producer first: a chain folds into its final consumer.
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp producer : llvm::reverse(marked))
      if (failed(fuseIntoConsumer(rewriter, producer)))
        return signalPassFailure();
  }
};
} // namespace

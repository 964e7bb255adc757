//===- FuseMarkedProducers.cpp - disc-fuse-marked-producers ---------------===//
//
// Fuses every linalg.generic tagged by disc-fusion (Fusion.h) into its
// single consumer with linalg's elementwise fusion, last producer first,
// so that a chain folds into one loop nest whatever the consumer became;
// into the element read (`tensor.extract`) of a consumer that reads its
// input in place (a depthwise convolution), by computing the element
// there.
// The memory model already counts the producer's result as never stored:
// a tagged generic that cannot be fused is a compiler bug, reported as an
// error rather than left to break the predicted peak.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "disc/Transforms/Fusion.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCFUSEMARKEDPRODUCERS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Fuses elementwise `producer` into `read`, a `tensor.extract` of its
/// result in the body of its consumer (a window op that reads its input in
/// place, e.g. a depthwise convolution): each input of the producer is
/// read at the position its indexing map gives for the extracted indices,
/// and the producer's body, cloned before `read`, computes the element. An
/// error when the producer is not such a generic: parallel loops, an
/// identity result map, input maps of loop dims and constants, a body that
/// does not read its destination.
static LogicalResult fuseIntoExtract(RewriterBase &rewriter,
                                     linalg::GenericOp producer,
                                     tensor::ExtractOp read) {
  auto fail = [&](const Twine &why) {
    return producer.emitError("disc-fusion: cannot fuse into an element "
                              "read: ")
           << why;
  };
  if (producer.getNumDpsInits() != 1 ||
      producer.getNumParallelLoops() != producer.getNumLoops())
    return fail("not one result over parallel loops");
  if (!producer.getIndexingMapMatchingResult(producer->getResult(0))
           .isIdentity())
    return fail("the result map is not the identity");
  Block &body = producer.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return fail("the body reads the destination");
  ValueRange at = read.getIndices();
  rewriter.setInsertionPoint(read);
  Location loc = read.getLoc();
  IRMapping map;
  for (OpOperand *in : producer.getDpsInputOperands()) {
    Value v = in->get();
    Value arg = body.getArgument(in->getOperandNumber());
    if (!isa<RankedTensorType>(v.getType())) {
      map.map(arg, v);
      continue;
    }
    SmallVector<Value> idx;
    for (AffineExpr e : producer.getMatchingIndexingMap(in).getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        idx.push_back(at[dim.getPosition()]);
      else if (auto c = dyn_cast<AffineConstantExpr>(e))
        idx.push_back(
            arith::ConstantIndexOp::create(rewriter, loc, c.getValue()));
      else
        return fail("an input map is not of loop dims and constants");
    }
    map.map(arg, tensor::ExtractOp::create(rewriter, loc, v, idx));
  }
  for (Operation &op : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      map.map(index.getResult(), at[index.getDim()]);
      continue;
    }
    rewriter.clone(op, map);
  }
  Value element = map.lookupOrDefault(body.getTerminator()->getOperand(0));
  rewriter.replaceOp(read, element);
  return success();
}

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
  // A window op's read of one element (a depthwise convolution's input).
  if (auto read = dyn_cast<tensor::ExtractOp>(consumer);
      read && read->getParentOfType<linalg::GenericOp>()) {
    if (failed(fuseIntoExtract(rewriter, producer, read)))
      return failure();
    rewriter.eraseOp(producer);
    return success();
  }
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

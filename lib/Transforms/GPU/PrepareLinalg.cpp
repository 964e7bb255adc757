//===- PrepareLinalg.cpp - disc-gpu-prepare-linalg ------------------------===//
//
// Prepares linalg ops for the GPU mapping: a generic op whose reduction
// dims come before parallel ones (a reduction over a middle axis) gets its
// parallel dims moved outermost, so that all of them map to threads (the
// order in which each output element is accumulated is unchanged); an op
// without a parallel dim (a full reduction, a rank-0 elementwise op) is
// wrapped in a one-iteration scf.parallel, so that it, too, runs as a
// (one-thread) kernel instead of on the host.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUPREPARELINALG
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Interchanges the loops of every host generic op of `func` so that its
/// parallel dims come first (each group keeps its order).
static LogicalResult moveParallelDimsOutermost(func::FuncOp func) {
  SmallVector<linalg::GenericOp> generics;
  func.walk([&](linalg::GenericOp op) {
    if (!disc::cuda::inDeviceCode(op))
      generics.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  for (linalg::GenericOp op : generics) {
    SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
    SmallVector<unsigned> perm;
    for (unsigned i = 0; i < iters.size(); ++i)
      if (iters[i] == utils::IteratorType::parallel)
        perm.push_back(i);
    for (unsigned i = 0; i < iters.size(); ++i)
      if (iters[i] != utils::IteratorType::parallel)
        perm.push_back(i);
    bool identity = true;
    for (unsigned i = 0; i < perm.size(); ++i)
      identity &= perm[i] == i;
    if (identity)
      continue;
    rewriter.setInsertionPoint(op);
    if (failed(linalg::interchangeGenericOp(rewriter, op, perm)))
      return op.emitError("cannot move the parallel dims outermost");
  }
  return success();
}

/// Wraps every host linalg op of `func` without a parallel dim in a
/// one-iteration scf.parallel.
static void wrapInOneIterationLoops(func::FuncOp func) {
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) {
    if (op.getNumParallelLoops() == 0 && !disc::cuda::inDeviceCode(op))
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    auto par = scf::ParallelOp::create(b, loc, ValueRange{c0}, ValueRange{c1},
                                       ValueRange{c1});
    op->moveBefore(par.getBody()->getTerminator());
  }
}

namespace {
struct PrepareLinalgPass
    : public disc::impl::DiscGpuPrepareLinalgBase<PrepareLinalgPass> {
  void runOnOperation() override {
    if (failed(moveParallelDimsOutermost(getOperation())))
      return signalPassFailure();
    wrapInOneIterationLoops(getOperation());
  }
};
} // namespace

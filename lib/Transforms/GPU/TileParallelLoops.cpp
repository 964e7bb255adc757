//===- TileParallelLoops.cpp - disc-gpu-tile-parallel-loops ---------------===//
//
// Collapses every outermost scf.parallel to one dimension and tiles it by
// `block-size` with a constant inner bound and an in-bounds guard, so that
// gpu-map-parallel-loops maps the outer loop to blocks and the inner one to
// threads. Bounds stay run-time values: one kernel serves every shape.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUTILEPARALLELLOOPS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {
struct TileParallelLoopsPass
    : public disc::impl::DiscGpuTileParallelLoopsBase<TileParallelLoopsPass> {
  using DiscGpuTileParallelLoopsBase::DiscGpuTileParallelLoopsBase;

  SmallVector<scf::ParallelOp> outermost() {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>() &&
          !op->getParentOfType<gpu::LaunchOp>())
        loops.push_back(op);
    });
    return loops;
  }

  void runOnOperation() override {
    if (blockSize <= 0 || blockSize > 1024) {
      getOperation().emitError("block-size must be in [1, 1024]");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : outermost()) {
      unsigned n = op.getNumLoops();
      if (n <= 1)
        continue;
      std::vector<unsigned> all(n);
      for (unsigned i = 0; i < n; ++i)
        all[i] = i;
      rewriter.setInsertionPoint(op);
      collapseParallelLoops(rewriter, op, {all});
    }
    for (scf::ParallelOp op : outermost()) {
      // A one-iteration loop (disc-gpu-prepare-linalg) stays one thread.
      if (auto ub = getConstantIntValue(op.getUpperBound()[0]))
        if (auto lb = getConstantIntValue(op.getLowerBound()[0]))
          if (*ub - *lb <= 1)
            continue;
      scf::tileParallelLoop(op, {blockSize}, /*noMinMaxBounds=*/true);
    }
  }
};
} // namespace

//===- TileParallelLoops.cpp - disc-gpu-tile-parallel-loops ---------------===//
//
// Collapses every outermost scf.parallel to one dimension and tiles it by
// `block-size` with a constant inner bound and an in-bounds guard, so that
// gpu-map-parallel-loops maps the outer loop to blocks and the inner one to
// threads. Bounds stay run-time values: one kernel serves every shape.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "disc/Transforms/GPU/KernelCost.h"

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

/// The allocation a memref value is a view of (through view-like ops and
/// casts); null when it is not one (a function argument, a call result).
Operation *rootAllocation(Value v) {
  for (int guard = 0; guard < 64; ++guard) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return nullptr;
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return def;
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(def)) {
      v = cast.getSource();
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

/// Whether the guarded body `then` of a tiled nest may run `factor` times
/// per thread with the loads of all copies first: straight-line ops (no
/// regions) whose only side effects are memref loads and stores, every
/// store into a buffer allocated in the function that no load of the body
/// reads (so no store of one copy can change what a load of a later copy
/// reads, and moving the loads up keeps the values).
bool coarsenable(Block &then) {
  llvm::SmallPtrSet<Operation *, 4> stored, loaded;
  bool anyStore = false;
  for (Operation &op : then.without_terminator()) {
    // The loop body's own terminator (scf.reduce) has no operands here.
    if (op.getNumRegions() != 0)
      return false;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      loaded.insert(rootAllocation(load.getMemref()));
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Operation *root = rootAllocation(store.getMemref());
      if (!root)
        return false;
      stored.insert(root);
      anyStore = true;
      continue;
    }
    if (!isMemoryEffectFree(&op))
      return false;
  }
  if (!anyStore)
    return false;
  for (Operation *root : stored)
    if (loaded.contains(root))
      return false;
  return true;
}

/// Gives each thread `factor` elements of the tiled nest (`outer` over
/// tiles of `blockSize * factor`, `inner` over a tile, its body guarded by
/// `index < ub`): `inner` becomes a loop over `blockSize` threads, thread t
/// taking elements t, t + blockSize, ... of the tile, so that each load
/// instruction of a warp stays coalesced. In a tile that lies inside the
/// bounds the copies run unguarded with the loads of every copy first:
/// `factor` independent loads in flight per thread instead of one, which
/// a memory-bound kernel needs to approach the HBM bandwidth (Little's law:
/// 4.8 TB/s times ~0.6 µs of latency is ~3 MB in flight, ~4 B per thread
/// with one element each). The last, partial tile runs the guarded copies
/// in order. Returns false (nothing changed) for a body that does not
/// qualify (`coarsenable`).
bool coarsen(RewriterBase &rewriter, scf::ParallelOp outer,
             scf::ParallelOp inner, int64_t blockSize, int64_t factor) {
  if (inner.getNumLoops() != 1 || outer.getNumLoops() != 1)
    return false;
  auto step = getConstantIntValue(inner.getStep()[0]);
  auto lb = getConstantIntValue(inner.getLowerBound()[0]);
  if (!step || *step != 1 || !lb || *lb != 0)
    return false;
  Block &body = *inner.getBody();
  // [pure index ops..., scf.if (guard) without else, scf.reduce].
  scf::IfOp guard;
  for (Operation &op : body.without_terminator()) {
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      if (guard || ifOp.elseBlock() || ifOp.getNumResults() != 0)
        return false;
      guard = ifOp;
      continue;
    }
    if (guard || !isMemoryEffectFree(&op) || op.getNumRegions() != 0)
      return false;
  }
  if (!guard || !coarsenable(*guard.thenBlock()))
    return false;
  Block &then = *guard.thenBlock();
  // The then-block ops a load needs (its backward slice in the block).
  llvm::SmallPtrSet<Operation *, 16> early;
  for (Operation &op : llvm::reverse(then.without_terminator())) {
    if (!isa<memref::LoadOp>(op) && !early.contains(&op))
      continue;
    early.insert(&op);
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def->getBlock() == &then)
          early.insert(def);
  }

  Location loc = inner.getLoc();
  rewriter.setInsertionPoint(inner);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value threads = arith::ConstantIndexOp::create(rewriter, loc, blockSize);
  Value tile =
      arith::ConstantIndexOp::create(rewriter, loc, blockSize * factor);
  Value tileEnd =
      arith::AddIOp::create(rewriter, loc, outer.getInductionVars()[0], tile);
  Value full = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                     tileEnd, outer.getUpperBound()[0]);
  auto newInner = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                          ValueRange{threads}, ValueRange{one});
  rewriter.setInsertionPointToStart(newInner.getBody());
  Value t = newInner.getInductionVars()[0];
  // Copy k's element index: t + k * blockSize.
  auto mapIndex = [&](OpBuilder &b, int64_t k, IRMapping &map) {
    Value off = arith::ConstantIndexOp::create(b, loc, k * blockSize);
    map.map(inner.getInductionVars()[0],
            arith::AddIOp::create(b, loc, t, off).getResult());
  };
  SmallVector<IRMapping> maps(factor);
  auto ifOp = scf::IfOp::create(rewriter, loc, full, /*withElse=*/true);
  ifOp->setAttr(disc::kElementsPerThreadAttr,
                rewriter.getI64IntegerAttr(factor));
  {
    // Inside the bounds: index ops and the loads of every copy, then the
    // rest of every copy.
    OpBuilder b = ifOp.getThenBodyBuilder();
    for (int64_t k = 0; k < factor; ++k) {
      mapIndex(b, k, maps[k]);
      for (Operation &op : body.without_terminator())
        if (&op != guard.getOperation())
          b.clone(op, maps[k]);
      for (Operation &op : then.without_terminator())
        if (early.contains(&op))
          b.clone(op, maps[k]);
    }
    for (int64_t k = 0; k < factor; ++k)
      for (Operation &op : then.without_terminator())
        if (!early.contains(&op))
          b.clone(op, maps[k]);
  }
  {
    // The last tile: the guarded copies in order.
    OpBuilder b = ifOp.getElseBodyBuilder();
    for (int64_t k = 0; k < factor; ++k) {
      IRMapping map;
      mapIndex(b, k, map);
      for (Operation &op : body.without_terminator())
        b.clone(op, map);
    }
  }
  rewriter.eraseOp(inner);
  return true;
}

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
    if (elementsPerThread < 1 || blockSize * elementsPerThread > 1024) {
      getOperation().emitError("elements-per-thread must be >= 1 with "
                               "block-size * elements-per-thread <= 1024");
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
      if (elementsPerThread > 1 && coarsenable(*op.getBody())) {
        // Tiles of blockSize * elementsPerThread elements; `coarsen` makes
        // the inner loop blockSize threads. Should it not recognize the
        // tiled form, the tile stays one thread per element (at most 1024
        // threads, checked with the options), which is correct too.
        auto [outer, inner] = scf::tileParallelLoop(
            op, {blockSize * elementsPerThread}, /*noMinMaxBounds=*/true);
        (void)coarsen(rewriter, outer, inner, blockSize, elementsPerThread);
        continue;
      }
      scf::tileParallelLoop(op, {blockSize}, /*noMinMaxBounds=*/true);
    }
  }
};
} // namespace

//===- FuseParallelLoops.cpp - disc-gpu-fuse-parallel-loops ---------------===//
//
// Adjacent parallel loop nests over the same iteration space become one
// nest, so one kernel: unit dims dropped first (so that a keep-dims
// reduction's fill and the reduction have the same loops), then upstream's
// naivelyFuseParallelOps with MLIR's alias analysis (docs/cuda.md, "Fusion
// on the GPU").
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUFUSEPARALLELLOOPS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

/// Whether dim `k` of `op` runs exactly one iteration (constant bounds and
/// step).
static bool isUnitDim(scf::ParallelOp op, unsigned k) {
  std::optional<int64_t> lb = getConstantIntValue(op.getLowerBound()[k]);
  std::optional<int64_t> ub = getConstantIntValue(op.getUpperBound()[k]);
  std::optional<int64_t> step = getConstantIntValue(op.getStep()[k]);
  return lb && ub && step && *step > 0 && *ub > *lb && *ub - *lb <= *step;
}

/// Rebuilds `op` without its unit dims (their induction variables become
/// the lower bounds), keeping at least one dim; when every dim is a unit
/// dim, the one kept runs once too and its variable also becomes the lower
/// bound (so that its indices match those of the next nest).
static void dropUnitDims(IRRewriter &rewriter, scf::ParallelOp op) {
  if (op.getNumResults() != 0)
    return;
  unsigned n = op.getNumLoops();
  SmallVector<unsigned> keep;
  for (unsigned k = 0; k < n; ++k)
    if (!isUnitDim(op, k))
      keep.push_back(k);
  if (keep.empty()) {
    keep.push_back(0);
    rewriter.replaceAllUsesWith(op.getInductionVars()[0],
                                op.getLowerBound()[0]);
  }
  if (keep.size() == n)
    return;
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned k : keep) {
    lbs.push_back(op.getLowerBound()[k]);
    ubs.push_back(op.getUpperBound()[k]);
    steps.push_back(op.getStep()[k]);
  }
  rewriter.setInsertionPoint(op);
  auto fused = scf::ParallelOp::create(rewriter, op.getLoc(), lbs, ubs, steps);
  Block *from = op.getBody();
  Block *to = fused.getBody();
  // The new body's terminator (scf.reduce) goes; the old one moves over.
  rewriter.eraseOp(to->getTerminator());
  SmallVector<Value> replacements;
  for (unsigned k = 0, j = 0; k < n; ++k)
    replacements.push_back(j < keep.size() && keep[j] == k
                               ? to->getArgument(j++)
                               : op.getLowerBound()[k]);
  rewriter.mergeBlocks(from, to, replacements);
  rewriter.eraseOp(op);
}

/// Whether `a` and `b` have the same bounds and steps (the same values, or
/// equal constants).
static bool sameIterationSpace(scf::ParallelOp a, scf::ParallelOp b) {
  if (a.getNumLoops() != b.getNumLoops())
    return false;
  auto same = [](ValueRange x, ValueRange y) {
    for (auto [u, v] : llvm::zip(x, y)) {
      if (u == v)
        continue;
      std::optional<int64_t> cu = getConstantIntValue(u);
      std::optional<int64_t> cv = getConstantIntValue(v);
      if (!cu || !cv || *cu != *cv)
        return false;
    }
    return true;
  };
  return same(a.getLowerBound(), b.getLowerBound()) &&
         same(a.getUpperBound(), b.getUpperBound()) &&
         same(a.getStep(), b.getStep());
}

/// Brings nests over the same iteration space together so that the fusion
/// below sees them adjacent: between two such nests, allocations, their
/// size checks and pure ops move above the first nest of the chain, and
/// deallocations and rematerialization evictions below the second, as long
/// as no allocation comes after a deallocation or eviction (docs/cuda.md,
/// "Fusion on the GPU"): every buffer is allocated before any buffer it was
/// allocated after is freed, as before, so the bytes live at each
/// allocation, and the peak, stay.
static void gatherNests(Block &block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    ops.push_back(&op);
  scf::ParallelOp start, last;
  bool freed = false;
  SmallVector<Operation *> gap, sunk;
  for (Operation *op : ops) {
    auto par = dyn_cast<scf::ParallelOp>(op);
    if (!par) {
      if (last && (cuda::isHoistableBetweenKernels(op) ||
                   cuda::isSinkableBetweenKernels(op)))
        gap.push_back(op);
      else
        start = last = {};
      continue;
    }
    bool ok =
        last && par.getNumResults() == 0 && sameIterationSpace(start, par);
    bool gapFreed = freed;
    for (Operation *g : gap) {
      gapFreed |= cuda::isSinkableBetweenKernels(g);
      ok &= !(gapFreed && isa<memref::AllocOp>(g));
    }
    if (!ok) {
      start = last = par.getNumResults() == 0 ? par : scf::ParallelOp();
      freed = false;
      gap.clear();
      sunk.clear();
      continue;
    }
    for (Operation *g : gap) {
      if (cuda::isSinkableBetweenKernels(g))
        sunk.push_back(g);
      else
        g->moveBefore(start);
    }
    // Every op sunk so far follows the chain's last nest, in its order.
    Operation *after = par;
    for (Operation *g : sunk) {
      g->moveAfter(after);
      after = g;
    }
    freed = gapFreed;
    gap.clear();
    last = par;
  }
}

/// Whether `op` holds a sequential loop (a reduction's) that may run 32 or
/// more iterations: disc-gpu-stitch-rows gives such a reduction a block
/// per row, one phase per reduction nest.
static bool hasLongReduction(scf::ParallelOp op) {
  WalkResult r = op->walk([](scf::ForOp f) {
    std::optional<int64_t> ub = getConstantIntValue(f.getUpperBound());
    return !ub || *ub >= 32 ? WalkResult::interrupt() : WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// Whether nest `op` only stores (a reduction's init fill): no load, no
/// loop.
static bool isFill(scf::ParallelOp op) {
  WalkResult r = op->walk([](Operation *inner) {
    return isa<memref::LoadOp, scf::ForOp>(inner) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// Keeps two reduction nests over the same rows apart (a Softmax's max and
/// sum, a LayerNorm's mean and variance when the centered value is
/// recomputed): fused, they would be one thread per row running both
/// loops; apart, disc-gpu-stitch-rows makes each a phase of one block per
/// row. In a run of adjacent nests over one space, a second long reduction
/// starts a new run at its init fill (the nest right before it that only
/// stores). Returns the separators (side-effecting ops that end
/// naivelyFuseParallelOps' chains), erased after the fusion.
static SmallVector<Operation *> separateReductions(Block &block) {
  SmallVector<Operation *> separators;
  SmallVector<scf::ParallelOp> run;
  bool reduces = false;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto par = dyn_cast<scf::ParallelOp>(op);
    if (!par) {
      if (!isMemoryEffectFree(&op) || op.getNumRegions() != 0) {
        run.clear();
        reduces = false;
      }
      continue;
    }
    if (!run.empty() && !sameIterationSpace(run.front(), par)) {
      run.clear();
      reduces = false;
    }
    bool longReduction = hasLongReduction(par);
    if (longReduction && reduces) {
      scf::ParallelOp first =
          run.size() > 1 && isFill(run.back()) ? run.back() : par;
      OpBuilder b(first);
      separators.push_back(memref::AllocaOp::create(
          b, par.getLoc(), MemRefType::get({0}, b.getI8Type())));
      run.clear();
      if (first != par)
        run.push_back(first);
    }
    reduces |= longReduction;
    run.push_back(par);
  }
  return separators;
}

namespace {
struct FuseParallelLoopsPass
    : public disc::impl::DiscGpuFuseParallelLoopsBase<FuseParallelLoopsPass> {
  using DiscGpuFuseParallelLoopsBase::DiscGpuFuseParallelLoopsBase;
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        outermost.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : outermost)
      dropUnitDims(rewriter, op);

    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    // Views of two different buffers do not alias when one of them is an
    // allocation (fresh memory); otherwise MLIR's alias analysis decides.
    auto mayAlias = [&](Value a, Value b) {
      Value ra = cuda::viewRoot(a), rb = cuda::viewRoot(b);
      if (ra != rb && (ra.getDefiningOp<memref::AllocOp>() ||
                       rb.getDefiningOp<memref::AllocOp>()))
        return false;
      return !aliases.alias(a, b).isNo();
    };
    // Nests directly in the function or in a host region (scf.if of a
    // rematerialization), not inside another nest.
    getOperation().walk([&](Operation *op) {
      if (isa<scf::ParallelOp>(op) || op->getParentOfType<scf::ParallelOp>())
        return;
      for (Region &region : op->getRegions()) {
        SmallVector<Operation *> separators;
        for (Block &block : region) {
          gatherNests(block);
          if (stitchRows)
            llvm::append_range(separators, separateReductions(block));
        }
        scf::naivelyFuseParallelOps(region, mayAlias);
        for (Operation *sep : separators)
          sep->erase();
      }
    });
  }
};
} // namespace

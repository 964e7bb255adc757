//===- FuseParallelLoops.cpp - disc-gpu-fuse-*-loops ----------------------===//
//
// disc-gpu-fuse-parallel-loops: adjacent parallel loop nests over the same
// iteration space become one nest, so one kernel: unit dims dropped first
// (so that a keep-dims reduction's fill and the reduction have the same
// loops), then upstream's naivelyFuseParallelOps with MLIR's alias analysis
// (docs/cuda.md, "Fusion on the GPU").
// disc-gpu-fuse-independent-loops: adjacent nests with no dependence
// between them, over any iteration spaces, become one 1-D nest that picks
// the former nest by its linear index (horizontal fusion; docs/cuda.md,
// "Independent loop nests").
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Transforms/GPU/KernelCost.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <map>

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUFUSEPARALLELLOOPS
#define GEN_PASS_DEF_DISCGPUFUSEINDEPENDENTLOOPS
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

/// Brings nests that `joins` accepts together: between two of them,
/// allocations, their size checks and pure ops move above the first nest
/// of the chain, and deallocations and rematerialization evictions below
/// the second, as long as no allocation comes after a deallocation or
/// eviction (docs/cuda.md, "Fusion on the GPU"): every buffer is allocated
/// before any buffer it was allocated after is freed, as before, so the
/// bytes live at each allocation, and the peak, stay. `joins(chain, next)`
/// says whether `next` may follow the adjacent nests `chain` (a chain
/// starts at any nest `joins({}, nest)` accepts). Returns the chains of
/// two or more nests, now adjacent, in block order.
static SmallVector<SmallVector<scf::ParallelOp>>
gatherNests(Block &block,
            llvm::function_ref<bool(ArrayRef<scf::ParallelOp>, scf::ParallelOp)>
                joins) {
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    ops.push_back(&op);
  SmallVector<SmallVector<scf::ParallelOp>> chains;
  SmallVector<scf::ParallelOp> chain;
  auto close = [&]() {
    if (chain.size() > 1)
      chains.push_back(chain);
    chain.clear();
  };
  bool freed = false;
  SmallVector<Operation *> gap, sunk;
  for (Operation *op : ops) {
    auto par = dyn_cast<scf::ParallelOp>(op);
    if (!par) {
      if (!chain.empty() && (cuda::isHoistableBetweenKernels(op) ||
                             cuda::isSinkableBetweenKernels(op)))
        gap.push_back(op);
      else
        close();
      continue;
    }
    bool ok = !chain.empty() && joins(chain, par);
    bool gapFreed = freed;
    for (Operation *g : gap) {
      gapFreed |= cuda::isSinkableBetweenKernels(g);
      ok &= !(gapFreed && isa<memref::AllocOp>(g));
    }
    if (!ok) {
      close();
      if (joins({}, par))
        chain.push_back(par);
      freed = false;
      gap.clear();
      sunk.clear();
      continue;
    }
    for (Operation *g : gap) {
      if (cuda::isSinkableBetweenKernels(g))
        sunk.push_back(g);
      else
        g->moveBefore(chain.front());
    }
    // Every op sunk so far follows the chain's last nest, in its order.
    Operation *after = par;
    for (Operation *g : sunk) {
      g->moveAfter(after);
      after = g;
    }
    freed = gapFreed;
    gap.clear();
    chain.push_back(par);
  }
  close();
  return chains;
}

/// Views of two different buffers do not alias when one of them is an
/// allocation (fresh memory); otherwise MLIR's alias analysis decides.
static bool buffersMayAlias(AliasAnalysis &aliases, Value a, Value b) {
  Value ra = cuda::viewRoot(a), rb = cuda::viewRoot(b);
  if (ra != rb && (ra.getDefiningOp<memref::AllocOp>() ||
                   rb.getDefiningOp<memref::AllocOp>()))
    return false;
  return !aliases.alias(a, b).isNo();
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
    auto mayAlias = [&](Value a, Value b) {
      return buffersMayAlias(aliases, a, b);
    };
    // Nests directly in the function or in a host region (scf.if of a
    // rematerialization), not inside another nest.
    getOperation().walk([&](Operation *op) {
      if (isa<scf::ParallelOp>(op) || op->getParentOfType<scf::ParallelOp>())
        return;
      for (Region &region : op->getRegions()) {
        SmallVector<Operation *> separators;
        for (Block &block : region) {
          (void)gatherNests(block, [](ArrayRef<scf::ParallelOp> chain,
                                      scf::ParallelOp par) {
            return par.getNumResults() == 0 &&
                   (chain.empty() || sameIterationSpace(chain.front(), par));
          });
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

//===----------------------------------------------------------------------===//
// disc-gpu-fuse-independent-loops
//===----------------------------------------------------------------------===//

namespace {

/// The buffers a nest loads from and stores into.
struct NestAccesses {
  SmallVector<Value> reads, writes;
};

/// The accesses of `op` when it can be a segment of a fused nest: no
/// results, zero lower bounds and unit steps, at most `maxElements`
/// iterations (static bounds) unless `maxElements` is negative, nothing
/// inside but pure ops, memref loads and stores, and scf.for/if/yield (no
/// nested nest, no barrier, no call). Failure otherwise.
static FailureOr<NestAccesses> segmentAccesses(scf::ParallelOp op,
                                               int64_t maxElements) {
  if (op.getNumResults() != 0 || op.getNumLoops() == 0)
    return failure();
  if (maxElements >= 0) {
    int64_t elements = 1;
    for (Value ub : op.getUpperBound()) {
      std::optional<int64_t> n = getConstantIntValue(ub);
      if (!n || *n < 0)
        return failure();
      elements *= *n;
      if (elements > maxElements)
        return failure();
    }
  }
  for (auto [lb, step] : llvm::zip(op.getLowerBound(), op.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb);
    std::optional<int64_t> s = getConstantIntValue(step);
    if (!l || *l != 0 || !s || *s != 1)
      return failure();
  }
  NestAccesses acc;
  WalkResult r = op.getBody()->walk([&](Operation *inner) {
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      acc.reads.push_back(load.getMemref());
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(inner)) {
      acc.writes.push_back(store.getMemref());
      return WalkResult::advance();
    }
    if (isa<scf::ForOp, scf::IfOp, scf::YieldOp, scf::ReduceOp>(inner))
      return WalkResult::advance();
    return isMemoryEffectFree(inner) && inner->getNumRegions() == 0
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  if (r.wasInterrupted())
    return failure();
  return acc;
}

/// Builds the dispatch over segments [first, last) of the fused nest at
/// `b`: a binary tree of `if (index < offsets[mid])`, each leaf the body of
/// one nest with its induction variables the delinearized offset index.
static void buildDispatch(OpBuilder &b, Location loc, Value index,
                          ArrayRef<scf::ParallelOp> nests,
                          ArrayRef<Value> offsets, size_t first, size_t last) {
  if (last - first == 1) {
    scf::ParallelOp nest = nests[first];
    Value rest =
        first == 0
            ? index
            : arith::SubIOp::create(b, loc, index, offsets[first]).getResult();
    IRMapping map;
    ValueRange ubs = nest.getUpperBound();
    for (int64_t d = static_cast<int64_t>(ubs.size()) - 1; d >= 0; --d) {
      Value iv = rest;
      if (d > 0) {
        iv = arith::RemUIOp::create(b, loc, rest, ubs[d]);
        rest = arith::DivUIOp::create(b, loc, rest, ubs[d]);
      }
      map.map(nest.getInductionVars()[d], iv);
    }
    for (Operation &op : nest.getBody()->without_terminator())
      b.clone(op, map);
    return;
  }
  size_t mid = (first + last) / 2;
  Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index,
                                      offsets[mid]);
  auto split = scf::IfOp::create(b, loc, lower, /*withElseRegion=*/true);
  split->setAttr(disc::kSegmentSplitAttr, b.getUnitAttr());
  OpBuilder thenB = split.getThenBodyBuilder();
  buildDispatch(thenB, loc, index, nests, offsets, first, mid);
  OpBuilder elseB = split.getElseBodyBuilder();
  buildDispatch(elseB, loc, index, nests, offsets, mid, last);
}

/// Replaces the adjacent nests `chain` by one 1-D nest over the sum of
/// their element counts.
static void fuseChain(ArrayRef<scf::ParallelOp> chain) {
  scf::ParallelOp first = chain.front();
  OpBuilder b(first);
  Location loc = b.getFusedLoc(llvm::to_vector(
      llvm::map_range(chain, [](scf::ParallelOp op) { return op.getLoc(); })));
  // offsets[k]: the linear index where nest k starts; the last, the total.
  SmallVector<Value> offsets;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value total = zero;
  for (scf::ParallelOp nest : chain) {
    offsets.push_back(total);
    ValueRange ubs = nest.getUpperBound();
    Value count = ubs.front();
    for (Value ub : ubs.drop_front())
      count = arith::MulIOp::create(b, loc, count, ub);
    total = arith::AddIOp::create(b, loc, total, count);
  }
  offsets.push_back(total);
  auto fused = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                       ValueRange{total}, ValueRange{one});
  OpBuilder body = OpBuilder::atBlockBegin(fused.getBody());
  buildDispatch(body, loc, fused.getInductionVars()[0], chain, offsets, 0,
                chain.size());
  for (scf::ParallelOp nest : chain)
    nest->erase();
}

struct FuseIndependentLoopsPass
    : public disc::impl::DiscGpuFuseIndependentLoopsBase<
          FuseIndependentLoopsPass> {
  using DiscGpuFuseIndependentLoopsBase::DiscGpuFuseIndependentLoopsBase;
  void runOnOperation() override {
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    // (A node map: the pointers handed out stay valid as it grows.)
    std::map<Operation *, NestAccesses> accesses;
    auto segment = [&](scf::ParallelOp op) -> const NestAccesses * {
      auto it = accesses.find(op);
      if (it == accesses.end()) {
        FailureOr<NestAccesses> acc = segmentAccesses(op, maxElements);
        if (failed(acc))
          return nullptr;
        it = accesses.try_emplace(op, std::move(*acc)).first;
      }
      return &it->second;
    };
    // Whether a write of one nest may touch a buffer the other accesses.
    auto conflict = [&](const NestAccesses &a, const NestAccesses &b) {
      auto any = [&](ArrayRef<Value> writes, const NestAccesses &other) {
        for (Value w : writes)
          for (ArrayRef<Value> set :
               {ArrayRef<Value>(other.reads), ArrayRef<Value>(other.writes)})
            for (Value v : set)
              if (buffersMayAlias(aliases, w, v))
                return true;
        return false;
      };
      return any(a.writes, b) || any(b.writes, a);
    };
    SmallVector<SmallVector<scf::ParallelOp>> chains;
    getOperation().walk([&](Operation *op) {
      if (isa<scf::ParallelOp, gpu::LaunchOp>(op) ||
          op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<gpu::LaunchOp>())
        return;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          llvm::append_range(
              chains, gatherNests(block, [&](ArrayRef<scf::ParallelOp> chain,
                                             scf::ParallelOp par) {
                const NestAccesses *acc = segment(par);
                if (!acc)
                  return false;
                for (scf::ParallelOp prev : chain)
                  if (conflict(*segment(prev), *acc))
                    return false;
                return true;
              }));
    });
    for (ArrayRef<scf::ParallelOp> chain : chains)
      fuseChain(chain);
  }
};
} // namespace

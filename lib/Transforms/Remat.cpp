//===- Remat.cpp - rematerialization candidates, evict/regenerate points --===//
//
// See include/disc/Transforms/Remat.h and docs/memory.md,
// "Rematerialization".
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Remat.h"

#include "disc/Conversion/LibraryCallAttrs.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Target/RuntimeSymbols.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/InPlaceState.h"
#include "disc/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <numeric>

namespace mlir::disc {
#define GEN_PASS_DEF_DISCREMAT
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// Element count of a ranked tensor value as a symbolic expression.
std::optional<AffineExpr> numElements(ShapeAnalysis &sa, Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return std::nullopt;
  SmallVector<AffineExpr> dims = sa.getDims(v);
  if (dims.size() != static_cast<size_t>(type.getRank()))
    return std::nullopt;
  AffineExpr n = getAffineConstantExpr(1, v.getContext());
  for (AffineExpr d : dims) {
    if (!d)
      return std::nullopt;
    n = n * d;
  }
  return sa.normalize(n);
}

/// Estimated FLOPs of one op (see RematCandidate::flops).
std::optional<AffineExpr> opFlops(ShapeAnalysis &sa, Operation *op) {
  if (op->getNumResults() == 0)
    return getAffineConstantExpr(0, op->getContext());
  std::optional<AffineExpr> out = numElements(sa, op->getResult(0));
  if (!out)
    return std::nullopt;
  auto product = [&](Value v, ArrayRef<int64_t> which,
                     unsigned from) -> std::optional<AffineExpr> {
    SmallVector<AffineExpr> dims = sa.getDims(v);
    AffineExpr p = getAffineConstantExpr(1, op->getContext());
    if (which.empty()) {
      for (unsigned i = from; i < dims.size(); ++i) {
        if (!dims[i])
          return std::nullopt;
        p = p * dims[i];
      }
      return p;
    }
    for (int64_t i : which) {
      if (i < 0 || static_cast<size_t>(i) >= dims.size() || !dims[i])
        return std::nullopt;
      p = p * dims[i];
    }
    return p;
  };
  AffineExpr flops = *out;
  if (auto conv = dyn_cast<ConvOp>(op)) {
    // Filter [OC, C/G, K...]: each output is a dot of C/G * prod(K).
    std::optional<AffineExpr> k = product(conv.getFilter(), {}, 1);
    if (!k)
      return std::nullopt;
    flops = *out * *k * 2;
  } else if (auto dot = dyn_cast<DotGeneralOp>(op)) {
    std::optional<AffineExpr> k =
        product(dot.getLhs(), dot.getLhsContractingDimensions(), 0);
    if (!k)
      return std::nullopt;
    flops = *out * *k * 2;
  } else if (auto pool = dyn_cast<PoolOp>(op)) {
    int64_t w = 1;
    for (int64_t k : pool.getWindow())
      w *= k;
    flops = *out * w;
  } else if (isa<ReduceOp>(op)) {
    std::optional<AffineExpr> in = numElements(sa, op->getOperand(0));
    if (!in)
      return std::nullopt;
    flops = *in;
  }
  return sa.normalize(flops);
}

std::string opName(Operation *op) {
  std::string s = op->getName().getStringRef().str();
  if (auto n = dyn_cast<NameLoc>(op->getLoc()))
    s += " (" + n.getName().getValue().str() + ")";
  return s;
}

bool isZero(AffineExpr e) {
  auto c = dyn_cast_or_null<AffineConstantExpr>(e);
  return !e || (c && c.getValue() == 0);
}

/// Value of a symbol for `--emit=memory`: its LIKELY value, else its
/// minimum (at least 1, so sizes do not all collapse to 0).
llvm::StringMap<int64_t> printBindings(ShapeAnalysis &sa) {
  llvm::StringMap<int64_t> b;
  ShapeConstraintSolver &solver = sa.getSolver();
  for (unsigned i = 0, e = sa.getNumSymbols(); i < e; ++i) {
    const SymbolInfo &info = solver.getSymbol(i);
    b[sa.getSymbolName(i)] =
        info.likely ? *info.likely : std::max<int64_t>(info.min, 1);
  }
  return b;
}

/// Value of a symbol for ranking candidates by size: its LIKELY value, else
/// kNominalDim clamped to its range (at the minimum, a batch x seq x seq
/// buffer would rank below a batch x seq x width one, the opposite of any
/// real run).
constexpr int64_t kNominalDim = 64;
llvm::StringMap<int64_t> rankingBindings(ShapeAnalysis &sa) {
  llvm::StringMap<int64_t> b;
  ShapeConstraintSolver &solver = sa.getSolver();
  for (unsigned i = 0, e = sa.getNumSymbols(); i < e; ++i) {
    const SymbolInfo &info = solver.getSymbol(i);
    int64_t v = std::max<int64_t>(kNominalDim, std::max<int64_t>(info.min, 1));
    if (info.max)
      v = std::min(v, *info.max);
    b[sa.getSymbolName(i)] = info.likely ? *info.likely : v;
  }
  return b;
}

struct LongGap {
  Value value;
  unsigned def = 0, evictAfter = 0, regenerateBefore = 0;
  AffineExpr bytes;
  int64_t rank = 0; // bytes at the ranking bindings
};

} // namespace

SmallVector<RematCandidate>
mlir::disc::findRematCandidates(MemoryModel &mm, const MemoryProfile &p,
                                const RematOptions &options,
                                SmallVectorImpl<RematRejection> *rejected) {
  SmallVector<RematCandidate> result;
  ShapeAnalysis &sa = mm.getShapeAnalysis();
  if (p.order.empty())
    return result;
  Block *body = p.order.front()->getBlock();
  llvm::DenseMap<Operation *, unsigned> index;
  for (auto [i, op] : llvm::enumerate(p.order))
    index[op] = i;
  llvm::DenseMap<Value, const BufferLiveRange *> range;
  for (const BufferLiveRange &b : p.buffers)
    range[b.root] = &b;
  auto topLevel = [&](Operation *op) {
    return body->findAncestorOpInBlock(*op);
  };
  // The op whose program point reads a top-level op's operands: a fused
  // producer's reads happen at its fusion root (disc-fusion).
  auto readAt = [&](Operation *top) { return getFusionRoot(top); };
  auto reject = [&](const LongGap &g, const Twine &why) {
    if (rejected)
      rejected->push_back(
          {g.value, g.evictAfter, g.regenerateBefore, why.str()});
  };

  // Long gaps: Alloc results, not returned, used by top-level ops directly
  // or through views (no uses in nested regions, nothing written in place).
  // The definition counts as a use: a value computed long before its first
  // use is evicted right after it is made. A view made before the gap must
  // be dead before the gap (a view made after it reads the regenerated
  // buffer).
  llvm::StringMap<int64_t> likely = rankingBindings(sa);
  // Ops that run at their position, before position i: a fused producer
  // runs inside its root's loop nest and a constant is no code, so neither
  // makes a gap (an eviction across them frees nothing for any
  // allocation).
  SmallVector<unsigned> runsBefore(p.order.size() + 1, 0);
  for (auto [i, op] : llvm::enumerate(p.order))
    runsBefore[i + 1] =
        runsBefore[i] +
        (!isFusedProducer(op) && !op->hasTrait<OpTrait::ConstantLike>());
  // Ops that run strictly between positions e and r.
  auto gapOps = [&](unsigned e, unsigned r) {
    return runsBefore[r] - runsBefore[e + 1];
  };
  SmallVector<LongGap> gaps;
  for (auto [i, op] : llvm::enumerate(p.order)) {
    const OpMemory &m = mm.getOpMemory(op);
    for (const ResultMemory &rm : m.results) {
      if (rm.kind != BufferKind::Alloc)
        continue;
      // A library call's buffer holds the value of its last fused post-op
      // (disc-mark-library-calls): the candidate is that value, made where
      // the chain ends; the chain is recomputed as one call.
      Value value = rm.value;
      unsigned def = i;
      while (Operation *user = nextPostOp(value)) {
        if (!index.count(user))
          break;
        value = user->getResult(0);
        def = index[user];
      }
      if (mm.escapes(value))
        continue;
      // A reshape that copies a strided source returns a view of the copy
      // (MemoryModel::profile), not the buffer the evict call must hand
      // over: not a candidate.
      if (isa<DynamicReshapeOp>(op))
        continue;
      bool ok = true;
      SmallVector<unsigned> uses{def};
      // (index of the op that makes a view, last use of the view)
      SmallVector<std::pair<unsigned, unsigned>> views;
      std::function<unsigned(Value)> collect = [&](Value v) -> unsigned {
        unsigned last = 0;
        for (OpOperand &use : v.getUses()) {
          Operation *top = topLevel(use.getOwner());
          if (!top || top != use.getOwner() || !index.count(top)) {
            ok = false;
            return last;
          }
          // A fused producer reads at its fusion root (disc-fusion).
          unsigned at = index[readAt(top)];
          uses.push_back(at);
          last = std::max(last, at);
          const OpMemory &um = mm.getOpMemory(top);
          for (const ResultMemory &ur : um.results) {
            if (ur.operand != static_cast<int>(use.getOperandNumber()))
              continue;
            if (writesOperandBuffer(ur))
              ok = false;
            if (ur.kind == BufferKind::View) {
              unsigned viewLast = std::max(at, collect(ur.value));
              views.push_back({at, viewLast});
              last = std::max(last, viewLast);
            }
          }
        }
        return last;
      };
      collect(value);
      if (!ok || uses.size() < 2)
        continue;
      llvm::sort(uses);
      uses.erase(llvm::unique(uses), uses.end());
      unsigned bestE = 0, bestR = 0;
      for (size_t k = 0; k + 1 < uses.size(); ++k) {
        unsigned e = uses[k], r = uses[k + 1];
        if (bestR > bestE && gapOps(e, r) <= gapOps(bestE, bestR))
          continue;
        if (llvm::any_of(views, [&](std::pair<unsigned, unsigned> v) {
              return v.first <= e && v.second >= r;
            }))
          continue;
        bestE = e;
        bestR = r;
      }
      if (bestR <= bestE || gapOps(bestE, bestR) < options.minGapOps)
        continue;
      LongGap g;
      g.value = value;
      g.def = def;
      g.evictAfter = bestE;
      g.regenerateBefore = bestR;
      g.bytes = rm.bytes;
      g.rank = mm.evaluate(rm.bytes, likely).value_or(0);
      gaps.push_back(g);
    }
  }
  llvm::stable_sort(
      gaps, [](const LongGap &a, const LongGap &b) { return a.rank > b.rank; });

  llvm::DenseSet<Value> longGap;
  for (const LongGap &g : gaps)
    longGap.insert(g.value);
  // State inputs written in place (InPlaceState.h), by the position of the
  // update.
  llvm::DenseMap<Value, unsigned> writtenInPlaceAt;
  for (auto [i, op] : llvm::enumerate(p.order))
    if (auto arg = op->getAttrOfType<IntegerAttr>(kInPlaceStateAttrName))
      writtenInPlaceAt[op->getParentOfType<func::FuncOp>().getArgument(
          arg.getInt())] = i;
  for (const LongGap &g : gaps) {
    unsigned r = g.regenerateBefore;
    // The candidate's buffer: its own, or the library call's it was
    // computed in.
    Value gRoot = mm.getBufferRoot(g.value);
    if (!gRoot)
      gRoot = g.value;
    // A next use fused into a library call (disc-mark-library-calls) reads
    // its operands where the call runs, before the regenerate point.
    if (p.order[r]->hasAttr(kFusedIntoCallAttr)) {
      reject(g, "its next use is fused into a library call");
      continue;
    }
    // Live at the regenerate point with nothing evicted. Another candidate
    // may be read (nested regeneration: it is then regenerated no later
    // than this one, see below), but only as its own buffer: a view of a
    // long-gap tensor is recomputed from the buffer.
    auto available = [&](Value w) {
      if (auto a = dyn_cast<BlockArgument>(mm.getViewSource(w))) {
        // A state written in place before the regenerate point holds its
        // new value there (InPlaceState.h), in its views too (a recompute
        // reading one made bufferization copy the view at its definition,
        // a buffer the memory model does not count).
        auto it = writtenInPlaceAt.find(a);
        if (it != writtenInPlaceAt.end() && it->second < r)
          return false;
        if (w == a)
          return true;
      }
      if (mm.getBufferRoot(w) == gRoot)
        return false; // the call result a post-op of the chain reads
      Operation *def = w.getDefiningOp();
      if (!index.count(def))
        return false;
      BufferKind kind = BufferKind::External;
      for (const ResultMemory &rm : mm.getOpMemory(def).results)
        if (rm.value == w)
          kind = rm.kind;
      if (kind == BufferKind::External || kind == BufferKind::Stack)
        return true;
      if (kind == BufferKind::Fused)
        return false; // no buffer: computed inside its consumer's loops
      Value root = mm.getBufferRoot(w);
      if (!root)
        return true;
      if (root != w && longGap.contains(root))
        return false;
      auto it = range.find(root);
      return it != range.end() && it->second->def < r &&
             it->second->lastUse >= r;
    };
    // Backward closure from the producer over values that are not live at
    // the regenerate point.
    llvm::SetVector<Operation *> sub;
    SmallVector<Operation *> work{p.order[g.def]};
    std::string why;
    while (!work.empty() && why.empty()) {
      Operation *op = work.pop_back_val();
      if (!sub.insert(op))
        continue;
      if (!isPure(op) || op->getNumRegions() != 0) {
        why = ("'" + op->getName().getStringRef() + "' cannot be recomputed")
                  .str();
        break;
      }
      // A library call (disc-mark-library-calls) is recomputed with the
      // post-ops fused into it, as one unit: its final value is read by
      // others only once the chain is done (each link has one use), so a
      // closure that reaches one op of the chain reaches all of it. Its
      // oneDNN temporaries are sized by the runtime at the recompute's
      // point (RematCandidate::libraryCalls).
      // A reshape that copies a strided source returns a view of its copy
      // (MemoryModel::profile); recomputed inside the regenerate point, it
      // made the deallocation keep buffers longer than the model predicts.
      if (isa<DynamicReshapeOp>(op) &&
          llvm::any_of(mm.getOpMemory(op).results, [](const ResultMemory &r) {
            return r.kind == BufferKind::Alloc;
          })) {
        why = "a reshape that copies cannot be recomputed";
        break;
      }
      if (sub.size() > options.maxOps) {
        why = "recompute needs more than " + std::to_string(options.maxOps) +
              " ops";
        break;
      }
      for (Value w : op->getOperands()) {
        if (available(w))
          continue;
        Operation *def = w.getDefiningOp();
        if (isa<BlockArgument>(w)) {
          why = "it reads a state input after the state's in-place update";
          break;
        }
        if (!def || !index.count(def)) {
          why = "an operand is not available at the regenerate point";
          break;
        }
        work.push_back(def);
      }
    }
    if (!why.empty()) {
      reject(g, why);
      continue;
    }
    SmallVector<Operation *> ops(sub.begin(), sub.end());
    llvm::sort(ops,
               [&](Operation *a, Operation *b) { return index[a] < index[b]; });

    // Cost bound: FLOPs <= maxFlopsPerByte * payload bytes, proven.
    AffineExpr flops = getAffineConstantExpr(0, g.value.getContext());
    bool known = true;
    for (Operation *op : ops) {
      std::optional<AffineExpr> f = opFlops(sa, op);
      if (!f) {
        known = false;
        break;
      }
      flops = flops + *f;
    }
    flops = sa.normalize(flops);
    AffineExpr bound =
        sa.normalize(mm.payloadBytes(g.value) * options.maxFlopsPerByte);
    CompareResult cmp =
        known ? sa.getSolver().compare(flops, bound) : CompareResult::UNKNOWN;
    if (cmp != CompareResult::LT && cmp != CompareResult::LE &&
        cmp != CompareResult::EQ) {
      reject(g, "recompute FLOPs " + mm.render(flops) +
                    " not proven <= " + mm.render(bound));
      continue;
    }

    // Live bytes of the recompute on top of the regenerated buffer.
    llvm::DenseMap<Value, unsigned> lastInternalUse;
    llvm::DenseMap<Value, AffineExpr> internalBytes;
    for (auto [j, op] : llvm::enumerate(ops))
      for (const ResultMemory &rm : mm.getOpMemory(op).results)
        if (rm.kind == BufferKind::Alloc)
          internalBytes[rm.value] = rm.bytes;
    // A fused producer's operands are read where its fusion root runs
    // (disc-fusion): the root is in the recompute too, as the producer's
    // only reader.
    auto readPosition = [&](unsigned j) -> unsigned {
      Operation *root = getFusionRoot(ops[j]);
      auto it = llvm::find(ops, root);
      return it == ops.end() ? j : static_cast<unsigned>(it - ops.begin());
    };
    for (auto [j, op] : llvm::enumerate(ops))
      for (Value w : op->getOperands())
        if (Value root = mm.getBufferRoot(w);
            root && internalBytes.count(root)) {
          unsigned &last = lastInternalUse[root];
          last = std::max(last, readPosition(j));
        }
    MLIRContext *ctx = g.value.getContext();
    AffineExpr live = getAffineConstantExpr(0, ctx);
    SmallVector<AffineExpr> points;
    llvm::DenseSet<Value> freed;
    // The library calls of the recompute, each at its point.
    llvm::json::Array calls;
    std::string callWhy;
    auto freeAfter = [&](unsigned j, ArrayRef<Value> roots) {
      for (Value root : roots) {
        if (root == gRoot || freed.contains(root) || !internalBytes.count(root))
          continue;
        auto it = lastInternalUse.find(root);
        if (it == lastInternalUse.end() || it->second != j)
          continue;
        live = live - internalBytes[root];
        freed.insert(root);
      }
    };
    // The recompute's last op writes the regenerated buffer itself when it
    // lowers to one loop nest with a fresh destination
    // (disc-regenerate-in-place); else its result is copied into it.
    Operation *last = ops.back();
    bool inPlace =
        !isLibraryCallUnit(last) && lowersToOneGeneric(sa, last) &&
        llvm::all_of(mm.getOpMemory(last).results, [](const ResultMemory &r) {
          return r.kind == BufferKind::Alloc;
        });
    for (auto [j, op] : llvm::enumerate(ops)) {
      const OpMemory &m = mm.getOpMemory(op);
      if (!isZero(m.preScratchBytes)) {
        points.push_back(sa.normalize(live + m.preScratchBytes));
        SmallVector<Value> consumed;
        for (unsigned k : m.consumedByPreScratch)
          if (Value root = mm.getBufferRoot(op->getOperand(k)))
            consumed.push_back(root);
        freeAfter(j, consumed);
      }
      for (const ResultMemory &rm : m.results)
        if (rm.kind == BufferKind::Alloc && !(inPlace && op == last))
          live = live + rm.bytes;
      AffineExpr scratch = isZero(m.scratchBytes)
                               ? getAffineConstantExpr(0, ctx)
                               : m.scratchBytes;
      // The padded copies (pre-scratch) are still read while the op
      // writes its result (MemoryModel::profile).
      points.push_back(sa.normalize(live + scratch + m.preScratchBytes));
      if (op->hasAttr(kLibraryCallAttr) &&
          !mm.libraryCallJson(op, points.back(), calls, callWhy))
        break;
      for (AffineExpr ph : m.postPhaseBytes)
        points.push_back(sa.normalize(live + ph));
      // Every buffer read last here (by this op, or by a fused producer
      // of it) is freed.
      SmallVector<Value> roots;
      for (auto [k, other] : llvm::enumerate(ops))
        if (readPosition(k) == j)
          for (Value w : other->getOperands())
            if (Value root = mm.getBufferRoot(w))
              roots.push_back(root);
      freeAfter(j, roots);
    }
    if (!callWhy.empty()) {
      reject(g, callWhy);
      continue;
    }
    // One expression when they are all comparable: the largest.
    // (Not reached: every op of a non-empty recompute has a point.)
    if (points.empty()) {
      reject(g, "its recompute has no program point");
      continue;
    }
    AffineExpr peak = points.front();
    bool single = true;
    for (AffineExpr e : ArrayRef(points).drop_front()) {
      CompareResult c = sa.getSolver().compare(e, peak);
      if (c == CompareResult::GT || c == CompareResult::GE)
        peak = e;
      else if (c != CompareResult::LT && c != CompareResult::LE &&
               c != CompareResult::EQ)
        single = false;
    }
    if (!single) {
      // Not comparable: a sum is an upper bound of every point.
      peak = getAffineConstantExpr(0, ctx);
      for (AffineExpr e : points)
        peak = peak + e;
      peak = sa.normalize(peak);
    }

    RematCandidate c;
    c.value = g.value;
    c.evictAfter = g.evictAfter;
    c.regenerateBefore = g.regenerateBefore;
    c.recompute = std::move(ops);
    c.bytes = g.bytes;
    c.recomputePeakBytes = peak;
    c.recomputePoints = std::move(points);
    c.libraryCalls = std::move(calls);
    c.writesInPlace = inPlace;
    c.flops = flops;

    result.push_back(std::move(c));
  }

  llvm::stable_sort(result,
                    [](const RematCandidate &a, const RematCandidate &b) {
                      return a.evictAfter < b.evictAfter ||
                             (a.evictAfter == b.evictAfter &&
                              a.regenerateBefore < b.regenerateBefore);
                    });
  // Regenerations run in order of their points, and at one point in
  // program order of the values (a candidate read by another's recompute
  // is defined before it, so it is regenerated first).
  auto defIndex = [&](const RematCandidate &c) {
    return index[c.recompute.back()];
  };
  auto link = [&]() {
    SmallVector<unsigned> seq(result.size());
    std::iota(seq.begin(), seq.end(), 0u);
    llvm::stable_sort(seq, [&](unsigned a, unsigned b) {
      const RematCandidate &x = result[a], &y = result[b];
      return x.regenerateBefore < y.regenerateBefore ||
             (x.regenerateBefore == y.regenerateBefore &&
              defIndex(x) < defIndex(y));
    });
    for (auto [pos, k] : llvm::enumerate(seq))
      result[k].regenerateOrder = pos;
    // Nested regeneration: the candidates each recompute reads, by id (the
    // sorted position), in program order of their definitions.
    llvm::DenseMap<Value, unsigned> idOf;
    for (auto [id, c] : llvm::enumerate(result))
      idOf[c.value] = id;
    for (RematCandidate &c : result) {
      c.reads.clear();
      for (Operation *op : c.recompute)
        for (Value w : op->getOperands())
          if (auto it = idOf.find(w);
              it != idOf.end() && it->second != idOf[c.value] &&
              !llvm::is_contained(c.recompute, w.getDefiningOp()) &&
              !llvm::is_contained(c.reads, it->second))
            c.reads.push_back(it->second);
      llvm::sort(c.reads, [&](unsigned a, unsigned b) {
        return defIndex(result[a]) < defIndex(result[b]);
      });
    }
  };
  link();
  // Bounded nesting: every regenerate point recomputes, inside its
  // `scf.if`, the candidates its recompute reads that may be away there,
  // recursively. In a training step the kept activations form chains (each
  // layer's recomputable from the previous one's), and unbounded, every
  // regenerate point recomputed the chain back to its start: the IR grew
  // with the square of the chain (a MobileNetV3-small step: 24,000 nested
  // `scf.if`, and one-shot bufferization out of memory). Candidates are
  // taken in program order of their values (a recompute reads only values
  // defined before its own), each dropped when its regeneration would nest
  // more than kMaxNestedRegeneration levels deep or the ops cloned by all
  // regenerations so far would pass the budget (twice the function's ops,
  // at least kMinCloneBudget). A dropped candidate stays live: the next ones
  // read it as it is, a checkpoint (Chen et al., "Training Deep Nets with
  // Sublinear Memory Cost").
  constexpr unsigned kMaxNestedRegeneration = 6;
  constexpr uint64_t kMinCloneBudget = 4000;
  const uint64_t budget =
      std::max<uint64_t>(kMinCloneBudget, 2 * (uint64_t)index.size());
  SmallVector<unsigned> byDef(result.size());
  std::iota(byDef.begin(), byDef.end(), 0u);
  llvm::stable_sort(byDef, [&](unsigned a, unsigned b) {
    return defIndex(result[a]) < defIndex(result[b]);
  });
  SmallVector<bool> keep(result.size(), false);
  // The levels of nested regeneration below candidate `id` at point `r`,
  // and the ops its regeneration there clones (an upper bound: a candidate
  // read twice is counted twice).
  std::function<std::pair<unsigned, uint64_t>(unsigned, unsigned)> nesting =
      [&](unsigned id, unsigned r) {
        unsigned deepest = 0;
        uint64_t ops = result[id].recompute.size();
        for (unsigned d : result[id].reads) {
          const RematCandidate &dc = result[d];
          if (!keep[d] || dc.evictAfter >= r || dc.regenerateBefore <= r)
            continue; // Live at #r, or regenerated before it.
          auto [depth, cloned] = nesting(d, r);
          deepest = std::max(deepest, depth + 1);
          ops += cloned;
          if (deepest > kMaxNestedRegeneration || ops > budget)
            break;
        }
        return std::make_pair(deepest, ops);
      };
  bool dropped = false;
  uint64_t cloned = 0;
  for (unsigned id : byDef) {
    keep[id] = true;
    auto [depth, ops] = nesting(id, result[id].regenerateBefore);
    if (depth > kMaxNestedRegeneration || cloned + ops > budget) {
      keep[id] = false;
      dropped = true;
      continue;
    }
    cloned += ops;
  }
  if (dropped) {
    SmallVector<RematCandidate> kept;
    for (auto [id, c] : llvm::enumerate(result))
      if (keep[id])
        kept.push_back(std::move(c));
    result = std::move(kept);
    link();
  }
  return result;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

llvm::json::Object mlir::disc::rematToJson(MemoryModel &mm,
                                           const MemoryProfile &p,
                                           ArrayRef<RematCandidate> cands) {
  ShapeAnalysis &sa = mm.getShapeAnalysis();
  llvm::json::Array liveBefore, points, exits, list;
  for (unsigned i = 0; i < p.order.size(); ++i) {
    liveBefore.push_back(exprToJson(p.liveBefore[i], sa));
    llvm::json::Array pts;
    for (AffineExpr e : p.livePoints[i])
      pts.push_back(exprToJson(e, sa));
    points.push_back(std::move(pts));
  }
  for (AffineExpr e : p.exitPoints)
    exits.push_back(exprToJson(e, sa));
  for (auto [id, c] : llvm::enumerate(cands)) {
    llvm::json::Array ops, recomputePoints;
    for (Operation *op : c.recompute)
      ops.push_back(opName(op));
    for (AffineExpr e : c.recomputePoints)
      recomputePoints.push_back(exprToJson(e, sa));
    list.push_back(llvm::json::Object{
        {"id", static_cast<int64_t>(id)},
        {"producer", opName(c.recompute.back())},
        {"evict_after", c.evictAfter},
        {"regenerate_before", c.regenerateBefore},
        {"regenerate_order", c.regenerateOrder},
        {"bytes", exprToJson(c.bytes, sa)},
        {"bytes_text", mm.render(c.bytes)},
        {"recompute_peak_bytes", exprToJson(c.recomputePeakBytes, sa)},
        {"recompute_points", std::move(recomputePoints)},
        {"flops", exprToJson(c.flops, sa)},
        {"flops_text", mm.render(c.flops)},
        {"recompute_ops", std::move(ops)},
        {"library_calls", llvm::json::Array(c.libraryCalls)},
        {"reads", llvm::json::Array(llvm::map_range(
                      c.reads, [](unsigned r) { return int64_t(r); }))}});
  }
  return llvm::json::Object{{"num_ops", static_cast<int64_t>(p.order.size())},
                            {"live_before", std::move(liveBefore)},
                            {"points", std::move(points)},
                            {"exit_points", std::move(exits)},
                            {"candidates", std::move(list)}};
}

//===----------------------------------------------------------------------===//
// IR rewrite
//===----------------------------------------------------------------------===//

static func::FuncOp getOrDeclare(ModuleOp module, StringRef name,
                                 FunctionType type, bool cInterface) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  if (cInterface)
    f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

void mlir::disc::applyRemat(func::FuncOp func, const MemoryProfile &p,
                            ArrayRef<RematCandidate> candidates) {
  if (candidates.empty())
    return;
  auto module = func->getParentOfType<ModuleOp>();
  MLIRContext *ctx = func.getContext();
  Block *body = &func.getBody().front();
  llvm::DenseMap<Operation *, unsigned> index;
  for (auto [i, op] : llvm::enumerate(p.order))
    index[op] = i;
  llvm::DenseMap<Operation *, Operation *> lastAfter;
  OpBuilder b(ctx);
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  func::FuncOp regen = getOrDeclare(
      module, kRematRegenerateFn, FunctionType::get(ctx, {i64}, {i32}), false);
  func::FuncOp regenerated = getOrDeclare(
      module, kRematRegeneratedFn, FunctionType::get(ctx, {i64}, {}), false);
  // Evict points, in id order: the dynamic dims, then the call (the
  // value's last use before the gap).
  SmallVector<SmallVector<Value>> dynDimsOf(candidates.size());
  SmallVector<func::FuncOp> evictFn(candidates.size());
  for (auto [id, c] : llvm::enumerate(candidates)) {
    Value v = c.value;
    auto type = cast<RankedTensorType>(v.getType());
    Location loc = v.getLoc();
    Operation *evictOp = p.order[c.evictAfter];
    Operation *&after = lastAfter[evictOp];
    b.setInsertionPointAfter(after ? after : evictOp);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynDimsOf[id].push_back(tensor::DimOp::create(b, loc, v, d));
    Value idValue = arith::ConstantIntOp::create(b, loc, id, 64);
    evictFn[id] = getOrDeclare(module, (kRematEvictPrefix + Twine(id)).str(),
                               FunctionType::get(ctx, {i64, type}, {}), true);
    after = func::CallOp::create(b, loc, evictFn[id], ValueRange{idValue, v});
  }
  SmallVector<Value> regenValue(candidates.size());
  // The regeneration of candidate `id` at `eb`'s insertion point, for a
  // regenerate point before op #r: ask the runtime; when it kept the block,
  // the block comes back to the next allocation; else recompute into it.
  // A candidate the recompute reads is read as itself when it is live at
  // #r, as its regenerated value when it came back at or before #r, and
  // else (it may be away: its gap covers #r) regenerated here first,
  // recursively, and handed back to the runtime right after the recompute
  // (an evict call: a kept block is kept again, a recomputed one freed).
  // `scope`: candidates already regenerated in an enclosing recompute at
  // this point (their values dominate this one), read as they are.
  using Scope = llvm::DenseMap<unsigned, Value>;
  std::function<Value(OpBuilder &, unsigned, unsigned, Scope)> emitRegenerate =
      [&](OpBuilder &eb0, unsigned id, unsigned r, Scope scope) -> Value {
    const RematCandidate &c = candidates[id];
    Value v = c.value;
    auto type = cast<RankedTensorType>(v.getType());
    Location loc = v.getLoc();
    Value rid = arith::ConstantIntOp::create(eb0, loc, id, 64);
    Value status =
        func::CallOp::create(eb0, loc, regen, ValueRange{rid}).getResult(0);
    Value zero = arith::ConstantIntOp::create(eb0, loc, 0, 32);
    Value kept =
        arith::CmpIOp::create(eb0, loc, arith::CmpIPredicate::ne, status, zero);
    Value buf =
        bufferization::AllocTensorOp::create(eb0, loc, type, dynDimsOf[id])
            .getResult();
    auto ifOp = scf::IfOp::create(eb0, loc, TypeRange{type}, kept,
                                  /*withElseRegion=*/true);
    // Read by the shape analysis: the result has the value's dims.
    ifOp->setAttr("disc.remat_regenerate", eb0.getUnitAttr());
    OpBuilder tb = ifOp.getThenBodyBuilder();
    scf::YieldOp::create(tb, loc, buf);
    OpBuilder eb = ifOp.getElseBodyBuilder();
    IRMapping map;
    SmallVector<std::pair<unsigned, Value>> lent;
    for (unsigned d : c.reads) {
      const RematCandidate &dc = candidates[d];
      if (dc.evictAfter >= r)
        continue; // live at #r
      if (dc.regenerateBefore <= r) {
        assert(regenValue[d] &&
               "a candidate read by a recompute is regenerated first");
        map.map(dc.value, regenValue[d]);
        continue;
      }
      if (Value v = scope.lookup(d)) {
        map.map(dc.value, v);
        continue;
      }
      Value nested = emitRegenerate(eb, d, r, scope);
      map.map(dc.value, nested);
      lent.push_back({d, nested});
      scope[d] = nested;
    }
    for (Operation *op : c.recompute)
      eb.clone(*op, map);
    Value result = map.lookup(v);
    for (auto [d, nested] : lent) {
      Value did = arith::ConstantIntOp::create(eb, loc, d, 64);
      func::CallOp::create(eb, loc, evictFn[d], ValueRange{did, nested});
    }
    auto materialize =
        bufferization::MaterializeInDestinationOp::create(eb, loc, result, buf);
    if (c.writesInPlace)
      materialize->setAttr(kRegenerateInPlaceAttr, eb.getUnitAttr());
    Value m = materialize.getResult();
    func::CallOp::create(eb, loc, regenerated, ValueRange{rid});
    scf::YieldOp::create(eb, loc, m);
    return ifOp.getResult(0);
  };
  // Regenerate points, in regeneration order (at one point, a candidate
  // read by another's recompute comes first).
  SmallVector<unsigned> seq(candidates.size());
  for (auto [id, c] : llvm::enumerate(candidates))
    seq[c.regenerateOrder] = id;
  for (unsigned id : seq) {
    const RematCandidate &c = candidates[id];
    // Before the next use, or before the first op of its fusion group
    // (sinkFusedProducers made the group contiguous): a fused producer
    // of that root may be what reads the value.
    Operation *next = p.order[c.regenerateBefore];
    while (Operation *prev = next->getPrevNode())
      if (isFusedProducer(prev) &&
          getFusionRoot(prev) == p.order[c.regenerateBefore])
        next = prev;
      else
        break;
    b.setInsertionPoint(next);
    regenValue[id] = emitRegenerate(b, id, c.regenerateBefore, Scope());
  }
  // Later uses read the regenerated values. Only after every recompute has
  // been cloned: a recompute that goes back through another candidate's
  // producer (one that is not live at its regenerate point) clones it and
  // reads the clone.
  for (auto [id, c] : llvm::enumerate(candidates)) {
    unsigned r = c.regenerateBefore;
    Value v = c.value;
    v.replaceUsesWithIf(regenValue[id], [&](OpOperand &use) {
      Operation *top = body->findAncestorOpInBlock(*use.getOwner());
      auto it = index.find(top ? getFusionRoot(top) : top);
      return it != index.end() && it->second >= r;
    });
  }
}

FailureOr<llvm::json::Object>
mlir::disc::applyRematToEntry(ModuleOp module, StringRef entry,
                              const RematOptions &options) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no entry function '") << entry << "'";
  if (!func.getBody().hasOneBlock())
    return llvm::json::Object{{"candidates", llvm::json::Array{}}};
  FunctionMemory fm(func);
  MemoryModel &mm = *fm.model;
  mm.setLibraryTemporaries(options.libraryTemporaries);
  MemoryProfile p = mm.profile();
  // An upper bound is no base for evict/regenerate decisions.
  if (!mm.isPredictable(p) || mm.isUpperBound(p))
    return llvm::json::Object{{"candidates", llvm::json::Array{}}};
  SmallVector<RematCandidate> cands = findRematCandidates(mm, p, options);
  llvm::json::Object json = rematToJson(mm, p, cands);
  applyRemat(func, p, cands);
  return json;
}

void mlir::disc::printRematCandidates(ModuleOp module, StringRef entry,
                                      const RematOptions &options,
                                      llvm::raw_ostream &os) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || !func.getBody().hasOneBlock())
    return;
  FunctionMemory fm(func);
  ShapeAnalysis &sa = *fm.shapes;
  MemoryModel &mm = *fm.model;
  mm.setLibraryTemporaries(options.libraryTemporaries);
  MemoryProfile p = mm.profile();
  if (!mm.isPredictable(p)) {
    os << "remat candidates: none (sizes not predictable)\n";
    return;
  }
  if (mm.isUpperBound(p)) {
    os << "remat candidates: none (the peak is an upper bound)\n";
    return;
  }
  SmallVector<RematRejection> rejected;
  SmallVector<RematCandidate> cands =
      findRematCandidates(mm, p, options, &rejected);
  os << "remat candidates: " << cands.size() << "\n";
  for (auto [id, c] : llvm::enumerate(cands)) {
    os << "  candidate " << id << ": " << opName(c.recompute.back())
       << " bytes=" << mm.render(c.bytes) << " evict after #" << c.evictAfter
       << ", regenerate before #" << c.regenerateBefore << "; recompute "
       << c.recompute.size() << " ops, flops=" << mm.render(c.flops)
       << ", peak +" << mm.render(c.recomputePeakBytes) << "\n";
  }
  // The peak with every candidate evicted, at the printing bindings,
  // simulated op by op as the runtime's planner does
  // (runtime/lib/core/RematPlanner.cpp, which also tries other plans at the
  // actual shapes and adds the library calls' temporaries): before op i
  // the regenerations there, each with its nested ones (which then stay
  // back), at op i its points minus the bytes away, after it the evictions.
  llvm::StringMap<int64_t> likely = printBindings(sa);
  auto val = [&](AffineExpr e) { return mm.evaluate(e, likely).value_or(0); };
  size_t n = p.order.size();
  SmallVector<SmallVector<unsigned>> regenAt(n), evictAt(n);
  for (auto [k, c] : llvm::enumerate(cands)) {
    regenAt[c.regenerateBefore].push_back(k);
    evictAt[c.evictAfter].push_back(k);
  }
  for (SmallVector<unsigned> &at : regenAt)
    llvm::sort(at, [&](unsigned a, unsigned b) {
      return cands[a].regenerateOrder < cands[b].regenerateOrder;
    });
  SmallVector<bool> away(cands.size(), false);
  int64_t awayBytes = 0, minimum = 0, unconstrained = 0;
  // Returns the highest bytes on top of the live bytes when it starts;
  // `held` ends with the bytes that stay back (every nested one does).
  std::function<int64_t(unsigned, unsigned, int64_t &)> regenerate =
      [&](unsigned k, unsigned r, int64_t &held) {
        const RematCandidate &c = cands[k];
        away[k] = false;
        awayBytes -= val(c.bytes);
        held = val(c.bytes);
        int64_t top = held;
        for (unsigned d : c.reads) {
          const RematCandidate &dc = cands[d];
          if (!away[d] || dc.evictAfter >= r || dc.regenerateBefore <= r)
            continue;
          int64_t back = 0;
          top = std::max(top, held + regenerate(d, r, back));
          held += back;
        }
        for (AffineExpr e : c.recomputePoints)
          top = std::max(top, held + val(e));
        return top;
      };
  for (size_t i = 0; i < n; ++i) {
    for (unsigned k : regenAt[i])
      if (away[k]) {
        int64_t base = val(p.liveBefore[i]) - awayBytes, held = 0;
        minimum = std::max(minimum, base + regenerate(k, i, held));
      }
    for (AffineExpr e : p.livePoints[i]) {
      minimum = std::max(minimum, val(e) - awayBytes);
      unconstrained = std::max(unconstrained, val(e));
    }
    for (unsigned k : evictAt[i]) {
      away[k] = true;
      awayBytes += val(cands[k].bytes);
    }
  }
  for (AffineExpr e : p.exitPoints) {
    minimum = std::max(minimum, val(e));
    unconstrained = std::max(unconstrained, val(e));
  }
  os << "  peak with every candidate evicted: " << minimum << " bytes ("
     << unconstrained << " with none) at the bindings above\n";
  for (const RematRejection &r : rejected)
    os << "  rejected: " << opName(r.value.getDefiningOp()) << " (gap #"
       << r.evictAfter << " to #" << r.regenerateBefore << "): " << r.reason
       << "\n";
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct RematPass : public disc::impl::DiscRematBase<RematPass> {
  using DiscRematBase::DiscRematBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<DimRange> ranges = collectDimRanges(module);
    RematOptions options;
    options.maxOps = maxOps;
    options.maxFlopsPerByte = maxFlopsPerByte;
    options.minGapOps = minGap;
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock())
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      FunctionMemory fm(func, ranges);
      MemoryModel &mm = *fm.model;
      MemoryProfile p = mm.profile();
      if (!mm.isPredictable(p) || mm.isUpperBound(p))
        continue;
      SmallVector<RematRejection> rejected;
      SmallVector<RematCandidate> cands =
          findRematCandidates(mm, p, options, &rejected);
      if (remarks) {
        for (auto [id, c] : llvm::enumerate(cands))
          mlir::emitRemark(c.value.getLoc())
              << "remat candidate " << id << ": bytes " << mm.render(c.bytes)
              << ", evict after #" << c.evictAfter << ", regenerate before #"
              << c.regenerateBefore << ", recompute " << c.recompute.size()
              << " ops, flops " << mm.render(c.flops) << ", peak +"
              << mm.render(c.recomputePeakBytes);
        for (const RematRejection &r : rejected)
          mlir::emitRemark(r.value.getLoc()) << "remat rejected: " << r.reason;
      }
      applyRemat(func, p, cands);
    }
  }
};
} // namespace

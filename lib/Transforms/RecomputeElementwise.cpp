//===- RecomputeElementwise.cpp - disc-recompute-elementwise --------------===//
//
// Recomputes a cheap elementwise value at its distant uses instead of
// keeping its buffer across the gap, where everything the recompute reads
// is live there anyway. In a training step (disc-build-training-step) this
// is the activation that the backward pass reads again long after the
// forward made it: `sigmoid(x)` and `x * sigmoid(x)` of a SwiGLU when `x`
// is kept for its own gradient, `x * r` and `x * r * w` of an RMSNorm when
// `x` and `r` are kept. Every leaf of a recompute is live at the distant
// uses already (a block argument, a constant, or a value read at the last
// distant use or at most 8 ops before it), so no live range grows by more
// than those few ops while the value's own buffer dies at its last near
// use; the values are the same bits (the same ops on the same operands). Each
// distant use gets its own copy, which disc-fusion fuses into it when it is
// elementwise or a reduction (no buffer at all). This is the compile-time,
// limit-independent half of rematerialization (Chen et al., "Training Deep
// Nets with Sublinear Memory Cost", 2016: recompute cheap ops rather than
// storing them; XLA's and TVM's remat of elementwise ops); the runtime's
// evict/regenerate (disc-attach-remat) handles the rest under a limit.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCRECOMPUTEELEMENTWISE
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// A pure elementwise op with one ranked tensor result (the ops disc-fusion
/// fuses) and no region.
bool isCheap(Operation *op) {
  return takesBroadcastProofs(op) && op->getNumResults() == 1 &&
         op->getNumRegions() == 0 && isPure(op) &&
         isa<RankedTensorType>(op->getResult(0).getType());
}

/// A value too small to matter (a static tensor of fewer than 256
/// elements).
bool isSmall(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.hasStaticShape() && t.getNumElements() < 256;
}

struct RecomputeElementwisePass
    : public disc::impl::DiscRecomputeElementwiseBase<
          RecomputeElementwisePass> {
  using DiscRecomputeElementwiseBase::DiscRecomputeElementwiseBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock()) {
        runOnBlock(func.getBody().front());
        if (nearWindow > 0)
          runNearOnBlock(func.getBody().front());
      }
  }

  /// True when `leaf` has fewer elements than `full` by its type alone: a
  /// lower rank, a static 1 where `full`'s dim is not, or a static size
  /// below 256 elements.
  static bool isBroadcastLeaf(Value leaf, Value full) {
    auto lt = dyn_cast<RankedTensorType>(leaf.getType());
    auto ft = cast<RankedTensorType>(full.getType());
    if (!lt)
      return false;
    if (isSmall(leaf) || lt.getRank() < ft.getRank())
      return true;
    int64_t lead = lt.getRank() - ft.getRank();
    for (int64_t i = 0; i < ft.getRank(); ++i)
      if (lt.getDimSize(i + lead) == 1 && ft.getDimSize(i) != 1)
        return true;
    return false;
  }

  /// The near recompute (`near-window`, Passes.td): each elementwise value
  /// read only by elementwise ops and reductions within the window, whose
  /// chain (the value's op and its single-use elementwise producers, which
  /// disc-fusion fuses into it) reads one full-size tensor at most, gets a
  /// copy of the chain before each of its operand reads.
  void runNearOnBlock(Block &block) {
    llvm::DenseMap<Operation *, unsigned> pos;
    unsigned n = 0;
    for (Operation &op : block)
      pos[&op] = n++;
    SmallVector<Operation *> work;
    for (Operation &op : block)
      if (isCheap(&op) && !isSmall(op.getResult(0)) &&
          !op.getResult(0).hasOneUse() && !op.getResult(0).use_empty())
        work.push_back(&op);
    for (Operation *op : work) {
      Value v = op->getResult(0);
      unsigned at = pos.lookup(op);
      bool ok = true;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        ok &= user->getBlock() == &block && pos.lookup(user) > at &&
              pos.lookup(user) - at <= nearWindow &&
              (isCheap(user) ||
               (isa<ReduceOp>(user) && use.getOperandNumber() == 0));
      }
      if (!ok)
        continue;
      // The chain: `op` and, backward, producers that only it reads.
      llvm::SetVector<Operation *> chain;
      SmallVector<Operation *> stack{op};
      SmallVector<Value> leaves;
      while (!stack.empty()) {
        Operation *c = stack.pop_back_val();
        if (!chain.insert(c))
          continue;
        for (Value w : c->getOperands()) {
          Operation *def = w.getDefiningOp();
          if (def && def->getBlock() == &block && isCheap(def) &&
              w.hasOneUse() && chain.size() < 8)
            stack.push_back(def);
          else
            leaves.push_back(w);
        }
      }
      unsigned full = 0;
      for (Value leaf : leaves) {
        Operation *def = leaf.getDefiningOp();
        if (def && def->hasTrait<OpTrait::ConstantLike>())
          continue;
        full += !isBroadcastLeaf(leaf, v);
      }
      if (full > 1)
        continue;
      SmallVector<Operation *> ops(chain.begin(), chain.end());
      llvm::sort(ops, [&](Operation *a, Operation *b) {
        return pos.lookup(a) < pos.lookup(b);
      });
      for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
        Operation *user = use.getOwner();
        OpBuilder b(user);
        IRMapping map;
        for (Operation *c : ops) {
          Operation *copy = b.clone(*c, map);
          copy->setAttr(kRecomputeCopyAttrName, b.getUnitAttr());
        }
        use.set(map.lookup(v));
      }
      for (Operation *c : llvm::reverse(ops))
        if (c->use_empty())
          c->erase();
      ++numRecomputed;
    }
  }

  void runOnBlock(Block &block) {
    // Positions in program order; a copy takes its user's position.
    llvm::DenseMap<Operation *, unsigned> pos;
    unsigned n = 0;
    for (Operation &op : block)
      pos[&op] = n++;
    auto top = [&](Operation *op) { return block.findAncestorOpInBlock(*op); };
    // The last position where `v`'s buffer is read: its users', through
    // the reshapes that view it.
    std::function<unsigned(Value)> lastRead = [&](Value v) -> unsigned {
      unsigned last = 0;
      for (Operation *user : v.getUsers()) {
        Operation *t = top(user);
        if (!t)
          continue;
        last = std::max(last, pos.lookup(t));
        if (isa<DynamicReshapeOp>(user) && user == t)
          last = std::max(last, lastRead(user->getResult(0)));
      }
      return last;
    };
    // Live at position `at` whatever this pass does.
    auto liveAt = [&](Value w, unsigned at) {
      if (isa<BlockArgument>(w))
        return true;
      Operation *def = w.getDefiningOp();
      if (def->hasTrait<OpTrait::ConstantLike>())
        return true;
      return lastRead(w) >= at;
    };

    SmallVector<Operation *> work;
    for (Operation &op : block)
      if (isCheap(&op) && !isSmall(op.getResult(0)))
        work.push_back(&op);
    for (Operation *op : work) {
      Value v = op->getResult(0);
      // Uses by position; a use in a nested region or by the terminator
      // (a returned value lives to the end anyway) leaves `v` alone.
      SmallVector<std::pair<unsigned, OpOperand *>> uses;
      bool ok = true;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (user->getBlock() != &block ||
            user->hasTrait<OpTrait::IsTerminator>()) {
          ok = false;
          break;
        }
        uses.push_back({pos.lookup(user), &use});
      }
      if (!ok || uses.empty())
        continue;
      llvm::stable_sort(uses,
                        [](auto &a, auto &b) { return a.first < b.first; });
      // The largest gap between the definition and a use or between two
      // uses; the uses after it are the distant ones.
      unsigned prev = pos.lookup(op), bestGap = 0, split = 0;
      for (auto [k, u] : llvm::enumerate(uses)) {
        if (u.first - prev > bestGap) {
          bestGap = u.first - prev;
          split = k;
        }
        prev = u.first;
      }
      if (bestGap < minGap)
        continue;
      // Every copy must find its leaves live: they are read at the last
      // distant use or at most kSlack ops before it (a leaf read by the
      // op right before the distant users, as a gradient reads `x` next
      // to `sigmoid(x)`, lives on for those few ops).
      constexpr unsigned kSlack = 8;
      unsigned last = uses.back().first;
      unsigned at = last > kSlack ? last - kSlack : 0;
      // The ops to recompute: backward from `op` over cheap ops whose
      // results are not live at `at`.
      llvm::SetVector<Operation *> chain;
      SmallVector<Operation *> stack{op};
      while (!stack.empty() && ok) {
        Operation *c = stack.pop_back_val();
        if (!chain.insert(c))
          continue;
        if (chain.size() > maxOps) {
          ok = false;
          break;
        }
        for (Value w : c->getOperands()) {
          if (liveAt(w, at))
            continue;
          Operation *def = w.getDefiningOp();
          if (!def || def->getBlock() != &block || !isCheap(def)) {
            ok = false;
            break;
          }
          stack.push_back(def);
        }
      }
      if (!ok)
        continue;
      SmallVector<Operation *> ops(chain.begin(), chain.end());
      llvm::sort(ops, [&](Operation *a, Operation *b) {
        return pos.lookup(a) < pos.lookup(b);
      });
      // A copy per distant user (each fuses into its user); past
      // kMaxCopies users, one copy before the first serves them all.
      constexpr size_t kMaxCopies = 4;
      SmallVector<OpOperand *> distant;
      for (auto &u : ArrayRef(uses).drop_front(split))
        distant.push_back(u.second);
      auto copyBefore = [&](Operation *user) {
        OpBuilder b(user);
        IRMapping map;
        for (Operation *c : ops) {
          Operation *copy = b.clone(*c, map);
          copy->setAttr(kRecomputeCopyAttrName, b.getUnitAttr());
          pos[copy] = pos.lookup(user);
        }
        return map.lookup(v);
      };
      // Readers that can fuse the copy (elementwise ops, reductions) get
      // their own; the others (a library call, a data-movement op) share
      // one, made before the first of them, as a regenerated value would
      // be.
      SmallVector<OpOperand *> shared;
      size_t own = 0;
      for (OpOperand *use : distant)
        if (isCheap(use->getOwner()) || isa<ReduceOp>(use->getOwner()))
          ++own;
      bool share = own > kMaxCopies;
      for (OpOperand *use : distant) {
        Operation *user = use->getOwner();
        if (!share && (isCheap(user) || isa<ReduceOp>(user)))
          use->set(copyBefore(user));
        else
          shared.push_back(use);
      }
      if (!shared.empty()) {
        Value copy = copyBefore(shared.front()->getOwner());
        for (OpOperand *use : shared)
          use->set(copy);
      }
      ++numRecomputed;
    }
  }
};

} // namespace

//===- StitchRows.cpp - disc-gpu-stitch-rows
//-------------------------------===//
//
// Row kernels (docs/cuda.md, "Row kernels"): a run of loop nests over the
// same rows — reductions over the innermost dims (a Softmax's max and sum,
// a LayerNorm's mean and variance) and the elementwise nests that read
// their results at the row's broadcast index — becomes one `gpu.launch`
// with one block per row (a grid-stride loop over the rows), the nests as
// phases separated by `gpu.barrier`:
//
//  * an elementwise phase: the block's threads stride over the row
//    (`for j = tid; j < D; j += blockDim`);
//  * a reduction phase: each thread folds its strided elements into a
//    partial value starting from the combiner's identity, the block
//    combines the partials (a butterfly of `gpu.shuffle xor` within each
//    warp, one value per warp in shared memory, every thread folds the
//    warps' values in warp order, so all threads get the same total), and
//    thread 0 runs the reduction's own code with the loop replaced by one
//    `combine(init, total)` (its init store and epilogue, e.g. the mean's
//    division, included);
//  * a phase over the row alone (an epilogue over the [rows, 1] buffer):
//    thread 0.
//
// This is the "stitch" fusion of BladeDISC (Zheng et al., "DISC: A Dynamic
// Shape Compiler for Machine Learning Workloads", EuroMLSys 2021; AStitch,
// ASPLOS 2022): reductions with their producers and consumers in one kernel,
// the row's intermediate values exchanged through the block. Allocations and
// their size checks between the nests move above the kernel; nothing else
// moves (a deallocation, a call or a remat point ends the run), so the
// buffers live exactly as long as before and the memory model's peak stays.
//
// The block size is chosen at run time from the row length: the smallest
// multiple of 32 covering it, at most `max-block-size`.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Transforms/GPU/KernelCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUSTITCHROWS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// One nest of a row kernel.
struct Phase {
  enum Kind { Elementwise, Reduction, Row } kind;
  scf::ParallelOp op;
  /// Reduction: the perfectly nested loops over the reduced dims
  /// (outermost first), the load of the output in the innermost body, the
  /// combiner and the store of its result.
  SmallVector<scf::ForOp> loops;
  memref::LoadOp accLoad;
  Operation *combine = nullptr;
  memref::StoreOp accStore;
  /// Reduction: the ops of the body before the loops that the loops use.
  llvm::SetVector<Operation *> needed;
};

/// The identity of a commutative, associative combiner of `type`, or null.
TypedAttr identityOf(Operation *combine, Type type) {
  auto floatOf = [&](double v) -> TypedAttr {
    auto ft = dyn_cast<FloatType>(type);
    if (!ft)
      return {};
    return FloatAttr::get(ft, v);
  };
  auto intOf = [&](APInt v) -> TypedAttr {
    auto it = dyn_cast<IntegerType>(type);
    if (!it)
      return {};
    return IntegerAttr::get(it, v);
  };
  unsigned w = type.isIntOrIndex() ? type.getIntOrFloatBitWidth() : 0;
  double inf = std::numeric_limits<double>::infinity();
  return llvm::TypeSwitch<Operation *, TypedAttr>(combine)
      .Case<arith::AddFOp>([&](auto) { return floatOf(0.0); })
      .Case<arith::MulFOp>([&](auto) { return floatOf(1.0); })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>(
          [&](auto) { return floatOf(-inf); })
      .Case<arith::MinimumFOp, arith::MinNumFOp>(
          [&](auto) { return floatOf(inf); })
      .Case<arith::AddIOp, arith::OrIOp, arith::XOrIOp, arith::MaxUIOp>(
          [&](auto) { return intOf(APInt::getZero(w)); })
      .Case<arith::MulIOp>([&](auto) { return intOf(APInt(w, 1)); })
      .Case<arith::AndIOp, arith::MinUIOp>(
          [&](auto) { return intOf(APInt::getAllOnes(w)); })
      .Case<arith::MaxSIOp>(
          [&](auto) { return intOf(APInt::getSignedMinValue(w)); })
      .Case<arith::MinSIOp>(
          [&](auto) { return intOf(APInt::getSignedMaxValue(w)); })
      .Default([](Operation *) { return TypedAttr(); });
}

/// Element types the warp shuffle takes (32-bit).
bool isShuffleType(Type t) { return t.isF32() || t.isInteger(32); }

bool isZeroLowerUnitStep(scf::ParallelOp op) {
  for (auto [lb, step] : llvm::zip(op.getLowerBound(), op.getStep()))
    if (!isConstantIntValue(lb, 0) || !isConstantIntValue(step, 1))
      return false;
  return true;
}

bool isZeroLowerUnitStep(scf::ForOp op) {
  return isConstantIntValue(op.getLowerBound(), 0) &&
         isConstantIntValue(op.getStep(), 1) && op.getInitArgs().empty();
}

/// Ops a phase body may hold: no calls (run-time checks), no nested
/// parallel loops, no allocation.
bool isPlainBody(Operation *root) {
  WalkResult r = root->walk([&](Operation *op) {
    if (op == root)
      return WalkResult::advance();
    if (isa<CallOpInterface, scf::ParallelOp, memref::AllocOp, memref::AllocaOp,
            memref::DeallocOp, gpu::LaunchOp>(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// Matches the reduction loops of `phase.op`: a chain of perfectly nested
/// scf.for loops (from 0, step 1) at the top level of the body whose
/// innermost body reads the output once, combines it with a value of the
/// iteration and stores the result at the same loop-invariant indices.
bool matchReduction(Phase &phase) {
  Block *body = phase.op.getBody();
  scf::ForOp outer;
  for (Operation &op : *body) {
    if (auto f = dyn_cast<scf::ForOp>(op)) {
      if (outer)
        return false;
      outer = f;
    } else if (op.getNumRegions() != 0) {
      return false;
    }
  }
  if (!outer)
    return false;
  scf::ForOp f = outer;
  while (true) {
    if (!isZeroLowerUnitStep(f) || f.getNumResults() != 0)
      return false;
    phase.loops.push_back(f);
    Block &b = *f.getBody();
    if (b.getOperations().size() == 2)
      if (auto inner = dyn_cast<scf::ForOp>(b.front())) {
        f = inner;
        continue;
      }
    break;
  }
  Block &inner = *phase.loops.back().getBody();
  for (Operation &op : inner.without_terminator()) {
    if (op.getNumRegions() != 0)
      return false;
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (phase.accStore)
        return false;
      phase.accStore = store;
      continue;
    }
    if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(&op))
      return false;
  }
  if (!phase.accStore)
    return false;
  Operation *combine = phase.accStore.getValueToStore().getDefiningOp();
  if (!combine || combine->getBlock() != &inner ||
      combine->getNumOperands() != 2 || combine->getNumResults() != 1 ||
      !combine->getResult(0).hasOneUse())
    return false;
  for (Value operand : combine->getOperands()) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == phase.accStore.getMemRef() &&
        load.getIndices() == phase.accStore.getIndices() &&
        load->getBlock() == &inner && load->hasOneUse())
      phase.accLoad = load;
  }
  if (!phase.accLoad)
    return false;
  Type t = combine->getResult(0).getType();
  if (!isShuffleType(t) || !identityOf(combine, t))
    return false;
  // The output is read and written only by these two ops, at indices
  // defined outside the loops; the loop bounds are defined outside the nest
  // (the host sizes the block by them).
  for (Value idx : phase.accStore.getIndices())
    if (outer->isAncestor(idx.getParentBlock()->getParentOp()))
      return false;
  for (scf::ForOp f : phase.loops)
    if (phase.op->isAncestor(f.getUpperBound().getParentBlock()->getParentOp()))
      return false;
  bool otherAccess = false;
  outer->walk([&](Operation *op) {
    if (op == phase.accLoad || op == phase.accStore)
      return;
    if (auto l = dyn_cast<memref::LoadOp>(op))
      otherAccess |= l.getMemRef() == phase.accStore.getMemRef();
  });
  if (otherAccess)
    return false;
  phase.combine = combine;
  // What the loops use from the body before them: every thread computes it,
  // so it must be pure ops and loads of buffers the body does not write.
  SmallVector<Value> work;
  outer->walk(
      [&](Operation *op) { llvm::append_range(work, op->getOperands()); });
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || phase.needed.contains(def))
      continue;
    phase.needed.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  for (Operation *op : phase.needed) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      for (Operation &other : *body)
        if (auto store = dyn_cast<memref::StoreOp>(other))
          if (store.getMemRef() == load.getMemRef())
            return false;
      continue;
    }
    if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      return false;
  }
  return true;
}

/// A run of phases over the same rows.
struct Group {
  unsigned rank = 0; // number of row dims
  SmallVector<Value> rows;
  SmallVector<Phase> phases;
  /// Ops between the phases that move above the kernel.
  SmallVector<Operation *> hoisted;
  /// A deallocation or eviction lies between two phases (it stays after
  /// the kernel; no allocation may follow it).
  bool freed = false;
  bool hasReduction() const {
    return llvm::any_of(
        phases, [](const Phase &p) { return p.kind == Phase::Reduction; });
  }
};

bool sameBound(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> ca = getConstantIntValue(a);
  std::optional<int64_t> cb = getConstantIntValue(b);
  return ca && cb && *ca == *cb;
}

class Stitcher {
public:
  Stitcher(int64_t maxBlockSize, int64_t elementsPerThread)
      : maxBlockSize(maxBlockSize), elementsPerThread(elementsPerThread) {}

  /// Classifies an outermost nest against `group` (rank 0: a new group).
  std::optional<Phase> classify(scf::ParallelOp op, const Group &group,
                                unsigned &rank) {
    if (op.getNumResults() != 0 || !isZeroLowerUnitStep(op) || !isPlainBody(op))
      return std::nullopt;
    unsigned n = op.getNumLoops();
    Phase phase;
    phase.kind = Phase::Elementwise;
    phase.op = op;
    if (matchReduction(phase)) {
      phase.kind = Phase::Reduction;
      rank = n;
    } else {
      // An elementwise nest: over the rows and the row (rank n - 1) when it
      // starts a group or when the group's rank is n - 1; over the rows
      // alone when the group's rank is n.
      if (group.phases.empty() || group.rank == n - 1) {
        if (n < 2)
          return std::nullopt;
        rank = n - 1;
      } else if (group.rank == n) {
        phase.kind = Phase::Row;
        rank = n;
      } else {
        return std::nullopt;
      }
    }
    return phase;
  }

  bool matchesRows(const Group &group, scf::ParallelOp op, unsigned rank) {
    if (group.phases.empty())
      return true;
    if (rank != group.rank)
      return false;
    for (unsigned k = 0; k < rank; ++k)
      if (!sameBound(op.getUpperBound()[k], group.rows[k]))
        return false;
    return true;
  }

  /// Every buffer a phase writes is an allocation, and every access of the
  /// group to it (or to what may alias it) indexes its leading dims with
  /// the phase's row variables: a row's phases touch only that row.
  bool rowsAreIndependent(Group &group) {
    SmallVector<std::pair<Operation *, unsigned>> accesses; // op, phase
    llvm::SetVector<Value> written;
    for (auto [i, phase] : llvm::enumerate(group.phases))
      phase.op.getBody()->walk([&](Operation *op) {
        if (auto store = dyn_cast<memref::StoreOp>(op)) {
          written.insert(store.getMemRef());
          accesses.push_back({op, i});
        } else if (isa<memref::LoadOp>(op)) {
          accesses.push_back({op, i});
        } else if (op->hasTrait<OpTrait::IsTerminator>() ||
                   isMemoryEffectFree(op) || isa<scf::ForOp, scf::IfOp>(op)) {
        } else {
          written.insert(Value()); // unknown effect: refuse below
        }
      });
    if (written.contains(Value()))
      return false;
    llvm::DenseMap<Value, llvm::SmallPtrSet<Value, 4>> derived;
    for (Value w : written) {
      if (!w.getDefiningOp<memref::AllocOp>())
        return false;
      SmallVector<Value> work{w};
      while (!work.empty()) {
        Value v = work.pop_back_val();
        for (Operation *user : v.getUsers())
          if (isa<ViewLikeOpInterface, CastOpInterface>(user))
            for (Value r : user->getResults())
              if (derived[w].insert(r).second)
                work.push_back(r);
      }
    }
    for (auto [op, i] : accesses) {
      Value mem;
      ValueRange idx;
      if (auto l = dyn_cast<memref::LoadOp>(op)) {
        mem = l.getMemRef();
        idx = l.getIndices();
      } else {
        auto s = cast<memref::StoreOp>(op);
        mem = s.getMemRef();
        idx = s.getIndices();
      }
      for (Value w : written) {
        // An allocation is fresh memory: only it and views of it reach it.
        if (mem != w && !derived[w].contains(mem))
          continue;
        if (mem != w)
          return false;
        // Leading dims of one element (a static batch of 1 whose loop
        // went) are read at 0; the next ones are the rows.
        auto type = cast<MemRefType>(mem.getType());
        unsigned skip = 0;
        while (skip < idx.size() && type.getDimSize(skip) == 1 &&
               isConstantIntValue(idx[skip], 0))
          ++skip;
        if (idx.size() < skip + group.rank)
          return false;
        auto ivs = group.phases[i].op.getInductionVars();
        for (unsigned k = 0; k < group.rank; ++k)
          if (idx[skip + k] != ivs[k])
            return false;
      }
    }
    return true;
  }

  void run(Block &block) {
    Group group;
    SmallVector<Operation *> pending;
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    auto finish = [&] {
      if (group.hasReduction() && !shortRows(group) &&
          rowsAreIndependent(group))
        build(group);
      group = Group();
      pending.clear();
    };
    for (Operation *op : ops) {
      if (auto par = dyn_cast<scf::ParallelOp>(op)) {
        unsigned rank = 0;
        std::optional<Phase> phase = classify(par, group, rank);
        if (phase && phase->kind == Phase::Reduction &&
            !matchesRows(group, par, rank))
          asRowPhases(group, par);
        // An allocation after a deallocation (or an eviction) cannot move
        // above the kernel: the buffers would overlap.
        bool freed = group.freed;
        bool allocAfterFree = false;
        for (Operation *p : pending) {
          freed |= cuda::isSinkableBetweenKernels(p);
          allocAfterFree |= freed && isa<memref::AllocOp>(p);
        }
        if (!phase || !matchesRows(group, par, rank) || allocAfterFree) {
          finish();
          phase = classify(par, group, rank);
          if (!phase)
            continue;
          freed = false;
        }
        if (group.phases.empty()) {
          group.rank = rank;
          for (unsigned k = 0; k < rank; ++k)
            group.rows.push_back(par.getUpperBound()[k]);
        } else {
          for (Operation *p : pending)
            if (!cuda::isSinkableBetweenKernels(p))
              group.hoisted.push_back(p);
        }
        group.freed = freed;
        pending.clear();
        group.phases.push_back(*phase);
        continue;
      }
      if (!group.phases.empty() && (cuda::isHoistableBetweenKernels(op) ||
                                    cuda::isSinkableBetweenKernels(op))) {
        pending.push_back(op);
        continue;
      }
      finish();
    }
    finish();
  }

  /// Whether every reduction of `group` folds a static number of elements
  /// below a warp's 32: one thread per row does better than a block.
  static bool shortRows(Group &group) {
    for (Phase &p : group.phases) {
      if (p.kind != Phase::Reduction)
        continue;
      int64_t n = 1;
      for (scf::ForOp f : p.loops) {
        std::optional<int64_t> ub = getConstantIntValue(f.getUpperBound());
        if (!ub)
          return false;
        n *= *ub;
      }
      if (n >= 32)
        return false;
    }
    return true;
  }

  /// A group of elementwise nests over exactly the bounds of reduction `op`
  /// (a keep-dims reduction's fill) becomes a run of phases over its rows.
  void asRowPhases(Group &group, scf::ParallelOp op) {
    if (group.phases.empty())
      return;
    unsigned n = op.getNumLoops();
    for (Phase &p : group.phases) {
      if (p.kind != Phase::Elementwise || p.op.getNumLoops() != n)
        return;
      for (unsigned k = 0; k < n; ++k)
        if (!sameBound(p.op.getUpperBound()[k], op.getUpperBound()[k]))
          return;
    }
    for (Phase &p : group.phases)
      p.kind = Phase::Row;
    group.rank = n;
    group.rows.assign(op.getUpperBound().begin(), op.getUpperBound().end());
  }

private:
  int64_t maxBlockSize;
  int64_t elementsPerThread;
  /// Copies of a strided loop's body per iteration (`unrolledStrided`).
  static constexpr int64_t kUnroll = 4;

  /// The block-wide combination of `partial` (every thread gets the total).
  Value blockCombine(OpBuilder &b, Location loc, Operation *combine,
                     Value partial, Value tid, Value numWarps, Value shared,
                     TypedAttr identity) {
    Type t = partial.getType();
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto combineWith = [&](Value acc, Value v) {
      IRMapping m;
      m.map(combine->getOperand(0), acc);
      m.map(combine->getOperand(1), v);
      return b.clone(*combine, m)->getResult(0);
    };
    Value v = partial;
    for (int32_t off = 16; off >= 1; off /= 2) {
      auto shuffle = gpu::ShuffleOp::create(b, loc, v, off, /*width=*/32,
                                            gpu::ShuffleMode::XOR);
      v = combineWith(v, shuffle.getShuffleResult());
    }
    Value lane = arith::RemUIOp::create(b, loc, tid, c(32));
    Value warp = arith::DivUIOp::create(b, loc, tid, c(32));
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, c(0));
    scf::IfOp::create(b, loc, first, [&](OpBuilder &tb, Location tl) {
      memref::StoreOp::create(tb, tl, v, shared, ValueRange{warp});
      scf::YieldOp::create(tb, tl);
    });
    gpu::BarrierOp::create(b, loc);
    Value init = arith::ConstantOp::create(b, loc, t, identity);
    auto fold = scf::ForOp::create(
        b, loc, c(0), numWarps, c(1), ValueRange{init},
        [&](OpBuilder &fb, Location fl, Value w, ValueRange acc) {
          Value x = memref::LoadOp::create(fb, fl, shared, ValueRange{w});
          IRMapping m;
          m.map(combine->getOperand(0), acc[0]);
          m.map(combine->getOperand(1), x);
          Value r = fb.clone(*combine, m)->getResult(0);
          scf::YieldOp::create(fb, fl, r);
        });
    // The shared slots are reused by the next reduction.
    gpu::BarrierOp::create(b, loc);
    return fold.getResult(0);
  }

  /// Whether the loads of later copies of `ops` (a loop body) may run
  /// before the stores of earlier copies: every store among them, nested
  /// ones included, is into an allocation that none of them loads, and they
  /// have no other side effect.
  static bool loadsMayGoFirst(ArrayRef<Operation *> ops) {
    llvm::SmallPtrSet<Value, 4> stored, loaded;
    bool ok = true;
    for (Operation *top : ops)
      top->walk([&](Operation *op) {
        if (auto l = dyn_cast<memref::LoadOp>(op)) {
          loaded.insert(cuda::viewRoot(l.getMemRef()));
        } else if (auto st = dyn_cast<memref::StoreOp>(op)) {
          Value root = cuda::viewRoot(st.getMemRef());
          ok &= static_cast<bool>(root.getDefiningOp<memref::AllocOp>());
          stored.insert(root);
        } else if (op->getNumRegions() == 0 &&
                   !op->hasTrait<OpTrait::IsTerminator>() &&
                   !isMemoryEffectFree(op)) {
          ok = false;
        }
      });
    return ok &&
           llvm::none_of(stored, [&](Value v) { return loaded.contains(v); });
  }

  /// The strided loop `for j = tid; j < extent; j += blockSize` over `ops`
  /// (a loop body; `mapIndex` maps its index to j and builds what that
  /// takes), unrolled `kUnroll` times so that each thread has that many
  /// loads in flight, not one (Little's law, docs/cuda.md "Row kernels"):
  ///
  ///   for base = 0; base < mainEnd; base += blockSize * U   // main
  ///     U copies at j = base + tid + k * blockSize, the loads of every
  ///     copy first when `loadsMayGoFirst`, then the rest of each copy
  ///   for j = mainEnd + tid; j < extent; j += blockSize     // remainder
  ///     one copy
  ///
  /// with mainEnd = (extent / (blockSize * U)) * blockSize * U. Each
  /// thread visits the same elements in the same order as the plain loop,
  /// so a fold (`accInit` given: `accIn`, the value the body reads the
  /// accumulator as, takes the previous copy's `combine` result) gives the
  /// same bits. Returns the fold's result, or null.
  Value unrolledStrided(
      OpBuilder &b, Location loc, Value tid, Value extent, Value blockSize,
      ArrayRef<Operation *> ops, const IRMapping &base,
      function_ref<void(OpBuilder &, Location, Value, IRMapping &)> mapIndex,
      Value accInit = Value(), Value accIn = Value(),
      Operation *combine = nullptr) {
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    bool fold = static_cast<bool>(accInit);
    SmallVector<Value> inits;
    if (fold)
      inits.push_back(accInit);
    // The copies' loads and what they need (their backward slice in `ops`).
    llvm::SmallPtrSet<Operation *, 16> early;
    if (loadsMayGoFirst(ops)) {
      llvm::SmallPtrSet<Operation *, 16> inOps(ops.begin(), ops.end());
      bool ok = true;
      for (Operation *op : llvm::reverse(ops)) {
        if (!isa<memref::LoadOp>(op) && !early.contains(op))
          continue;
        early.insert(op);
        ok &= op->getNumRegions() == 0;
        for (Value v : op->getOperands()) {
          ok &= v != accIn;
          if (Operation *def = v.getDefiningOp())
            if (inOps.contains(def))
              early.insert(def);
        }
      }
      if (!ok)
        early.clear();
    }
    Value step = arith::MulIOp::create(b, loc, blockSize, c(kUnroll));
    Value mainEnd = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, extent, step), step);
    SmallVector<Value> offsets{Value()};
    for (int64_t k = 1; k < kUnroll; ++k)
      offsets.push_back(arith::MulIOp::create(b, loc, blockSize, c(k)));
    auto mainLoop = scf::ForOp::create(
        b, loc, c(0), mainEnd, step, inits,
        [&](OpBuilder &fb, Location fl, Value round, ValueRange acc) {
          Value first = arith::AddIOp::create(fb, fl, round, tid);
          SmallVector<IRMapping> maps(kUnroll, base);
          for (int64_t k = 0; k < kUnroll; ++k) {
            Value j = k == 0 ? first
                             : arith::AddIOp::create(fb, fl, first, offsets[k])
                                   .getResult();
            mapIndex(fb, fl, j, maps[k]);
            for (Operation *op : ops)
              if (early.contains(op))
                fb.clone(*op, maps[k]);
          }
          Value cur = fold ? acc[0] : Value();
          for (int64_t k = 0; k < kUnroll; ++k) {
            if (fold)
              maps[k].map(accIn, cur);
            for (Operation *op : ops)
              if (!early.contains(op)) {
                Operation *clone = fb.clone(*op, maps[k]);
                if (op == combine)
                  cur = clone->getResult(0);
              }
          }
          scf::YieldOp::create(fb, fl, fold ? ValueRange{cur} : ValueRange{});
        });
    mainLoop->setAttr(kStridedMainAttr, b.getUnitAttr());
    Value restStart = arith::AddIOp::create(b, loc, mainEnd, tid);
    auto rest = scf::ForOp::create(
        b, loc, restStart, extent, blockSize, mainLoop.getResults(),
        [&](OpBuilder &fb, Location fl, Value j, ValueRange acc) {
          IRMapping m = base;
          mapIndex(fb, fl, j, m);
          Value cur = fold ? acc[0] : Value();
          if (fold)
            m.map(accIn, cur);
          for (Operation *op : ops) {
            Operation *clone = fb.clone(*op, m);
            if (op == combine)
              cur = clone->getResult(0);
          }
          scf::YieldOp::create(fb, fl, fold ? ValueRange{cur} : ValueRange{});
        });
    rest->setAttr(kStridedRestAttr, b.getUnitAttr());
    return fold ? rest.getResult(0) : Value();
  }

  /// The ops of an elementwise phase's body (`j`: its index over the row)
  /// that the strided loop runs: the ones that do not depend on j (loads
  /// of buffers the body does not write, at the row's broadcast index, and
  /// pure ops of them, e.g. a LayerNorm's rsqrt(var + eps)) are cloned at
  /// `b` once per row, under `if (tid < extent)` (a thread without an
  /// element skips them: with no element there may be no valid index to
  /// load), and `map` maps them to the results; the rest are returned.
  /// Constants stay in both.
  SmallVector<Operation *> hoistRowInvariant(OpBuilder &b, Location loc,
                                             Block *body, Value j, Value tid,
                                             Value extent, IRMapping &map) {
    llvm::SmallPtrSet<Value, 4> stored;
    body->walk([&](memref::StoreOp st) {
      stored.insert(cuda::viewRoot(st.getMemRef()));
    });
    llvm::SmallPtrSet<Operation *, 16> variant;
    SmallVector<Operation *> all, invariant, rest;
    bool worth = false;
    for (Operation &op : body->without_terminator()) {
      all.push_back(&op);
      if (op.hasTrait<OpTrait::ConstantLike>()) {
        invariant.push_back(&op);
        rest.push_back(&op);
        continue;
      }
      bool dep = op.getNumRegions() != 0;
      for (Value v : op.getOperands()) {
        Operation *def = v.getDefiningOp();
        dep |= v == j || (def && variant.contains(def));
      }
      if (!dep) {
        if (auto l = dyn_cast<memref::LoadOp>(op))
          dep = stored.contains(cuda::viewRoot(l.getMemRef()));
        else
          dep = !isMemoryEffectFree(&op);
      }
      if (dep) {
        variant.insert(&op);
        rest.push_back(&op);
        continue;
      }
      invariant.push_back(&op);
      worth = true;
    }
    // The invariant values the rest uses.
    SmallVector<Value> used;
    for (Operation *op : invariant) {
      if (op->hasTrait<OpTrait::ConstantLike>())
        continue;
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *user) {
              Operation *top = body->findAncestorOpInBlock(*user);
              return top && variant.contains(top);
            }))
          used.push_back(r);
    }
    if (!worth || used.empty() || llvm::any_of(used, [](Value v) {
          return !isa<FloatType, IntegerType, IndexType>(v.getType());
        }))
      return all;
    Value has =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, extent);
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(used).getTypes(), has,
                                  /*withElseRegion=*/true);
    ifOp->setAttr(kRowInvariantAttr, b.getUnitAttr());
    OpBuilder tb = ifOp.getThenBodyBuilder();
    for (Operation *op : invariant)
      tb.clone(*op, map);
    SmallVector<Value> yielded;
    for (Value v : used)
      yielded.push_back(map.lookup(v));
    scf::YieldOp::create(tb, loc, yielded);
    OpBuilder eb = ifOp.getElseBodyBuilder();
    SmallVector<Value> zeros;
    for (Value v : used)
      zeros.push_back(arith::ConstantOp::create(
          eb, loc, cast<TypedAttr>(eb.getZeroAttr(v.getType()))));
    scf::YieldOp::create(eb, loc, zeros);
    for (auto [v, r] : llvm::zip(used, ifOp.getResults()))
      map.map(v, r);
    return rest;
  }

  /// `linear` split into indices of `extents` (row-major).
  static SmallVector<Value> delinearize(OpBuilder &b, Location loc,
                                        Value linear, ArrayRef<Value> extents) {
    SmallVector<Value> idx(extents.size());
    Value rest = linear;
    for (int64_t k = extents.size() - 1; k >= 0; --k) {
      if (k == 0) {
        idx[k] = rest;
        break;
      }
      idx[k] = arith::RemUIOp::create(b, loc, rest, extents[k]);
      rest = arith::DivUIOp::create(b, loc, rest, extents[k]);
    }
    return idx;
  }

  void build(Group &group) {
    scf::ParallelOp first = group.phases.front().op;
    Location loc = first.getLoc();
    for (Operation *op : group.hoisted)
      op->moveBefore(first);
    OpBuilder b(first);
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    // Host side: rows, the row length that sizes the block, grid.
    Value rows = c(1);
    for (Value r : group.rows)
      rows = arith::MulIOp::create(b, loc, rows, r);
    Value length = c(1);
    for (Phase &p : group.phases) {
      Value l = c(1);
      if (p.kind == Phase::Elementwise)
        l = p.op.getUpperBound()[group.rank];
      for (scf::ForOp f : p.loops)
        l = arith::MulIOp::create(b, loc, l, f.getUpperBound());
      length = arith::MaxUIOp::create(b, loc, length, l);
    }
    // blockSize = clamp(roundUp(ceil(length / E), 32), 32, maxBlockSize)
    // with E elements per thread.
    Value perThread = length;
    if (elementsPerThread > 1)
      perThread = arith::DivUIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, length, c(elementsPerThread - 1)),
          c(elementsPerThread));
    Value rounded = arith::MulIOp::create(
        b, loc,
        arith::DivUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, perThread, c(31)), c(32)),
        c(32));
    Value blockSize = arith::MinUIOp::create(
        b, loc, arith::MaxUIOp::create(b, loc, rounded, c(32)),
        c(maxBlockSize));
    Value grid = arith::MinUIOp::create(b, loc, rows, c(65535));

    // Shared memory: one slot per warp for each element type reduced.
    SmallVector<Type> sharedTypes;
    for (Phase &p : group.phases)
      if (p.kind == Phase::Reduction) {
        Type t = p.combine->getResult(0).getType();
        if (!llvm::is_contained(sharedTypes, t))
          sharedTypes.push_back(t);
      }
    auto workgroup = gpu::AddressSpaceAttr::get(
        b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
    SmallVector<Type> attributionTypes;
    for (Type t : sharedTypes)
      attributionTypes.push_back(MemRefType::get(
          {maxBlockSize / 32}, t, MemRefLayoutAttrInterface(), workgroup));
    Value one = c(1);
    auto launch =
        gpu::LaunchOp::create(b, loc, grid, one, one, blockSize, one, one,
                              /*dynamicSharedMemorySize=*/{},
                              /*asyncTokenType=*/{},
                              /*asyncDependencies=*/{}, attributionTypes);
    Block &body = launch.getBody().front();
    OpBuilder kb = OpBuilder::atBlockBegin(&body);
    Location kl = loc;
    auto kc = [&](int64_t v) {
      return arith::ConstantIndexOp::create(kb, kl, v).getResult();
    };
    Value tid = launch.getThreadIds().x;
    // The block size inside the kernel (the launch's operand on the host
    // side would let a static row length fold the unrolled loops away).
    Value threads = launch.getBlockSize().x;
    Value numWarps =
        arith::DivUIOp::create(kb, kl, launch.getBlockSize().x, kc(32));
    auto sharedOf = [&](Type t) -> Value {
      auto it = llvm::find(sharedTypes, t);
      return launch.getWorkgroupAttributions()[it - sharedTypes.begin()];
    };
    Value zero = kc(0);
    Value isFirst =
        arith::CmpIOp::create(kb, kl, arith::CmpIPredicate::eq, tid, zero);
    auto rowLoop = scf::ForOp::create(kb, kl, launch.getBlockIds().x, rows,
                                      launch.getGridSize().x);
    gpu::TerminatorOp::create(kb, kl);

    OpBuilder rb = OpBuilder::atBlockTerminator(rowLoop.getBody());
    SmallVector<Value> rowIdx =
        delinearize(rb, kl, rowLoop.getInductionVar(), group.rows);
    for (Phase &phase : group.phases) {
      IRMapping map;
      for (unsigned k = 0; k < group.rank; ++k)
        map.map(phase.op.getInductionVars()[k], rowIdx[k]);
      Block *pbody = phase.op.getBody();
      Location pl = phase.op.getLoc();
      switch (phase.kind) {
      case Phase::Elementwise: {
        Value extent = phase.op.getUpperBound()[group.rank];
        Value iv = phase.op.getInductionVars()[group.rank];
        SmallVector<Operation *> ops =
            hoistRowInvariant(rb, pl, pbody, iv, tid, extent, map);
        unrolledStrided(rb, pl, tid, extent, threads, ops, map,
                        [&](OpBuilder &, Location, Value j, IRMapping &m) {
                          m.map(iv, j);
                        });
        break;
      }
      case Phase::Row: {
        scf::IfOp::create(rb, pl, isFirst, [&](OpBuilder &tb, Location tl) {
          for (Operation &op : pbody->without_terminator())
            tb.clone(op, map);
          scf::YieldOp::create(tb, tl);
        });
        break;
      }
      case Phase::Reduction:
        buildReduction(rb, pl, phase, map, tid, isFirst, threads, numWarps,
                       sharedOf(phase.combine->getResult(0).getType()));
        break;
      }
      gpu::BarrierOp::create(rb, pl);
    }
    for (Phase &phase : group.phases)
      phase.op.erase();
  }

  void buildReduction(OpBuilder &rb, Location pl, Phase &phase,
                      IRMapping &rowMap, Value tid, Value isFirst,
                      Value blockSize, Value numWarps, Value shared) {
    Block *pbody = phase.op.getBody();
    scf::ForOp outer = phase.loops.front();
    Type t = phase.combine->getResult(0).getType();
    TypedAttr identity = identityOf(phase.combine, t);
    // Values of the body before the loops that the loops use: every thread
    // computes them.
    IRMapping all = rowMap;
    for (Operation &op : pbody->without_terminator())
      if (phase.needed.contains(&op))
        rb.clone(op, all);
    // The strided partial fold over the reduced elements.
    Value extent = arith::ConstantIndexOp::create(rb, pl, 1).getResult();
    SmallVector<Value> extents;
    for (scf::ForOp f : phase.loops) {
      Value ub = all.lookupOrDefault(f.getUpperBound());
      extents.push_back(ub);
      extent = arith::MulIOp::create(rb, pl, extent, ub);
    }
    Value init = arith::ConstantOp::create(rb, pl, t, identity);
    Block &inner = *phase.loops.back().getBody();
    SmallVector<Operation *> ops;
    for (Operation &op : inner.without_terminator())
      if (&op != phase.accLoad.getOperation() &&
          &op != phase.accStore.getOperation())
        ops.push_back(&op);
    Value partial = unrolledStrided(
        rb, pl, tid, extent, blockSize, ops, all,
        [&](OpBuilder &fb, Location fl, Value j, IRMapping &m) {
          SmallVector<Value> idx = delinearize(fb, fl, j, extents);
          for (auto [f, i] : llvm::zip(phase.loops, idx))
            m.map(f.getInductionVar(), i);
        },
        init, phase.accLoad.getResult(), phase.combine);
    Value total = blockCombine(rb, pl, phase.combine, partial, tid, numWarps,
                               shared, identity);
    // Thread 0: the reduction's own code, its loops replaced by one
    // combination with the block's total.
    scf::IfOp::create(rb, pl, isFirst, [&](OpBuilder &tb, Location tl) {
      IRMapping m = rowMap;
      for (Operation &op : pbody->without_terminator()) {
        if (&op != outer.getOperation()) {
          tb.clone(op, m);
          continue;
        }
        SmallVector<Value> idx;
        for (Value i : phase.accStore.getIndices())
          idx.push_back(m.lookupOrDefault(i));
        Value mem = m.lookupOrDefault(phase.accStore.getMemRef());
        Value old = memref::LoadOp::create(tb, tl, mem, idx);
        IRMapping cm;
        cm.map(phase.accLoad.getResult(), old);
        for (Value o : phase.combine->getOperands())
          if (o != phase.accLoad.getResult())
            cm.map(o, total);
        Value r = tb.clone(*phase.combine, cm)->getResult(0);
        memref::StoreOp::create(tb, tl, r, mem, idx);
      }
      scf::YieldOp::create(tb, tl);
    });
  }
};

struct StitchRowsPass
    : public disc::impl::DiscGpuStitchRowsBase<StitchRowsPass> {
  using DiscGpuStitchRowsBase::DiscGpuStitchRowsBase;
  void runOnOperation() override {
    int64_t blockSize = maxBlockSize;
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0) {
      getOperation().emitError("disc-gpu-stitch-rows: max-block-size must be "
                               "a multiple of 32 in [32, 1024], got ")
          << blockSize;
      return signalPassFailure();
    }
    if (elementsPerThread < 1) {
      getOperation().emitError("disc-gpu-stitch-rows: elements-per-thread "
                               "must be >= 1, got ")
          << static_cast<int64_t>(elementsPerThread);
      return signalPassFailure();
    }
    Stitcher stitcher(blockSize, elementsPerThread);
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      Operation *parent = block->getParentOp();
      if (isa<scf::ParallelOp, gpu::LaunchOp, scf::ForOp>(parent) ||
          parent->getParentOfType<scf::ParallelOp>() ||
          parent->getParentOfType<gpu::LaunchOp>())
        return;
      blocks.push_back(block);
    });
    for (Block *block : blocks)
      stitcher.run(*block);
  }
};

} // namespace

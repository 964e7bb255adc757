//===- StitchRows.cpp - disc-stitch-rows ----------------------------------===//
//
// Row kernels on the CPU: a run of loop nests over the same rows — a
// reduction over the innermost dims (a Softmax's max and sum, a
// LayerNorm's mean and variance), the fills of its accumulators and the
// elementwise nests that read or write the same rows — becomes one loop
// over the rows whose body runs every nest on one row (size-1 subviews of
// the row dims), in program order. A row of several hundred floats then
// stays in the L1 cache from one nest to the next instead of streaming the
// whole matrix through the memory hierarchy once per nest.
//
// This is the "stitch" fusion of BladeDISC (Zheng et al., "DISC: A Dynamic
// Shape Compiler for Machine Learning Workloads", EuroMLSys 2021; AStitch,
// ASPLOS 2022) on the CPU; disc-gpu-stitch-rows is the CUDA counterpart.
// Only allocations, pure ops and run-time checks may lie between the nests
// (they stay where they are; the nests move down to the last one): no
// deallocation, call or other op moves, so the allocator sees the same
// sequence of allocations and frees, and the memory model's peak holds.
//
// Short rows (under kMinStitchedRow elements) keep their nests; a dynamic
// row length chooses between the two versions at run time.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCSTITCHROWS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

/// Rows of fewer elements keep their separate nests (see Stitcher::rewrite;
/// docs/performance.md, "Row kernels").
constexpr int64_t kMinStitchedRow = 256;

/// A loop extent, compared across nests: a constant, or dim `pos` of a
/// buffer (an allocation's dynamic size resolved to the dim it was read
/// from), or an index value (`pos` -1).
struct Extent {
  int64_t constant = ShapedType::kDynamic;
  Value value;
  int64_t pos = -1;
  bool operator==(const Extent &o) const {
    if (constant != ShapedType::kDynamic || o.constant != ShapedType::kDynamic)
      return constant == o.constant;
    return value && value == o.value && pos == o.pos;
  }
};

Extent resolveIndex(Value v);

/// The dynamic size operand of dim `pos` of an allocation.
template <typename AllocLike>
Value dynamicSize(AllocLike alloc, int64_t pos) {
  MemRefType type = alloc.getType();
  int64_t index = 0;
  for (int64_t i = 0; i < pos; ++i)
    index += type.isDynamicDim(i);
  return alloc.getDynamicSizes()[index];
}

/// The extent of dim `pos` of buffer `mem`.
Extent resolveDim(Value mem, int64_t pos) {
  auto type = cast<MemRefType>(mem.getType());
  if (!type.isDynamicDim(pos))
    return {type.getDimSize(pos), {}, -1};
  if (auto alloc = mem.getDefiningOp<memref::AllocOp>())
    return resolveIndex(dynamicSize(alloc, pos));
  if (auto alloca = mem.getDefiningOp<memref::AllocaOp>())
    return resolveIndex(dynamicSize(alloca, pos));
  return {ShapedType::kDynamic, mem, pos};
}

Extent resolveIndex(Value v) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return {*c, {}, -1};
  if (auto dim = v.getDefiningOp<memref::DimOp>())
    if (std::optional<int64_t> index = dim.getConstantIndex())
      return resolveDim(dim.getSource(), *index);
  return {ShapedType::kDynamic, v, -1};
}

/// A nest of a row kernel and, per operand, the operand dim of each row
/// dim it indexes (-1: none).
struct Member {
  linalg::LinalgOp op;
  SmallVector<SmallVector<int64_t>> rowDims;
};

/// Whether `op` may stay where it is while the nests around it move below
/// it: pure ops, allocations, and `scf.if`s of run-time checks (pure ops
/// and calls of `disc_check_failed`).
bool isMovable(Operation *op) {
  if (op->getNumRegions() == 0 && isMemoryEffectFree(op))
    return true;
  if (isa<memref::AllocOp, memref::AllocaOp>(op))
    return true;
  auto ifOp = dyn_cast<scf::IfOp>(op);
  if (!ifOp || ifOp.getNumResults() != 0)
    return false;
  WalkResult r = ifOp->walk([&](Operation *inner) {
    if (inner == op || isa<scf::YieldOp>(inner))
      return WalkResult::advance();
    if (auto call = dyn_cast<func::CallOp>(inner))
      return call.getCallee() == disc::kCheckFailedFn ? WalkResult::advance()
                                                      : WalkResult::interrupt();
    if (inner->getNumRegions() != 0 || !isMemoryEffectFree(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// A linalg op on buffers with a plain body (no memory access, no
/// `linalg.index`): a candidate nest.
bool isPlainNest(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op->getNumResults() != 0 ||
      op.getNumLoops() == 0)
    return false;
  WalkResult r = op->walk([&](Operation *inner) {
    if (inner == op.getOperation())
      return WalkResult::advance();
    if (isa<linalg::IndexOp>(inner) || inner->getNumRegions() != 0 ||
        !isMemoryEffectFree(inner))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// The number of leading parallel loops of a reduction whose reduced loops
/// are all after them (the rows of a row reduction), else 0.
unsigned rowReductionRank(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp>(op.getOperation()))
    return 0;
  SmallVector<utils::IteratorType> it = op.getIteratorTypesArray();
  unsigned rank = 0;
  while (rank < it.size() && it[rank] == utils::IteratorType::parallel)
    ++rank;
  if (rank == 0 || rank == it.size())
    return 0;
  for (unsigned i = rank; i < it.size(); ++i)
    if (it[i] != utils::IteratorType::reduction)
      return 0;
  return rank;
}

/// Matches `op` as a nest over `rank` rows: its first `rank` loops are
/// parallel, and every operand indexes the row dims it uses as its leading
/// dims, in order, the other dims with loops after them or constants (so a
/// row's elements of an operand are one contiguous slice of it). Sets the
/// operands' row dims and the extents of the row loops.
std::optional<Member> matchNest(linalg::LinalgOp op, unsigned rank,
                                SmallVector<Extent> &extents) {
  if (op.getNumLoops() < rank)
    return std::nullopt;
  SmallVector<utils::IteratorType> it = op.getIteratorTypesArray();
  for (unsigned k = 0; k < rank; ++k)
    if (it[k] != utils::IteratorType::parallel)
      return std::nullopt;
  Member m;
  m.op = op;
  extents.assign(rank, Extent());
  SmallVector<bool> found(rank, false);
  for (OpOperand &operand : op->getOpOperands()) {
    SmallVector<int64_t> dims(rank, -1);
    if (!isa<MemRefType>(operand.get().getType())) {
      m.rowDims.push_back(dims);
      continue;
    }
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool leading = true;
    int64_t last = -1;
    for (auto [p, e] : llvm::enumerate(map.getResults())) {
      if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        leading = false;
        continue;
      }
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        return std::nullopt;
      unsigned pos = d.getPosition();
      if (pos >= rank) {
        leading = false;
        continue;
      }
      if (!leading || static_cast<int64_t>(pos) <= last)
        return std::nullopt;
      last = pos;
      dims[pos] = p;
      if (!found[pos]) {
        found[pos] = true;
        extents[pos] = resolveDim(operand.get(), p);
      }
    }
    m.rowDims.push_back(dims);
  }
  if (llvm::is_contained(found, false))
    return std::nullopt;
  return m;
}

/// The dims of operand `i` of `m` that no row dim indexes (the row's
/// elements of it), and whether one of them may be longer than 1.
SmallVector<int64_t> rowElementDims(Member &m, unsigned i, bool &wide) {
  SmallVector<int64_t> dims;
  wide = false;
  auto type = dyn_cast<MemRefType>(m.op->getOperand(i).getType());
  if (!type)
    return dims;
  for (int64_t p = 0; p < type.getRank(); ++p) {
    if (llvm::is_contained(m.rowDims[i], p))
      continue;
    dims.push_back(p);
    wide |= type.getDimSize(p) != 1;
  }
  return dims;
}

/// Calls `fn(i, dims)` for every operand `i` of `m` that indexes a row dim
/// and has a row element dim that may be longer than 1 (`dims`: its dims
/// that no row dim indexes).
void forEachRowOperand(
    Member &m, llvm::function_ref<void(unsigned, ArrayRef<int64_t>)> fn) {
  for (unsigned i = 0; i < m.op->getNumOperands(); ++i) {
    bool wide;
    SmallVector<int64_t> dims = rowElementDims(m, i, wide);
    if (wide && llvm::any_of(m.rowDims[i], [](int64_t d) { return d >= 0; }))
      fn(i, dims);
  }
}

/// Whether `m` runs over more than its rows: an operand has a row element
/// dim that may be longer than 1.
bool isWide(Member &m) {
  bool wide = false;
  forEachRowOperand(m, [&](unsigned, ArrayRef<int64_t>) { wide = true; });
  return wide;
}

/// A run of nests over the same rows.
struct Group {
  unsigned rank = 0;
  SmallVector<Extent> extents;
  SmallVector<Member> members;
};

class Stitcher {
public:
  /// Rewrites every group of `block` with a row reduction; returns the
  /// number of row kernels made.
  unsigned run(Block &block) {
    unsigned made = 0;
    SmallVector<linalg::LinalgOp> pending;
    auto flush = [&] {
      made += formGroups(pending);
      pending.clear();
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto nest = dyn_cast<linalg::LinalgOp>(op);
      if (nest && isPlainNest(nest)) {
        pending.push_back(nest);
        continue;
      }
      if (!isMovable(&op))
        flush();
    }
    flush();
    return made;
  }

private:
  /// Splits a run of nests (only movable ops between them) into groups
  /// around row reductions and rewrites them.
  unsigned formGroups(ArrayRef<linalg::LinalgOp> nests) {
    unsigned made = 0;
    size_t i = 0;
    while (i < nests.size()) {
      // The next row reduction.
      size_t r = i;
      while (r < nests.size() && !rowReductionRank(nests[r]))
        ++r;
      if (r == nests.size())
        break;
      Group g;
      g.rank = rowReductionRank(nests[r]);
      std::optional<Member> anchor = matchNest(nests[r], g.rank, g.extents);
      if (!anchor) {
        i = r + 1;
        continue;
      }
      // Nests before it (back to `i`) and after it over the same rows.
      size_t first = r;
      SmallVector<Member> before;
      while (first > i) {
        SmallVector<Extent> e;
        std::optional<Member> m = matchNest(nests[first - 1], g.rank, e);
        if (!m || e != g.extents)
          break;
        before.push_back(*m);
        --first;
      }
      g.members.assign(before.rbegin(), before.rend());
      g.members.push_back(*anchor);
      size_t end = r + 1;
      while (end < nests.size()) {
        SmallVector<Extent> e;
        std::optional<Member> m = matchNest(nests[end], g.rank, e);
        if (!m || e != g.extents)
          break;
        g.members.push_back(*m);
        ++end;
      }
      // Trim to rows that are independent.
      while (!g.members.empty() && !rowsAreIndependent(g))
        g.members.pop_back();
      unsigned reductions = llvm::count_if(
          g.members, [](Member &m) { return rowReductionRank(m.op); });
      // At least two nests over whole rows: with one (a mean's sum and its
      // division in place on [rows, 1]) there is nothing to reuse.
      unsigned wide = llvm::count_if(g.members, isWide);
      size_t taken = g.members.size();
      if (reductions > 0 && wide >= 2 && rewrite(g))
        ++made;
      // The group is a prefix of nests[first..end); when the trimming took
      // the reduction out too, the next search starts after it.
      i = std::max(first + std::max<size_t>(taken, 1), r + 1);
    }
    return made;
  }

  /// Every buffer a member writes is an allocation that the members access
  /// only directly (no view of it), indexing its leading dims with the row
  /// dims in order: one row's nests touch only that row of it. The other
  /// operands come from a known buffer (an allocation, global or argument,
  /// through views: disc::bufferRoot) that no member writes.
  static bool rowsAreIndependent(Group &g) {
    llvm::SetVector<Value> written;
    for (Member &m : g.members)
      for (OpOperand &init : m.op.getDpsInitsMutable())
        written.insert(init.get());
    for (Value w : written)
      if (!w.getDefiningOp<memref::AllocOp>() &&
          !w.getDefiningOp<memref::AllocaOp>())
        return false;
    for (Member &m : g.members)
      for (auto [i, operand] : llvm::enumerate(m.op->getOpOperands())) {
        Value v = operand.get();
        if (!isa<MemRefType>(v.getType()))
          continue;
        if (!written.contains(v)) {
          Value root = disc::bufferRoot(v);
          if (!root || written.contains(root))
            return false;
          continue;
        }
        for (unsigned k = 0; k < g.rank; ++k)
          if (m.rowDims[i][k] != static_cast<int64_t>(k))
            return false;
      }
    return true;
  }

  /// One loop nest over the rows at the last member, running every member
  /// on the row's subviews in order; the members are erased, or moved into
  /// the else branch of a run-time choice on the row length. False, with
  /// nothing changed, when the rows are statically shorter than
  /// kMinStitchedRow.
  static bool rewrite(Group &g) {
    // The row length: the most row elements of an operand (the product of
    // its dims that no row dim indexes), statically when every such dim is.
    int64_t staticLength = 1;
    bool dynamicLength = false;
    for (Member &m : g.members)
      forEachRowOperand(m, [&](unsigned i, ArrayRef<int64_t> dims) {
        auto type = cast<MemRefType>(m.op->getOperand(i).getType());
        int64_t len = 1;
        for (int64_t p : dims) {
          if (type.isDynamicDim(p))
            dynamicLength = true;
          else
            len *= type.getDimSize(p);
        }
        staticLength = std::max(staticLength, len);
      });
    if (!dynamicLength && staticLength < kMinStitchedRow)
      return false;
    Operation *last = g.members.back().op;
    OpBuilder b(last);
    Location loc = b.getFusedLoc(llvm::to_vector(llvm::map_range(
        g.members, [](const Member &m) { return m.op->getLoc(); })));
    // The row extents, from the first member operand indexed by each row
    // dim (the operands dominate `last`).
    SmallVector<Value> bounds(g.rank);
    for (const Member &m : g.members)
      for (auto [i, operand] : llvm::enumerate(m.op->getOpOperands()))
        for (unsigned k = 0; k < g.rank; ++k)
          if (!bounds[k] && m.rowDims[i][k] >= 0)
            bounds[k] = b.createOrFold<memref::DimOp>(loc, operand.get(),
                                                      m.rowDims[i][k]);
    // One loop over the rows flattened row-major (disc-parallelize-kernels
    // runs it in chunks). An operand that indexes every row dim, with
    // contiguous rows, is read through a view with its row dims collapsed
    // into one (made once, above the loop), indexed by the loop variable
    // itself; the row's own indices (a division per row dim) are computed
    // only for the other operands.
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value n = bounds[0];
    for (unsigned k = 1; k < g.rank; ++k)
      n = b.createOrFold<arith::MulIOp>(loc, n, bounds[k]);
    SmallVector<ReassociationIndices> collapse(1);
    for (unsigned k = 0; k < g.rank; ++k)
      collapse[0].push_back(k);
    DenseMap<Value, Value> collapsed;
    auto collapsedView = [&](Value v, MemRefType type) -> Value {
      if (g.rank == 1)
        return v;
      if (Value c = collapsed.lookup(v))
        return c;
      SmallVector<ReassociationIndices> r = collapse;
      for (int64_t p = g.rank; p < type.getRank(); ++p)
        r.push_back({p});
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, r))
        return {};
      Value c = memref::CollapseShapeOp::create(b, loc, v, r);
      collapsed[v] = c;
      return c;
    };
    // Rows shorter than kMinStitchedRow keep their nests: there the
    // per-row overhead of every nest (a vector remainder, a horizontal
    // reduction) outweighs the cache reuse. A dynamic row length decides at
    // run time between the two versions (`scf.if`, kRowVersionsAttr).
    bool versioned = dynamicLength && staticLength < kMinStitchedRow;
    if (versioned) {
      Value rowLength = one;
      for (Member &m : g.members)
        forEachRowOperand(m, [&](unsigned i, ArrayRef<int64_t> dims) {
          Value len = one;
          for (int64_t p : dims)
            len = b.createOrFold<arith::MulIOp>(
                loc, len,
                getValueOrCreateConstantIndexOp(
                    b, loc,
                    memref::getMixedSize(b, loc, m.op->getOperand(i), p)));
          rowLength = b.createOrFold<arith::MaxUIOp>(loc, rowLength, len);
        });
      Value isLong = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::uge, rowLength,
          arith::ConstantIndexOp::create(b, loc, kMinStitchedRow));
      auto versions = scf::IfOp::create(b, loc, isLong, /*withElse=*/true);
      versions->setAttr(disc::kRowVersionsAttr, b.getUnitAttr());
      for (Member &m : g.members)
        m.op->moveBefore(versions.elseBlock()->getTerminator());
      b.setInsertionPoint(versions.thenBlock()->getTerminator());
    }
    auto loop = scf::ForOp::create(b, loc, zero, n, one);
    loop->setAttr(disc::kRowLoopAttr, b.getUnitAttr());
    OpBuilder inner(loop.getBody()->getTerminator());
    Value flat = loop.getInductionVar();
    SmallVector<Value> rows;
    auto rowIndices = [&]() -> ArrayRef<Value> {
      if (!rows.empty())
        return rows;
      OpBuilder::InsertionGuard guard(inner);
      inner.setInsertionPointAfterValue(flat);
      rows.assign(g.rank, Value());
      Value rest = flat;
      for (unsigned k = g.rank; k-- > 1;) {
        rows[k] = arith::RemUIOp::create(inner, loc, rest, bounds[k]);
        rest = arith::DivUIOp::create(inner, loc, rest, bounds[k]);
      }
      rows[0] = rest;
      return rows;
    };
    for (Member &m : g.members) {
      SmallVector<std::pair<unsigned, Value>> rowOperands;
      for (auto [i, operand] : llvm::enumerate(m.op->getOpOperands())) {
        Value v = operand.get();
        auto type = dyn_cast<MemRefType>(v.getType());
        ArrayRef<int64_t> rowDims = m.rowDims[i];
        if (!type || llvm::all_of(rowDims, [](int64_t d) { return d < 0; }))
          continue;
        bool allRows = true;
        for (unsigned k = 0; k < g.rank; ++k)
          allRows &= rowDims[k] == static_cast<int64_t>(k);
        Value c;
        if (allRows) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(loop);
          c = collapsedView(v, type);
        }
        if (c) {
          // [rows, rest..] -> the row [1, rest..] -> [1, .., 1, rest..].
          auto ct = cast<MemRefType>(c.getType());
          SmallVector<OpFoldResult> offsets(ct.getRank(),
                                            inner.getIndexAttr(0)),
              sizes, strides(ct.getRank(), inner.getIndexAttr(1));
          offsets[0] = flat;
          sizes.push_back(inner.getIndexAttr(1));
          for (int64_t p = 1; p < ct.getRank(); ++p)
            sizes.push_back(memref::getMixedSize(inner, loc, c, p));
          Value row =
              memref::SubViewOp::create(inner, loc, c, offsets, sizes, strides);
          if (g.rank == 1) {
            rowOperands.push_back({i, row});
            continue;
          }
          auto rt = cast<MemRefType>(row.getType());
          SmallVector<int64_t> shape(g.rank, 1);
          llvm::append_range(shape, rt.getShape().drop_front());
          SmallVector<OpFoldResult> outSizes(g.rank, inner.getIndexAttr(1));
          llvm::append_range(outSizes,
                             ArrayRef<OpFoldResult>(sizes).drop_front());
          SmallVector<ReassociationIndices> r = collapse;
          for (int64_t p = g.rank; p < type.getRank(); ++p)
            r.push_back({p});
          auto expanded =
              memref::ExpandShapeOp::computeExpandedType(rt, shape, r);
          if (failed(expanded)) {
            row.getDefiningOp()->erase();
            c = Value();
          } else
            rowOperands.push_back(
                {i, memref::ExpandShapeOp::create(inner, loc, *expanded, row, r,
                                                  outSizes)});
        }
        if (c)
          continue;
        ArrayRef<Value> idx = rowIndices();
        SmallVector<OpFoldResult> offsets, sizes,
            strides(type.getRank(), inner.getIndexAttr(1));
        for (int64_t p = 0; p < type.getRank(); ++p) {
          const auto *k = llvm::find(rowDims, p);
          if (k != rowDims.end()) {
            offsets.push_back(idx[k - rowDims.begin()]);
            sizes.push_back(inner.getIndexAttr(1));
          } else {
            offsets.push_back(inner.getIndexAttr(0));
            sizes.push_back(memref::getMixedSize(inner, loc, v, p));
          }
        }
        rowOperands.push_back({i, memref::SubViewOp::create(
                                      inner, loc, v, offsets, sizes, strides)});
      }
      Operation *clone = inner.clone(*m.op.getOperation());
      for (auto [i, row] : rowOperands)
        clone->setOperand(i, row);
    }
    if (!versioned)
      for (Member &m : g.members)
        m.op->erase();
    return true;
  }
};

struct StitchRowsPass : public disc::impl::DiscStitchRowsBase<StitchRowsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Stitcher s;
    for (Block &block : func.getBody())
      numKernels += s.run(block);
  }
};

} // namespace

//===- FoldTransposedConcat.cpp - disc-fold-transposed-concat -------------===//
//
// Channel shuffles as one concatenation (Passes.td):
//
//   %c = concat(a0 .. aG-1, k)            each ai: [A0 .. Ak=S .. Ar-1]
//   %r = reshape(%c, [A0 .. Ak-1, G, S, Ak+1 .. Ar-1])
//   %t = transpose(%r, p)                 p without k: increasing
//
// becomes concat(reshape(ai, A with a 1 inserted at q), q) with p[q] == k:
// the transpose only moves the group dim, and group g of %r is input g.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCFOLDTRANSPOSEDCONCAT
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// The concatenation `t` shuffles, with the position q of the group dim in
/// `t`, when `t` is the chain of the file comment; null otherwise.
ConcatenateOp matchShuffle(ShapeAnalysis &sa, TransposeOp t, int64_t &q,
                           int64_t &concatSize) {
  auto r = t.getOperand().getDefiningOp<DynamicReshapeOp>();
  if (!r || !r->hasOneUse())
    return nullptr;
  auto c = r.getOperand().getDefiningOp<ConcatenateOp>();
  if (!c || c->getBlock() != t->getBlock())
    return nullptr;
  auto ct = cast<RankedTensorType>(c.getType());
  int64_t rank = ct.getRank(), k = c.getDimension();
  int64_t groups = c.getInputs().size();
  if (groups < 2 || cast<RankedTensorType>(r.getType()).getRank() != rank + 1)
    return nullptr;
  SmallVector<AffineExpr> cd = sa.getDims(c.getResult());
  SmallVector<AffineExpr> rd = sa.getDims(r.getResult());
  if ((int64_t)cd.size() != rank || (int64_t)rd.size() != rank + 1)
    return nullptr;
  // Besides the reshape, only shape_of reads the concatenation (the
  // exporter's shape arithmetic); its dims are rebuilt from the inputs,
  // which needs the concatenated dim known.
  auto size = dyn_cast<AffineConstantExpr>(sa.normalize(cd[k]));
  concatSize = size ? size.getValue() : ShapedType::kDynamic;
  for (Operation *user : c->getUsers())
    if (user != r && (!isa<ShapeOfOp>(user) || !size))
      return nullptr;
  // [A0 .. Ak-1, G, S, Ak+1 ..]: the split dim's outer part is the number
  // of inputs and each input's dim k is the inner part.
  auto g = dyn_cast<AffineConstantExpr>(rd[k]);
  if (!g || g.getValue() != groups)
    return nullptr;
  for (int64_t j = 0; j < rank; ++j)
    if (j != k && sa.normalize(cd[j]) != sa.normalize(rd[j < k ? j : j + 1]))
      return nullptr;
  for (Value in : c.getInputs()) {
    SmallVector<AffineExpr> d = sa.getDims(in);
    if ((int64_t)d.size() != rank ||
        sa.normalize(d[k]) != sa.normalize(rd[k + 1]))
      return nullptr;
  }
  // The other dims keep their order: only the group dim moves.
  ArrayRef<int64_t> perm = t.getPermutation();
  q = -1;
  int64_t last = -1;
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p == k) {
      q = i;
      continue;
    }
    if (p < last)
      return nullptr;
    last = p;
  }
  return q < 0 ? nullptr : c;
}

/// 1-D i64 constant.
Value i64s(OpBuilder &b, Location loc, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
  return ConstantOp::create(b, loc, DenseIntElementsAttr::get(type, values));
}

/// The dims of `in` as a 1-D i64 tensor with `value` inserted at `pos`
/// (replacing dim `pos` when `replace`); a constant when `in`'s shape is
/// static, else read by a shape_of at the builder's point, where the new
/// ops read `in` anyway (no buffer lives longer).
Value dimsWith(OpBuilder &b, Location loc, Value in, int64_t pos, int64_t value,
               bool replace) {
  auto t = cast<RankedTensorType>(in.getType());
  int64_t rank = t.getRank(), n = replace ? rank : rank + 1;
  if (t.hasStaticShape()) {
    SmallVector<int64_t> shape(t.getShape());
    if (replace)
      shape[pos] = value;
    else
      shape.insert(shape.begin() + pos, value);
    return i64s(b, loc, shape);
  }
  auto vectorType = [&](int64_t len) {
    return RankedTensorType::get({len}, b.getI64Type());
  };
  Value dims = ShapeOfOp::create(b, loc, vectorType(rank), in);
  auto pick = [&](int64_t from, int64_t to) -> Value {
    SmallVector<int64_t> idx;
    for (int64_t i = from; i < to; ++i)
      idx.push_back(i);
    return GatherOp::create(b, loc, vectorType(to - from), dims,
                            i64s(b, loc, idx), 0);
  };
  SmallVector<Value> parts;
  if (pos > 0)
    parts.push_back(pick(0, pos));
  parts.push_back(i64s(b, loc, {value}));
  int64_t rest = replace ? pos + 1 : pos;
  if (rest < rank)
    parts.push_back(pick(rest, rank));
  return ConcatenateOp::create(b, loc, vectorType(n), parts, 0);
}

/// True when every step of `slice` is a positive constant: the lowering
/// makes it a strided view of its operand (MemoryModel's isViewSlice).
bool isViewSlice(SliceOp slice) {
  DenseIntElementsAttr steps;
  return matchPattern(slice.getSteps(), m_Constant(&steps)) &&
         llvm::all_of(steps.getValues<APInt>(),
                      [](const APInt &s) { return s.isStrictlyPositive(); });
}

/// `in` with a dim of size 1 inserted at `q`. A reshape of a strided view
/// would be a copy, so a view slice is sliced again from its operand with
/// the dim inserted (a view of a view); anything else is reshaped
/// (allow_zero: a 0-sized dim stays 0), a view of its dense buffer.
Value insertUnitDim(OpBuilder &b, Location loc, Value in, int64_t q) {
  auto t = cast<RankedTensorType>(in.getType());
  SmallVector<int64_t> shape(t.getShape());
  shape.insert(shape.begin() + q, 1);
  auto type = RankedTensorType::get(shape, t.getElementType());
  if (auto slice = in.getDefiningOp<SliceOp>(); slice && isViewSlice(slice)) {
    Value operand = insertUnitDim(b, loc, slice.getOperand(), q);
    SmallVector<int64_t> axes;
    for (int64_t a : slice.getAxes())
      axes.push_back(a < q ? a : a + 1);
    auto sliced =
        SliceOp::create(b, slice.getLoc(), type, operand, slice.getStarts(),
                        slice.getEnds(), slice.getSteps(), axes);
    sliced->setDiscardableAttrs(slice->getDiscardableAttrDictionary());
    return sliced;
  }
  return DynamicReshapeOp::create(b, loc, type, in,
                                  dimsWith(b, loc, in, q, 1, false),
                                  /*allow_zero=*/true);
}

/// Erases the op defining `v` when nothing reads it any more, and so on
/// up through its operands (the reshape's shape vector and what computed
/// it).
void eraseDeadProducers(Value v) {
  SmallVector<Operation *> work;
  llvm::SmallPtrSet<Operation *, 8> erased;
  if (Operation *def = v.getDefiningOp())
    work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    erased.insert(op);
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
    op->erase();
  }
}

struct FoldTransposedConcatPass
    : public disc::impl::DiscFoldTransposedConcatBase<
          FoldTransposedConcatPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<DimRange> ranges = collectDimRanges(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      ShapeAnalysis sa(func, ranges);
      sa.run();
      sa.mergeEqualSymbols();
      SmallVector<std::tuple<TransposeOp, int64_t, int64_t>> found;
      func.walk([&](TransposeOp t) {
        int64_t q, concatSize;
        if (matchShuffle(sa, t, q, concatSize))
          found.push_back({t, q, concatSize});
      });
      for (auto [t, q, concatSize] : found) {
        auto r = t.getOperand().getDefiningOp<DynamicReshapeOp>();
        auto c = r.getOperand().getDefiningOp<ConcatenateOp>();
        OpBuilder b(t);
        SmallVector<Value> parts;
        for (Value in : c.getInputs())
          parts.push_back(insertUnitDim(b, r.getLoc(), in, q));
        Value shuffled =
            ConcatenateOp::create(b, c.getLoc(), t.getType(), parts, q);
        // The concatenation's dims for its shape_of readers: the first
        // input's, with the (known) concatenated dim.
        for (Operation *user : llvm::make_early_inc_range(c->getUsers())) {
          auto s = dyn_cast<ShapeOfOp>(user);
          if (!s)
            continue;
          b.setInsertionPoint(s);
          int64_t k = c.getDimension();
          s.replaceAllUsesWith(
              dimsWith(b, s.getLoc(), c.getInputs()[0], k, concatSize, true));
          s.erase();
        }
        b.setInsertionPoint(t);
        t.replaceAllUsesWith(shuffled);
        Value shape = r.getShape();
        t.erase();
        r.erase();
        c.erase();
        eraseDeadProducers(shape);
        ++numFolded;
      }
    }
  }
};

} // namespace

//===- ShapeRules.cpp - how the shape analysis visits an op ---------------===//
//
// ShapeAnalysis::visit: the dims (and, for small integer tensors, the
// values) of an op's results from those of its operands. A disc op's rule is
// the op's own (DiscOpInterface::inferSymbolicShapes,
// lib/Dialect/Disc/IR/DiscShapeRules.cpp), which sees the analysis through
// the SymbolicShapeContext implemented here; constants and the upstream ops
// the pipeline creates (recurrent loops, remat's regenerate points) have
// their rules here. See docs/symbolic-shapes.md, "Symbolic dims and passes".
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc;

/// Integer element values of a small constant (flattened), if any. A float
/// constant has them when every element is an integer of magnitude at most
/// 2^53 (each is exact in its own type, whatever that is).
static std::optional<SmallVector<int64_t>> constantInts(Attribute attr) {
  if (auto fp = dyn_cast<DenseFPElementsAttr>(attr)) {
    if (fp.getNumElements() > 64)
      return std::nullopt;
    SmallVector<int64_t> r;
    for (const APFloat &v : fp.getValues<APFloat>()) {
      APSInt i(64, /*isUnsigned=*/false);
      bool exact = false;
      if (v.convertToInteger(i, APFloat::rmTowardZero, &exact) !=
              APFloat::opOK ||
          !exact || i.getSExtValue() > (int64_t(1) << 53) ||
          i.getSExtValue() < -(int64_t(1) << 53))
        return std::nullopt;
      r.push_back(i.getSExtValue());
    }
    return r;
  }
  auto dense = dyn_cast<DenseIntElementsAttr>(attr);
  if (!dense || dense.getNumElements() > 64)
    return std::nullopt;
  SmallVector<int64_t> r;
  for (const APInt &v : dense.getValues<APInt>())
    r.push_back(dense.getElementType().isInteger(1) ? (int64_t)v.getZExtValue()
                                                    : v.getSExtValue());
  return r;
}

namespace mlir::disc {
/// SymbolicShapeContext over the analysis, for the op being visited.
class ShapeRuleContext final : public SymbolicShapeContext {
public:
  ShapeRuleContext(ShapeAnalysis &sa, Operation *op)
      : SymbolicShapeContext(op), sa(sa) {}

  SmallVector<AffineExpr> dims(Value v) override { return sa.dimsOrFresh(v); }
  std::optional<SmallVector<AffineExpr>> values(Value v) override {
    return sa.valuesOf(v);
  }
  void setDims(Value result, ArrayRef<AffineExpr> dims) override {
    sa.setDims(result, SmallVector<AffineExpr>(dims), getOp());
  }
  void setValues(ArrayRef<AffineExpr> vals) override {
    Operation *op = getOp();
    if (op->getNumResults() != 1 || !isShapeLike(op->getResult(0)) ||
        vals.size() !=
            (size_t)cast<RankedTensorType>(op->getResult(0).getType())
                .getNumElements())
      return;
    SmallVector<AffineExpr> kept(vals);
    if (op->hasTrait<OpTrait::disc::Elementwise>())
      keepExactInFloat(kept);
    sa.values[op->getResult(0)] = std::move(kept);
  }
  AffineExpr fresh() override { return sa.fresh(getOp(), /*unknown=*/false); }
  void boundAbove(AffineExpr size, AffineExpr bound) override {
    auto s = dyn_cast_or_null<AffineSymbolExpr>(size);
    if (!s || !bound || sa.symbols[s.getPosition()].isRoot ||
        sa.symbols[s.getPosition()].unknown ||
        sa.upperBounds.count(s.getPosition()) ||
        bound.isFunctionOfSymbol(s.getPosition()))
      return;
    sa.upperBounds[s.getPosition()] = bound;
  }
  void equate(AffineExpr a, AffineExpr b) override { sa.equate(a, b); }
  AffineExpr normalize(AffineExpr e) override { return sa.normalize(e); }
  AffineExpr exactDiv(AffineExpr num, AffineExpr den) override {
    return sa.exactDiv(num, den);
  }
  SmallVector<AffineExpr>
  broadcast(ArrayRef<SmallVector<AffineExpr>> shapes) override {
    return sa.broadcast(shapes, getOp());
  }
  CompareResult compare(AffineExpr a, AffineExpr b) override {
    return sa.solver.compare(a, b);
  }
  AffineExpr constant(int64_t c) override { return sa.cst(c); }
  std::optional<int64_t> constantOf(AffineExpr e) override {
    return sa.constOf(e);
  }
  bool hasUnknown(AffineExpr e) override { return sa.hasUnknown(e); }
  void markReshapeProven() override { sa.provenReshapes.insert(getOp()); }

private:
  /// A float value computed by an elementwise op (arithmetic or a cast) is
  /// the integer only when the float type represents the result exactly:
  /// `|v| <= 2^p` (exactIntegerLimit). Values the solver does not bound are
  /// dropped, except for the cast of an integer to f32 or f64: it keeps
  /// them, and the lowering checks the bound at run time
  /// (ShapeAnalysis::getExactCastChecks). Operands of such ops are exact by
  /// the same rule, so their inputs are exact integers.
  void keepExactInFloat(MutableArrayRef<AffineExpr> vals) {
    Operation *op = getOp();
    std::optional<int64_t> limit =
        exactIntegerLimit(op->getResult(0).getType());
    if (!limit)
      return;
    auto convert = dyn_cast<ConvertOp>(op);
    bool mayCheck =
        convert && *limit >= (int64_t(1) << 24) &&
        isa<IntegerType>(getElementTypeOrSelf(convert.getOperand().getType()));
    for (auto [i, v] : llvm::enumerate(vals)) {
      if (!v)
        continue;
      if (auto k = sa.constOf(v)) {
        if (*k > *limit || *k < -*limit)
          v = AffineExpr();
        continue;
      }
      auto within = [&](CompareResult r, bool below) {
        return r == CompareResult::EQ ||
               (below ? r == CompareResult::LT || r == CompareResult::LE
                      : r == CompareResult::GT || r == CompareResult::GE);
      };
      if (within(sa.solver.compare(v, sa.cst(*limit)), /*below=*/true) &&
          within(sa.solver.compare(v, sa.cst(-*limit)), /*below=*/false))
        continue;
      if (mayCheck)
        sa.exactCastChecks[op].push_back(i);
      else
        v = AffineExpr();
    }
  }

  ShapeAnalysis &sa;
};
} // namespace mlir::disc

void ShapeAnalysis::visit(Operation *op) {
  if (auto iface = dyn_cast<DiscOpInterface>(op)) {
    ShapeRuleContext context(*this, op);
    iface.inferSymbolicShapes(context);
    return;
  }
  auto res = [&](unsigned i = 0) { return op->getResult(i); };
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](disc::ConstantOp c) {
        setDims(res(), {}, op);
        if (auto ints = constantInts(c.getValue())) {
          SmallVector<AffineExpr> v;
          for (int64_t x : *ints)
            v.push_back(cst(x));
          ShapeRuleContext(*this, op).setValues(v);
        }
      })
      .Case([&](scf::ForOp f) {
        // Loops built by the importer (recurrent layers) carry values of a
        // loop-invariant shape: each region argument and result has the
        // dims of its init value.
        for (auto [init, arg, r] : llvm::zip(
                 f.getInitArgs(), f.getRegionIterArgs(), f.getResults())) {
          SmallVector<AffineExpr> d = dimsOrFresh(init);
          setDims(arg, d, op);
          setDims(r, d, op);
        }
      })
      .Case([&](scf::WhileOp w) {
        // ONNX Loop (ControlFlow.cpp): a carried value marked shape
        // invariant keeps its entry dims; any other gets fresh symbols for
        // its dynamic dims (its shape may change per iteration).
        auto inv = w->getAttrOfType<DenseBoolArrayAttr>("disc.shape_invariant");
        for (auto [i, init] : llvm::enumerate(w.getInits())) {
          bool keeps = inv && (int64_t)i < inv.size() && inv[i];
          SmallVector<AffineExpr> d;
          if (keeps)
            d = dimsOrFresh(init);
          else if (auto t = dyn_cast<RankedTensorType>(init.getType()))
            for (int64_t j = 0; j < t.getRank(); ++j)
              d.push_back(t.isDynamicDim(j) ? fresh(op, /*unknown=*/true)
                                            : cst(t.getDimSize(j)));
          for (Value v :
               {Value(w.getBeforeArguments()[i]),
                Value(w.getAfterArguments()[i]), Value(w.getResult(i))})
            setDims(v, d, op);
        }
      })
      .Case([&](tensor::InsertSliceOp s) {
        setDims(res(), dimsOrFresh(s.getDest()), op);
      })
      .Case([&](tensor::CastOp c) {
        setDims(res(), dimsOrFresh(c.getSource()), op);
      })
      // disc-remat's regenerate point (Remat.cpp): the buffer of the value,
      // sized by `tensor.dim`s of it at the evict point, then an scf.if
      // that yields that buffer or the recomputed value written into it.
      // All three have the evicted value's dims, so ops after a regenerate
      // point keep their proven shapes (no versioned lowering, fusion).
      .Case([&](bufferization::AllocTensorOp a) {
        auto t = cast<RankedTensorType>(a.getType());
        SmallVector<AffineExpr> d;
        unsigned next = 0;
        for (int64_t i = 0; i < t.getRank(); ++i) {
          if (!t.isDynamicDim(i)) {
            d.push_back(cst(t.getDimSize(i)));
            continue;
          }
          auto dim = a.getDynamicSizes()[next++].getDefiningOp<tensor::DimOp>();
          std::optional<int64_t> j =
              dim ? dim.getConstantIndex() : std::nullopt;
          SmallVector<AffineExpr> src;
          if (j)
            src = dimsOrFresh(dim.getSource());
          d.push_back(j && *j < (int64_t)src.size() ? src[*j]
                                                    : fresh(op, false));
        }
        setDims(res(), d, op);
      })
      .Case([&](bufferization::MaterializeInDestinationOp m) {
        setDims(res(), dimsOrFresh(m.getDest()), op);
      })
      .Case([&](scf::IfOp ifOp) {
        // Visited after its regions (ShapeAnalysis::run). An ONNX If: a
        // result dim the same in both branches keeps it, any other gets a
        // fresh symbol (which branch runs is known at run time only).
        if (!ifOp->hasAttr("disc.remat_regenerate")) {
          if (ifOp.getElseRegion().empty()) {
            for (Value r : ifOp.getResults())
              setDims(r, {}, op);
            return;
          }
          for (auto [r, t, e] :
               llvm::zip(ifOp.getResults(), ifOp.thenYield().getOperands(),
                         ifOp.elseYield().getOperands())) {
            if (!isa<RankedTensorType>(r.getType()))
              continue;
            SmallVector<AffineExpr> dt = dimsOrFresh(t), de = dimsOrFresh(e);
            SmallVector<AffineExpr> d;
            for (auto [x, y] : llvm::zip(dt, de)) {
              if (x == y) {
                d.push_back(x);
                continue;
              }
              // One of the two at run time: at most their sum (dims are
              // >= 0), the memory model's bound.
              AffineExpr f = fresh(op, /*unknown=*/true);
              if (x && y)
                upperBounds[cast<AffineSymbolExpr>(f).getPosition()] = x + y;
              d.push_back(f);
            }
            setDims(r, d, op);
          }
          return;
        }
        setDims(res(), dimsOrFresh(ifOp.thenYield().getOperand(0)), op);
      })
      .Default([&](Operation *other) {
        for (Value r : other->getResults())
          setDims(r, {}, op);
      });
}

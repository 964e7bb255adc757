//===- DiscShapeRules.cpp - the symbolic shape rule of every disc op ------===//
//
// DiscOpInterface's inferSymbolicShapes and foldSymbolicElement: the dims of
// an op's results (and, for small integer tensors, their values) as
// expressions of those of its operands, seen through SymbolicShapeContext.
// The shape analysis (lib/Transforms/ShapeAnalysis.cpp) calls them in
// program order; docs/symbolic-shapes.md, "Symbolic dims and passes". Each
// rule follows the op's semantics (DiscOps.td, and the ONNX operator spec it
// names); the run-time counterpart of each is in DiscShapeReify.cpp.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::disc;

//===----------------------------------------------------------------------===//
// SymbolicShapeContext
//===----------------------------------------------------------------------===//

SymbolicShapeContext::~SymbolicShapeContext() = default;

bool SymbolicShapeContext::isShapeLike(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getNumElements() <= 64 &&
         isa<IntegerType, IndexType, FloatType>(t.getElementType());
}

std::optional<int64_t> SymbolicShapeContext::exactIntegerLimit(Type t) {
  auto f = dyn_cast<FloatType>(getElementTypeOrSelf(t));
  if (!f)
    return std::nullopt;
  unsigned p = APFloat::semanticsPrecision(f.getFloatSemantics());
  return int64_t(1) << std::min(p, 62u);
}

void SymbolicShapeContext::mapValues(
    ArrayRef<Value> operands,
    llvm::function_ref<AffineExpr(ArrayRef<AffineExpr>)> fn) {
  if (op->getNumResults() != 1 || !isShapeLike(op->getResult(0)))
    return;
  size_t n =
      cast<RankedTensorType>(op->getResult(0).getType()).getNumElements();
  SmallVector<SmallVector<AffineExpr>> vs;
  for (Value in : operands) {
    auto v = values(in);
    if (!v || (v->size() != n && v->size() != 1))
      return;
    vs.push_back(*v);
  }
  SmallVector<AffineExpr> out;
  for (size_t i = 0; i < n; ++i) {
    SmallVector<AffineExpr> args;
    for (auto &v : vs)
      args.push_back(v.size() == 1 ? v[0] : v[i]);
    if (llvm::any_of(args, [](AffineExpr e) { return !e; })) {
      out.push_back(AffineExpr());
      continue;
    }
    AffineExpr r = fn(args);
    out.push_back(r ? normalize(r) : r);
  }
  setValues(out);
}

void mlir::disc::detail::inferSymbolicShapesByDefault(Operation *op,
                                                      SymbolicShapeContext &c) {
  if (op->hasTrait<OpTrait::disc::Elementwise>()) {
    SmallVector<SmallVector<AffineExpr>> ins;
    for (Value in : op->getOperands())
      ins.push_back(c.dims(in));
    Value res = op->getResult(0);
    c.setDims(res, ins.size() == 1 ? ins[0] : c.broadcast(ins));
    auto iface = cast<DiscOpInterface>(op);
    c.mapValues(SmallVector<Value>(op->getOperands()),
                [&](ArrayRef<AffineExpr> elems) {
                  return iface.foldSymbolicElement(elems, c);
                });
    return;
  }
  if (op->getNumOperands() == 1 && op->getNumResults() == 1 &&
      op->getOperand(0).getType() == op->getResult(0).getType()) {
    c.setDims(op->getResult(0), c.dims(op->getOperand(0)));
    return;
  }
  for (Value r : op->getResults())
    c.setDims(r, {});
}

//===----------------------------------------------------------------------===//
// Elementwise ops on shapes: one element of the result
//===----------------------------------------------------------------------===//

AffineExpr NegOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &) {
  return -x[0];
}

AffineExpr AddOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return c.normalize(x[0]) + c.normalize(x[1]);
}

AffineExpr SubOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return c.normalize(x[0]) - c.normalize(x[1]);
}

AffineExpr MulOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return c.normalize(x[0]) * c.normalize(x[1]);
}

AffineExpr DivOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  AffineExpr num = c.normalize(x[0]), den = c.normalize(x[1]);
  if (isa<FloatType>(getElementTypeOrSelf(getType()))) {
    // True division: an integer only when it divides exactly (and the
    // divisor is not 0, where the float result is inf or NaN).
    if (auto n = c.constantOf(num))
      if (auto d = c.constantOf(den))
        return *d != 0 && *n % *d == 0 ? c.constant(*n / *d) : AffineExpr();
    if (c.compare(den, c.constant(0)) != CompareResult::GT)
      return AffineExpr();
    return c.exactDiv(num, den);
  }
  // Truncating division equals floordiv for non-negative sizes.
  if (auto d = c.constantOf(den); d && *d > 0) {
    if (auto n = c.constantOf(num))
      return c.constant(*n / *d);
    return num.floorDiv(*d);
  }
  return c.exactDiv(num, den);
}

/// max(a, b) (`isMax`) or min(a, b) when the solver orders a and b.
static AffineExpr foldMinMax(ArrayRef<AffineExpr> x, SymbolicShapeContext &c,
                             bool isMax) {
  AffineExpr a = c.normalize(x[0]), b = c.normalize(x[1]);
  switch (a == b ? CompareResult::EQ : c.compare(a, b)) {
  case CompareResult::EQ:
    return a;
  case CompareResult::GT:
  case CompareResult::GE:
    return isMax ? a : b;
  case CompareResult::LT:
  case CompareResult::LE:
    return isMax ? b : a;
  default:
    return AffineExpr();
  }
}

AffineExpr MaxOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return foldMinMax(x, c, /*isMax=*/true);
}

AffineExpr MinOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return foldMinMax(x, c, /*isMax=*/false);
}

/// `fn` of two constant elements; null when either is not a constant.
static AffineExpr
foldConstants(ArrayRef<AffineExpr> x, SymbolicShapeContext &c,
              llvm::function_ref<std::optional<int64_t>(int64_t, int64_t)> fn) {
  auto a = c.constantOf(x[0]), b = c.constantOf(x[1]);
  if (!a || !b)
    return AffineExpr();
  std::optional<int64_t> r = fn(*a, *b);
  return r ? c.constant(*r) : AffineExpr();
}

AffineExpr RemOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return foldConstants(x, c, [](int64_t a, int64_t b) {
    return b != 0 ? std::optional<int64_t>(a % b) : std::nullopt;
  });
}

AffineExpr AndOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return foldConstants(
      x, c, [](int64_t a, int64_t b) { return std::optional<int64_t>(a & b); });
}

AffineExpr OrOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                     SymbolicShapeContext &c) {
  return foldConstants(
      x, c, [](int64_t a, int64_t b) { return std::optional<int64_t>(a | b); });
}

AffineExpr XorOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                      SymbolicShapeContext &c) {
  return foldConstants(
      x, c, [](int64_t a, int64_t b) { return std::optional<int64_t>(a ^ b); });
}

AffineExpr CompareOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                          SymbolicShapeContext &c) {
  CompareResult r = c.compare(x[0], x[1]);
  if (c.normalize(x[0]) == c.normalize(x[1]))
    r = CompareResult::EQ;
  using D = CompareDirection;
  D dir = getDirection();
  auto truth = [&](bool b) { return c.constant(b ? 1 : 0); };
  switch (r) {
  case CompareResult::EQ:
    return truth(dir == D::EQ || dir == D::LE || dir == D::GE);
  case CompareResult::LT:
    return truth(dir == D::LT || dir == D::LE || dir == D::NE);
  case CompareResult::GT:
    return truth(dir == D::GT || dir == D::GE || dir == D::NE);
  case CompareResult::LE:
    if (dir == D::LE || dir == D::GT)
      return truth(dir == D::LE);
    return AffineExpr();
  case CompareResult::GE:
    if (dir == D::GE || dir == D::LT)
      return truth(dir == D::GE);
    return AffineExpr();
  default:
    return AffineExpr();
  }
}

AffineExpr SelectOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                         SymbolicShapeContext &c) {
  if (auto p = c.constantOf(x[0]))
    return *p ? x[1] : x[2];
  if (c.normalize(x[1]) == c.normalize(x[2]))
    return x[1];
  return AffineExpr();
}

AffineExpr ConvertOp::foldSymbolicElement(ArrayRef<AffineExpr> x,
                                          SymbolicShapeContext &c) {
  // To i1: `!= 0`.
  if (getElementTypeOrSelf(getType()).isInteger(1)) {
    if (auto k = c.constantOf(x[0]))
      return c.constant(*k != 0);
    return AffineExpr();
  }
  // Integer to integer keeps the value (sizes fit every integer type the
  // importer casts shapes to). A tracked float value is an integer the
  // float represents exactly, so the cast to an integer (truncation)
  // keeps it too. To a float, the value is kept when the float type
  // represents it exactly: the analysis checks that when it records the
  // result (docs/symbolic-shapes.md, "Shape values in floats").
  return x[0];
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, reduction
//===----------------------------------------------------------------------===//

void DotGeneralOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> l = c.dims(getLhs()), r = c.dims(getRhs());
  auto lb = getLhsBatchingDimensions(), rb = getRhsBatchingDimensions();
  auto lc = getLhsContractingDimensions(), rc = getRhsContractingDimensions();
  SmallVector<AffineExpr> out;
  for (auto [a, b] : llvm::zip(lb, rb)) {
    c.equate(l[a], r[b]);
    out.push_back(l[a]);
  }
  for (auto [a, b] : llvm::zip(lc, rc))
    c.equate(l[a], r[b]);
  for (int64_t i = 0; i < (int64_t)l.size(); ++i)
    if (!llvm::is_contained(lb, i) && !llvm::is_contained(lc, i))
      out.push_back(l[i]);
  for (int64_t i = 0; i < (int64_t)r.size(); ++i)
    if (!llvm::is_contained(rb, i) && !llvm::is_contained(rc, i))
      out.push_back(r[i]);
  c.setDims(getResult(), out);
}

/// Spatial padding `pad` = [lo..., hi...] of dim i of k, or 0 without pads.
static std::pair<int64_t, int64_t> padOf(ArrayRef<int64_t> pad, size_t k,
                                         size_t i) {
  if (pad.size() != 2 * k)
    return {0, 0};
  return {pad[i], pad[k + i]};
}

void ConvOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getInput()), w = c.dims(getFilter());
  SmallVector<AffineExpr> out = {in[0], w[0]};
  size_t k = in.size() - 2;
  for (size_t i = 0; i < k; ++i) {
    auto [lo, hi] = padOf(getPadding(), k, i);
    int64_t dil = getDilations()[i], st = getStrides()[i];
    AffineExpr num = in[2 + i] + (lo + hi) - (w[2 + i] - 1) * dil - 1;
    out.push_back(c.normalize(num.floorDiv(st) + 1));
  }
  c.setDims(getResult(), out);
}

void ConvBackwardFilterOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  // The filter's static shape.
  SmallVector<AffineExpr> out;
  for (int64_t d : getType().getShape())
    out.push_back(getAffineConstantExpr(d, getContext()));
  c.setDims(getResult(), out);
}

void ConvTransposeOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  // ONNX ConvTranspose: s * (D - 1) + out_pad + (K - 1) * dil + 1 -
  // pad_lo - pad_hi.
  SmallVector<AffineExpr> in = c.dims(getInput()), w = c.dims(getFilter());
  SmallVector<AffineExpr> out = {in[0], w[1] * getFeatureGroupCount()};
  size_t k = in.size() - 2;
  auto pad = getPadding();
  for (size_t i = 0; i < k; ++i) {
    int64_t st = getStrides()[i], dil = getDilations()[i];
    AffineExpr o = (in[2 + i] - 1) * st + (w[2 + i] - 1) * dil +
                   (getOutputPadding()[i] + 1 - pad[i] - pad[k + i]);
    out.push_back(c.normalize(o));
  }
  c.equate(in[1], w[0]);
  c.setDims(getResult(), out);
}

void PoolOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getInput());
  SmallVector<AffineExpr> out = {in[0], in[1]};
  size_t k = in.size() - 2;
  for (size_t i = 0; i < k; ++i) {
    auto [lo, hi] = padOf(getPadding(), k, i);
    int64_t dil = getDilations()[i], st = getStrides()[i];
    int64_t win = getWindow()[i];
    AffineExpr num = in[2 + i] + (lo + hi - dil * (win - 1) - 1);
    out.push_back(
        c.normalize((getCeilMode() ? num.ceilDiv(st) : num.floorDiv(st)) + 1));
  }
  c.setDims(getResult(), out);
}

/// Dims of a reduction of `in` over the dims for which `reduced` holds: kept
/// as 1 (`keepDims`) or dropped.
static SmallVector<AffineExpr>
reducedDims(SymbolicShapeContext &c, ArrayRef<AffineExpr> in, bool keepDims,
            llvm::function_ref<bool(int64_t)> reduced) {
  SmallVector<AffineExpr> out;
  for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
    if (!reduced(i))
      out.push_back(in[i]);
    else if (keepDims)
      out.push_back(c.constant(1));
  }
  return out;
}

void ReduceOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  c.setDims(getResult(),
            reducedDims(c, c.dims(getInput()), getKeepDims(), [&](int64_t i) {
              return llvm::is_contained(getDimensions(), i);
            }));
}

void ArgReduceOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  c.setDims(getResult(),
            reducedDims(c, c.dims(getInput()), getKeepDims(), [&](int64_t i) {
              return i == static_cast<int64_t>(getDimension());
            }));
}

/// Result 0 of `op` has the dims of operand 0.
static void sameDimsAsOperand0(Operation *op, SymbolicShapeContext &c) {
  c.setDims(op->getResult(0), c.dims(op->getOperand(0)));
}

void RandomUniformOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  int64_t rank = cast<RankedTensorType>(getType()).getRank();
  auto v = c.values(getShape());
  SmallVector<AffineExpr> out(rank);
  if (v && (int64_t)v->size() == rank)
    out = *v;
  c.setDims(getResult(), out);
}

void ArgSortOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  sameDimsAsOperand0(getOperation(), c);
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

void ShapeOfOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  c.setDims(getResult(), {});
  c.setValues(c.dims(getOperand()));
}

void ExpandOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getOperand());
  auto target = c.values(getShape());
  int64_t rank = cast<RankedTensorType>(getType()).getRank();
  SmallVector<AffineExpr> tv;
  if (target)
    tv = *target;
  else
    tv.assign(rank, AffineExpr());
  SmallVector<AffineExpr> out(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t j = i - (rank - (int64_t)in.size());
    AffineExpr t = i < (int64_t)tv.size() ? tv[i] : AffineExpr();
    AffineExpr d = j >= 0 ? in[j] : c.constant(1);
    if (!t) {
      // Unknown target entry: only a static non-1 operand dim decides.
      auto dc = c.constantOf(d);
      out[i] = (dc && *dc != 1) ? d : AffineExpr();
      continue;
    }
    SmallVector<SmallVector<AffineExpr>> pair = {{d}, {t}};
    out[i] = c.broadcast(pair)[0];
  }
  c.setDims(getResult(), out);
  if (auto v = c.values(getOperand());
      v && v->size() == 1 && SymbolicShapeContext::isShapeLike(getResult()))
    c.setValues(SmallVector<AffineExpr>(
        cast<RankedTensorType>(getType()).getNumElements(), (*v)[0]));
}

void DynamicReshapeOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getOperand());
  auto rt = cast<RankedTensorType>(getType());
  auto target = c.values(getShape());
  SmallVector<AffineExpr> out(rt.getRank());
  if (target && (int64_t)target->size() == rt.getRank()) {
    int inferred = -1;
    // An entry the run-time checks would reject (a negative other than -1,
    // a 0 past the input rank) keeps them.
    bool badEntry = false;
    for (int64_t i = 0; i < rt.getRank(); ++i) {
      AffineExpr t = (*target)[i];
      auto k = c.constantOf(t);
      badEntry |=
          k &&
          (*k < -1 || (*k == 0 && !getAllowZero() && i >= (int64_t)in.size()));
      if (k && *k == 0 && !getAllowZero())
        out[i] = i < (int64_t)in.size() ? in[i] : AffineExpr();
      else if (k && *k == -1)
        inferred = inferred == -1 ? (int)i : -2;
      else if (!k || *k >= 0)
        out[i] = t;
    }
    for (int64_t i = 0; i < rt.getRank(); ++i)
      if (!rt.isDynamicDim(i) && !out[i])
        out[i] = c.constant(rt.getDimSize(i));
    // Element count equality resolves -1 (or one unknown entry).
    AffineExpr total = c.constant(1);
    for (AffineExpr d : in)
      total = total * d;
    int missing = -1, numMissing = 0;
    AffineExpr known = c.constant(1);
    for (int64_t i = 0; i < rt.getRank(); ++i) {
      if (!out[i]) {
        missing = i;
        ++numMissing;
      } else {
        known = known * out[i];
      }
    }
    bool inKnown = llvm::all_of(in, [](AffineExpr e) { return (bool)e; });
    if (numMissing == 1 && inKnown) {
      AffineExpr q = c.exactDiv(total, known);
      if (!q) {
        q = c.fresh();
        c.equate(c.normalize(known * q), total);
      } else if (!badEntry && !c.hasUnknown(q) &&
                 !c.hasUnknown(c.normalize(total))) {
        c.markReshapeProven();
      }
      out[missing] = q;
    } else if (numMissing == 0 && inKnown) {
      if (!badEntry && c.normalize(total) == c.normalize(known) &&
          !c.hasUnknown(c.normalize(total)))
        c.markReshapeProven();
      c.equate(total, known);
    }
  }
  c.setDims(getResult(), out);
  if (auto v = c.values(getOperand()))
    c.setValues(*v);
}

void TransposeOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getOperand()), out;
  for (int64_t p : getPermutation())
    out.push_back(in[p]);
  c.setDims(getResult(), out);
  if (in.size() <= 1)
    if (auto v = c.values(getOperand()))
      c.setValues(*v);
}

void ConcatenateOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  int64_t axis = getDimension();
  SmallVector<AffineExpr> out;
  AffineExpr sum = c.constant(0);
  SmallVector<AffineExpr> vals;
  bool valsOk = cast<RankedTensorType>(getType()).getRank() == 1;
  for (auto [k, in] : llvm::enumerate(getInputs())) {
    SmallVector<AffineExpr> d = c.dims(in);
    if (k == 0)
      out = d;
    else
      for (size_t i = 0; i < d.size(); ++i)
        if ((int64_t)i != axis)
          c.equate(out[i], d[i]);
    sum = sum + d[axis];
    if (auto v = c.values(in); v && valsOk)
      vals.append(*v);
    else
      valsOk = false;
  }
  out[axis] = sum;
  c.setDims(getResult(), out);
  if (valsOk)
    c.setValues(vals);
}

/// min(v, hi) when the solver orders `v` and `hi`; null otherwise.
static AffineExpr provenMin(SymbolicShapeContext &c, AffineExpr v,
                            AffineExpr hi) {
  switch (c.compare(v, hi)) {
  case CompareResult::LT:
  case CompareResult::LE:
  case CompareResult::EQ:
    return v;
  case CompareResult::GT:
  case CompareResult::GE:
    return hi;
  default:
    return AffineExpr();
  }
}

/// Size of ONNX Slice with a negative constant `step` along a dim of size
/// `dim`: ONNX clamps the start to [0, dim - 1] and the end to [-1, dim - 1]
/// (after adding dim to negative values); the count is
/// ceil((start - end) / -step). Only constant bounds; a clamp the solver
/// cannot decide gives a fresh symbol.
static AffineExpr negativeStepSliceSize(SymbolicShapeContext &c, AffineExpr dim,
                                        AffineExpr start, AffineExpr end,
                                        int64_t step) {
  constexpr int64_t kHuge = int64_t(1) << 40;
  std::optional<int64_t> sC = c.constantOf(start), eC = c.constantOf(end);
  if (!sC || !eC)
    return c.fresh();
  AffineExpr last = c.normalize(dim - 1);
  // Clamps `v` to [lo, last]: `v` when provably in range, the bound when
  // provably outside, null otherwise.
  auto clamp = [&](AffineExpr v, int64_t lo) -> AffineExpr {
    v = c.normalize(v);
    CompareResult below = c.compare(v, c.constant(lo));
    if (below == CompareResult::LT || below == CompareResult::LE)
      return c.constant(lo);
    if (below == CompareResult::UNKNOWN)
      return AffineExpr();
    return provenMin(c, v, last);
  };
  AffineExpr s = *sC >= kHuge    ? last
                 : *sC <= -kHuge ? c.constant(0)
                 : *sC < 0       ? clamp(dim + *sC, 0)
                                 : clamp(c.constant(*sC), 0);
  AffineExpr e = *eC <= -kHuge  ? c.constant(-1)
                 : *eC >= kHuge ? last
                 : *eC < 0      ? clamp(dim + *eC, -1)
                                : clamp(c.constant(*eC), -1);
  if (!s || !e)
    return c.fresh();
  AffineExpr n = c.normalize(s - e);
  int64_t m = -step;
  if (auto k = c.constantOf(n))
    return c.constant(std::max<int64_t>(0, (*k + m - 1) / m));
  CompareResult r = c.compare(n, c.constant(0));
  if (r == CompareResult::LT || r == CompareResult::LE ||
      r == CompareResult::EQ)
    return c.constant(0);
  if (r != CompareResult::GT && r != CompareResult::GE)
    return c.fresh();
  return m == 1 ? n : c.normalize(n.ceilDiv(m));
}

/// Size of ONNX Slice along a dim of size `dim` with bounds `start`, `end`
/// and `step` (null when not known), clamped as ONNX Slice clamps; a fresh
/// symbol when the solver cannot decide a clamp.
static AffineExpr sliceSize(SymbolicShapeContext &c, AffineExpr dim,
                            AffineExpr start, AffineExpr end, AffineExpr step) {
  std::optional<int64_t> stepC = c.constantOf(step);
  if (!dim || !start || !end || !stepC || *stepC == 0)
    return c.fresh();
  std::optional<int64_t> dC = c.constantOf(dim), sC = c.constantOf(start),
                         eC = c.constantOf(end);
  if (dC && sC && eC) {
    int64_t d = *dC, s = *sC, e = *eC, st = *stepC;
    auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v += d;
      return std::min(std::max(v, lo), hi);
    };
    int64_t ns = st < 0 ? norm(s, 0, d - 1) : norm(s, 0, d);
    int64_t ne = st < 0 ? norm(e, -1, d - 1) : norm(e, 0, d);
    int64_t n = ne - ns;
    int64_t q = n / st;
    if (n % st != 0 && ((n < 0) == (st < 0)))
      ++q;
    return c.constant(std::max<int64_t>(q, 0));
  }
  if (*stepC < 0)
    return negativeStepSliceSize(c, dim, start, end, *stepC);
  // Positive step: wrap negative constants, clamp to [0, dim] when the
  // solver can decide the order, else a fresh symbol.
  auto bound = [&](AffineExpr v) -> AffineExpr {
    if (auto k = c.constantOf(v)) {
      if (*k >= (int64_t(1) << 40))
        return dim;
      if (*k < 0) {
        AffineExpr w = c.normalize(dim + *k);
        CompareResult o = c.compare(w, c.constant(0));
        return o == CompareResult::LT || o == CompareResult::UNKNOWN
                   ? AffineExpr()
                   : w;
      }
      if (*k == 0)
        return v;
    }
    return provenMin(c, v, dim);
  };
  AffineExpr s = bound(start), e = bound(end);
  if (!s || !e)
    return c.fresh();
  AffineExpr n = c.normalize(e - s);
  CompareResult r = c.compare(n, c.constant(0));
  if (auto k = c.constantOf(n))
    return c.constant(std::max<int64_t>(0, (*k + *stepC - 1) / *stepC));
  if (r == CompareResult::LT)
    return c.constant(0);
  // e >= s is provable, or s is 0 and e a clamped (non-negative) bound.
  std::optional<int64_t> s0 = c.constantOf(s);
  if (r == CompareResult::UNKNOWN && !(s0 && *s0 == 0))
    return c.fresh();
  return *stepC == 1 ? n : c.normalize(n.ceilDiv(*stepC));
}

void SliceOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getOperand());
  SmallVector<AffineExpr> out = in;
  auto st = c.values(getStarts()), en = c.values(getEnds()),
       sp = c.values(getSteps());
  auto entry = [](const std::optional<SmallVector<AffineExpr>> &v, size_t k) {
    return v && k < v->size() ? (*v)[k] : AffineExpr();
  };
  for (auto [k, axis] : llvm::enumerate(getAxes())) {
    out[axis] =
        sliceSize(c, in[axis], entry(st, k), entry(en, k), entry(sp, k));
    // Whatever the run-time bounds, ONNX Slice clamps them to the dim: a
    // count known only at run time (TopK's k, a compaction's) is at most
    // the sliced dim.
    if (out[axis] != in[axis])
      c.boundAbove(out[axis], in[axis]);
  }
  c.setDims(getResult(), out);
  // Slice of a shape vector with constant bounds.
  auto v = c.values(getOperand());
  if (!v || in.size() != 1 || !st || !en || !sp)
    return;
  auto a = c.constantOf((*st)[0]), b = c.constantOf((*en)[0]),
       step = c.constantOf((*sp)[0]);
  int64_t n = v->size();
  if (!a || !b || !step || *step == 0)
    return;
  auto wrap = [&](int64_t x, int64_t lo, int64_t hi) {
    if (x < 0)
      x += n;
    return std::min(std::max(x, lo), hi);
  };
  int64_t s0 = *step < 0 ? wrap(*a, 0, n - 1) : wrap(*a, 0, n);
  int64_t e0 = *step < 0 ? wrap(*b, -1, n - 1) : wrap(*b, 0, n);
  SmallVector<AffineExpr> r;
  for (int64_t i = s0; *step > 0 ? i < e0 : i > e0; i += *step)
    r.push_back((*v)[i]);
  c.setValues(r);
}

void GatherOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> data = c.dims(getData()), idx = c.dims(getIndices());
  int64_t axis = getAxis();
  SmallVector<AffineExpr> out(data.begin(), data.begin() + axis);
  out.append(idx.begin(), idx.end());
  out.append(data.begin() + axis + 1, data.end());
  c.setDims(getResult(), out);
  auto v = c.values(getData());
  auto iv = c.values(getIndices());
  if (!v || !iv || data.size() != 1)
    return;
  SmallVector<AffineExpr> r;
  for (AffineExpr i : *iv) {
    auto k = c.constantOf(i);
    if (!k) {
      r.push_back(AffineExpr());
      continue;
    }
    int64_t j = *k < 0 ? *k + (int64_t)v->size() : *k;
    r.push_back(j >= 0 && j < (int64_t)v->size() ? (*v)[j] : AffineExpr());
  }
  c.setValues(r);
}

void PadOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getOperand()), out = in;
  auto pads = c.values(getPads());
  for (size_t i = 0; i < in.size(); ++i) {
    if (pads && pads->size() == 2 * in.size() && (*pads)[i] &&
        (*pads)[in.size() + i])
      out[i] = in[i] + (*pads)[i] + (*pads)[in.size() + i];
    else
      out[i] = AffineExpr();
  }
  c.setDims(getResult(), out);
}

void RangeOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  auto s = c.values(getStart()), l = c.values(getLimit()),
       d = c.values(getDelta());
  AffineExpr count;
  if (s && l && d && (*s)[0] && (*l)[0] && (*d)[0]) {
    auto dc = c.constantOf((*d)[0]);
    AffineExpr span = c.normalize((*l)[0] - (*s)[0]);
    if (dc && *dc > 0) {
      if (auto sc = c.constantOf(span))
        count = c.constant(std::max<int64_t>(0, (*sc + *dc - 1) / *dc));
      else if (c.compare(span, c.constant(0)) != CompareResult::LT)
        // Sizes are non-negative: the count is the ceil division.
        count = span.ceilDiv(*dc);
    }
  }
  if (!count)
    count = c.fresh();
  c.setDims(getResult(), {count});
}

void ResizeOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getOperand());
  auto sizes = c.values(getSizes());
  SmallVector<AffineExpr> out(in.size());
  for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
    if (!llvm::is_contained(getAxes(), i))
      out[i] = in[i];
    else if (sizes && i < (int64_t)sizes->size() && (*sizes)[i])
      out[i] = (*sizes)[i];
    else
      out[i] = c.fresh(); // sizes or scales known at run time
  }
  c.setDims(getResult(), out);
}

void GatherElementsOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  c.setDims(getResult(), c.dims(getIndices()));
}

void GatherNdOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> data = c.dims(getData()), idx = c.dims(getIndices());
  SmallVector<AffineExpr> out(idx.begin(), idx.end() - 1);
  int64_t tail =
      cast<RankedTensorType>(getType()).getRank() - (int64_t)out.size();
  out.append(data.end() - tail, data.end());
  c.setDims(getResult(), out);
}

void GridSampleOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  SmallVector<AffineExpr> in = c.dims(getInput()), grid = c.dims(getGrid());
  c.equate(in[0], grid[0]);
  c.setDims(getResult(), {in[0], in[1], grid[1], grid[2]});
}

void ScatterElementsOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  sameDimsAsOperand0(getOperation(), c);
}

void ScatterNdOp::inferSymbolicShapes(SymbolicShapeContext &c) {
  sameDimsAsOperand0(getOperation(), c);
}

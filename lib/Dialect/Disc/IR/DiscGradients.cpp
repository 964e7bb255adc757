//===- DiscGradients.cpp - gradient rules of the disc ops
//------------------===//
//
// DiscOpInterface::buildGradient of every differentiable op (reverse mode):
// given the gradient G of each result, the ops that compute the gradient of
// each operand, built at the builder's insertion point. The rules are the
// textbook vector-Jacobian products (as PyTorch's derivatives.yaml and JAX's
// primitive transpose rules state them); broadcasting is undone by summing
// over the broadcast dims (NumPy broadcasting, ranks aligned from the right).
//
// Conventions: a rule returns one Value per operand, null for an operand
// without a gradient (integer operands, predicates, shape vectors). A rule
// may build gradients for operands that need none; disc-build-training-step
// erases the unused ops afterwards. A dynamic operand dim is taken to be
// the result dim it broadcasts to (a dim that is 1 only at run time is not
// summed over): exported models broadcast with static 1s.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::disc;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

bool isFloatTensor(Value v) {
  return v && isa<FloatType>(tensorType(v).getElementType());
}

/// The NumPy broadcast of two ranked tensor types, with the element type of
/// `a`. A dynamic dim against a static dim other than 1 is that static dim.
RankedTensorType broadcastType(Type a, Type c) {
  auto ta = cast<RankedTensorType>(a), tc = cast<RankedTensorType>(c);
  int64_t ra = ta.getRank(), rc = tc.getRank(), r = std::max(ra, rc);
  SmallVector<int64_t> dims(r);
  for (int64_t i = 0; i < r; ++i) {
    int64_t da = i < r - ra ? 1 : ta.getDimSize(i - (r - ra));
    int64_t dc = i < r - rc ? 1 : tc.getDimSize(i - (r - rc));
    if (da == 1)
      dims[i] = dc;
    else if (dc == 1 || ShapedType::isDynamic(dc))
      dims[i] = da;
    else
      dims[i] = dc;
  }
  return RankedTensorType::get(dims, ta.getElementType());
}

/// The ops one gradient rule builds, at the builder's insertion point.
class GradientBuilder {
public:
  GradientBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// A 0-d constant of element type `elt`.
  Value scalar(Type elt, double v) {
    auto type = RankedTensorType::get({}, elt);
    Attribute a = isa<FloatType>(elt) ? Attribute(FloatAttr::get(elt, v))
                                      : Attribute(IntegerAttr::get(elt, v));
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, a));
  }
  Value scalarLike(Value x, double v) {
    return scalar(tensorType(x).getElementType(), v);
  }
  /// A 1-D i64 constant.
  Value i64s(ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
    return ConstantOp::create(b, loc, DenseIntElementsAttr::get(type, values));
  }
  /// The dims of `x` as a 1-D i64 tensor; a constant for a static shape.
  /// The dims are read from the earliest value known to have x's shape
  /// (sameShapeSource), right after its definition: a shape the backward
  /// pass reads must not keep a forward activation alive until then, nor be
  /// a second use that keeps it from being fused into its consumer.
  Value shapeOf(Value x) {
    RankedTensorType t = tensorType(x);
    if (t.hasStaticShape())
      return i64s(t.getShape());
    Value src = sameShapeSource(x);
    auto type = RankedTensorType::get({t.getRank()}, b.getI64Type());
    Block *block = b.getInsertionBlock();
    for (Operation *user : src.getUsers())
      if (auto s = dyn_cast<ShapeOfOp>(user);
          s && s.getType() == type && s->getBlock() == block &&
          (b.getInsertionPoint() == block->end() ||
           s->isBeforeInBlock(&*b.getInsertionPoint())))
        return s;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfterValue(src);
    return ShapeOfOp::create(b, loc, type, src);
  }
  /// A value with the same dims as `x`, as early as known: back through
  /// elementwise ops with one operand of the result's rank and shape (the
  /// others of lower rank: no broadcast can widen it).
  static Value sameShapeSource(Value x) {
    RankedTensorType t = tensorType(x);
    while (Operation *def = x.getDefiningOp()) {
      if (!def->hasTrait<OpTrait::disc::Elementwise>())
        break;
      Value next;
      bool unique = true;
      for (Value o : def->getOperands()) {
        auto ot = dyn_cast<RankedTensorType>(o.getType());
        if (!ot || ot.getRank() < t.getRank())
          continue;
        unique &= !next && ot.getShape() == t.getShape();
        next = o;
      }
      if (!next || !unique)
        break;
      x = next;
    }
    return x;
  }
  /// `vector[indices]` for a 1-D i64 `vector` and constant `indices`.
  Value pick(Value vector, ArrayRef<int64_t> indices) {
    auto type =
        RankedTensorType::get({(int64_t)indices.size()}, b.getI64Type());
    return GatherOp::create(b, loc, type, vector, i64s(indices), 0);
  }
  /// The sizes of dims `dims` of `x` (1-D i64).
  Value dimsOf(Value x, ArrayRef<int64_t> dims) {
    RankedTensorType t = tensorType(x);
    if (llvm::all_of(dims, [&](int64_t d) { return !t.isDynamicDim(d); })) {
      SmallVector<int64_t> sizes;
      for (int64_t d : dims)
        sizes.push_back(t.getDimSize(d));
      return i64s(sizes);
    }
    return pick(shapeOf(x), dims);
  }
  Value concat(ValueRange parts, int64_t dim, RankedTensorType type) {
    return ConcatenateOp::create(b, loc, type, parts, dim);
  }

  template <typename OpT>
  Value unary(Value x) {
    return OpT::create(b, loc, x.getType(), x);
  }
  template <typename OpT>
  Value binary(Value x, Value y) {
    return OpT::create(b, loc, broadcastType(x.getType(), y.getType()), x, y);
  }
  Value compare(CompareDirection direction, Value x, Value y) {
    RankedTensorType t = broadcastType(x.getType(), y.getType());
    return CompareOp::create(b, loc, t.clone(b.getI1Type()), direction, x, y);
  }
  Value select(Value pred, Value x, Value y) {
    RankedTensorType t = broadcastType(
        broadcastType(x.getType(), y.getType()).clone(b.getI1Type()),
        pred.getType());
    return SelectOp::create(b, loc, t.clone(tensorType(x).getElementType()),
                            pred, x, y);
  }
  Value convert(Value x, Type elt) {
    return ConvertOp::create(b, loc, tensorType(x).clone(elt), x);
  }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return x;
    RankedTensorType t = tensorType(x);
    SmallVector<int64_t> dims;
    for (int64_t p : perm)
      dims.push_back(t.getDimSize(p));
    return TransposeOp::create(b, loc, t.clone(dims), x, perm);
  }
  Value reduce(ReduceKind kind, Value x, ArrayRef<int64_t> dims, bool keep) {
    RankedTensorType t = tensorType(x);
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < t.getRank(); ++i) {
      if (!llvm::is_contained(dims, i))
        shape.push_back(t.getDimSize(i));
      else if (keep)
        shape.push_back(1);
    }
    return ReduceOp::create(b, loc, t.clone(shape), kind, x, dims, keep);
  }
  /// `x` reshaped to `shape` (1-D i64), with result type `type`.
  Value reshape(Value x, Value shape, RankedTensorType type) {
    return DynamicReshapeOp::create(b, loc, type, x, shape, false);
  }
  /// `x` (the shape of `like` or broadcastable to it) broadcast to the shape
  /// of `like`.
  Value expandLike(Value x, Value like) {
    if (tensorType(x).getShape() == tensorType(like).getShape())
      return x;
    return ExpandOp::create(
        b, loc, tensorType(like).clone(tensorType(x).getElementType()), x,
        shapeOf(like));
  }
  /// Sums `g` (the broadcast of `operand`'s shape) back to `operand`'s shape:
  /// over the leading dims `operand` lacks and the dims where it has a
  /// static 1.
  Value sumToShapeOf(Value g, Value operand) {
    RankedTensorType gt = tensorType(g), ot = tensorType(operand);
    int64_t lead = gt.getRank() - ot.getRank();
    assert(lead >= 0 && "gradient of lower rank than its operand");
    SmallVector<int64_t> dims;
    bool ones = false;
    for (int64_t i = 0; i < lead; ++i)
      dims.push_back(i);
    for (int64_t i = 0; i < ot.getRank(); ++i)
      if (ot.getDimSize(i) == 1 && gt.getDimSize(lead + i) != 1) {
        dims.push_back(lead + i);
        ones = true;
      }
    RankedTensorType type = ot.clone(gt.getElementType());
    if (dims.empty())
      return g;
    if (!ones)
      return ReduceOp::create(b, loc, type, ReduceKind::Sum, g, dims, false);
    Value kept = reduce(ReduceKind::Sum, g, dims, /*keep=*/true);
    return reshape(kept, shapeOf(operand), type);
  }
  /// The shape of `x` with dims `dims` set to 1 (1-D i64).
  Value keptShape(Value x, ArrayRef<int64_t> dims) {
    int64_t r = tensorType(x).getRank();
    SmallVector<int64_t> index;
    for (int64_t i = 0; i < r; ++i)
      index.push_back(llvm::is_contained(dims, i) ? r : i);
    auto type = RankedTensorType::get({r + 1}, b.getI64Type());
    return pick(concat({shapeOf(x), i64s({1})}, 0, type), index);
  }
  /// The result `y` of a reduction of `x` over `dims`, with the reduced dims
  /// kept as 1.
  Value withKeptDims(Value y, Value x, ArrayRef<int64_t> dims, bool keep) {
    if (keep)
      return y;
    RankedTensorType xt = tensorType(x);
    SmallVector<int64_t> shape(xt.getShape());
    for (int64_t d : dims)
      shape[d] = 1;
    return reshape(y, keptShape(x, dims),
                   xt.clone(shape).clone(tensorType(y).getElementType()));
  }
  /// The number of elements in dims `dims` of `x`, as a 0-d tensor of
  /// element type `elt`.
  Value count(Value x, ArrayRef<int64_t> dims, Type elt) {
    RankedTensorType t = tensorType(x);
    int64_t n = 1;
    bool isStatic = true;
    for (int64_t d : dims) {
      isStatic &= !t.isDynamicDim(d);
      if (!t.isDynamicDim(d))
        n *= t.getDimSize(d);
    }
    if (isStatic)
      return scalar(elt, (double)n);
    Value sizes = dimsOf(x, dims);
    Value prod =
        ReduceOp::create(b, loc, RankedTensorType::get({}, b.getI64Type()),
                         ReduceKind::Prod, sizes, ArrayRef<int64_t>{0}, false);
    return convert(prod, elt);
  }

  OpBuilder &b;
  Location loc;
};

/// Appends `grads` (one per operand) to `out`.
LogicalResult emit(SmallVectorImpl<Value> &out, ArrayRef<Value> grads) {
  out.append(grads.begin(), grads.end());
  return success();
}

/// A unary op whose operand gradient is `g * factor(x, y)`.
template <typename OpT, typename Factor>
LogicalResult unaryRule(OpT op, OpBuilder &b, ValueRange resultGradients,
                        SmallVectorImpl<Value> &out, Factor factor) {
  Value g = resultGradients[0];
  if (!g || !isFloatTensor(op->getOperand(0)))
    return emit(out, {Value()});
  GradientBuilder gb(b, op.getLoc());
  Value f = factor(gb, op->getOperand(0), op->getResult(0));
  return emit(out, {f ? gb.binary<MulOp>(g, f) : g});
}

/// An op whose gradient is zero almost everywhere (floor, sign, ...).
LogicalResult zeroRule(Operation *op, SmallVectorImpl<Value> &out) {
  out.append(op->getNumOperands(), Value());
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Softmax (a pattern of several ops, one rule)
//===----------------------------------------------------------------------===//

std::optional<SoftmaxPattern> mlir::disc::matchSoftmax(Operation *root) {
  auto keptReduce = [](Value v, ReduceKind kind) -> ReduceOp {
    auto r = v.getDefiningOp<ReduceOp>();
    if (!r || r.getKind() != kind || !r.getKeepDims())
      return {};
    return r;
  };
  Value z, s;
  bool log = false;
  if (auto div = dyn_cast<DivOp>(root)) {
    z = div.getLhs().getDefiningOp<ExpOp>() ? div.getLhs() : Value();
    s = div.getRhs();
  } else if (auto sub = dyn_cast<SubOp>(root)) {
    auto l = sub.getRhs().getDefiningOp<LogOp>();
    if (!l)
      return std::nullopt;
    z = sub.getLhs();
    s = l.getOperand();
    log = true;
  } else {
    return std::nullopt;
  }
  ReduceOp sum = s ? keptReduce(s, ReduceKind::Sum) : ReduceOp();
  if (!z || !sum)
    return std::nullopt;
  auto e = sum.getInput().getDefiningOp<ExpOp>();
  if (!e)
    return std::nullopt;
  // The softmax divides the exponentials it summed; the log-softmax
  // subtracts their log from their exponent.
  if (log ? e.getOperand() != z : e.getResult() != z)
    return std::nullopt;
  auto shift = e.getOperand().getDefiningOp<SubOp>();
  if (!shift)
    return std::nullopt;
  ReduceOp max = keptReduce(shift.getRhs(), ReduceKind::Max);
  Value x = shift.getLhs();
  if (!max || max.getInput() != x || max.getDimensions() != sum.getDimensions())
    return std::nullopt;
  if (x.getType() != root->getResult(0).getType() ||
      shift.getType() != x.getType())
    return std::nullopt;
  return SoftmaxPattern{x, llvm::to_vector(sum.getDimensions()), log};
}

Value mlir::disc::buildSoftmaxGradient(OpBuilder &b, Location loc,
                                       const SoftmaxPattern &pattern, Value y,
                                       Value g) {
  GradientBuilder gb(b, loc);
  if (pattern.log) {
    Value sum = gb.reduce(ReduceKind::Sum, g, pattern.axes, /*keep=*/true);
    return gb.binary<SubOp>(g, gb.binary<MulOp>(gb.unary<ExpOp>(y), sum));
  }
  Value sum = gb.reduce(ReduceKind::Sum, gb.binary<MulOp>(g, y), pattern.axes,
                        /*keep=*/true);
  return gb.binary<MulOp>(y, gb.binary<SubOp>(g, sum));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult NegOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  if (!rg[0] || !isFloatTensor(getOperand()))
    return emit(out, {Value()});
  GradientBuilder gb(b, getLoc());
  return emit(out, {gb.unary<NegOp>(rg[0])});
}

LogicalResult ExpOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out,
                   [](GradientBuilder &, Value, Value y) { return y; });
}

LogicalResult LogOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value x, Value) {
    return gb.unary<ReciprocalOp>(x);
  });
}

LogicalResult SqrtOp::buildGradient(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &out) {
  // d sqrt(x) = 0.5 / sqrt(x).
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value, Value y) {
    return gb.binary<DivOp>(gb.scalarLike(y, 0.5), y);
  });
}

LogicalResult RsqrtOp::buildGradient(OpBuilder &b, ValueRange rg,
                                     SmallVectorImpl<Value> &out) {
  // d x^(-1/2) = -0.5 x^(-3/2) = -0.5 y^3.
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value, Value y) {
    Value y3 = gb.binary<MulOp>(gb.binary<MulOp>(y, y), y);
    return gb.binary<MulOp>(y3, gb.scalarLike(y, -0.5));
  });
}

LogicalResult TanhOp::buildGradient(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value, Value y) {
    return gb.binary<SubOp>(gb.scalarLike(y, 1.0), gb.binary<MulOp>(y, y));
  });
}

LogicalResult LogisticOp::buildGradient(OpBuilder &b, ValueRange rg,
                                        SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value, Value y) {
    return gb.binary<MulOp>(y, gb.binary<SubOp>(gb.scalarLike(y, 1.0), y));
  });
}

LogicalResult ErfOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  // d erf(x) = 2 / sqrt(pi) * exp(-x^2).
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value x, Value) {
    Value e = gb.unary<ExpOp>(gb.unary<NegOp>(gb.binary<MulOp>(x, x)));
    return gb.binary<MulOp>(
        e, gb.scalarLike(x, 1.1283791670955126 /* 2 / sqrt(pi) */));
  });
}

LogicalResult ReciprocalOp::buildGradient(OpBuilder &b, ValueRange rg,
                                          SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value, Value y) {
    return gb.unary<NegOp>(gb.binary<MulOp>(y, y));
  });
}

LogicalResult AbsOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value x, Value) {
    return gb.unary<SignOp>(x);
  });
}

LogicalResult SinOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value x, Value) {
    return gb.unary<CosOp>(x);
  });
}

LogicalResult CosOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return unaryRule(*this, b, rg, out, [](GradientBuilder &gb, Value x, Value) {
    return gb.unary<NegOp>(gb.unary<SinOp>(x));
  });
}

LogicalResult FloorOp::buildGradient(OpBuilder &, ValueRange,
                                     SmallVectorImpl<Value> &out) {
  return zeroRule(*this, out);
}
LogicalResult CeilOp::buildGradient(OpBuilder &, ValueRange,
                                    SmallVectorImpl<Value> &out) {
  return zeroRule(*this, out);
}
LogicalResult RoundOp::buildGradient(OpBuilder &, ValueRange,
                                     SmallVectorImpl<Value> &out) {
  return zeroRule(*this, out);
}
LogicalResult SignOp::buildGradient(OpBuilder &, ValueRange,
                                    SmallVectorImpl<Value> &out) {
  return zeroRule(*this, out);
}

/// A binary op with operand gradients `g * da` and `g * db` (null factor:
/// g itself), each summed back to its operand's shape.
template <typename OpT, typename Factors>
static LogicalResult binaryRule(OpT op, OpBuilder &b, ValueRange rg,
                                SmallVectorImpl<Value> &out, Factors factors) {
  Value g = rg[0];
  Value x = op->getOperand(0), y = op->getOperand(1);
  if (!g || !isFloatTensor(x))
    return emit(out, {Value(), Value()});
  GradientBuilder gb(b, op.getLoc());
  auto [gx, gy] = factors(gb, g, x, y, op->getResult(0));
  return emit(out, {gx ? gb.sumToShapeOf(gx, x) : Value(),
                    gy ? gb.sumToShapeOf(gy, y) : Value()});
}

LogicalResult AddOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return binaryRule(*this, b, rg, out,
                    [](GradientBuilder &, Value g, Value, Value, Value) {
                      return std::pair(g, g);
                    });
}

LogicalResult SubOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return binaryRule(*this, b, rg, out,
                    [](GradientBuilder &gb, Value g, Value, Value, Value) {
                      return std::pair(g, gb.unary<NegOp>(g));
                    });
}

LogicalResult MulOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return binaryRule(*this, b, rg, out,
                    [](GradientBuilder &gb, Value g, Value x, Value y, Value) {
                      return std::pair(gb.binary<MulOp>(g, y),
                                       gb.binary<MulOp>(g, x));
                    });
}

LogicalResult DivOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  // d(x / y) = g / y, -g * (x / y) / y.
  return binaryRule(*this, b, rg, out,
                    [](GradientBuilder &gb, Value g, Value, Value y, Value q) {
                      Value gx = gb.binary<DivOp>(g, y);
                      return std::pair(
                          gx, gb.unary<NegOp>(gb.binary<MulOp>(gx, q)));
                    });
}

LogicalResult PowOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  // d(x^y) = g * y * x^(y - 1), g * x^y * log(x).
  return binaryRule(
      *this, b, rg, out,
      [](GradientBuilder &gb, Value g, Value x, Value y, Value p) {
        Value ym1 = gb.binary<SubOp>(y, gb.scalarLike(y, 1.0));
        Value gx =
            gb.binary<MulOp>(g, gb.binary<MulOp>(y, gb.binary<PowOp>(x, ym1)));
        Value gy = gb.binary<MulOp>(g, gb.binary<MulOp>(p, gb.unary<LogOp>(x)));
        return std::pair(gx, gy);
      });
}

/// max/min: the gradient goes to the operand that was picked; on a tie to
/// the second one (so that relu, max(x, 0), has gradient 0 at x = 0 as in
/// PyTorch).
template <typename OpT>
static LogicalResult extremumRule(OpT op, OpBuilder &b, ValueRange rg,
                                  SmallVectorImpl<Value> &out,
                                  CompareDirection firstWins) {
  return binaryRule(op, b, rg, out,
                    [&](GradientBuilder &gb, Value g, Value x, Value y, Value) {
                      Value first = gb.compare(firstWins, x, y);
                      Value zero = gb.scalarLike(g, 0.0);
                      return std::pair(gb.select(first, g, zero),
                                       gb.select(first, zero, g));
                    });
}

LogicalResult MaxOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return extremumRule(*this, b, rg, out, CompareDirection::GT);
}

LogicalResult MinOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  return extremumRule(*this, b, rg, out, CompareDirection::LT);
}

LogicalResult SelectOp::buildGradient(OpBuilder &b, ValueRange rg,
                                      SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  if (!g || !isFloatTensor(getOnTrue()))
    return emit(out, {Value(), Value(), Value()});
  GradientBuilder gb(b, getLoc());
  Value zero = gb.scalarLike(g, 0.0);
  return emit(out,
              {Value(),
               gb.sumToShapeOf(gb.select(getPred(), g, zero), getOnTrue()),
               gb.sumToShapeOf(gb.select(getPred(), zero, g), getOnFalse())});
}

LogicalResult ConvertOp::buildGradient(OpBuilder &b, ValueRange rg,
                                       SmallVectorImpl<Value> &out) {
  if (!rg[0] || !isFloatTensor(getOperand()) || !isFloatTensor(getResult()))
    return emit(out, {Value()});
  GradientBuilder gb(b, getLoc());
  return emit(out,
              {gb.convert(rg[0], getOperand().getType().getElementType())});
}

//===----------------------------------------------------------------------===//
// Linear algebra, reductions
//===----------------------------------------------------------------------===//

/// The gradient of operand `a` of `dot_general(a, b)` (or of `b`, with the
/// roles swapped): `dot_general(g, other)` contracting the free dims of
/// `other`, then transposed to `a`'s dim order. `aBatch`/`aContract` are
/// the batching/contracting dims of `a`, `oBatch`/`oContract` those of the
/// other operand; `gFree` the positions in `g` of the other operand's free
/// dims.
static Value dotOperandGradient(GradientBuilder &gb, Value g, Value a,
                                Value other, ArrayRef<int64_t> aBatch,
                                ArrayRef<int64_t> aContract,
                                ArrayRef<int64_t> oBatch,
                                ArrayRef<int64_t> oContract,
                                ArrayRef<int64_t> gFree) {
  RankedTensorType gt = tensorType(g), ot = tensorType(other),
                   at = tensorType(a);
  int64_t nb = aBatch.size();
  SmallVector<int64_t> oFree;
  for (int64_t i = 0; i < ot.getRank(); ++i)
    if (!llvm::is_contained(oBatch, i) && !llvm::is_contained(oContract, i))
      oFree.push_back(i);
  // Result dims of dot_general(g, other): batch, g's remaining dims (the
  // free dims of a, in order), other's remaining dims (its contracting
  // dims, ascending). `source[k]`: the dim of `a` that result dim k is.
  SmallVector<int64_t> shape, source;
  for (int64_t i = 0; i < nb; ++i) {
    shape.push_back(gt.getDimSize(i));
    source.push_back(aBatch[i]);
  }
  SmallVector<int64_t> aFree;
  for (int64_t i = 0; i < at.getRank(); ++i)
    if (!llvm::is_contained(aBatch, i) && !llvm::is_contained(aContract, i))
      aFree.push_back(i);
  int64_t next = 0;
  for (int64_t i = nb; i < gt.getRank(); ++i) {
    if (llvm::is_contained(gFree, i))
      continue;
    shape.push_back(gt.getDimSize(i));
    source.push_back(aFree[next++]);
  }
  for (int64_t i = 0; i < ot.getRank(); ++i) {
    auto it = llvm::find(oContract, i);
    if (it == oContract.end())
      continue;
    shape.push_back(ot.getDimSize(i));
    source.push_back(aContract[it - oContract.begin()]);
  }
  SmallVector<int64_t> gBatch = llvm::to_vector(llvm::seq<int64_t>(0, nb));
  Value r = DotGeneralOp::create(gb.b, gb.loc, at.clone(shape), g, other,
                                 gBatch, oBatch, gFree, oFree);
  SmallVector<int64_t> perm(at.getRank());
  for (auto [k, dim] : llvm::enumerate(source))
    perm[dim] = k;
  return gb.transpose(r, perm);
}

LogicalResult DotGeneralOp::buildGradient(OpBuilder &b, ValueRange rg,
                                          SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  if (!g || !isFloatTensor(getLhs()))
    return emit(out, {Value(), Value()});
  GradientBuilder gb(b, getLoc());
  int64_t nb = getLhsBatchingDimensions().size();
  int64_t lhsFree = getLhs().getType().getRank() - nb -
                    (int64_t)getLhsContractingDimensions().size();
  int64_t rank = getType().getRank();
  SmallVector<int64_t> gLhsFree =
      llvm::to_vector(llvm::seq<int64_t>(nb, nb + lhsFree));
  SmallVector<int64_t> gRhsFree =
      llvm::to_vector(llvm::seq<int64_t>(nb + lhsFree, rank));
  Value gl = dotOperandGradient(
      gb, g, getLhs(), getRhs(), getLhsBatchingDimensions(),
      getLhsContractingDimensions(), getRhsBatchingDimensions(),
      getRhsContractingDimensions(), gRhsFree);
  Value gr = dotOperandGradient(
      gb, g, getRhs(), getLhs(), getRhsBatchingDimensions(),
      getRhsContractingDimensions(), getLhsBatchingDimensions(),
      getLhsContractingDimensions(), gLhsFree);
  return emit(out, {gl, gr});
}

/// The input elements that window position (tap) t reads for every output
/// of a windowed op (convolution, pooling) over the spatial dims 2.. of
/// `x`: a strided slice of `x` padded with `padValue` (on the high side by
/// a stride more, for ceil_mode's last windows), with the shape of the
/// output `y` but x's channels. Taps are numbered row-major in the window.
class WindowTaps {
public:
  WindowTaps(GradientBuilder &gb, Value x, Value y, Value padValue,
             ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
             ArrayRef<int64_t> dilations, ArrayRef<int64_t> padding)
      : gb(gb), window(window), strides(strides), dilations(dilations) {
    RankedTensorType xt = tensorType(x), yt = tensorType(y);
    int64_t r = xt.getRank(), k = r - 2;
    spatial = llvm::to_vector(llvm::seq<int64_t>(2, r));
    SmallVector<int64_t> pads(2 * r, 0), padded(xt.getShape());
    for (int64_t i = 0; i < k; ++i) {
      pads[2 + i] = padding[i];
      pads[r + 2 + i] = padding[k + i] + strides[i];
      padded[2 + i] = ShapedType::kDynamic;
    }
    xpad = PadOp::create(gb.b, gb.loc, xt.clone(padded), PadMode::Constant, x,
                         gb.i64s(pads), padValue);
    // A tap's slice ends at start + (O - 1) * stride + 1.
    span = gb.binary<AddOp>(
        gb.binary<MulOp>(gb.binary<SubOp>(gb.dimsOf(y, spatial), gb.i64s({1})),
                         gb.i64s(strides)),
        gb.i64s({1}));
    SmallVector<int64_t> shape(yt.getShape());
    shape[1] = xt.getDimSize(1);
    tapType = yt.clone(shape).clone(xt.getElementType());
    size = 1;
    for (int64_t w : window)
      size *= w;
  }
  /// The number of taps.
  int64_t size;
  /// Tap t: [N, C, O..].
  Value tap(int64_t t) {
    int64_t k = window.size();
    SmallVector<int64_t> starts(k);
    for (int64_t i = k - 1, rest = t; i >= 0; --i) {
      starts[i] = (rest % window[i]) * dilations[i];
      rest /= window[i];
    }
    Value st = gb.i64s(starts);
    return SliceOp::create(gb.b, gb.loc, tapType, xpad, st,
                           gb.binary<AddOp>(st, span), gb.i64s(strides),
                           spatial);
  }

private:
  GradientBuilder &gb;
  ArrayRef<int64_t> window, strides, dilations;
  SmallVector<int64_t> spatial;
  Value xpad, span;
  RankedTensorType tapType;
};

/// The filter gradient of a grouped convolution, one window position t at
/// a time: the input positions that filter tap t reads for every output
/// (a strided slice of the zero-padded input, [N, C, O..]) contracted with
/// g over the batch and output positions, per group:
/// `dW[:, :, t] = dot(g as [N, groups, OC / groups, O..], slice as
/// [N, groups, C / groups, O..])` with groups as the batch dim.
static Value groupedFilterGradient(GradientBuilder &gb, ConvOp op, Value g) {
  OpBuilder &b = gb.b;
  Location loc = gb.loc;
  RankedTensorType xt = op.getInput().getType(), wt = op.getFilter().getType();
  int64_t r = xt.getRank(), groups = op.getFeatureGroupCount();
  int64_t oc = wt.getDimSize(0), cg = wt.getDimSize(1), ocg = oc / groups;
  SmallVector<int64_t> spatial = llvm::to_vector(llvm::seq<int64_t>(2, r));
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
  WindowTaps taps(gb, op.getInput(), g, gb.scalarLike(g, 0.0), kernel,
                  op.getStrides(), op.getDilations(), op.getPadding());
  // [N, C, O..] -> [N, groups, C / groups, O..] (likewise g).
  auto splitChannels = [&](Value v, int64_t perGroup) {
    RankedTensorType t = tensorType(v);
    SmallVector<int64_t> shape = {t.getDimSize(0), groups, perGroup};
    shape.append(t.getShape().begin() + 2, t.getShape().end());
    SmallVector<int64_t> index = {0, r, r + 1};
    index.append(spatial);
    Value dims =
        gb.pick(gb.concat({gb.shapeOf(v), gb.i64s({groups, perGroup})}, 0,
                          RankedTensorType::get({r + 2}, b.getI64Type())),
                index);
    return gb.reshape(v, dims, t.clone(shape));
  };
  Value gs = splitChannels(g, ocg);
  SmallVector<int64_t> contract = {0};
  for (int64_t i = 3; i < r + 1; ++i)
    contract.push_back(i);
  SmallVector<Value> perTap;
  auto tapType = RankedTensorType::get({oc, cg, 1}, xt.getElementType());
  for (int64_t t = 0; t < taps.size; ++t) {
    Value patch = taps.tap(t);
    Value ps = splitChannels(patch, cg);
    Value d = DotGeneralOp::create(
        b, loc, RankedTensorType::get({groups, ocg, cg}, xt.getElementType()),
        gs, ps, ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1}, contract, contract);
    perTap.push_back(gb.reshape(d, gb.i64s({oc, cg, 1}), tapType));
  }
  Value all = gb.concat(
      perTap, 2,
      RankedTensorType::get({oc, cg, taps.size}, xt.getElementType()));
  return gb.reshape(all, gb.i64s(wt.getShape()), wt);
}

LogicalResult ConvOp::buildGradient(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  if (!g || !isFloatTensor(getInput()))
    return emit(out, {Value(), Value()});
  GradientBuilder gb(b, getLoc());
  RankedTensorType xt = getInput().getType(), wt = getFilter().getType();
  int64_t r = xt.getRank(), k = r - 2, groups = getFeatureGroupCount();
  // The filter's dims [OC, C / groups, K..] are static (a parameter).
  if (!wt.hasStaticShape())
    return failure();
  int64_t oc = wt.getDimSize(0), cg = wt.getDimSize(1);
  ArrayRef<int64_t> strides = getStrides(), dilations = getDilations(),
                    padding = getPadding();
  // Input: the transposed convolution of g with the same filter and groups.
  // With output padding stride - 1 it covers every input position (the
  // forward floor drops at most stride - 1 of them); sliced back to the
  // input size.
  SmallVector<int64_t> outputPadding;
  bool strided = false;
  for (int64_t s : strides) {
    outputPadding.push_back(s - 1);
    strided |= s > 1;
  }
  SmallVector<int64_t> ctShape(xt.getShape());
  for (int64_t i = 2; i < r; ++i)
    ctShape[i] = strided ? ShapedType::kDynamic : xt.getDimSize(i);
  Value gx = ConvTransposeOp::create(b, getLoc(), xt.clone(ctShape), g,
                                     getFilter(), strides, dilations, padding,
                                     outputPadding, groups);
  SmallVector<int64_t> spatial = llvm::to_vector(llvm::seq<int64_t>(2, r));
  if (strided) {
    SmallVector<int64_t> zeros(k, 0), ones(k, 1);
    gx =
        SliceOp::create(b, getLoc(), xt, gx, gb.i64s(zeros),
                        gb.dimsOf(getInput(), spatial), gb.i64s(ones), spatial);
  }
  if (groups > 1)
    return emit(out, {gx, groupedFilterGradient(gb, *this, g)});
  // Filter: the correlation of the input with g over the batch, a
  // convolution of x as [C, N, D..] with g as [OC, N, O..] (strides and
  // dilations swap roles), giving [C, OC, K'..] with K' >= K; sliced to K
  // and transposed to [OC, C, K..].
  SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, r));
  std::swap(swap[0], swap[1]);
  Value xT = gb.transpose(getInput(), swap);
  Value gT = gb.transpose(g, swap);
  SmallVector<int64_t> wShape = {cg, oc};
  wShape.append(k, ShapedType::kDynamic);
  Value gw = ConvOp::create(b, getLoc(), wt.clone(wShape), xT, gT, dilations,
                            strides, padding, 1);
  SmallVector<int64_t> zeros(k, 0), ones(k, 1),
      kernel(wt.getShape().drop_front(2));
  SmallVector<int64_t> cropped = {cg, oc};
  cropped.append(kernel);
  gw = SliceOp::create(b, getLoc(), wt.clone(cropped), gw, gb.i64s(zeros),
                       gb.i64s(kernel), gb.i64s(ones), spatial);
  return emit(out, {gx, gb.transpose(gw, swap)});
}

LogicalResult ReduceOp::buildGradient(OpBuilder &b, ValueRange rg,
                                      SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  Value x = getInput();
  if (!g || !isFloatTensor(x))
    return emit(out, {Value()});
  GradientBuilder gb(b, getLoc());
  ArrayRef<int64_t> dims = getDimensions();
  Value gk = gb.withKeptDims(g, x, dims, getKeepDims());
  Type elt = tensorType(x).getElementType();
  switch (getKind()) {
  case ReduceKind::Sum:
    return emit(out, {gb.expandLike(gk, x)});
  case ReduceKind::Mean:
    return emit(
        out, {gb.expandLike(gb.binary<DivOp>(gk, gb.count(x, dims, elt)), x)});
  case ReduceKind::Max:
  case ReduceKind::Min: {
    // Split evenly between the elements equal to the result (PyTorch's
    // amax/amin).
    Value yk = gb.withKeptDims(getResult(), x, dims, getKeepDims());
    Value hit = gb.convert(gb.compare(CompareDirection::EQ, x, yk), elt);
    Value ties = gb.reduce(ReduceKind::Sum, hit, dims, /*keep=*/true);
    return emit(out, {gb.binary<MulOp>(hit, gb.binary<DivOp>(gk, ties))});
  }
  default:
    return failure();
  }
}

LogicalResult CumSumOp::buildGradient(OpBuilder &b, ValueRange rg,
                                      SmallVectorImpl<Value> &out) {
  if (!rg[0] || !isFloatTensor(getOperand()))
    return emit(out, {Value()});
  // Each input element reaches the outputs on its other side.
  return emit(out,
              {CumSumOp::create(b, getLoc(), getType(), rg[0], getDimension(),
                                getExclusive(), !getReverse())});
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::buildGradient(OpBuilder &b, ValueRange rg,
                                      SmallVectorImpl<Value> &out) {
  if (!rg[0] || !isFloatTensor(getOperand()))
    return emit(out, {Value(), Value()});
  GradientBuilder gb(b, getLoc());
  return emit(out, {gb.sumToShapeOf(rg[0], getOperand()), Value()});
}

LogicalResult DynamicReshapeOp::buildGradient(OpBuilder &b, ValueRange rg,
                                              SmallVectorImpl<Value> &out) {
  if (!rg[0] || !isFloatTensor(getOperand()))
    return emit(out, {Value(), Value()});
  GradientBuilder gb(b, getLoc());
  return emit(
      out, {gb.reshape(rg[0], gb.shapeOf(getOperand()), getOperand().getType()),
            Value()});
}

LogicalResult TransposeOp::buildGradient(OpBuilder &b, ValueRange rg,
                                         SmallVectorImpl<Value> &out) {
  if (!rg[0] || !isFloatTensor(getOperand()))
    return emit(out, {Value()});
  GradientBuilder gb(b, getLoc());
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return emit(out, {gb.transpose(rg[0], inverse)});
}

LogicalResult ConcatenateOp::buildGradient(OpBuilder &b, ValueRange rg,
                                           SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  if (!g || !isFloatTensor(getResult())) {
    out.append(getInputs().size(), Value());
    return success();
  }
  GradientBuilder gb(b, getLoc());
  int64_t dim = getDimension();
  Value offset = gb.i64s({0}), one = gb.i64s({1});
  for (Value input : getInputs()) {
    Value end = gb.binary<AddOp>(offset, gb.dimsOf(input, {dim}));
    out.push_back(SliceOp::create(b, getLoc(), input.getType(), g, offset, end,
                                  one, ArrayRef<int64_t>{dim}));
    offset = end;
  }
  return success();
}

LogicalResult SliceOp::buildGradient(OpBuilder &b, ValueRange rg,
                                     SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  Value x = getOperand();
  if (!g || !isFloatTensor(x))
    return emit(out, {Value(), Value(), Value(), Value()});
  // Steps of 1 only: the gradient is g padded with zeros to x's shape, by
  // the clamped start and end (ONNX Slice) of each axis.
  DenseIntElementsAttr steps;
  if (!matchPattern(getSteps(), m_Constant(&steps)) ||
      !llvm::all_of(steps.getValues<int64_t>(),
                    [](int64_t s) { return s == 1; }))
    return failure();
  GradientBuilder gb(b, getLoc());
  ArrayRef<int64_t> axes = getAxes();
  int64_t r = tensorType(x).getRank(), k = axes.size();
  Value dims = gb.dimsOf(x, axes), zero = gb.i64s({0});
  auto clamped = [&](Value v) {
    Value neg = gb.compare(CompareDirection::LT, v, zero);
    Value abs = gb.select(neg, gb.binary<AddOp>(v, dims), v);
    return gb.binary<MinOp>(gb.binary<MaxOp>(abs, zero), dims);
  };
  Value start = clamped(getStarts());
  Value end = gb.binary<MaxOp>(clamped(getEnds()), start);
  // Per dim of x: the entry for its axis, or the appended 0.
  SmallVector<int64_t> index(r, k);
  for (auto [j, axis] : llvm::enumerate(axes))
    index[axis] = j;
  auto vecType = RankedTensorType::get({k + 1}, b.getI64Type());
  Value lo = gb.pick(gb.concat({start, zero}, 0, vecType), index);
  Value hi = gb.pick(gb.concat({gb.binary<SubOp>(dims, end), zero}, 0, vecType),
                     index);
  Value pads =
      gb.concat({lo, hi}, 0, RankedTensorType::get({2 * r}, b.getI64Type()));
  Value gx = PadOp::create(b, getLoc(), x.getType(), PadMode::Constant, g, pads,
                           gb.scalarLike(g, 0.0));
  return emit(out, {gx, Value(), Value(), Value()});
}

LogicalResult PadOp::buildGradient(OpBuilder &b, ValueRange rg,
                                   SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  Value x = getOperand();
  if (!g || !isFloatTensor(x))
    return emit(out, {Value(), Value(), Value()});
  if (getMode() != PadMode::Constant)
    return failure();
  GradientBuilder gb(b, getLoc());
  int64_t r = tensorType(x).getRank();
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, r));
  auto vecType = RankedTensorType::get({r}, b.getI64Type());
  Value lo = SliceOp::create(b, getLoc(), vecType, getPads(), gb.i64s({0}),
                             gb.i64s({r}), gb.i64s({1}), ArrayRef<int64_t>{0});
  Value end = gb.binary<AddOp>(lo, gb.shapeOf(x));
  Value gx = SliceOp::create(b, getLoc(), x.getType(), g, lo, end,
                             gb.i64s(SmallVector<int64_t>(r, 1)), all);
  return emit(out, {gx, Value(), Value()});
}

LogicalResult GatherOp::buildGradient(OpBuilder &b, ValueRange rg,
                                      SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  Value data = getData();
  if (!g || !isFloatTensor(data))
    return emit(out, {Value(), Value()});
  // Axis 0 (an embedding lookup): scatter-add of g into zeros, one row per
  // index.
  if (getAxis() != 0)
    return failure();
  GradientBuilder gb(b, getLoc());
  Value indices = getIndices();
  RankedTensorType it = tensorType(indices);
  int64_t ir = it.getRank();
  SmallVector<int64_t> idxShape(it.getShape());
  idxShape.push_back(1);
  auto shapeType = RankedTensorType::get({ir + 1}, b.getI64Type());
  Value tuples = gb.reshape(
      indices, gb.concat({gb.shapeOf(indices), gb.i64s({1})}, 0, shapeType),
      it.clone(idxShape));
  Value zeros = gb.expandLike(gb.scalarLike(g, 0.0), data);
  Value gd =
      ScatterNdOp::create(b, getLoc(), data.getType(), zeros, tuples, g, "add");
  return emit(out, {gd, Value()});
}

/// The transposed convolution that sends each window's gradient back to the
/// input positions of the window: `g` is [N, C * KK, O..] where channel
/// c * KK + t holds what window position t (row-major in the window) of
/// channel c receives, or [N, C, O..] (`perPosition` false) when every
/// window position receives the same. The result has x's shape: with
/// output padding stride - 1 the transposed convolution covers every input
/// position, and is sliced back to the input size.
static Value scatterToWindows(GradientBuilder &gb, PoolOp op, Value g,
                              bool perPosition) {
  RankedTensorType xt = op.getInput().getType();
  int64_t r = xt.getRank(), c = xt.getDimSize(1);
  ArrayRef<int64_t> window = op.getWindow();
  int64_t kk = 1;
  for (int64_t k : window)
    kk *= k;
  // Filter [C * KK, 1, K..] (groups C): one-hot at position t of input
  // channel c * KK + t, or [C, 1, K..] of ones.
  int64_t in = perPosition ? c * kk : c;
  SmallVector<int64_t> fshape = {in, 1};
  fshape.append(window.begin(), window.end());
  Type elt = xt.getElementType();
  SmallVector<APFloat> values;
  for (int64_t i = 0; i < in; ++i)
    for (int64_t t = 0; t < kk; ++t)
      values.push_back(APFloat(cast<FloatType>(elt).getFloatSemantics(),
                               !perPosition || i % kk == t ? 1 : 0));
  auto ftype = RankedTensorType::get(fshape, elt);
  Value filter =
      ConstantOp::create(gb.b, gb.loc, DenseElementsAttr::get(ftype, values));
  SmallVector<int64_t> outputPadding, ctShape(xt.getShape());
  for (int64_t s : op.getStrides())
    outputPadding.push_back(s - 1);
  for (int64_t i = 2; i < r; ++i)
    ctShape[i] = ShapedType::kDynamic;
  Value ct = ConvTransposeOp::create(gb.b, gb.loc, xt.clone(ctShape), g, filter,
                                     op.getStrides(), op.getDilations(),
                                     op.getPadding(), outputPadding, c);
  SmallVector<int64_t> spatial = llvm::to_vector(llvm::seq<int64_t>(2, r));
  SmallVector<int64_t> zeros(r - 2, 0), ones(r - 2, 1);
  return SliceOp::create(gb.b, gb.loc, xt, ct, gb.i64s(zeros),
                         gb.dimsOf(op.getInput(), spatial), gb.i64s(ones),
                         spatial);
}

LogicalResult PoolOp::buildGradient(OpBuilder &b, ValueRange rg,
                                    SmallVectorImpl<Value> &out) {
  Value g = rg[0];
  Value x = getInput();
  if (!g || !isFloatTensor(x))
    return emit(out, {Value()});
  RankedTensorType xt = getInput().getType();
  if (xt.isDynamicDim(1))
    return failure(); // The window filter needs the channel count.
  GradientBuilder gb(b, getLoc());
  int64_t r = xt.getRank();
  ArrayRef<int64_t> window = getWindow(), strides = getStrides(),
                    dilations = getDilations(), padding = getPadding();
  int64_t kk = 1;
  for (int64_t w : window)
    kk *= w;
  SmallVector<int64_t> spatial = llvm::to_vector(llvm::seq<int64_t>(2, r));
  if (getKind() == PoolKind::Avg) {
    // Each window element receives g / (the window's divisor).
    Value divisor = gb.scalarLike(g, (double)kk);
    if (!getCountIncludePad() &&
        llvm::any_of(padding, [](int64_t p) { return p != 0; })) {
      // The number of input elements in each window: the average, padding
      // counted, of ones, times the window size.
      Value ones = gb.expandLike(gb.scalarLike(x, 1.0), x);
      Value avg = PoolOp::create(b, getLoc(), getType(), PoolKind::Avg, ones,
                                 window, strides, dilations, padding,
                                 getCeilMode(), /*count_include_pad=*/true);
      divisor = gb.binary<MulOp>(avg, divisor);
    }
    return emit(out, {scatterToWindows(gb, *this, gb.binary<DivOp>(g, divisor),
                                       /*perPosition=*/false)});
  }
  // Max: the gradient goes to the first maximum of each window (row-major
  // window order, as PyTorch's max_pool2d), found tap by tap in x padded
  // with -inf.
  Value y = getResult();
  Type elt = xt.getElementType();
  Value lowest = ConstantOp::create(
      b, getLoc(),
      DenseElementsAttr::get(
          RankedTensorType::get({}, elt),
          APFloat::getInf(cast<FloatType>(elt).getFloatSemantics(), true)));
  WindowTaps taps(gb, x, y, lowest, window, strides, dilations, padding);
  Value found, zero = gb.scalarLike(g, 0.0);
  SmallVector<Value> parts;
  RankedTensorType yt = getType();
  SmallVector<int64_t> partShape(yt.getShape());
  partShape.insert(partShape.begin() + 2, 1);
  auto partType = yt.clone(partShape);
  SmallVector<int64_t> partDims = {0, 1, r};
  partDims.append(spatial);
  for (int64_t t = 0; t < kk; ++t) {
    Value v = taps.tap(t);
    Value hit = gb.compare(CompareDirection::EQ, v, y);
    Value first =
        found
            ? AndOp::create(b, getLoc(), hit.getType(), hit,
                            NotOp::create(b, getLoc(), found.getType(), found))
                  .getResult()
            : hit;
    found =
        found ? OrOp::create(b, getLoc(), hit.getType(), found, hit).getResult()
              : hit;
    // [N, C, 1, O..]: the shape of g with a 1 after C.
    Value shape =
        gb.pick(gb.concat({gb.shapeOf(g), gb.i64s({1})}, 0,
                          RankedTensorType::get({r + 1}, b.getI64Type())),
                partDims);
    parts.push_back(gb.reshape(gb.select(first, g, zero), shape, partType));
  }
  SmallVector<int64_t> stackedShape(partShape);
  stackedShape[2] = kk;
  Value stacked = gb.concat(parts, 2, yt.clone(stackedShape));
  // [N, C * KK, O..].
  SmallVector<int64_t> mergedShape(yt.getShape());
  mergedShape[1] = xt.getDimSize(1) * kk;
  SmallVector<int64_t> mergeIndex = {0, r};
  mergeIndex.append(spatial);
  Value merged = gb.reshape(
      stacked,
      gb.pick(gb.concat({gb.shapeOf(g), gb.i64s({xt.getDimSize(1) * kk})}, 0,
                        RankedTensorType::get({r + 1}, b.getI64Type())),
              mergeIndex),
      yt.clone(mergedShape));
  return emit(out, {scatterToWindows(gb, *this, merged, /*perPosition=*/true)});
}

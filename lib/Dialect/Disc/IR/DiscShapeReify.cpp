//===- DiscShapeReify.cpp - result shape reification of disc ops ----------===//
//
// Implements ReifyRankedShapedTypeOpInterface: for every result dim, an
// index-typed value (or static size) computed from the operands at run time.
// The CPU lowering builds its `tensor.empty` destinations from these.
//
// Result dims that are static in the op's result type are returned as index
// attributes without looking at the operands. Dynamic dims follow the op's
// semantics (DiscOps.td, and the ONNX operator spec each op names). Index
// arithmetic folds when its inputs are constants.
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::disc;

namespace {

/// Builds folded index arithmetic on OpFoldResults.
class IndexMath {
public:
  IndexMath(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpFoldResult cst(int64_t v) { return b.getIndexAttr(v); }

  Value val(OpFoldResult ofr) {
    if (auto v = dyn_cast<Value>(ofr))
      return v;
    return arith::ConstantIndexOp::create(
        b, loc, cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
  }

  /// Folds `v` to an attribute when it is a constant.
  OpFoldResult fold(Value v) {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return cst(*c);
    return v;
  }

  OpFoldResult dim(Value tensor, int64_t i) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(i))
      return cst(type.getDimSize(i));
    return tensor::DimOp::create(b, loc, tensor, i).getResult();
  }

  /// Element `i` of a 1-D integer tensor as an index value.
  OpFoldResult element(Value tensor, int64_t i) {
    Value idx = arith::ConstantIndexOp::create(b, loc, i);
    Value e = tensor::ExtractOp::create(b, loc, tensor, ValueRange{idx});
    return fold(b.createOrFold<arith::IndexCastOp>(loc, b.getIndexType(), e));
  }

  template <typename OpTy, typename Fn>
  OpFoldResult binary(OpFoldResult l, OpFoldResult r, Fn constFn) {
    std::optional<int64_t> a = getConstantIntValue(l);
    std::optional<int64_t> c = getConstantIntValue(r);
    if (a && c)
      return cst(constFn(*a, *c));
    return fold(b.createOrFold<OpTy>(loc, val(l), val(r)));
  }

  OpFoldResult add(OpFoldResult l, OpFoldResult r) {
    if (isConstantIntValue(l, 0))
      return r;
    if (isConstantIntValue(r, 0))
      return l;
    return binary<arith::AddIOp>(l, r,
                                 [](int64_t a, int64_t c) { return a + c; });
  }
  OpFoldResult sub(OpFoldResult l, OpFoldResult r) {
    if (isConstantIntValue(r, 0))
      return l;
    return binary<arith::SubIOp>(l, r,
                                 [](int64_t a, int64_t c) { return a - c; });
  }
  OpFoldResult mul(OpFoldResult l, OpFoldResult r) {
    if (isConstantIntValue(l, 1))
      return r;
    if (isConstantIntValue(r, 1))
      return l;
    return binary<arith::MulIOp>(l, r,
                                 [](int64_t a, int64_t c) { return a * c; });
  }
  OpFoldResult floorDiv(OpFoldResult l, OpFoldResult r) {
    if (isConstantIntValue(r, 1))
      return l;
    return binary<arith::FloorDivSIOp>(l, r, [](int64_t a, int64_t c) {
      int64_t q = a / c;
      return (a % c != 0 && ((a < 0) != (c < 0))) ? q - 1 : q;
    });
  }
  OpFoldResult ceilDiv(OpFoldResult l, OpFoldResult r) {
    if (isConstantIntValue(r, 1))
      return l;
    return binary<arith::CeilDivSIOp>(l, r, [](int64_t a, int64_t c) {
      int64_t q = a / c;
      return (a % c != 0 && ((a < 0) == (c < 0))) ? q + 1 : q;
    });
  }
  OpFoldResult max(OpFoldResult l, OpFoldResult r) {
    return binary<arith::MaxSIOp>(
        l, r, [](int64_t a, int64_t c) { return std::max(a, c); });
  }
  OpFoldResult min(OpFoldResult l, OpFoldResult r) {
    return binary<arith::MinSIOp>(
        l, r, [](int64_t a, int64_t c) { return std::min(a, c); });
  }
  Value cmp(arith::CmpIPredicate pred, OpFoldResult l, OpFoldResult r) {
    return b.createOrFold<arith::CmpIOp>(loc, pred, val(l), val(r));
  }
  OpFoldResult select(Value cond, OpFoldResult t, OpFoldResult f) {
    if (std::optional<int64_t> c = getConstantIntValue(cond))
      return *c ? t : f;
    return fold(b.createOrFold<arith::SelectOp>(loc, cond, val(t), val(f)));
  }

  /// NumPy broadcast of two dims: `select(a == 1, b, a)`.
  OpFoldResult broadcast(OpFoldResult a, OpFoldResult c) {
    if (isConstantIntValue(a, 1))
      return c;
    if (isConstantIntValue(c, 1) || getConstantIntValue(a))
      return a;
    if (getConstantIntValue(c))
      return c;
    if (a == c)
      return a;
    return select(cmp(arith::CmpIPredicate::eq, a, cst(1)), c, a);
  }

  /// Output size of a sliding window (ONNX Conv / MaxPool spec):
  /// `(D + lo + hi - dil * (K - 1) - 1) / stride + 1`, rounded down, or up
  /// when `ceilMode`.
  OpFoldResult windowOutput(OpFoldResult d, OpFoldResult k, int64_t lo,
                            int64_t hi, int64_t stride, int64_t dilation,
                            bool ceilMode) {
    OpFoldResult extent = add(mul(cst(dilation), sub(k, cst(1))), cst(1));
    OpFoldResult num = sub(add(d, cst(lo + hi)), extent);
    OpFoldResult q =
        ceilMode ? ceilDiv(num, cst(stride)) : floorDiv(num, cst(stride));
    return add(q, cst(1));
  }

private:
  OpBuilder &b;
  Location loc;
};

} // namespace

/// Stores `dims` as the single result's shape, replacing dims that the
/// result type makes static by index attributes.
static LogicalResult finish(OpBuilder &b, Type resultType,
                            SmallVector<OpFoldResult> dims,
                            ReifiedRankedShapedTypeDims &out) {
  auto type = cast<RankedTensorType>(resultType);
  if (static_cast<int64_t>(dims.size()) != type.getRank())
    return failure();
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (!type.isDynamicDim(i))
      dims[i] = b.getIndexAttr(type.getDimSize(i));
  out.clear();
  out.push_back(std::move(dims));
  return success();
}

static SmallVector<OpFoldResult> dimsOf(IndexMath &m, Value v) {
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0, e = cast<RankedTensorType>(v.getType()).getRank(); i < e;
       ++i)
    dims.push_back(m.dim(v, i));
  return dims;
}

LogicalResult
mlir::disc::detail::reifySameShape(Operation *op, OpBuilder &b,
                                   ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, op->getLoc());
  return finish(b, op->getResult(0).getType(), dimsOf(m, op->getOperand(0)),
                out);
}

LogicalResult
mlir::disc::detail::reifyBroadcast(Operation *op, ValueRange operands,
                                   OpBuilder &b,
                                   ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, op->getLoc());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (!resultType.isDynamicDim(i)) {
      dims.push_back(m.cst(resultType.getDimSize(i)));
      continue;
    }
    OpFoldResult acc = m.cst(1);
    SmallVector<std::pair<Value, int64_t>> seen;
    for (Value v : operands) {
      auto t = cast<RankedTensorType>(v.getType());
      int64_t j = i - (rank - t.getRank());
      if (j < 0 || llvm::is_contained(seen, std::make_pair(v, j)))
        continue;
      seen.push_back({v, j});
      acc = m.broadcast(acc, m.dim(v, j));
    }
    dims.push_back(acc);
  }
  return finish(b, resultType, dims, out);
}

// The elementwise op classes (Disc_UnaryOp, Disc_PredicateOp,
// Disc_BinaryOp) reify in DiscOps.td (extraClassDefinition).

LogicalResult ConvertOp::reifyResultShapes(OpBuilder &b,
                                           ReifiedRankedShapedTypeDims &out) {
  return detail::reifySameShape(getOperation(), b, out);
}

LogicalResult CumSumOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &out) {
  return detail::reifySameShape(getOperation(), b, out);
}

LogicalResult CompareOp::reifyResultShapes(OpBuilder &b,
                                           ReifiedRankedShapedTypeDims &out) {
  return detail::reifyBroadcast(getOperation(), getOperands(), b, out);
}

LogicalResult SelectOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &out) {
  return detail::reifyBroadcast(getOperation(), getOperands(), b, out);
}

/// Batch dims (lhs order), then lhs free dims, then rhs free dims
/// (StableHLO dot_general).
LogicalResult
DotGeneralOp::reifyResultShapes(OpBuilder &b,
                                ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  SmallVector<OpFoldResult> dims;
  for (int64_t d : getLhsBatchingDimensions())
    dims.push_back(m.dim(getLhs(), d));
  auto appendFree = [&](Value v, ArrayRef<int64_t> batch,
                        ArrayRef<int64_t> contract) {
    for (int64_t i = 0, e = cast<RankedTensorType>(v.getType()).getRank();
         i < e; ++i)
      if (!llvm::is_contained(batch, i) && !llvm::is_contained(contract, i))
        dims.push_back(m.dim(v, i));
  };
  appendFree(getLhs(), getLhsBatchingDimensions(),
             getLhsContractingDimensions());
  appendFree(getRhs(), getRhsBatchingDimensions(),
             getRhsContractingDimensions());
  return finish(b, getType(), dims, out);
}

/// [N, OC, O1..Ok], `Oi` as in the ONNX Conv spec.
LogicalResult ConvOp::reifyResultShapes(OpBuilder &b,
                                        ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t k = getInput().getType().getRank() - 2;
  SmallVector<OpFoldResult> dims = {m.dim(getInput(), 0),
                                    m.dim(getFilter(), 0)};
  for (int64_t i = 0; i < k; ++i)
    dims.push_back(m.windowOutput(m.dim(getInput(), i + 2),
                                  m.dim(getFilter(), i + 2), getPadding()[i],
                                  getPadding()[i + k], getStrides()[i],
                                  getDilations()[i], /*ceilMode=*/false));
  return finish(b, getType(), dims, out);
}

/// The filter's static shape.
LogicalResult
ConvBackwardFilterOp::reifyResultShapes(OpBuilder &b,
                                        ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  SmallVector<OpFoldResult> dims;
  for (int64_t d : getType().getShape())
    dims.push_back(m.cst(d));
  return finish(b, getType(), dims, out);
}

/// [N, OC, O1..Ok], `Oi = s * (Di - 1) + out_pad + (Ki - 1) * dil + 1 - lo -
/// hi` (ONNX ConvTranspose spec).
LogicalResult
ConvTransposeOp::reifyResultShapes(OpBuilder &b,
                                   ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t k = getInput().getType().getRank() - 2;
  SmallVector<OpFoldResult> dims = {
      m.dim(getInput(), 0),
      m.mul(m.dim(getFilter(), 1), m.cst(getFeatureGroupCount()))};
  for (int64_t i = 0; i < k; ++i) {
    OpFoldResult d = m.dim(getInput(), i + 2), kk = m.dim(getFilter(), i + 2);
    OpFoldResult o = m.mul(m.sub(d, m.cst(1)), m.cst(getStrides()[i]));
    o = m.add(o, m.mul(m.sub(kk, m.cst(1)), m.cst(getDilations()[i])));
    dims.push_back(m.add(o, m.cst(getOutputPadding()[i] + 1 - getPadding()[i] -
                                  getPadding()[i + k])));
  }
  return finish(b, getType(), dims, out);
}

/// [N, C, O1..Ok], `Oi` as in the ONNX MaxPool/AveragePool spec (floor, or
/// ceil when `ceil_mode`).
LogicalResult PoolOp::reifyResultShapes(OpBuilder &b,
                                        ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t k = getInput().getType().getRank() - 2;
  SmallVector<OpFoldResult> dims = {m.dim(getInput(), 0), m.dim(getInput(), 1)};
  for (int64_t i = 0; i < k; ++i)
    dims.push_back(m.windowOutput(m.dim(getInput(), i + 2),
                                  m.cst(getWindow()[i]), getPadding()[i],
                                  getPadding()[i + k], getStrides()[i],
                                  getDilations()[i], getCeilMode()));
  return finish(b, getType(), dims, out);
}

/// Result shape of a reduction of `input` over the dims for which `reduced`
/// holds: kept as 1 (`keepDims`) or dropped.
static LogicalResult
reifyReduction(OpBuilder &b, Location loc, TypedValue<RankedTensorType> input,
               bool keepDims, llvm::function_ref<bool(int64_t)> reduced,
               RankedTensorType resultType, ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, loc);
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0, e = input.getType().getRank(); i < e; ++i) {
    if (!reduced(i))
      dims.push_back(m.dim(input, i));
    else if (keepDims)
      dims.push_back(m.cst(1));
  }
  return finish(b, resultType, dims, out);
}

LogicalResult ReduceOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &out) {
  return reifyReduction(
      b, getLoc(), getInput(), getKeepDims(),
      [&](int64_t i) { return llvm::is_contained(getDimensions(), i); },
      getType(), out);
}

LogicalResult ArgReduceOp::reifyResultShapes(OpBuilder &b,
                                             ReifiedRankedShapedTypeDims &out) {
  return reifyReduction(
      b, getLoc(), getInput(), getKeepDims(),
      [&](int64_t i) { return i == static_cast<int64_t>(getDimension()); },
      getType(), out);
}

LogicalResult ShapeOfOp::reifyResultShapes(OpBuilder &b,
                                           ReifiedRankedShapedTypeDims &out) {
  return finish(b, getType(),
                {b.getIndexAttr(getOperand().getType().getRank())}, out);
}

/// NumPy broadcast of the operand's shape and the values of `shape`
/// (ONNX Expand).
LogicalResult ExpandOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t rank = getType().getRank();
  int64_t n = getShape().getType().getDimSize(0);
  int64_t r = getOperand().getType().getRank();
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (!getType().isDynamicDim(i)) {
      dims.push_back(m.cst(getType().getDimSize(i)));
      continue;
    }
    int64_t si = i - (rank - n), di = i - (rank - r);
    if (si < 0) {
      dims.push_back(m.dim(getOperand(), di));
      continue;
    }
    OpFoldResult s = m.element(getShape(), si);
    if (di < 0) {
      dims.push_back(s);
      continue;
    }
    // A shape entry of 1 keeps the operand's dim; an operand dim of 1 takes
    // the shape entry.
    OpFoldResult d = m.dim(getOperand(), di);
    dims.push_back(m.broadcast(s, d));
  }
  return finish(b, getType(), dims, out);
}

/// ONNX Reshape: an entry 0 copies the operand's dim at the same index
/// (unless `allow_zero`); one entry -1 is the element count divided by the
/// product of the other entries.
LogicalResult
DynamicReshapeOp::reifyResultShapes(OpBuilder &b,
                                    ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t rank = getType().getRank();
  int64_t inRank = getOperand().getType().getRank();
  if (getType().hasStaticShape())
    return finish(b, getType(), SmallVector<OpFoldResult>(rank, m.cst(0)), out);
  SmallVector<OpFoldResult> entries;
  for (int64_t i = 0; i < rank; ++i) {
    OpFoldResult s = m.element(getShape(), i);
    if (!getAllowZero() && i < inRank)
      s = m.select(m.cmp(arith::CmpIPredicate::eq, s, m.cst(0)),
                   m.dim(getOperand(), i), s);
    entries.push_back(s);
  }
  OpFoldResult numel = m.cst(1);
  for (int64_t i = 0; i < inRank; ++i)
    numel = m.mul(numel, m.dim(getOperand(), i));
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (!getType().isDynamicDim(i)) {
      dims.push_back(m.cst(getType().getDimSize(i)));
      continue;
    }
    OpFoldResult known = m.cst(1);
    for (int64_t j = 0; j < rank; ++j) {
      if (j == i)
        continue;
      OpFoldResult e = entries[j];
      known =
          m.mul(known, m.select(m.cmp(arith::CmpIPredicate::eq, e, m.cst(-1)),
                                m.cst(1), e));
    }
    // Guard the division: a zero-sized known part makes the -1 entry 0.
    OpFoldResult inferred =
        m.select(m.cmp(arith::CmpIPredicate::eq, known, m.cst(0)), m.cst(0),
                 m.floorDiv(numel, m.max(known, m.cst(1))));
    dims.push_back(
        m.select(m.cmp(arith::CmpIPredicate::eq, entries[i], m.cst(-1)),
                 inferred, entries[i]));
  }
  return finish(b, getType(), dims, out);
}

LogicalResult TransposeOp::reifyResultShapes(OpBuilder &b,
                                             ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  SmallVector<OpFoldResult> dims;
  for (int64_t p : getPermutation())
    dims.push_back(m.dim(getOperand(), p));
  return finish(b, getType(), dims, out);
}

LogicalResult
ConcatenateOp::reifyResultShapes(OpBuilder &b,
                                 ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t axis = getDimension();
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0, e = getType().getRank(); i < e; ++i) {
    if (i == axis) {
      OpFoldResult sum = m.cst(0);
      for (Value v : getInputs())
        sum = m.add(sum, m.dim(v, i));
      dims.push_back(sum);
      continue;
    }
    // Prefer an input whose dim is static.
    Value src = getInputs().front();
    for (Value v : getInputs())
      if (!cast<RankedTensorType>(v.getType()).isDynamicDim(i))
        src = v;
    dims.push_back(m.dim(src, i));
  }
  return finish(b, getType(), dims, out);
}

/// ONNX Slice: starts/ends are made non-negative by adding the dim, then
/// clamped to [0, dim] (step > 0) or to [0, dim - 1] / [-1, dim - 1]
/// (step < 0); the count is `max(0, ceil((end - start) / step))`.
LogicalResult SliceOp::reifyResultShapes(OpBuilder &b,
                                         ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  SmallVector<OpFoldResult> dims = dimsOf(m, getOperand());
  for (auto [k, axis] : llvm::enumerate(getAxes())) {
    if (!getType().isDynamicDim(axis))
      continue;
    OpFoldResult d = dims[axis];
    OpFoldResult start = m.element(getStarts(), k);
    OpFoldResult end = m.element(getEnds(), k);
    OpFoldResult step = m.element(getSteps(), k);
    Value negStep = m.cmp(arith::CmpIPredicate::slt, step, m.cst(0));
    auto normalize = [&](OpFoldResult v, OpFoldResult lo, OpFoldResult hi) {
      OpFoldResult wrapped = m.select(
          m.cmp(arith::CmpIPredicate::slt, v, m.cst(0)), m.add(v, d), v);
      return m.min(m.max(wrapped, lo), hi);
    };
    OpFoldResult dm1 = m.sub(d, m.cst(1));
    OpFoldResult s = m.select(negStep, normalize(start, m.cst(0), dm1),
                              normalize(start, m.cst(0), d));
    OpFoldResult e = m.select(negStep, normalize(end, m.cst(-1), dm1),
                              normalize(end, m.cst(0), d));
    OpFoldResult count = m.max(m.ceilDiv(m.sub(e, s), step), m.cst(0));
    dims[axis] = count;
  }
  return finish(b, getType(), dims, out);
}

/// `data.shape[:axis] + indices.shape + data.shape[axis+1:]` (ONNX Gather).
LogicalResult GatherOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t axis = getAxis();
  SmallVector<OpFoldResult> data = dimsOf(m, getData());
  SmallVector<OpFoldResult> dims(data.begin(), data.begin() + axis);
  llvm::append_range(dims, dimsOf(m, getIndices()));
  dims.append(data.begin() + axis + 1, data.end());
  return finish(b, getType(), dims, out);
}

/// `dim + pads[i] + pads[rank + i]` (ONNX Pad).
LogicalResult PadOp::reifyResultShapes(OpBuilder &b,
                                       ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  int64_t rank = getType().getRank();
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (!getType().isDynamicDim(i)) {
      dims.push_back(m.cst(getType().getDimSize(i)));
      continue;
    }
    dims.push_back(
        m.add(m.dim(getOperand(), i),
              m.add(m.element(getPads(), i), m.element(getPads(), rank + i))));
  }
  return finish(b, getType(), dims, out);
}

/// `max(ceil((limit - start) / delta), 0)` (ONNX Range).
LogicalResult RangeOp::reifyResultShapes(OpBuilder &b,
                                         ReifiedRankedShapedTypeDims &out) {
  if (!getType().isDynamicDim(0))
    return finish(b, getType(), {b.getIndexAttr(getType().getDimSize(0))}, out);
  Location loc = getLoc();
  IndexMath m(b, loc);
  Value start = tensor::ExtractOp::create(b, loc, getStart(), ValueRange{});
  Value limit = tensor::ExtractOp::create(b, loc, getLimit(), ValueRange{});
  Value delta = tensor::ExtractOp::create(b, loc, getDelta(), ValueRange{});
  Type elt = start.getType();
  Value count;
  if (auto it = dyn_cast<IntegerType>(elt)) {
    // In i64, so that a narrower type's difference cannot wrap (the
    // lowering checks that the i64 one does not).
    if (it.getWidth() < 64) {
      Type i64 = b.getI64Type();
      start = arith::ExtSIOp::create(b, loc, i64, start);
      limit = arith::ExtSIOp::create(b, loc, i64, limit);
      delta = arith::ExtSIOp::create(b, loc, i64, delta);
    }
    Value diff = arith::SubIOp::create(b, loc, limit, start);
    Value q = arith::CeilDivSIOp::create(b, loc, diff, delta);
    count = arith::IndexCastOp::create(b, loc, b.getIndexType(), q);
  } else if (isa<FloatType>(elt)) {
    // ceil(q) as trunc(q) + (trunc(q) < q), without the math dialect.
    Value diff = arith::SubFOp::create(b, loc, limit, start);
    Value q = arith::DivFOp::create(b, loc, diff, delta);
    Value t = arith::FPToSIOp::create(b, loc, b.getI64Type(), q);
    Value tf = arith::SIToFPOp::create(b, loc, elt, t);
    Value less =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, tf, q);
    Value inc = arith::ExtUIOp::create(b, loc, b.getI64Type(), less);
    Value c = arith::AddIOp::create(b, loc, t, inc);
    count = arith::IndexCastOp::create(b, loc, b.getIndexType(), c);
  } else {
    return failure();
  }
  return finish(b, getType(), {m.max(count, m.cst(0))}, out);
}

/// The values of `sizes` (ONNX Resize output shape).
LogicalResult ResizeOp::reifyResultShapes(OpBuilder &b,
                                          ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0, e = getType().getRank(); i < e; ++i) {
    if (!getType().isDynamicDim(i))
      dims.push_back(m.cst(getType().getDimSize(i)));
    else if (!llvm::is_contained(getAxes(), i))
      dims.push_back(m.dim(getOperand(), i));
    else
      dims.push_back(m.element(getSizes(), i));
  }
  return finish(b, getType(), dims, out);
}

/// The shape of `indices` (ONNX GatherElements).
LogicalResult
GatherElementsOp::reifyResultShapes(OpBuilder &b,
                                    ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  return finish(b, getType(), dimsOf(m, getIndices()), out);
}

/// `indices.shape[:-1] + data.shape[batch_dims + k:]` (ONNX GatherND).
LogicalResult GatherNdOp::reifyResultShapes(OpBuilder &b,
                                            ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  SmallVector<OpFoldResult> idx = dimsOf(m, getIndices());
  SmallVector<OpFoldResult> data = dimsOf(m, getData());
  SmallVector<OpFoldResult> dims(idx.begin(), idx.end() - 1);
  int64_t tail = getType().getRank() - (int64_t)dims.size();
  dims.append(data.end() - tail, data.end());
  return finish(b, getType(), dims, out);
}

/// The shape of `data` (ONNX ScatterElements).
LogicalResult
ScatterElementsOp::reifyResultShapes(OpBuilder &b,
                                     ReifiedRankedShapedTypeDims &out) {
  return detail::reifySameShape(*this, b, out);
}

/// The shape of `data` (ONNX ScatterND).
LogicalResult ScatterNdOp::reifyResultShapes(OpBuilder &b,
                                             ReifiedRankedShapedTypeDims &out) {
  return detail::reifySameShape(*this, b, out);
}

LogicalResult
RandomUniformOp::reifyResultShapes(OpBuilder &b,
                                   ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  SmallVector<OpFoldResult> dims;
  for (int64_t i = 0; i < getType().getRank(); ++i)
    dims.push_back(getType().isDynamicDim(i) ? m.element(getShape(), i)
                                             : m.cst(getType().getDimSize(i)));
  return finish(b, getType(), dims, out);
}

LogicalResult ArgSortOp::reifyResultShapes(OpBuilder &b,
                                           ReifiedRankedShapedTypeDims &out) {
  return detail::reifySameShape(*this, b, out);
}

/// `[N, C, grid.shape[1], grid.shape[2]]` (ONNX GridSample).
LogicalResult
GridSampleOp::reifyResultShapes(OpBuilder &b,
                                ReifiedRankedShapedTypeDims &out) {
  IndexMath m(b, getLoc());
  return finish(b, getType(),
                {m.dim(getInput(), 0), m.dim(getInput(), 1),
                 m.dim(getGrid(), 1), m.dim(getGrid(), 2)},
                out);
}

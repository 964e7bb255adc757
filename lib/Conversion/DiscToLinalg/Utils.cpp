//===- Utils.cpp - shared helpers of the DiscToLinalg op families ------===//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::disc;

namespace mlir::disc::lowering {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value cstIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A scalar constant of element type `t` (float or integer).
Value cstScalar(OpBuilder &b, Location loc, Type t, double v) {
  if (auto ft = dyn_cast<FloatType>(t))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(t, static_cast<int64_t>(v)));
}

/// The smallest (`negative`) or largest value of `t`: +-inf for floats,
/// the signed extremes for integers.
Value extremeScalar(OpBuilder &b, Location loc, Type t, bool negative) {
  if (auto ft = dyn_cast<FloatType>(t))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), negative)));
  unsigned w = t.getIntOrFloatBitWidth();
  APInt v =
      negative ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, v));
}

Value toValue(OpBuilder &b, Location loc, OpFoldResult ofr) {
  return getValueOrCreateConstantIndexOp(b, loc, ofr);
}

Value dimValue(OpBuilder &b, Location loc, Value v, int64_t i) {
  return toValue(b, loc, tensor::getMixedSize(b, loc, v, i));
}

/// Sizes usable to build a value of `type`: static dims as attributes,
/// dynamic dims as values.
SmallVector<OpFoldResult> sizesForType(OpBuilder &b, Location loc,
                                       RankedTensorType type,
                                       ArrayRef<OpFoldResult> dims) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (!type.isDynamicDim(i))
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
    else
      sizes.push_back(toValue(b, loc, dims[i]));
  }
  return sizes;
}

/// `tensor.empty` of `type` whose dynamic dims come from `dims`.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ArrayRef<OpFoldResult> dims) {
  SmallVector<Value> dyn;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (type.isDynamicDim(i))
      dyn.push_back(toValue(b, loc, dims[i]));
  return tensor::EmptyOp::create(b, loc, type, dyn);
}

Value fill(OpBuilder &b, Location loc, Value scalar, Value dest) {
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{dest})
      .getResult(0);
}

Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

/// The element at `i` of a 1-D integer tensor as an index value.
Value elementAsIndex(OpBuilder &b, Location loc, Value tensor, int64_t i) {
  Value e = tensor::ExtractOp::create(b, loc, tensor,
                                      ValueRange{cstIndex(b, loc, i)});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
}

/// The element at `i` of a 1-D integer tensor as an index value, folded:
/// a constant when the tensor is one, the original index when the tensor
/// was built from index casts (`disc.shape_of`).
Value foldedElementAsIndex(OpBuilder &b, Location loc, Value tensor,
                           int64_t i) {
  DenseIntElementsAttr attr;
  if (matchPattern(tensor, m_Constant(&attr)))
    return cstIndex(b, loc, attr.getValues<APInt>()[i].getSExtValue());
  Value e = b.createOrFold<tensor::ExtractOp>(loc, tensor,
                                              ValueRange{cstIndex(b, loc, i)});
  return b.createOrFold<arith::IndexCastOp>(loc, b.getIndexType(), e);
}

/// True when `v` (index or integer) is >= 0 for every run: a dim, a
/// non-negative constant, or sums, products, maxima and selections of such.
bool isKnownNonNegative(Value v, int depth) {
  if (depth > 8)
    return false;
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return !c.isNegative();
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::DimOp>(def))
    return true;
  if (auto cast = dyn_cast<arith::IndexCastOp>(def))
    return isKnownNonNegative(cast.getIn(), depth + 1);
  if (isa<arith::AddIOp, arith::MulIOp, arith::MinSIOp>(def))
    return isKnownNonNegative(def->getOperand(0), depth + 1) &&
           isKnownNonNegative(def->getOperand(1), depth + 1);
  if (isa<arith::MaxSIOp>(def))
    return isKnownNonNegative(def->getOperand(0), depth + 1) ||
           isKnownNonNegative(def->getOperand(1), depth + 1);
  if (auto sel = dyn_cast<arith::SelectOp>(def))
    return isKnownNonNegative(sel.getTrueValue(), depth + 1) &&
           isKnownNonNegative(sel.getFalseValue(), depth + 1);
  if (auto ext = dyn_cast<tensor::ExtractOp>(def))
    if (auto from = ext.getTensor().getDefiningOp<tensor::FromElementsOp>()) {
      APInt idx;
      if (ext.getIndices().size() == 1 &&
          matchPattern(ext.getIndices()[0], m_ConstantInt(&idx)) &&
          idx.getZExtValue() < from.getElements().size())
        return isKnownNonNegative(from.getElements()[idx.getZExtValue()],
                                  depth + 1);
    }
  return false;
}

FailureOr<ReifiedResult> reifyResult(OpBuilder &b, Operation *op) {
  ReifiedRankedShapedTypeDims dims;
  auto iface = dyn_cast<ReifyRankedShapedTypeOpInterface>(op);
  if (!iface || failed(iface.reifyResultShapes(b, dims)) || dims.size() != 1) {
    op->emitOpError("cannot be lowered to linalg yet: result shape could not "
                    "be reified");
    return failure();
  }
  return ReifiedResult{cast<RankedTensorType>(op->getResult(0).getType()),
                       std::move(dims.front())};
}

FailureOr<ReifiedResult> reifyFloatOrIntResult(OpBuilder &b, Operation *op,
                                               Type elt) {
  if (!isFloatOrInt(elt))
    return unsupportedElementType(op, elt);
  return reifyResult(b, op);
}

/// An integer index element as an index value; negative values count from
/// the end of a dim of size `dim`. With `checks`, an index outside
/// [-dim, dim) stops the run (ONNX: out-of-range indices are an error).
Value wrapIndex(OpBuilder &b, Location loc, Value raw, Value dim,
                RuntimeChecks *checks) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  if (checks) {
    Value negDim = arith::SubIOp::create(b, loc, cstIndex(b, loc, 0), dim);
    Value lo =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, negDim);
    Value hi = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, dim);
    checks->check(b, loc, arith::AndIOp::create(b, loc, lo, hi), "",
                  "index {0} is out of range [-{1}, {1})", {i, dim});
  }
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                    cstIndex(b, loc, 0));
  return arith::SelectOp::create(b, loc, neg,
                                 arith::AddIOp::create(b, loc, i, dim), i);
}

/// Element type conversion as ONNX Cast: float to integer truncates toward
/// zero, to i1 is `!= 0`, from i1 is unsigned.
Value convertScalar(OpBuilder &b, Location loc, Value x, Type to,
                    bool unsignedSrc, bool unsignedDst) {
  Type from = x.getType();
  if (from == to)
    return x;
  if (to.isInteger(1)) {
    Value zero = cstScalar(b, loc, from, 0);
    if (isa<FloatType>(from))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x, zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
  }
  if (auto fi = dyn_cast<IntegerType>(from)) {
    bool isUnsigned = unsignedSrc || fi.getWidth() == 1;
    if (auto ti = dyn_cast<IntegerType>(to)) {
      if (fi.getWidth() < ti.getWidth())
        return isUnsigned ? arith::ExtUIOp::create(b, loc, to, x).getResult()
                          : arith::ExtSIOp::create(b, loc, to, x).getResult();
      if (fi.getWidth() > ti.getWidth())
        return arith::TruncIOp::create(b, loc, to, x);
      return x;
    }
    if (isa<FloatType>(to))
      return isUnsigned ? arith::UIToFPOp::create(b, loc, to, x).getResult()
                        : arith::SIToFPOp::create(b, loc, to, x).getResult();
    return nullptr;
  }
  if (auto ff = dyn_cast<FloatType>(from)) {
    if (auto tf = dyn_cast<FloatType>(to)) {
      if (ff.getWidth() < tf.getWidth())
        return arith::ExtFOp::create(b, loc, to, x);
      if (ff.getWidth() > tf.getWidth())
        return arith::TruncFOp::create(b, loc, to, x);
      // Same width, different format (bf16 <-> f16): go through f32.
      Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
      return arith::TruncFOp::create(b, loc, to, wide);
    }
    if (isa<IntegerType>(to))
      return unsignedDst ? arith::FPToUIOp::create(b, loc, to, x).getResult()
                         : arith::FPToSIOp::create(b, loc, to, x).getResult();
  }
  return nullptr;
}

bool isFloatOrInt(Type t) { return isa<FloatType, IntegerType>(t); }

/// Pads the spatial dims (from dim 2) of `input` with `padValue`: `lo`
/// static, `hi` static or dynamic.
Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> lo,
                 ArrayRef<OpFoldResult> hi, Value padValue) {
  int64_t rank = tensorType(input).getRank();
  int64_t first = rank - lo.size();
  bool any = llvm::any_of(lo, [](int64_t v) { return v != 0; }) ||
             llvm::any_of(
                 hi, [](OpFoldResult v) { return !isConstantIntValue(v, 0); });
  if (!any)
    return input;
  SmallVector<OpFoldResult> low(first, b.getIndexAttr(0));
  SmallVector<OpFoldResult> high(first, b.getIndexAttr(0));
  for (auto [l, h] : llvm::zip(lo, hi)) {
    low.push_back(b.getIndexAttr(l));
    high.push_back(h);
  }
  return tensor::PadOp::create(b, loc, Type(), input, low, high, padValue);
}

InFlightDiagnostic noLowering(Operation *op) {
  return op->emitOpError("cannot be lowered to linalg yet: no lowering "
                         "for this op");
}

InFlightDiagnostic unsupportedElementType(Operation *op, Type elt) {
  return op->emitOpError("cannot be lowered to linalg yet: unsupported "
                         "element type ")
         << elt;
}

/// A `linalg.generic` with parallel loops reading `inputs` through
/// `inputMaps` and writing every element of `dest` (identity map) with the
/// value `body` yields.
static Value
parallelGeneric(OpBuilder &b, Location loc, Value dest, ValueRange inputs,
                ArrayRef<AffineMap> inputMaps,
                function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(dest.getType());
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{dest}, maps,
             SmallVector<IterType>(rank, IterType::parallel), body)
      .getResult(0);
}

Value generateTensor(
    OpBuilder &b, Location loc, Value dest,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  return parallelGeneric(b, loc, dest, ValueRange{}, {}, body);
}

Value extractEach(
    OpBuilder &b, Location loc, Value dest, Value src,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> index,
    ValueRange inputs, ArrayRef<AffineMap> inputMaps) {
  return parallelGeneric(
      b, loc, dest, inputs, inputMaps,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> idx = index(nb, nl, args);
        linalg::YieldOp::create(
            nb, nl, tensor::ExtractOp::create(nb, nl, src, idx).getResult());
      });
}

} // namespace mlir::disc::lowering

Value mlir::disc::lowering::extractWindowElement(
    OpBuilder &b, Location loc, Value input, int64_t lead,
    ArrayRef<Value> sizes, ArrayRef<int64_t> lo, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> dilations, Value outside) {
  IMath m{b, loc};
  int64_t k = sizes.size();
  SmallVector<Value> idx;
  for (int64_t i = 0; i < lead; ++i)
    idx.push_back(linalg::IndexOp::create(b, loc, i));
  Value inside;
  for (int64_t i = 0; i < k; ++i) {
    Value o = linalg::IndexOp::create(b, loc, lead + i);
    Value w = linalg::IndexOp::create(b, loc, lead + k + i);
    Value pos =
        m.sub(m.add(m.mul(o, m.c(strides[i])), m.mul(w, m.c(dilations[i]))),
              m.c(lo[i]));
    Value ok = arith::AndIOp::create(
        b, loc, m.cmp(arith::CmpIPredicate::sge, pos, m.c(0)),
        m.cmp(arith::CmpIPredicate::slt, pos, sizes[i]));
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
    idx.push_back(m.max(m.min(pos, m.sub(sizes[i], m.c(1))), m.c(0)));
  }
  Value x = tensor::ExtractOp::create(b, loc, input, idx);
  return arith::SelectOp::create(b, loc, inside, x, outside);
}

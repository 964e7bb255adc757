//===- DiscToLinalg.cpp - lower disc ops to linalg/tensor/arith/math ------===//
//
// Rewrites every `disc` op into upstream tensor-level IR in destination
// passing style. Destinations are `tensor.empty` ops sized from the op's
// ReifyRankedShapedTypeOpInterface implementation (DiscShapeReify.cpp), so
// the shape logic lives in one place.
//
// NumPy broadcasting with dynamic dims: an operand dim that may be 1 at run
// time while the result dim is larger cannot be expressed by an indexing map.
// Such ops are versioned: when every such dim equals the result dim at run
// time, a `linalg.generic` with identity maps runs; otherwise a generic over
// the result reads the operands with `tensor.extract` at
// `select(dim == 1, 0, i)`. Dims that the symbolic shape analysis
// (ShapeAnalysis, docs/symbolic-shapes.md) proves equal to the result dim,
// without relying on an assumed broadcast equality, need no version.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"
#include "RuntimeChecks.h"
#include "disc/Conversion/CudaLibraryCalls.h"
#include "disc/Conversion/Passes.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCLOWERTOLINALG
#include "disc/Conversion/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

using IterType = utils::IteratorType;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

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
bool isKnownNonNegative(Value v, int depth = 0) {
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

/// Reified shape of `op`'s single result.
FailureOr<SmallVector<OpFoldResult>> reifiedDims(OpBuilder &b, Operation *op) {
  ReifiedRankedShapedTypeDims dims;
  auto iface = dyn_cast<ReifyRankedShapedTypeOpInterface>(op);
  if (!iface || failed(iface.reifyResultShapes(b, dims)) || dims.size() != 1) {
    op->emitOpError("cannot be lowered to linalg yet: result shape could not "
                    "be reified");
    return failure();
  }
  return dims.front();
}

/// Index arithmetic that folds constants.
struct IMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return cstIndex(b, loc, v); }
  Value add(Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value sub(Value x, Value y) {
    return b.createOrFold<arith::SubIOp>(loc, x, y);
  }
  Value mul(Value x, Value y) {
    return b.createOrFold<arith::MulIOp>(loc, x, y);
  }
  Value max(Value x, Value y) {
    return b.createOrFold<arith::MaxSIOp>(loc, x, y);
  }
  Value min(Value x, Value y) {
    return b.createOrFold<arith::MinSIOp>(loc, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return b.createOrFold<arith::CmpIOp>(loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return b.createOrFold<arith::SelectOp>(loc, cond, x, y);
  }
};

/// An integer index element as an index value; negative values count from
/// the end of a dim of size `dim`. With `checks`, an index outside
/// [-dim, dim) stops the run (ONNX: out-of-range indices are an error).
Value wrapIndex(OpBuilder &b, Location loc, Value raw, Value dim,
                RuntimeChecks *checks = nullptr) {
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

//===----------------------------------------------------------------------===//
// Scalar bodies of elementwise ops
//===----------------------------------------------------------------------===//

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

template <typename FOp, typename IOp>
Value floatOrInt(OpBuilder &b, Location loc, ValueRange a) {
  if (isa<FloatType>(a[0].getType()))
    return FOp::create(b, loc, a[0], a[1]);
  if (isa<IntegerType>(a[0].getType()))
    return IOp::create(b, loc, a[0], a[1]);
  return nullptr;
}

template <typename FOp>
Value floatUnary(OpBuilder &b, Location loc, ValueRange a) {
  if (isa<FloatType>(a[0].getType()))
    return FOp::create(b, loc, a[0]);
  return nullptr;
}

template <typename IOp>
Value intBinary(OpBuilder &b, Location loc, ValueRange a) {
  if (isa<IntegerType>(a[0].getType()))
    return IOp::create(b, loc, a[0], a[1]);
  return nullptr;
}

arith::CmpFPredicate floatPredicate(CompareDirection d) {
  switch (d) {
  case CompareDirection::EQ:
    return arith::CmpFPredicate::OEQ;
  case CompareDirection::NE:
    return arith::CmpFPredicate::UNE;
  case CompareDirection::LT:
    return arith::CmpFPredicate::OLT;
  case CompareDirection::LE:
    return arith::CmpFPredicate::OLE;
  case CompareDirection::GT:
    return arith::CmpFPredicate::OGT;
  case CompareDirection::GE:
    return arith::CmpFPredicate::OGE;
  }
  llvm_unreachable("unknown compare direction");
}

arith::CmpIPredicate intPredicate(CompareDirection d, bool isUnsigned) {
  switch (d) {
  case CompareDirection::EQ:
    return arith::CmpIPredicate::eq;
  case CompareDirection::NE:
    return arith::CmpIPredicate::ne;
  case CompareDirection::LT:
    return isUnsigned ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
  case CompareDirection::LE:
    return isUnsigned ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
  case CompareDirection::GT:
    return isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
  case CompareDirection::GE:
    return isUnsigned ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
  }
  llvm_unreachable("unknown compare direction");
}

/// The scalar computation of an elementwise disc op on `a` (one value per
/// operand). Returns null when the element type is not supported.
Value emitScalar(Operation *op, OpBuilder &b, Location loc, ValueRange a,
                 Type outElt) {
  Type elt = a.empty() ? outElt : a[0].getType();
  bool isFloat = isa<FloatType>(elt);
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](AbsOp) -> Value {
        if (isFloat)
          return math::AbsFOp::create(b, loc, a[0]);
        if (isa<IntegerType>(elt) && !elt.isInteger(1)) {
          // select(x < 0, 0 - x, x): plain arith, no math.absi lowering needed.
          Value zero = cstScalar(b, loc, elt, 0);
          Value neg = arith::SubIOp::create(b, loc, zero, a[0]);
          Value isNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                              a[0], zero);
          return arith::SelectOp::create(b, loc, isNeg, neg, a[0]);
        }
        return nullptr;
      })
      .Case([&](NegOp) -> Value {
        if (isFloat)
          return arith::NegFOp::create(b, loc, a[0]);
        if (isa<IntegerType>(elt))
          return arith::SubIOp::create(b, loc, cstScalar(b, loc, elt, 0), a[0]);
        return nullptr;
      })
      .Case([&](ExpOp) { return floatUnary<math::ExpOp>(b, loc, a); })
      .Case([&](LogOp) { return floatUnary<math::LogOp>(b, loc, a); })
      .Case([&](SqrtOp) { return floatUnary<math::SqrtOp>(b, loc, a); })
      .Case([&](RsqrtOp) -> Value {
        // 1 / sqrt(x): libm has no rsqrt, so math.rsqrt would depend on the
        // order of the math lowerings downstream.
        if (!isFloat)
          return nullptr;
        Value s = math::SqrtOp::create(b, loc, a[0]);
        return arith::DivFOp::create(b, loc, cstScalar(b, loc, elt, 1), s);
      })
      .Case([&](TanhOp) { return floatUnary<math::TanhOp>(b, loc, a); })
      .Case([&](ErfOp) { return floatUnary<math::ErfOp>(b, loc, a); })
      .Case([&](FloorOp) { return floatUnary<math::FloorOp>(b, loc, a); })
      .Case([&](CeilOp) { return floatUnary<math::CeilOp>(b, loc, a); })
      .Case([&](RoundOp) { return floatUnary<math::RoundEvenOp>(b, loc, a); })
      .Case([&](SinOp) { return floatUnary<math::SinOp>(b, loc, a); })
      .Case([&](CosOp) { return floatUnary<math::CosOp>(b, loc, a); })
      .Case([&](TanOp) { return floatUnary<math::TanOp>(b, loc, a); })
      .Case([&](AsinOp) { return floatUnary<math::AsinOp>(b, loc, a); })
      .Case([&](AcosOp) { return floatUnary<math::AcosOp>(b, loc, a); })
      .Case([&](AtanOp) { return floatUnary<math::AtanOp>(b, loc, a); })
      .Case([&](SinhOp) { return floatUnary<math::SinhOp>(b, loc, a); })
      .Case([&](CoshOp) { return floatUnary<math::CoshOp>(b, loc, a); })
      .Case([&](AsinhOp) { return floatUnary<math::AsinhOp>(b, loc, a); })
      .Case([&](AcoshOp) { return floatUnary<math::AcoshOp>(b, loc, a); })
      .Case([&](AtanhOp) { return floatUnary<math::AtanhOp>(b, loc, a); })
      .Case([&](SignOp) -> Value {
        // x > 0 ? 1 : (x < 0 ? -1 : x); keeps 0 and NaN.
        Value zero = cstScalar(b, loc, elt, 0);
        Value one = cstScalar(b, loc, elt, 1);
        Value minusOne = cstScalar(b, loc, elt, -1);
        Value gt, lt;
        if (isFloat) {
          gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, a[0],
                                     zero);
          lt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a[0],
                                     zero);
        } else if (isa<IntegerType>(elt) && !elt.isInteger(1)) {
          gt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, a[0],
                                     zero);
          lt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a[0],
                                     zero);
        } else {
          return nullptr;
        }
        Value inner = arith::SelectOp::create(b, loc, lt, minusOne, a[0]);
        return arith::SelectOp::create(b, loc, gt, one, inner);
      })
      .Case([&](NotOp) -> Value {
        auto it = dyn_cast<IntegerType>(elt);
        if (!it)
          return nullptr;
        Value ones = arith::ConstantOp::create(
            b, loc, b.getIntegerAttr(elt, APInt::getAllOnes(it.getWidth())));
        return arith::XOrIOp::create(b, loc, a[0], ones);
      })
      .Case([&](LogisticOp) -> Value {
        if (!isFloat)
          return nullptr;
        Value one = cstScalar(b, loc, elt, 1);
        Value neg = arith::NegFOp::create(b, loc, a[0]);
        Value e = math::ExpOp::create(b, loc, neg);
        Value den = arith::AddFOp::create(b, loc, one, e);
        return arith::DivFOp::create(b, loc, one, den);
      })
      .Case([&](ReciprocalOp) -> Value {
        if (!isFloat)
          return nullptr;
        return arith::DivFOp::create(b, loc, cstScalar(b, loc, elt, 1), a[0]);
      })
      .Case([&](IsNanOp) -> Value {
        if (!isFloat)
          return nullptr;
        return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a[0],
                                     a[0]);
      })
      .Case([&](IsInfOp o) -> Value {
        if (!isFloat)
          return nullptr;
        Value result = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
        for (bool negative : {false, true}) {
          if (negative ? !o.getDetectNegative() : !o.getDetectPositive())
            continue;
          Value inf = extremeScalar(b, loc, elt, negative);
          Value eq = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           a[0], inf);
          result = arith::OrIOp::create(b, loc, result, eq);
        }
        return result;
      })
      .Case([&](AddOp) {
        return floatOrInt<arith::AddFOp, arith::AddIOp>(b, loc, a);
      })
      .Case([&](SubOp) {
        return floatOrInt<arith::SubFOp, arith::SubIOp>(b, loc, a);
      })
      .Case([&](MulOp) {
        return floatOrInt<arith::MulFOp, arith::MulIOp>(b, loc, a);
      })
      .Case<DivOp, RemOp>([&](Operation *o) -> Value {
        bool div = isa<DivOp>(o);
        if (isFloat)
          return div ? arith::DivFOp::create(b, loc, a[0], a[1]).getResult()
                     : arith::RemFOp::create(b, loc, a[0], a[1]).getResult();
        if (!isa<IntegerType>(elt))
          return nullptr;
        // INT_MIN / -1 traps on the CPU: x / -1 is computed as 0 - x
        // (wrapping) and x % -1 as 0; a 0 divisor (checked by the caller)
        // is replaced by 1 so that nothing traps.
        Value zero = cstScalar(b, loc, elt, 0);
        Value one = cstScalar(b, loc, elt, 1);
        Value minusOne = cstScalar(b, loc, elt, -1);
        Value isM1 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           a[1], minusOne);
        Value isZero =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a[1], zero);
        Value safe = arith::SelectOp::create(
            b, loc, arith::OrIOp::create(b, loc, isM1, isZero), one, a[1]);
        if (div)
          return arith::SelectOp::create(
              b, loc, isM1, arith::SubIOp::create(b, loc, zero, a[0]),
              arith::DivSIOp::create(b, loc, a[0], safe));
        return arith::SelectOp::create(
            b, loc, isM1, zero, arith::RemSIOp::create(b, loc, a[0], safe));
      })
      .Case([&](PowOp) {
        return floatOrInt<math::PowFOp, math::IPowIOp>(b, loc, a);
      })
      .Case([&](MaxOp) -> Value {
        if (elt.isInteger(1))
          return arith::OrIOp::create(b, loc, a[0], a[1]);
        return floatOrInt<arith::MaximumFOp, arith::MaxSIOp>(b, loc, a);
      })
      .Case([&](MinOp) -> Value {
        if (elt.isInteger(1))
          return arith::AndIOp::create(b, loc, a[0], a[1]);
        return floatOrInt<arith::MinimumFOp, arith::MinSIOp>(b, loc, a);
      })
      .Case([&](AndOp) { return intBinary<arith::AndIOp>(b, loc, a); })
      .Case([&](OrOp) { return intBinary<arith::OrIOp>(b, loc, a); })
      .Case([&](XorOp) { return intBinary<arith::XOrIOp>(b, loc, a); })
      .Case<ShiftLeftOp, ShiftRightOp>([&](Operation *o) -> Value {
        auto it = dyn_cast<IntegerType>(elt);
        if (!it || it.getWidth() == 1)
          return nullptr;
        Value sh = isa<ShiftLeftOp>(o)
                       ? arith::ShLIOp::create(b, loc, a[0], a[1]).getResult()
                       : arith::ShRUIOp::create(b, loc, a[0], a[1]).getResult();
        // Shifting by the bit width or more is poison in arith: give 0.
        Value width = cstScalar(b, loc, elt, it.getWidth());
        Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              a[1], width);
        return arith::SelectOp::create(b, loc, inRange, sh,
                                       cstScalar(b, loc, elt, 0));
      })
      .Case([&](CompareOp o) -> Value {
        if (isFloat)
          return arith::CmpFOp::create(b, loc, floatPredicate(o.getDirection()),
                                       a[0], a[1]);
        if (isa<IntegerType>(elt))
          return arith::CmpIOp::create(
              b, loc, intPredicate(o.getDirection(), elt.isInteger(1)), a[0],
              a[1]);
        return nullptr;
      })
      .Case([&](SelectOp) -> Value {
        return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
      })
      .Case([&](ConvertOp o) -> Value {
        return convertScalar(b, loc, a[0], outElt, o.getUnsignedSource(),
                             o.getUnsignedResult());
      })
      .Case([&](ExpandOp) -> Value { return a[0]; })
      .Default([](Operation *) -> Value { return nullptr; });
}

//===----------------------------------------------------------------------===//
// Broadcasting elementwise generic
//===----------------------------------------------------------------------===//

enum class DimKind { Same, Zero, Maybe };

/// Per broadcasting op: per operand, per operand dim, whether that dim is
/// proven equal to the result dim it is aligned with.
using BroadcastFacts =
    llvm::DenseMap<Operation *, SmallVector<SmallVector<bool>>>;
/// Reshapes whose element counts the shape analysis proves to agree, and
/// Expands whose shape entries it proves non-negative.
using ProvenReshapes = llvm::DenseSet<Operation *>;

using ScalarFn = function_ref<Value(OpBuilder &, Location, ValueRange, Type)>;

/// Classifies how each operand dim maps to the result dim it is aligned
/// with (ranks aligned from the right). `Same`: the operand dim equals the
/// result dim; `Zero`: static 1 stretching; `Maybe`: dynamic and possibly 1
/// while the result dim is larger. When `resultFromOperands`, the result
/// shape is the broadcast of the operands' shapes, so a result dim with a
/// single non-1 source is that source's dim.
SmallVector<SmallVector<DimKind>>
classify(ValueRange operands, RankedTensorType resultType,
         bool resultFromOperands, ArrayRef<SmallVector<bool>> proven = {}) {
  int64_t rank = resultType.getRank();
  SmallVector<SmallVector<DimKind>> kinds;
  for (auto [n, v] : llvm::enumerate(operands)) {
    RankedTensorType t = tensorType(v);
    int64_t shift = rank - t.getRank();
    SmallVector<DimKind> k;
    for (int64_t j = 0; j < t.getRank(); ++j) {
      int64_t i = j + shift;
      int64_t d = t.getDimSize(j), r = resultType.getDimSize(i);
      if (r == 1) {
        k.push_back(DimKind::Same);
        continue;
      }
      if (d == 1) {
        k.push_back(DimKind::Zero);
        continue;
      }
      if (!ShapedType::isDynamic(d) ||
          (n < proven.size() && j < (int64_t)proven[n].size() &&
           proven[n][j])) {
        k.push_back(DimKind::Same);
        continue;
      }
      // Dynamic operand dim: the same as the result dim when it is the only
      // possibly non-1 source of that dim.
      bool unique = resultFromOperands && ShapedType::isDynamic(r);
      for (Value w : operands) {
        if (!unique)
          break;
        RankedTensorType u = tensorType(w);
        int64_t jw = i - (rank - u.getRank());
        if (jw < 0 || u.getDimSize(jw) == 1)
          continue;
        if (w != v || jw != j)
          unique = false;
      }
      k.push_back(unique ? DimKind::Same : DimKind::Maybe);
    }
    kinds.push_back(std::move(k));
  }
  return kinds;
}

/// A `linalg.generic` over `dest` computing `fn` of the operands, read with
/// maps given by `kinds` where `Maybe` is treated as `Same`.
Value buildMappedGeneric(OpBuilder &b, Location loc, Operation *op,
                         ValueRange operands,
                         ArrayRef<SmallVector<DimKind>> kinds, Value dest,
                         ScalarFn fn) {
  auto resultType = tensorType(dest);
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (auto [v, k] : llvm::zip(operands, kinds)) {
    int64_t shift = rank - tensorType(v).getRank();
    SmallVector<AffineExpr> exprs;
    for (auto [j, kind] : llvm::enumerate(k))
      exprs.push_back(kind == DimKind::Zero ? getAffineConstantExpr(0, ctx)
                                            : getAffineDimExpr(j + shift, ctx));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<IterType> iters(rank, IterType::parallel);
  Type outElt = resultType.getElementType();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, operands, ValueRange{dest}, maps,
             iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value r = fn(nb, nl, args.drop_back(), outElt);
               linalg::YieldOp::create(nb, nl, r ? r : args.back());
             })
      .getResult(0);
}

/// A `linalg.generic` over `dest` that reads operands with `Maybe` dims
/// through `tensor.extract` at `select(dim == 1, 0, i)`.
Value buildExtractGeneric(OpBuilder &b, Location loc, Operation *op,
                          ValueRange operands,
                          ArrayRef<SmallVector<DimKind>> kinds, Value dest,
                          ScalarFn fn) {
  auto resultType = tensorType(dest);
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  IMath m{b, loc};
  SmallVector<Value> mapped;
  SmallVector<AffineMap> maps;
  // Per operand: -1 when mapped, else the list of `dim == 1` flags.
  SmallVector<bool> viaExtract;
  SmallVector<SmallVector<Value>> isOne(operands.size());
  for (auto [n, vk] : llvm::enumerate(llvm::zip(operands, kinds))) {
    auto [v, k] = vk;
    bool extract = llvm::is_contained(k, DimKind::Maybe);
    viaExtract.push_back(extract);
    int64_t shift = rank - tensorType(v).getRank();
    if (extract) {
      for (auto [j, kind] : llvm::enumerate(k))
        isOne[n].push_back(kind == DimKind::Maybe
                               ? m.cmp(arith::CmpIPredicate::eq,
                                       tensor::DimOp::create(b, loc, v, j),
                                       m.c(1))
                               : Value());
      continue;
    }
    SmallVector<AffineExpr> exprs;
    for (auto [j, kind] : llvm::enumerate(k))
      exprs.push_back(kind == DimKind::Zero ? getAffineConstantExpr(0, ctx)
                                            : getAffineDimExpr(j + shift, ctx));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
    mapped.push_back(v);
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<IterType> iters(rank, IterType::parallel);
  Type outElt = resultType.getElementType();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, mapped, ValueRange{dest}, maps,
             iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value zero = cstIndex(nb, nl, 0);
               SmallVector<Value> scalars;
               unsigned next = 0;
               for (auto [n, vk] :
                    llvm::enumerate(llvm::zip(operands, kinds))) {
                 auto [v, k] = vk;
                 if (!viaExtract[n]) {
                   scalars.push_back(args[next++]);
                   continue;
                 }
                 int64_t shift = rank - tensorType(v).getRank();
                 SmallVector<Value> idx;
                 for (auto [j, kind] : llvm::enumerate(k)) {
                   if (kind == DimKind::Zero) {
                     idx.push_back(zero);
                     continue;
                   }
                   Value i = linalg::IndexOp::create(nb, nl, j + shift);
                   if (kind == DimKind::Maybe)
                     i = arith::SelectOp::create(nb, nl, isOne[n][j], zero, i);
                   idx.push_back(i);
                 }
                 scalars.push_back(tensor::ExtractOp::create(nb, nl, v, idx));
               }
               Value r = fn(nb, nl, scalars, outElt);
               linalg::YieldOp::create(nb, nl, r ? r : args.back());
             })
      .getResult(0);
}

/// `fn` applied elementwise to `operands` broadcast (NumPy) to `op`'s
/// result. Versioned on the run-time shapes when some operand dim may
/// stretch; see the file comment.
FailureOr<Value> lowerElementwise(OpBuilder &b, Operation *op,
                                  ValueRange operands, ScalarFn fn,
                                  const BroadcastFacts *facts,
                                  RuntimeChecks &checks,
                                  bool resultFromOperands = true) {
  Location loc = op->getLoc();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  ArrayRef<SmallVector<bool>> proven;
  if (facts)
    if (auto it = facts->find(op); it != facts->end())
      proven = it->second;
  SmallVector<SmallVector<DimKind>> kinds =
      classify(operands, resultType, resultFromOperands, proven);

  // Check the scalar body once on block arguments of a detached scratch
  // block, so unsupported element types are reported before any IR is built.
  {
    OwningOpRef<ModuleOp> scratchOwner = ModuleOp::create(loc);
    Block *scratch = scratchOwner->getBody();
    SmallVector<Value> args;
    for (Value v : operands)
      args.push_back(scratch->addArgument(tensorType(v).getElementType(), loc));
    OpBuilder sb = OpBuilder::atBlockEnd(scratch);
    Value r = fn(sb, loc, args, resultType.getElementType());
    bool ok = r && r.getType() == resultType.getElementType();
    if (!ok)
      return op->emitOpError("cannot be lowered to linalg yet: unsupported "
                             "element type ")
             << (operands.empty() ? resultType.getElementType()
                                  : tensorType(operands[0]).getElementType());
  }

  // NumPy broadcasting: each operand dim is 1 or the result dim. Dims the
  // shape analysis proves equal to the result dim need no check.
  {
    IMath m{b, loc};
    int64_t rank = resultType.getRank();
    for (auto [n, v] : llvm::enumerate(operands)) {
      RankedTensorType t = tensorType(v);
      int64_t shift = rank - t.getRank();
      for (int64_t j = 0; j < t.getRank(); ++j) {
        int64_t d = t.getDimSize(j), r = resultType.getDimSize(j + shift);
        if (d == 1 || (!ShapedType::isDynamic(d) && !ShapedType::isDynamic(r)))
          continue;
        if (n < proven.size() && j < (int64_t)proven[n].size() &&
            proven[n][j]) {
          checks.countProven();
          continue;
        }
        Value dv = toValue(b, loc, tensor::getMixedSize(b, loc, v, j));
        Value rv = toValue(b, loc, (*dims)[j + shift]);
        Value ok = b.createOrFold<arith::OrIOp>(
            loc, m.cmp(arith::CmpIPredicate::eq, dv, rv),
            m.cmp(arith::CmpIPredicate::eq, dv, m.c(1)));
        checks.check(b, loc, ok, "",
                     "operand " + std::to_string(n) + " dim " +
                         std::to_string(j) + " is {0}, cannot broadcast to {1}",
                     {dv, rv});
      }
    }
  }

  Value dest = emptyTensor(b, loc, resultType, *dims);
  bool anyMaybe = llvm::any_of(kinds, [](ArrayRef<DimKind> k) {
    return llvm::is_contained(k, DimKind::Maybe);
  });
  if (!anyMaybe)
    return buildMappedGeneric(b, loc, op, operands, kinds, dest, fn);

  // All stretching candidates equal to their result dim: identity maps.
  IMath m{b, loc};
  Value cond;
  int64_t rank = resultType.getRank();
  for (auto [v, k] : llvm::zip(operands, kinds)) {
    int64_t shift = rank - tensorType(v).getRank();
    for (auto [j, kind] : llvm::enumerate(k)) {
      if (kind != DimKind::Maybe)
        continue;
      Value d = tensor::DimOp::create(b, loc, v, j);
      Value r = toValue(b, loc, (*dims)[j + shift]);
      Value eq = m.cmp(arith::CmpIPredicate::eq, d, r);
      cond = cond ? arith::AndIOp::create(b, loc, cond, eq).getResult() : eq;
    }
  }
  auto ifOp = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &tb, Location tl) {
        Value r = buildMappedGeneric(tb, tl, op, operands, kinds, dest, fn);
        scf::YieldOp::create(tb, tl, r);
      },
      [&](OpBuilder &eb, Location el) {
        Value r = buildExtractGeneric(eb, el, op, operands, kinds, dest, fn);
        scf::YieldOp::create(eb, el, r);
      });
  return ifOp.getResult(0);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

Value mulAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  if (isa<FloatType>(acc.getType())) {
    Value p = arith::MulFOp::create(b, loc, x, y);
    return arith::AddFOp::create(b, loc, acc, p);
  }
  Value p = arith::MulIOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, acc, p);
}

bool isFloatOrInt(Type t) { return isa<FloatType, IntegerType>(t); }

/// dot_general: `linalg.matmul` / `linalg.batch_matmul` for the canonical
/// forms, else one `linalg.generic` over [batch, lhs free, rhs free,
/// contracting].
FailureOr<Value> lowerDotGeneral(OpBuilder &b, DotGeneralOp op,
                                 RuntimeChecks &checks, bool libraryCalls) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  if (!isFloatOrInt(elt))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  // Batch and contracted dims of the operands agree (MatMul's inner dims).
  {
    IMath m{b, loc};
    auto pairs = [&](ArrayRef<int64_t> l, ArrayRef<int64_t> r) {
      for (auto [i, j] : llvm::zip(l, r)) {
        Value lv =
            toValue(b, loc, tensor::getMixedSize(b, loc, op.getLhs(), i));
        Value rv =
            toValue(b, loc, tensor::getMixedSize(b, loc, op.getRhs(), j));
        checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, lv, rv), "",
                     "A dim " + std::to_string(i) + " is {0} but B dim " +
                         std::to_string(j) + " is {1}",
                     {lv, rv});
      }
    };
    pairs(op.getLhsBatchingDimensions(), op.getRhsBatchingDimensions());
    pairs(op.getLhsContractingDimensions(), op.getRhsContractingDimensions());
  }
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  if (libraryCalls)
    if (std::optional<Value> call = lowerDotGeneralToLibraryCall(b, op, *dims))
      return *call;
  Value init = fill(b, loc, cstScalar(b, loc, elt, 0),
                    emptyTensor(b, loc, resultType, *dims));
  auto lb = op.getLhsBatchingDimensions(), rb = op.getRhsBatchingDimensions();
  auto lc = op.getLhsContractingDimensions();
  auto rc = op.getRhsContractingDimensions();
  int64_t lr = op.getLhs().getType().getRank();
  int64_t rr = op.getRhs().getType().getRank();
  SmallVector<Value> ins = {op.getLhs(), op.getRhs()};
  auto eq = [](ArrayRef<int64_t> a, ArrayRef<int64_t> c) { return a == c; };
  if (lr == 2 && rr == 2 && lb.empty() && eq(lc, {1}) && eq(rc, {0}))
    return linalg::MatmulOp::create(b, loc, TypeRange{resultType}, ins,
                                    ValueRange{init})
        .getResult(0);
  if (lr == 3 && rr == 3 && eq(lb, {0}) && eq(rb, {0}) && eq(lc, {2}) &&
      eq(rc, {1}))
    return linalg::BatchMatmulOp::create(b, loc, TypeRange{resultType}, ins,
                                         ValueRange{init})
        .getResult(0);

  MLIRContext *ctx = b.getContext();
  int64_t nb = lb.size(), nc = lc.size();
  int64_t lf = lr - nb - nc, rf = rr - nb - nc;
  int64_t loops = nb + lf + rf + nc;
  auto operandMap = [&](int64_t r, ArrayRef<int64_t> batch,
                        ArrayRef<int64_t> contract, int64_t freeBase) {
    SmallVector<AffineExpr> exprs;
    int64_t free = 0;
    for (int64_t i = 0; i < r; ++i) {
      if (auto *it = llvm::find(batch, i); it != batch.end())
        exprs.push_back(getAffineDimExpr(it - batch.begin(), ctx));
      else if (auto *ct = llvm::find(contract, i); ct != contract.end())
        exprs.push_back(
            getAffineDimExpr(nb + lf + rf + (ct - contract.begin()), ctx));
      else
        exprs.push_back(getAffineDimExpr(freeBase + free++, ctx));
    }
    return AffineMap::get(loops, 0, exprs, ctx);
  };
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < nb + lf + rf; ++i)
    outExprs.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps = {operandMap(lr, lb, lc, nb),
                                 operandMap(rr, rb, rc, nb + lf),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<IterType> iters(nb + lf + rf, IterType::parallel);
  iters.append(nc, IterType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ins, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb2, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb2, nl, mulAdd(nb2, nl, args[0], args[1], args[2]));
             })
      .getResult(0);
}

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

Value convOnPadded(OpBuilder &b, Location loc, Value input, Value filter,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                   int64_t groups, RankedTensorType resultType,
                   ArrayRef<OpFoldResult> dims);

/// ONNX Conv (zero padding, strides, dilations, groups). 2-D ungrouped
/// convolutions become `linalg.conv_2d_nchw_fchw`; all others one
/// `linalg.generic` over [N, (G,) OCg, O..., ICg, K...]. With
/// `libraryCalls`, f32 convolutions become a library call instead.
FailureOr<Value> lowerConv(OpBuilder &b, ConvOp op, RuntimeChecks &checks,
                           bool libraryCalls) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  if (!isFloatOrInt(elt))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  int64_t k = resultType.getRank() - 2;
  int64_t groups = op.getFeatureGroupCount();
  Value filter = op.getFilter();
  RankedTensorType fType = tensorType(filter);
  // The filter (usually a constant) fixes the channel counts: C = G * Cg.
  if (groups > 1 && (fType.isDynamicDim(0) || fType.isDynamicDim(1)))
    return op.emitOpError("cannot be lowered to linalg yet: grouped "
                          "convolution needs static channel counts");
  // Input channels = groups x filter channels (ONNX Conv's C = group * C/g).
  {
    IMath m{b, loc};
    Value c = toValue(b, loc, tensor::getMixedSize(b, loc, op.getInput(), 1));
    Value cg = toValue(b, loc, tensor::getMixedSize(b, loc, filter, 1));
    Value want = m.mul(cg, m.c(groups));
    checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, c, want), "",
                 "input has {0} channels, the weights expect {1}", {c, want});
  }
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  if (libraryCalls)
    if (std::optional<Value> call = lowerConvToLibraryCall(b, op, *dims))
      return *call;

  ArrayRef<int64_t> pad = op.getPadding();
  SmallVector<OpFoldResult> hi;
  for (int64_t v : pad.drop_front(k))
    hi.push_back(b.getIndexAttr(v));
  Value input = padSpatial(b, loc, op.getInput(), pad.take_front(k), hi,
                           cstScalar(b, loc, elt, 0));
  return convOnPadded(b, loc, input, filter, op.getStrides(), op.getDilations(),
                      groups, resultType, *dims);
}

/// Convolution of an already padded `input` [N, C, D...] with `filter`
/// [OC, C / groups, K...] into `resultType` with dims `dims`.
Value convOnPadded(OpBuilder &b, Location loc, Value input, Value filter,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                   int64_t groups, RankedTensorType resultType,
                   ArrayRef<OpFoldResult> dims) {
  Type elt = resultType.getElementType();
  int64_t k = resultType.getRank() - 2;
  RankedTensorType fType = tensorType(filter);
  RankedTensorType inType = tensorType(input);
  Value zero = cstScalar(b, loc, elt, 0);

  if (k == 2 && groups == 1) {
    Value init = fill(b, loc, zero, emptyTensor(b, loc, resultType, dims));
    auto attr = [&](ArrayRef<int64_t> v) {
      return DenseIntElementsAttr::get(
          RankedTensorType::get({2}, b.getI64Type()), v);
    };
    return linalg::Conv2DNchwFchwOp::create(
               b, loc, TypeRange{resultType}, ValueRange{input, filter},
               ValueRange{init}, attr(strides), attr(dilations))
        .getResult(0);
  }

  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> inSizes = tensor::getMixedSizes(b, loc, input);
  SmallVector<OpFoldResult> fSizes = tensor::getMixedSizes(b, loc, filter);
  int64_t g = groups > 1 ? 1 : 0; // extra group loop
  // Loops: n, [g], ocg, o_1..o_k, icg, k_1..k_k.
  int64_t loops = 2 + g + 2 * k + 1;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  int64_t oBase = 2 + g, cLoop = 2 + g + k, kBase = 3 + g + k;

  SmallVector<AffineExpr> inExprs = {d(0)}, fExprs, outExprs = {d(0)};
  if (g) {
    inExprs.push_back(d(1));
    fExprs.push_back(d(1));
    outExprs.push_back(d(1));
  }
  inExprs.push_back(d(cLoop));
  fExprs.push_back(d(1 + g));
  fExprs.push_back(d(cLoop));
  outExprs.push_back(d(1 + g));
  for (int64_t i = 0; i < k; ++i) {
    inExprs.push_back(d(oBase + i) * strides[i] + d(kBase + i) * dilations[i]);
    fExprs.push_back(d(kBase + i));
    outExprs.push_back(d(oBase + i));
  }

  Value out;
  RankedTensorType outType = resultType;
  SmallVector<OpFoldResult> outDims(dims.begin(), dims.end());
  if (g) {
    int64_t c = groups * fType.getDimSize(1), oc = fType.getDimSize(0);
    if (inType.isDynamicDim(1)) {
      // ONNX Conv requires C = G * Cg; the input must have that many.
      SmallVector<int64_t> staticC(tensorType(input).getShape());
      staticC[1] = c;
      input = tensor::CastOp::create(
          b, loc, RankedTensorType::get(staticC, elt), input);
      inSizes[1] = b.getIndexAttr(c);
    }
    int64_t cg = c / groups, ocg = oc / groups;
    // input [N, G, Cg, D...]
    SmallVector<int64_t> inShape = {tensorType(input).getDimSize(0), groups,
                                    cg};
    SmallVector<OpFoldResult> inOut = {inSizes[0], b.getIndexAttr(groups),
                                       b.getIndexAttr(cg)};
    SmallVector<ReassociationIndices> inAssoc = {{0}, {1, 2}};
    for (int64_t i = 0; i < k; ++i) {
      inShape.push_back(tensorType(input).getDimSize(2 + i));
      inOut.push_back(inSizes[2 + i]);
      inAssoc.push_back({3 + i});
    }
    input = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(inShape, elt), input, inAssoc, inOut);
    // filter [G, OCg, Cg, K...]
    SmallVector<int64_t> fShape = {groups, ocg, fType.getDimSize(1)};
    SmallVector<OpFoldResult> fOut = {b.getIndexAttr(groups),
                                      b.getIndexAttr(ocg), fSizes[1]};
    SmallVector<ReassociationIndices> fAssoc = {{0, 1}, {2}};
    for (int64_t i = 0; i < k; ++i) {
      fShape.push_back(fType.getDimSize(2 + i));
      fOut.push_back(fSizes[2 + i]);
      fAssoc.push_back({3 + i});
    }
    filter = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(fShape, elt), filter, fAssoc, fOut);
    // output [N, G, OCg, O...]
    SmallVector<int64_t> oShape = {resultType.getDimSize(0), groups, ocg};
    outDims = {dims[0], b.getIndexAttr(groups), b.getIndexAttr(ocg)};
    for (int64_t i = 0; i < k; ++i) {
      oShape.push_back(resultType.getDimSize(2 + i));
      outDims.push_back(dims[2 + i]);
    }
    outType = RankedTensorType::get(oShape, elt);
  }
  out = fill(b, loc, zero, emptyTensor(b, loc, outType, outDims));
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, ctx),
                                 AffineMap::get(loops, 0, fExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<IterType> iters(2 + g + k, IterType::parallel);
  iters.append(1 + k, IterType::reduction);
  Value result = linalg::GenericOp::create(
                     b, loc, TypeRange{outType}, ValueRange{input, filter},
                     ValueRange{out}, maps, iters,
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       linalg::YieldOp::create(
                           nb, nl, mulAdd(nb, nl, args[0], args[1], args[2]));
                     })
                     .getResult(0);
  if (g) {
    SmallVector<ReassociationIndices> assoc = {{0}, {1, 2}};
    for (int64_t i = 0; i < k; ++i)
      assoc.push_back({3 + i});
    result = tensor::CollapseShapeOp::create(b, loc, result, assoc);
  }
  return castTo(b, loc, result, resultType);
}

/// ONNX ConvTranspose as a convolution. The input is spread with the
/// strides (zero insertion) into a zero tensor Z at offset
/// `(K - 1) * dil + max(0, -pad_lo)`, Z is cropped at `max(0, pad_lo)`, and
/// convolved (stride 1, same dilation) with the filter flipped along its
/// spatial dims and with input/output channels swapped within each group.
FailureOr<Value> lowerConvTranspose(OpBuilder &b, ConvTransposeOp op) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  if (!isFloatOrInt(elt))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  int64_t k = resultType.getRank() - 2;
  int64_t groups = op.getFeatureGroupCount();
  Value x = op.getInput(), w = op.getFilter();
  RankedTensorType fType = tensorType(w);
  if (groups > 1 && (fType.isDynamicDim(0) || fType.isDynamicDim(1)))
    return op.emitOpError("cannot be lowered to linalg yet: grouped "
                          "transposed convolution needs static channel counts");
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  IMath m{b, loc};
  ArrayRef<int64_t> strides = op.getStrides(), dil = op.getDilations(),
                    pad = op.getPadding();
  SmallVector<OpFoldResult> xs = tensor::getMixedSizes(b, loc, x);
  SmallVector<OpFoldResult> ws = tensor::getMixedSizes(b, loc, w);
  SmallVector<OpFoldResult> zSizes = {xs[0], xs[1]};
  SmallVector<OpFoldResult> insOff(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> insStride(2, b.getIndexAttr(1));
  SmallVector<OpFoldResult> cropOff(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> cropSize = {xs[0], xs[1]};
  SmallVector<OpFoldResult> ones(2 + k, b.getIndexAttr(1));
  for (int64_t i = 0; i < k; ++i) {
    Value d = toValue(b, loc, xs[2 + i]), kk = toValue(b, loc, ws[2 + i]);
    Value o = toValue(b, loc, (*dims)[2 + i]);
    Value span = m.mul(m.sub(kk, m.c(1)), m.c(dil[i]));
    Value dataLen = m.add(m.mul(m.sub(d, m.c(1)), m.c(strides[i])), m.c(1));
    int64_t lo = pad[i];
    Value offset = m.add(span, m.c(std::max<int64_t>(0, -lo)));
    int64_t crop = std::max<int64_t>(0, lo);
    Value cropLen = m.add(o, span);
    Value zLen = m.max(m.add(cropLen, m.c(crop)), m.add(offset, dataLen));
    zSizes.push_back(getAsOpFoldResult(zLen));
    insOff.push_back(getAsOpFoldResult(offset));
    insStride.push_back(b.getIndexAttr(strides[i]));
    cropOff.push_back(b.getIndexAttr(crop));
    cropSize.push_back(getAsOpFoldResult(cropLen));
  }
  Value zero = cstScalar(b, loc, elt, 0);
  SmallVector<int64_t> zStatic;
  SmallVector<Value> zDyn;
  dispatchIndexOpFoldResults(zSizes, zDyn, zStatic);
  Value z =
      fill(b, loc, zero, tensor::EmptyOp::create(b, loc, zStatic, elt, zDyn));
  z = tensor::InsertSliceOp::create(b, loc, x, z, insOff, xs, insStride);
  Value cropped =
      tensor::ExtractSliceOp::create(b, loc, z, cropOff, cropSize, ones);

  // Filter [C, OCg, K...] -> [OC, Cg, K...], flipped spatially.
  OpFoldResult ocg = ws[1];
  OpFoldResult oc =
      getAsOpFoldResult(m.mul(toValue(b, loc, ws[1]), m.c(groups)));
  OpFoldResult cg = getAsOpFoldResult(
      b.createOrFold<arith::DivSIOp>(loc, toValue(b, loc, ws[0]), m.c(groups)));
  SmallVector<OpFoldResult> wtSizes = {oc, cg};
  for (int64_t i = 0; i < k; ++i)
    wtSizes.push_back(ws[2 + i]);
  SmallVector<int64_t> wtStatic;
  SmallVector<Value> wtDyn;
  dispatchIndexOpFoldResults(wtSizes, wtDyn, wtStatic);
  auto wtType = RankedTensorType::get(wtStatic, elt);
  Value wtInit = tensor::EmptyOp::create(b, loc, wtStatic, elt, wtDyn);
  MLIRContext *ctx = b.getContext();
  Value ocgV = toValue(b, loc, ocg), cgV = toValue(b, loc, cg);
  SmallVector<Value> kV;
  for (int64_t i = 0; i < k; ++i)
    kV.push_back(toValue(b, loc, ws[2 + i]));
  Value wt =
      linalg::GenericOp::create(
          b, loc, TypeRange{wtType}, ValueRange{}, ValueRange{wtInit},
          SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(2 + k, ctx)},
          SmallVector<IterType>(2 + k, IterType::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange) {
            IMath nm{nb, nl};
            Value mIdx = linalg::IndexOp::create(nb, nl, 0);
            Value cIdx = linalg::IndexOp::create(nb, nl, 1);
            Value g = arith::DivUIOp::create(nb, nl, mIdx, ocgV);
            Value mg = arith::RemUIOp::create(nb, nl, mIdx, ocgV);
            Value c = nm.add(nm.mul(g, cgV), cIdx);
            SmallVector<Value> idx = {c, mg};
            for (int64_t i = 0; i < k; ++i)
              idx.push_back(nm.sub(nm.sub(kV[i], nm.c(1)),
                                   linalg::IndexOp::create(nb, nl, 2 + i)));
            Value v = tensor::ExtractOp::create(nb, nl, w, idx);
            linalg::YieldOp::create(nb, nl, v);
          })
          .getResult(0);
  return convOnPadded(b, loc, cropped, wt, SmallVector<int64_t>(k, 1), dil,
                      groups, resultType, *dims);
}

/// Sliding-window sum or max over the spatial dims of `input` (already
/// padded): a `linalg.generic` over [lead dims..., O..., K...] with a window
/// tensor giving the K loop bounds. `lead` is the number of leading
/// non-spatial dims (2 for [N, C, D...], 0 for [D...]).
Value windowReduce(OpBuilder &b, Location loc, Value input, int64_t lead,
                   ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                   ArrayRef<int64_t> dilations, Value init, bool isMax) {
  MLIRContext *ctx = b.getContext();
  int64_t k = window.size();
  int64_t loops = lead + 2 * k;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inExprs, wExprs, outExprs;
  for (int64_t i = 0; i < lead; ++i) {
    inExprs.push_back(d(i));
    outExprs.push_back(d(i));
  }
  for (int64_t i = 0; i < k; ++i) {
    inExprs.push_back(d(lead + i) * strides[i] +
                      d(lead + k + i) * dilations[i]);
    wExprs.push_back(d(lead + k + i));
    outExprs.push_back(d(lead + i));
  }
  Type elt = tensorType(init).getElementType();
  Value windowTensor = tensor::EmptyOp::create(b, loc, window, elt);
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, ctx),
                                 AffineMap::get(loops, 0, wExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<IterType> iters(lead + k, IterType::parallel);
  iters.append(k, IterType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{input, windowTensor},
             ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = args[0], acc = args[2];
               Value r;
               if (isa<FloatType>(elt))
                 r = isMax
                         ? arith::MaximumFOp::create(nb, nl, acc, x).getResult()
                         : arith::AddFOp::create(nb, nl, acc, x).getResult();
               else
                 r = isMax ? arith::MaxSIOp::create(nb, nl, acc, x).getResult()
                           : arith::AddIOp::create(nb, nl, acc, x).getResult();
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// ONNX MaxPool / AveragePool. The input is padded by `lo` and by
/// `hi + extra`, where `extra` covers the windows that ceil_mode adds past
/// the padded input. Max pads with -inf (padding never wins). Average
/// divides the window sum by the window size, or, when padding is not
/// counted (or ceil_mode windows overhang), by a per-position count of the
/// counted elements computed by sum-pooling a padded tensor of ones.
FailureOr<Value> lowerPool(OpBuilder &b, PoolOp op) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  bool isMax = op.getKind() == PoolKind::Max;
  if (!(isa<FloatType>(elt) || (isMax && isa<IntegerType>(elt))))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  int64_t k = resultType.getRank() - 2;
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    dil = op.getDilations(), pad = op.getPadding();
  Value input = op.getInput();
  SmallVector<OpFoldResult> inSizes = tensor::getMixedSizes(b, loc, input);
  IMath m{b, loc};

  // extra_i = max(0, (O_i - 1) * s + dil * (K - 1) + 1 - (D + lo + hi)).
  SmallVector<OpFoldResult> extra, hiEff;
  bool anyExtra = false;
  for (int64_t i = 0; i < k; ++i) {
    if (!op.getCeilMode()) {
      extra.push_back(b.getIndexAttr(0));
      hiEff.push_back(b.getIndexAttr(pad[k + i]));
      continue;
    }
    Value o = toValue(b, loc, (*dims)[2 + i]);
    Value reach = m.add(m.mul(m.sub(o, m.c(1)), m.c(strides[i])),
                        m.c(dil[i] * (window[i] - 1) + 1));
    Value have =
        m.add(toValue(b, loc, inSizes[2 + i]), m.c(pad[i] + pad[k + i]));
    Value e = m.max(m.sub(reach, have), m.c(0));
    OpFoldResult ef = getAsOpFoldResult(e);
    anyExtra |= !isConstantIntValue(ef, 0);
    extra.push_back(ef);
    hiEff.push_back(getAsOpFoldResult(m.add(e, m.c(pad[k + i]))));
  }

  Value padValue = isMax ? extremeScalar(b, loc, elt, /*negative=*/true)
                         : cstScalar(b, loc, elt, 0);
  Value padded = padSpatial(b, loc, input, pad.take_front(k), hiEff, padValue);
  Value init = fill(b, loc, padValue, emptyTensor(b, loc, resultType, *dims));
  Value sums =
      windowReduce(b, loc, padded, 2, window, strides, dil, init, isMax);
  if (isMax)
    return sums;

  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  Value countTensor;
  // Divide the sums in place.
  SmallVector<AffineMap> maps;
  SmallVector<Value> ins;
  if (op.getCountIncludePad() && !anyExtra) {
    int64_t size = 1;
    for (int64_t w : window)
      size *= w;
    countTensor = cstScalar(b, loc, elt, static_cast<double>(size));
  } else {
    // Counts over the spatial dims only: [D...] ones, padded.
    SmallVector<OpFoldResult> spatial(inSizes.begin() + 2, inSizes.end());
    SmallVector<int64_t> spatialShape(
        tensorType(input).getShape().drop_front(2));
    Value ones = fill(
        b, loc, cstScalar(b, loc, elt, 1),
        emptyTensor(b, loc, RankedTensorType::get(spatialShape, elt), spatial));
    Value zero = cstScalar(b, loc, elt, 0);
    Value paddedOnes;
    if (op.getCountIncludePad()) {
      SmallVector<OpFoldResult> hiStatic;
      for (int64_t i = 0; i < k; ++i)
        hiStatic.push_back(b.getIndexAttr(pad[k + i]));
      paddedOnes = padSpatial(b, loc, ones, pad.take_front(k), hiStatic,
                              cstScalar(b, loc, elt, 1));
      paddedOnes = padSpatial(b, loc, paddedOnes, SmallVector<int64_t>(k, 0),
                              extra, zero);
    } else {
      paddedOnes = padSpatial(b, loc, ones, pad.take_front(k), hiEff, zero);
    }
    SmallVector<int64_t> outSpatial(resultType.getShape().drop_front(2));
    SmallVector<OpFoldResult> outSpatialDims(dims->begin() + 2, dims->end());
    Value countInit =
        fill(b, loc, zero,
             emptyTensor(b, loc, RankedTensorType::get(outSpatial, elt),
                         outSpatialDims));
    countTensor = windowReduce(b, loc, paddedOnes, 0, window, strides, dil,
                               countInit, /*isMax=*/false);
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < k; ++i)
      exprs.push_back(getAffineDimExpr(2 + i, ctx));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
    ins.push_back(countTensor);
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  bool scalarCount = ins.empty();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ins, ValueRange{sums}, maps,
             SmallVector<IterType>(rank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value c = scalarCount ? countTensor : args[0];
               linalg::YieldOp::create(
                   nb, nl,
                   arith::DivFOp::create(nb, nl, args.back(), c).getResult());
             })
      .getResult(0);
}

/// Reduction over `dimensions`; keep_dims uses constant-0 result maps.
/// Mean divides the sum by the product of the reduced dims at run time.
FailureOr<Value> lowerReduce(OpBuilder &b, ReduceOp op) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  bool isFloat = isa<FloatType>(elt);
  if (!isFloatOrInt(elt))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  ReduceKind kind = op.getKind();
  Value initValue;
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    initValue = cstScalar(b, loc, elt, 0);
    break;
  case ReduceKind::Prod:
    initValue = cstScalar(b, loc, elt, 1);
    break;
  case ReduceKind::Max:
    initValue = extremeScalar(b, loc, elt, /*negative=*/true);
    break;
  case ReduceKind::Min:
    initValue = extremeScalar(b, loc, elt, /*negative=*/false);
    break;
  }
  MLIRContext *ctx = b.getContext();
  Value input = op.getInput();
  int64_t rank = tensorType(input).getRank();
  ArrayRef<int64_t> red = op.getDimensions();
  SmallVector<AffineExpr> outExprs;
  SmallVector<IterType> iters;
  for (int64_t i = 0; i < rank; ++i) {
    bool reduced = llvm::is_contained(red, i);
    iters.push_back(reduced ? IterType::reduction : IterType::parallel);
    if (!reduced)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    else if (op.getKeepDims())
      outExprs.push_back(getAffineConstantExpr(0, ctx));
  }
  Value init = fill(b, loc, initValue, emptyTensor(b, loc, resultType, *dims));
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{resultType}, ValueRange{input}, ValueRange{init},
          maps, iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value x = args[0], acc = args[1], r;
            switch (kind) {
            case ReduceKind::Sum:
            case ReduceKind::Mean:
              r = isFloat ? arith::AddFOp::create(nb, nl, acc, x).getResult()
                          : arith::AddIOp::create(nb, nl, acc, x).getResult();
              break;
            case ReduceKind::Prod:
              r = isFloat ? arith::MulFOp::create(nb, nl, acc, x).getResult()
                          : arith::MulIOp::create(nb, nl, acc, x).getResult();
              break;
            case ReduceKind::Max:
              r = isFloat
                      ? arith::MaximumFOp::create(nb, nl, acc, x).getResult()
                      : arith::MaxSIOp::create(nb, nl, acc, x).getResult();
              break;
            case ReduceKind::Min:
              r = isFloat
                      ? arith::MinimumFOp::create(nb, nl, acc, x).getResult()
                      : arith::MinSIOp::create(nb, nl, acc, x).getResult();
              break;
            }
            linalg::YieldOp::create(nb, nl, r);
          })
          .getResult(0);
  if (kind != ReduceKind::Mean)
    return result;

  IMath m{b, loc};
  Value count = m.c(1);
  for (int64_t d : red)
    count =
        m.mul(count, toValue(b, loc, tensor::getMixedSize(b, loc, input, d)));
  Value countI64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  Value divisor =
      isFloat ? arith::SIToFPOp::create(b, loc, elt, countI64).getResult()
              : convertScalar(b, loc, countI64, elt, false, false);
  if (!isFloat) // avoid dividing by zero for empty integer means
    divisor =
        arith::MaxSIOp::create(b, loc, divisor, cstScalar(b, loc, elt, 1));
  // Divide in place.
  int64_t outRank = resultType.getRank();
  SmallVector<AffineMap> divMaps(
      1, AffineMap::getMultiDimIdentityMap(outRank, ctx));
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{result},
             divMaps, SmallVector<IterType>(outRank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value r = isFloat
                             ? arith::DivFOp::create(nb, nl, args[0], divisor)
                                   .getResult()
                             : arith::DivSIOp::create(nb, nl, args[0], divisor)
                                   .getResult();
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// ArgMax / ArgMin: a generic with a value and an i64 index accumulator.
/// An element replaces the accumulator when strictly better, or equal with
/// a smaller (first) / larger (last) index, so the result does not depend
/// on the iteration order.
FailureOr<Value> lowerArgReduce(OpBuilder &b, ArgReduceOp op) {
  Location loc = op.getLoc();
  Value input = op.getInput();
  Type elt = tensorType(input).getElementType();
  bool isFloat = isa<FloatType>(elt);
  if (!isFloatOrInt(elt))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  RankedTensorType valType = resultType.clone(elt);
  bool isMax = op.getIsMax(), last = op.getSelectLastIndex();
  int64_t axis = op.getDimension();
  MLIRContext *ctx = b.getContext();
  int64_t rank = tensorType(input).getRank();
  SmallVector<AffineExpr> outExprs;
  SmallVector<IterType> iters;
  for (int64_t i = 0; i < rank; ++i) {
    iters.push_back(i == axis ? IterType::reduction : IterType::parallel);
    if (i != axis)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    else if (op.getKeepDims())
      outExprs.push_back(getAffineConstantExpr(0, ctx));
  }
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
  Value valInit = fill(b, loc, extremeScalar(b, loc, elt, isMax),
                       emptyTensor(b, loc, valType, *dims));
  Value idxInit = fill(b, loc, cstScalar(b, loc, b.getI64Type(), 0),
                       emptyTensor(b, loc, resultType, *dims));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{valType, resultType}, ValueRange{input},
      ValueRange{valInit, idxInit},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                             outMap, outMap},
      iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = args[0], accV = args[1], accI = args[2];
        Value i = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, axis));
        Value better, eq;
        if (isFloat) {
          better = arith::CmpFOp::create(nb, nl,
                                         isMax ? arith::CmpFPredicate::OGT
                                               : arith::CmpFPredicate::OLT,
                                         x, accV);
          eq =
              arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, x, accV);
        } else {
          better = arith::CmpIOp::create(nb, nl,
                                         isMax ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::slt,
                                         x, accV);
          eq = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, x, accV);
        }
        Value tie = arith::CmpIOp::create(nb, nl,
                                          last ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::slt,
                                          i, accI);
        Value take = arith::OrIOp::create(
            nb, nl, better, arith::AndIOp::create(nb, nl, eq, tie));
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, take, x, accV),
                       arith::SelectOp::create(nb, nl, take, i, accI)});
      });
  return generic.getResult(1);
}

//===----------------------------------------------------------------------===//
// Data movement and shape ops
//===----------------------------------------------------------------------===//

FailureOr<Value> lowerShapeOf(OpBuilder &b, ShapeOfOp op) {
  Location loc = op.getLoc();
  Value v = op.getOperand();
  SmallVector<Value> elems;
  for (int64_t i = 0, e = tensorType(v).getRank(); i < e; ++i)
    elems.push_back(arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        toValue(b, loc, tensor::getMixedSize(b, loc, v, i))));
  Value r = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({tensorType(v).getRank()}, b.getI64Type()),
      elems);
  return castTo(b, loc, r, op.getType());
}

/// ONNX Reshape through `tensor.reshape` with the reified dims (0 copied,
/// -1 inferred) as an index shape tensor.
FailureOr<Value> lowerDynamicReshape(OpBuilder &b, DynamicReshapeOp op,
                                     RuntimeChecks &checks, bool proven) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Value src = op.getOperand();
  int64_t rank = resultType.getRank(), inRank = tensorType(src).getRank();
  IMath m{b, loc};
  // ONNX Reshape: entries >= -1, at most one -1, a 0 (without allowzero)
  // copies an input dim that must exist; the element counts agree. A
  // reshape the shape analysis proves valid needs none of the checks.
  if (proven) {
    checks.countProven(rank + 2);
    FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
    if (failed(dims))
      return failure();
    SmallVector<Value> elems;
    for (OpFoldResult d : sizesForType(b, loc, resultType, *dims))
      elems.push_back(toValue(b, loc, d));
    Value shape = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({rank}, b.getIndexType()), elems);
    return tensor::ReshapeOp::create(b, loc, resultType, src, shape)
        .getResult();
  }
  Value numMinusOne = m.c(0);
  for (int64_t i = 0; i < rank; ++i) {
    Value e = foldedElementAsIndex(b, loc, op.getShape(), i);
    if (isKnownNonNegative(e) && (op.getAllowZero() || i < inRank)) {
      checks.countProven(2);
      continue;
    }
    checks.check(b, loc, m.cmp(arith::CmpIPredicate::sge, e, m.c(-1)),
                 "Reshape", "shape[" + std::to_string(i) + "] is {0}", {e});
    if (!op.getAllowZero() && i >= inRank)
      checks.check(
          b, loc, m.cmp(arith::CmpIPredicate::ne, e, m.c(0)), "Reshape",
          "shape[" + std::to_string(i) + "] is 0 but the input has rank " +
              std::to_string(inRank));
    numMinusOne =
        m.add(numMinusOne, m.select(m.cmp(arith::CmpIPredicate::eq, e, m.c(-1)),
                                    m.c(1), m.c(0)));
  }
  checks.check(b, loc, m.cmp(arith::CmpIPredicate::sle, numMinusOne, m.c(1)),
               "Reshape", "more than one -1 in the shape");
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  SmallVector<OpFoldResult> sizes = sizesForType(b, loc, resultType, *dims);
  Value numelIn = m.c(1), numelOut = m.c(1);
  for (int64_t i = 0; i < inRank; ++i)
    numelIn =
        m.mul(numelIn, toValue(b, loc, tensor::getMixedSize(b, loc, src, i)));
  for (OpFoldResult d : sizes)
    numelOut = m.mul(numelOut, toValue(b, loc, d));
  checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, numelIn, numelOut),
               "Reshape", "cannot reshape {0} elements into {1} elements",
               {numelIn, numelOut});
  SmallVector<Value> elems;
  for (OpFoldResult d : sizes)
    elems.push_back(toValue(b, loc, d));
  Value shape = tensor::FromElementsOp::create(
      b, loc,
      RankedTensorType::get({static_cast<int64_t>(elems.size())},
                            b.getIndexType()),
      elems);
  return tensor::ReshapeOp::create(b, loc, resultType, src, shape).getResult();
}

FailureOr<Value> lowerTranspose(OpBuilder &b, TransposeOp op) {
  Location loc = op.getLoc();
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  Value init = emptyTensor(b, loc, op.getType(), *dims);
  return linalg::TransposeOp::create(b, loc, op.getOperand(), init,
                                     op.getPermutation())
      .getResult()[0];
}

/// Inserts each input into the destination at a running offset.
FailureOr<Value> lowerConcatenate(OpBuilder &b, ConcatenateOp op,
                                  RuntimeChecks &checks) {
  Location loc = op.getLoc();
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  int64_t rank = resultType.getRank(), axis = op.getDimension();
  IMath m{b, loc};
  Value dest = emptyTensor(b, loc, resultType, *dims);
  OpFoldResult offset = b.getIndexAttr(0);
  for (Value in : op.getInputs()) {
    // An operand empty along the axis adds nothing (and an insert at the
    // end offset would be out of bounds for the static verifier).
    if (tensorType(in).getDimSize(axis) == 0)
      continue;
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, in);
    for (int64_t i = 0; i < rank; ++i) {
      if (i == axis)
        continue;
      Value got = toValue(b, loc, sizes[i]);
      Value want = toValue(b, loc, (*dims)[i]);
      checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, got, want), "Concat",
                   "operand dim " + std::to_string(i) +
                       " is {0}, the other operands have {1}",
                   {got, want});
    }
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[axis] = offset;
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    dest = tensor::InsertSliceOp::create(b, loc, in, dest, offsets, sizes,
                                         strides);
    offset = getAsOpFoldResult(
        m.add(toValue(b, loc, offset), toValue(b, loc, sizes[axis])));
  }
  return dest;
}

/// ONNX Slice. Starts are normalized as the spec says (negative + dim,
/// clamped to [0, dim] for positive steps and [0, dim - 1] for negative
/// ones); the counts come from the reified shape. Constant positive steps
/// give a `tensor.extract_slice`; otherwise a generic reads
/// `start + i * step` with `tensor.extract`.
FailureOr<Value> lowerSlice(OpBuilder &b, SliceOp op, RuntimeChecks &checks) {
  Location loc = op.getLoc();
  // ONNX: a step is never 0 (the count divides by it).
  for (int64_t k = 0, e = op.getAxes().size(); k < e; ++k) {
    Value step = foldedElementAsIndex(b, loc, op.getSteps(), k);
    checks.check(b, loc,
                 b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                               step, cstIndex(b, loc, 0)),
                 "Slice", "steps[" + std::to_string(k) + "] is 0");
  }
  // Bounds given by the op's contract (TopK `k`, Split sizes): no clamping
  // is allowed, 0 <= start <= end <= dim (and end == dim) must hold.
  auto boundsMsg = op->getAttrOfType<StringAttr>(kSliceBoundsMessageAttr);
  auto endMsg = op->getAttrOfType<StringAttr>(kSliceEndMessageAttr);
  if (boundsMsg || endMsg) {
    IMath m{b, loc};
    for (auto [k, axis] : llvm::enumerate(op.getAxes())) {
      Value d =
          toValue(b, loc, tensor::getMixedSize(b, loc, op.getOperand(), axis));
      Value start = foldedElementAsIndex(b, loc, op.getStarts(), k);
      Value end = foldedElementAsIndex(b, loc, op.getEnds(), k);
      SmallVector<Value> vals = {start, end, d, m.sub(end, start)};
      auto le = [&](Value x, Value y) {
        return m.cmp(arith::CmpIPredicate::sle, x, y);
      };
      if (boundsMsg) {
        Value ok = b.createOrFold<arith::AndIOp>(
            loc,
            b.createOrFold<arith::AndIOp>(loc, le(m.c(0), start),
                                          le(start, end)),
            le(end, d));
        checks.check(b, loc, ok, "Slice", boundsMsg.getValue(), vals);
      }
      if (endMsg)
        checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, end, d), "Slice",
                     endMsg.getValue(), vals);
    }
  }
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  Value src = op.getOperand();
  int64_t rank = resultType.getRank();
  IMath m{b, loc};
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  DenseIntElementsAttr stepsAttr;
  SmallVector<APInt> stepVals;
  if (matchPattern(op.getSteps(), m_Constant(&stepsAttr)))
    stepVals = llvm::to_vector(stepsAttr.getValues<APInt>());
  bool positiveSteps =
      !stepVals.empty() && llvm::all_of(stepVals, [](const APInt &s) {
        return s.isStrictlyPositive();
      });
  for (auto [k, axis] : llvm::enumerate(op.getAxes())) {
    Value d = toValue(b, loc, tensor::getMixedSize(b, loc, src, axis));
    Value start = elementAsIndex(b, loc, op.getStarts(), k);
    Value step = positiveSteps ? m.c(stepVals[k].getSExtValue())
                               : elementAsIndex(b, loc, op.getSteps(), k);
    Value wrapped = m.select(m.cmp(arith::CmpIPredicate::slt, start, m.c(0)),
                             m.add(start, d), start);
    Value clampedPos = m.min(m.max(wrapped, m.c(0)), d);
    Value clampedNeg = m.min(m.max(wrapped, m.c(0)), m.sub(d, m.c(1)));
    Value s = positiveSteps
                  ? clampedPos
                  : m.select(m.cmp(arith::CmpIPredicate::slt, step, m.c(0)),
                             clampedNeg, clampedPos);
    offsets[axis] = getAsOpFoldResult(s);
    strides[axis] = getAsOpFoldResult(step);
  }
  SmallVector<OpFoldResult> sizes = sizesForType(b, loc, resultType, *dims);
  if (positiveSteps)
    return tensor::ExtractSliceOp::create(b, loc, resultType, src, offsets,
                                          sizes, strides)
        .getResult();

  Value dest = emptyTensor(b, loc, resultType, *dims);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{dest},
             SmallVector<AffineMap>{
                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<IterType>(rank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               SmallVector<Value> idx;
               for (int64_t i = 0; i < rank; ++i) {
                 Value iv = linalg::IndexOp::create(nb, nl, i);
                 if (llvm::is_contained(op.getAxes(), i)) {
                   Value st = toValue(nb, nl, strides[i]);
                   Value off = toValue(nb, nl, offsets[i]);
                   iv = arith::AddIOp::create(
                       nb, nl, off, arith::MulIOp::create(nb, nl, iv, st));
                 }
                 idx.push_back(iv);
               }
               linalg::YieldOp::create(
                   nb, nl,
                   tensor::ExtractOp::create(nb, nl, src, idx).getResult());
             })
      .getResult(0);
}

/// ONNX Gather: a generic over the result reading the index through an
/// indexing map and the data with `tensor.extract`; negative indices wrap.
FailureOr<Value> lowerGather(OpBuilder &b, GatherOp op, RuntimeChecks &checks) {
  Location loc = op.getLoc();
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  Value data = op.getData(), indices = op.getIndices();
  int64_t rank = resultType.getRank(), axis = op.getAxis();
  int64_t q = tensorType(indices).getRank();
  int64_t dataRank = tensorType(data).getRank();
  MLIRContext *ctx = b.getContext();
  Value axisDim = toValue(b, loc, tensor::getMixedSize(b, loc, data, axis));
  // Constant indices within a static axis need no run-time check.
  bool indicesInRange = false;
  DenseIntElementsAttr constIdx;
  int64_t staticAxis = tensorType(data).getDimSize(axis);
  if (!ShapedType::isDynamic(staticAxis) &&
      matchPattern(indices, m_Constant(&constIdx))) {
    indicesInRange = llvm::all_of(constIdx.getValues<APInt>(), [&](APInt v) {
      return v.getSExtValue() >= -staticAxis && v.getSExtValue() < staticAxis;
    });
    if (indicesInRange)
      checks.countProven();
  }
  SmallVector<AffineExpr> idxExprs;
  for (int64_t i = 0; i < q; ++i)
    idxExprs.push_back(getAffineDimExpr(axis + i, ctx));
  Value dest = emptyTensor(b, loc, resultType, *dims);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{indices},
             ValueRange{dest},
             SmallVector<AffineMap>{
                 AffineMap::get(rank, 0, idxExprs, ctx),
                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<IterType>(rank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value fixed = wrapIndex(nb, nl, args[0], axisDim,
                                       indicesInRange ? nullptr : &checks);
               SmallVector<Value> idx;
               for (int64_t i = 0; i < axis; ++i)
                 idx.push_back(linalg::IndexOp::create(nb, nl, i));
               idx.push_back(fixed);
               for (int64_t i = axis + 1; i < dataRank; ++i)
                 idx.push_back(linalg::IndexOp::create(nb, nl, i + q - 1));
               linalg::YieldOp::create(
                   nb, nl,
                   tensor::ExtractOp::create(nb, nl, data, idx).getResult());
             })
      .getResult(0);
}

/// ONNX Pad. Constant mode is `tensor.pad` (static bounds when `pads` is a
/// constant); reflect and edge modes are a generic over the result reading
/// the operand at the reflected / clamped index.
FailureOr<Value> lowerPad(OpBuilder &b, PadOp op) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Value src = op.getOperand();
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> low, high;
  DenseIntElementsAttr padsAttr;
  if (matchPattern(op.getPads(), m_Constant(&padsAttr))) {
    auto values = llvm::to_vector(padsAttr.getValues<APInt>());
    for (int64_t i = 0; i < rank; ++i) {
      low.push_back(b.getIndexAttr(values[i].getSExtValue()));
      high.push_back(b.getIndexAttr(values[rank + i].getSExtValue()));
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) {
      low.push_back(elementAsIndex(b, loc, op.getPads(), i));
      high.push_back(elementAsIndex(b, loc, op.getPads(), rank + i));
    }
  }
  if (op.getMode() == PadMode::Constant) {
    Value v = tensor::ExtractOp::create(b, loc, op.getValue(), ValueRange{});
    Value r = tensor::PadOp::create(b, loc, Type(), src, low, high, v);
    return castTo(b, loc, r, resultType);
  }
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  bool reflect = op.getMode() == PadMode::Reflect;
  SmallVector<Value> srcDims, lows;
  for (int64_t i = 0; i < rank; ++i) {
    srcDims.push_back(toValue(b, loc, tensor::getMixedSize(b, loc, src, i)));
    lows.push_back(toValue(b, loc, low[i]));
  }
  Value dest = emptyTensor(b, loc, resultType, *dims);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{dest},
             SmallVector<AffineMap>{
                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<IterType>(rank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               IMath mm{nb, nl};
               SmallVector<Value> idx;
               for (int64_t i = 0; i < rank; ++i) {
                 Value j = mm.sub(linalg::IndexOp::create(nb, nl, i), lows[i]);
                 Value last = mm.sub(srcDims[i], mm.c(1));
                 if (reflect) {
                   // j < 0 -> -j; j > last -> 2 * last - j.
                   Value neg = mm.sub(mm.c(0), j);
                   j = mm.select(mm.cmp(arith::CmpIPredicate::slt, j, mm.c(0)),
                                 neg, j);
                   Value over = mm.sub(mm.mul(last, mm.c(2)), j);
                   j = mm.select(mm.cmp(arith::CmpIPredicate::sgt, j, last),
                                 over, j);
                 }
                 // Edge mode, and a guard for reflect beyond one period.
                 j = mm.min(mm.max(j, mm.c(0)), last);
                 idx.push_back(j);
               }
               linalg::YieldOp::create(
                   nb, nl,
                   tensor::ExtractOp::create(nb, nl, src, idx).getResult());
             })
      .getResult(0);
}

/// ONNX Range: element i is `start + i * delta`.
FailureOr<Value> lowerRange(OpBuilder &b, RangeOp op, RuntimeChecks &checks) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  if (!isFloatOrInt(elt))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  // ONNX: the element count is ceil((limit - start) / delta).
  Value delta = tensor::ExtractOp::create(b, loc, op.getDelta(), ValueRange{});
  {
    Value zero = cstScalar(b, loc, elt, 0);
    Value nonZero = isa<FloatType>(elt)
                        ? b.createOrFold<arith::CmpFOp>(
                              loc, arith::CmpFPredicate::ONE, delta, zero)
                        : b.createOrFold<arith::CmpIOp>(
                              loc, arith::CmpIPredicate::ne, delta, zero);
    checks.check(b, loc, nonZero, "Range", "delta is 0");
  }
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  Value start = tensor::ExtractOp::create(b, loc, op.getStart(), ValueRange{});
  Value dest = emptyTensor(b, loc, resultType, *dims);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{dest},
             SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
             SmallVector<IterType>{IterType::parallel},
             [&](OpBuilder &nb, Location nl, ValueRange) {
               Value i = arith::IndexCastOp::create(
                   nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 0));
               Value r;
               if (isa<FloatType>(elt)) {
                 Value fi = arith::SIToFPOp::create(nb, nl, elt, i);
                 r = arith::AddFOp::create(
                     nb, nl, start, arith::MulFOp::create(nb, nl, fi, delta));
               } else {
                 Value ii = convertScalar(nb, nl, i, elt, false, false);
                 r = arith::AddIOp::create(
                     nb, nl, start, arith::MulIOp::create(nb, nl, ii, delta));
               }
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// ONNX CumSum: an `scf.for` over the scanned dim carrying the running sum
/// of one slab (the operand with that dim of size 1) and the result.
FailureOr<Value> lowerCumSum(OpBuilder &b, CumSumOp op) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  if (!isFloatOrInt(elt) || elt.isInteger(1))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  int64_t r = resultType.getRank(), axis = op.getDimension();
  Value x = op.getOperand();
  SmallVector<OpFoldResult> slabSizes(*dims);
  slabSizes[axis] = b.getIndexAttr(1);
  SmallVector<int64_t> slabStatic;
  SmallVector<Value> slabDyn;
  dispatchIndexOpFoldResults(slabSizes, slabDyn, slabStatic);
  auto slabType = RankedTensorType::get(slabStatic, elt);
  Value zero = cstScalar(b, loc, elt, 0);
  Value acc0 = fill(b, loc, zero,
                    tensor::EmptyOp::create(b, loc, slabStatic, elt, slabDyn));
  Value dest = emptyTensor(b, loc, resultType, *dims);
  Value n = toValue(b, loc, (*dims)[axis]);
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> ones(r, b.getIndexAttr(1));
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  auto loop = scf::ForOp::create(
      b, loc, cstIndex(b, loc, 0), n, cstIndex(b, loc, 1),
      ValueRange{acc0, dest},
      [&](OpBuilder &lb, Location ll, Value iv, ValueRange iter) {
        IMath lm{lb, ll};
        Value pos = reverse ? lm.sub(lm.sub(n, lm.c(1)), iv) : iv;
        SmallVector<OpFoldResult> offs(r, lb.getIndexAttr(0));
        offs[axis] = pos;
        Value slab = tensor::ExtractSliceOp::create(lb, ll, slabType, x, offs,
                                                    slabSizes, ones);
        Value acc = iter[0];
        // Exclusive: store the running sum before adding this slab, so the
        // sum can be updated in place (the loop carries one slab buffer).
        Value res = iter[1];
        if (exclusive)
          res = tensor::InsertSliceOp::create(lb, ll, acc, res, offs, slabSizes,
                                              ones);
        Value sum =
            linalg::GenericOp::create(
                lb, ll, TypeRange{slabType}, ValueRange{acc, slab},
                ValueRange{acc},
                SmallVector<AffineMap>(
                    3, AffineMap::getMultiDimIdentityMap(r, ctx)),
                SmallVector<IterType>(r, IterType::parallel),
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  Value s =
                      isa<FloatType>(elt)
                          ? arith::AddFOp::create(nb, nl, args[0], args[1])
                                .getResult()
                          : arith::AddIOp::create(nb, nl, args[0], args[1])
                                .getResult();
                  linalg::YieldOp::create(nb, nl, s);
                })
                .getResult(0);
        if (!exclusive)
          res = tensor::InsertSliceOp::create(lb, ll, sum, res, offs, slabSizes,
                                              ones);
        scf::YieldOp::create(lb, ll, ValueRange{sum, res});
      });
  return loop.getResult(1);
}

//===----------------------------------------------------------------------===//
// Resize, element-wise gather/scatter, sorting
//===----------------------------------------------------------------------===//

/// f64 scalar arithmetic.
struct FMath {
  OpBuilder &b;
  Location loc;
  Value c(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value fromIndex(Value i) {
    Value w = arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
    return arith::SIToFPOp::create(b, loc, b.getF64Type(), w);
  }
  /// Truncates toward zero.
  Value toIndex(Value x) {
    Value w = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), w);
  }
};

/// Nested `scf.for` loops over `[0, ubs[i])` threading one tensor through
/// `body`, which gets the induction variables and returns the next tensor.
Value tensorLoopNest(
    OpBuilder &b, Location loc, ArrayRef<Value> ubs, Value init,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>, Value)> body) {
  SmallVector<Value> ivs;
  std::function<Value(OpBuilder &, Location, size_t, Value)> rec =
      [&](OpBuilder &nb, Location nl, size_t d, Value acc) -> Value {
    if (d == ubs.size())
      return body(nb, nl, ivs, acc);
    auto loop = scf::ForOp::create(
        nb, nl, cstIndex(nb, nl, 0), ubs[d], cstIndex(nb, nl, 1),
        ValueRange{acc},
        [&](OpBuilder &lb, Location ll, Value iv, ValueRange args) {
          ivs.push_back(iv);
          Value next = rec(lb, ll, d + 1, args[0]);
          ivs.pop_back();
          scf::YieldOp::create(lb, ll, next);
        });
    return loop.getResult(0);
  };
  return rec(b, loc, 0, init);
}

SmallVector<Value> dimValues(OpBuilder &b, Location loc, Value t) {
  SmallVector<Value> out;
  for (int64_t i = 0, e = tensorType(t).getRank(); i < e; ++i)
    out.push_back(toValue(b, loc, tensor::getMixedSize(b, loc, t, i)));
  return out;
}

/// ONNX Resize: a generic over the result; per resized dim the source
/// coordinate, the taps and their weights follow the ONNX reference
/// implementation (onnx/backend/test/case/node/resize.py); the taps of
/// several dims combine as a tensor product, accumulated in f64.
FailureOr<Value> lowerResize(OpBuilder &b, ResizeOp op) {
  Location loc = op.getLoc();
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  Value src = op.getOperand();
  Type elt = resultType.getElementType();
  int64_t rank = resultType.getRank();
  std::string mode = op.getMode().str();
  std::string ct = op.getCoordinateTransformationMode().str();
  std::string nearestMode = op.getNearestMode().str();
  bool exclude = op.getExcludeOutside();
  double a = op.getCubicCoeffA().convertToDouble();
  SmallVector<int64_t> axes(op.getAxes());

  struct Axis {
    int64_t dim;
    Value in, inF, scale, outW, roiStart, roiEnd;
  };
  SmallVector<Axis> info;
  FMath f{b, loc};
  for (int64_t d : axes) {
    Axis ax;
    ax.dim = d;
    ax.in = toValue(b, loc, tensor::getMixedSize(b, loc, src, d));
    ax.inF = f.fromIndex(ax.in);
    ax.scale = tensor::ExtractOp::create(b, loc, op.getScales(),
                                         ValueRange{cstIndex(b, loc, d)});
    ax.outW = f.mul(ax.scale, ax.inF);
    if (op.getRoi()) {
      ax.roiStart = tensor::ExtractOp::create(b, loc, op.getRoi(),
                                              ValueRange{cstIndex(b, loc, d)});
      ax.roiEnd = tensor::ExtractOp::create(
          b, loc, op.getRoi(), ValueRange{cstIndex(b, loc, rank + d)});
    }
    info.push_back(ax);
  }
  Value extrapolation =
      cstScalar(b, loc, elt, op.getExtrapolationValue().convertToDouble());

  Value dest = emptyTensor(b, loc, resultType, *dims);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{dest},
             SmallVector<AffineMap>{
                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<IterType>(rank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               FMath fm{nb, nl};
               IMath im{nb, nl};
               using P = arith::CmpFPredicate;
               SmallVector<Value> idx;
               for (int64_t i = 0; i < rank; ++i)
                 idx.push_back(linalg::IndexOp::create(nb, nl, i));
               Value outside;
               // Per resized dim: tap indices (clamped) and weights.
               SmallVector<SmallVector<Value>> tapIdx, tapW;
               for (const Axis &ax : info) {
                 Value y = fm.fromIndex(idx[ax.dim]);
                 Value inM1 = fm.sub(ax.inF, fm.c(1));
                 Value wIsOne = fm.cmp(P::OEQ, ax.outW, fm.c(1));
                 Value x;
                 if (ct == "half_pixel" || ct == "pytorch_half_pixel") {
                   x = fm.sub(fm.div(fm.add(y, fm.c(0.5)), ax.scale),
                              fm.c(0.5));
                   if (ct == "pytorch_half_pixel")
                     x = fm.select(wIsOne, fm.c(-0.5), x);
                 } else if (ct == "align_corners") {
                   x = fm.select(
                       wIsOne, fm.c(0),
                       fm.div(fm.mul(y, inM1), fm.sub(ax.outW, fm.c(1))));
                 } else if (ct == "asymmetric") {
                   x = fm.div(y, ax.scale);
                 } else if (ct == "tf_half_pixel_for_nn") {
                   x = fm.div(fm.add(y, fm.c(0.5)), ax.scale);
                 } else { // tf_crop_and_resize
                   Value span = fm.sub(ax.roiEnd, ax.roiStart);
                   Value one = fm.div(fm.mul(span, inM1), fm.c(2));
                   Value many = fm.div(fm.mul(fm.mul(y, span), inM1),
                                       fm.sub(ax.outW, fm.c(1)));
                   x = fm.add(fm.select(wIsOne, one, many),
                              fm.mul(ax.roiStart, inM1));
                   Value out =
                       arith::OrIOp::create(nb, nl, fm.cmp(P::OLT, x, fm.c(0)),
                                            fm.cmp(P::OGT, x, inM1));
                   outside = outside
                                 ? arith::OrIOp::create(nb, nl, outside, out)
                                       .getResult()
                                 : out;
                 }
                 Value last = im.sub(ax.in, im.c(1));
                 auto clampIdx = [&](Value i) {
                   return im.min(im.max(i, im.c(0)), last);
                 };
                 Value fl = fm.floor(x);
                 Value isInt = fm.cmp(P::OEQ, x, fl);
                 if (mode == "nearest") {
                   Value ratio = fm.sub(x, fl);
                   Value up = fm.add(fl, fm.c(1));
                   Value pick;
                   if (nearestMode == "round_prefer_floor")
                     pick = fm.select(fm.cmp(P::OLE, ratio, fm.c(0.5)), fl, up);
                   else if (nearestMode == "round_prefer_ceil")
                     pick = fm.select(fm.cmp(P::OLT, ratio, fm.c(0.5)), fl, up);
                   else if (nearestMode == "floor")
                     pick = fl;
                   else if (nearestMode == "ceil")
                     pick = up;
                   else // simple: ceil when downsampling, else truncate
                     pick = fm.select(fm.cmp(P::OLT, ax.scale, fm.c(1)),
                                      math::CeilOp::create(nb, nl, x), x);
                   pick = fm.select(isInt, x, pick);
                   tapIdx.push_back({clampIdx(fm.toIndex(pick))});
                   tapW.push_back({});
                   continue;
                 }
                 // The left tap is the largest index below x (x - 1 when x
                 // is an integer), so ratio lies in (0, 1].
                 Value i0f = fm.select(isInt, fm.sub(x, fm.c(1)), fl);
                 Value r = fm.sub(x, i0f);
                 Value i0 = fm.toIndex(i0f);
                 SmallVector<Value> w;
                 SmallVector<int64_t> offsets;
                 if (mode == "linear") {
                   w = {fm.sub(fm.c(1), r), r};
                   offsets = {0, 1};
                 } else {
                   Value ca = fm.c(a);
                   auto outer = [&](Value t) { // t = distance + 1, in [1, 2]
                     Value v = fm.sub(fm.mul(ca, t), fm.c(5 * a));
                     v = fm.add(fm.mul(v, t), fm.c(8 * a));
                     return fm.sub(fm.mul(v, t), fm.c(4 * a));
                   };
                   auto inner = [&](Value t) { // t in [0, 1]
                     Value v = fm.sub(fm.mul(fm.c(a + 2), t), fm.c(a + 3));
                     return fm.add(fm.mul(fm.mul(v, t), t), fm.c(1));
                   };
                   Value rc = fm.sub(fm.c(1), r);
                   w = {outer(fm.add(r, fm.c(1))), inner(r), inner(rc),
                        outer(fm.add(rc, fm.c(1)))};
                   offsets = {-1, 0, 1, 2};
                 }
                 SmallVector<Value> ti;
                 Value sum;
                 for (auto [k, off] : llvm::enumerate(offsets)) {
                   Value t = im.add(i0, im.c(off));
                   if (exclude) {
                     Value inside = arith::AndIOp::create(
                         nb, nl, im.cmp(arith::CmpIPredicate::sge, t, im.c(0)),
                         im.cmp(arith::CmpIPredicate::slt, t, ax.in));
                     w[k] = fm.select(inside, w[k], fm.c(0));
                     sum = sum ? fm.add(sum, w[k]) : w[k];
                   }
                   ti.push_back(clampIdx(t));
                 }
                 if (exclude)
                   for (Value &wk : w)
                     wk = fm.div(wk, sum);
                 tapIdx.push_back(ti);
                 tapW.push_back(w);
               }
               Value result;
               if (mode == "nearest") {
                 for (auto [k, ax] : llvm::enumerate(info))
                   idx[ax.dim] = tapIdx[k][0];
                 result = tensor::ExtractOp::create(nb, nl, src, idx);
               } else {
                 Value acc = fm.c(0);
                 std::function<void(size_t, Value)> rec = [&](size_t k,
                                                              Value w) {
                   if (k == info.size()) {
                     Value v = tensor::ExtractOp::create(nb, nl, src, idx);
                     v = convertScalar(nb, nl, v, nb.getF64Type(), false,
                                       false);
                     Value term = w ? fm.mul(w, v) : v;
                     acc = fm.add(acc, term);
                     return;
                   }
                   for (size_t t = 0; t < tapIdx[k].size(); ++t) {
                     idx[info[k].dim] = tapIdx[k][t];
                     rec(k + 1, w ? fm.mul(w, tapW[k][t]) : tapW[k][t]);
                   }
                 };
                 rec(0, Value());
                 result = convertScalar(nb, nl, acc, elt, false, false);
               }
               if (outside)
                 result = arith::SelectOp::create(nb, nl, outside,
                                                  extrapolation, result);
               linalg::YieldOp::create(nb, nl, result);
             })
      .getResult(0);
}

/// ONNX GatherElements: a generic over the result (the indices' shape).
FailureOr<Value> lowerGatherElements(OpBuilder &b, GatherElementsOp op,
                                     RuntimeChecks &checks) {
  Location loc = op.getLoc();
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  Value data = op.getData(), indices = op.getIndices();
  int64_t rank = resultType.getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  Value axisDim = toValue(b, loc, tensor::getMixedSize(b, loc, data, axis));
  Value dest = emptyTensor(b, loc, resultType, *dims);
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{indices},
             ValueRange{dest}, SmallVector<AffineMap>{id, id},
             SmallVector<IterType>(rank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               SmallVector<Value> idx;
               for (int64_t i = 0; i < rank; ++i)
                 idx.push_back(
                     i == axis
                         ? wrapIndex(nb, nl, args[0], axisDim, &checks)
                         : linalg::IndexOp::create(nb, nl, i).getResult());
               linalg::YieldOp::create(
                   nb, nl,
                   tensor::ExtractOp::create(nb, nl, data, idx).getResult());
             })
      .getResult(0);
}

/// ONNX GatherND: a generic over the result reading the index tuple and
/// the data with `tensor.extract`.
FailureOr<Value> lowerGatherNd(OpBuilder &b, GatherNdOp op,
                               RuntimeChecks &checks) {
  Location loc = op.getLoc();
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  Value data = op.getData(), indices = op.getIndices();
  int64_t rank = resultType.getRank();
  int64_t q = tensorType(indices).getRank(), r = tensorType(data).getRank();
  int64_t bd = static_cast<int64_t>(op.getBatchDims());
  int64_t k = q - 1 + r - bd - rank;
  SmallVector<Value> dataDims = dimValues(b, loc, data);
  Value dest = emptyTensor(b, loc, resultType, *dims);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{dest},
             SmallVector<AffineMap>{
                 AffineMap::getMultiDimIdentityMap(rank, ctx)},
             SmallVector<IterType>(rank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               SmallVector<Value> ivs;
               for (int64_t i = 0; i < rank; ++i)
                 ivs.push_back(linalg::IndexOp::create(nb, nl, i));
               SmallVector<Value> prefix(ivs.begin(), ivs.begin() + q - 1);
               SmallVector<Value> idx(prefix.begin(), prefix.begin() + bd);
               for (int64_t m = 0; m < k; ++m) {
                 SmallVector<Value> at = prefix;
                 at.push_back(cstIndex(nb, nl, m));
                 Value raw = tensor::ExtractOp::create(nb, nl, indices, at);
                 idx.push_back(
                     wrapIndex(nb, nl, raw, dataDims[bd + m], &checks));
               }
               idx.append(ivs.begin() + q - 1, ivs.end());
               linalg::YieldOp::create(
                   nb, nl,
                   tensor::ExtractOp::create(nb, nl, data, idx).getResult());
             })
      .getResult(0);
}

/// `old (reduction) upd` for ScatterElements / ScatterND.
Value scatterCombine(OpBuilder &b, Location loc, StringRef reduction, Value old,
                     Value upd) {
  bool isF = isa<FloatType>(upd.getType());
  if (reduction == "add")
    return isF ? arith::AddFOp::create(b, loc, old, upd).getResult()
               : arith::AddIOp::create(b, loc, old, upd).getResult();
  if (reduction == "mul")
    return isF ? arith::MulFOp::create(b, loc, old, upd).getResult()
               : arith::MulIOp::create(b, loc, old, upd).getResult();
  return upd;
}

/// ONNX ScatterElements: loops over `updates` in row-major order inserting
/// into a copy of `data` (so duplicate indices apply in order).
FailureOr<Value> lowerScatterElements(OpBuilder &b, ScatterElementsOp op,
                                      RuntimeChecks &checks) {
  Location loc = op.getLoc();
  Value data = op.getData(), indices = op.getIndices(),
        updates = op.getUpdates();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  Value axisDim = toValue(b, loc, tensor::getMixedSize(b, loc, data, axis));
  std::string reduction = op.getReduction().str();
  Value init = castTo(b, loc, data, op.getType());
  return tensorLoopNest(
      b, loc, dimValues(b, loc, updates), init,
      [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs, Value acc) {
        Value raw = tensor::ExtractOp::create(nb, nl, indices, ivs);
        SmallVector<Value> dst(ivs);
        dst[axis] = wrapIndex(nb, nl, raw, axisDim, &checks);
        Value upd = tensor::ExtractOp::create(nb, nl, updates, ivs);
        if (reduction != "none")
          upd = scatterCombine(
              nb, nl, reduction,
              tensor::ExtractOp::create(nb, nl, acc, dst).getResult(), upd);
        return tensor::InsertOp::create(nb, nl, upd, acc, dst).getResult();
      });
}

/// ONNX ScatterND: loops over `updates`; the leading loop indices select
/// the index tuple, the trailing ones the position inside the slice.
FailureOr<Value> lowerScatterNd(OpBuilder &b, ScatterNdOp op,
                                RuntimeChecks &checks) {
  Location loc = op.getLoc();
  Value data = op.getData(), indices = op.getIndices(),
        updates = op.getUpdates();
  int64_t q = tensorType(indices).getRank(), r = tensorType(data).getRank();
  int64_t k = r - tensorType(updates).getRank() + q - 1;
  SmallVector<Value> dataDims = dimValues(b, loc, data);
  std::string reduction = op.getReduction().str();
  Value init = castTo(b, loc, data, op.getType());
  return tensorLoopNest(
      b, loc, dimValues(b, loc, updates), init,
      [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs, Value acc) {
        SmallVector<Value> prefix(ivs.begin(), ivs.begin() + q - 1);
        SmallVector<Value> dst;
        for (int64_t m = 0; m < k; ++m) {
          SmallVector<Value> at = prefix;
          at.push_back(cstIndex(nb, nl, m));
          Value raw = tensor::ExtractOp::create(nb, nl, indices, at);
          dst.push_back(wrapIndex(nb, nl, raw, dataDims[m], &checks));
        }
        dst.append(ivs.begin() + q - 1, ivs.end());
        Value upd = tensor::ExtractOp::create(nb, nl, updates, ivs);
        if (reduction != "none")
          upd = scatterCombine(
              nb, nl, reduction,
              tensor::ExtractOp::create(nb, nl, acc, dst).getResult(), upd);
        return tensor::InsertOp::create(nb, nl, upd, acc, dst).getResult();
      });
}

/// Stable arg sort by counting: the rank of element i is the number of
/// elements j that precede it (strictly better, or equal with j < i); a
/// second generic inverts the permutation (`result[p]` is the i of rank p).
FailureOr<Value> lowerArgSort(OpBuilder &b, ArgSortOp op) {
  Location loc = op.getLoc();
  Value x = op.getOperand();
  Type elt = tensorType(x).getElementType();
  if (!isFloatOrInt(elt))
    return op.emitOpError("cannot be lowered to linalg yet: unsupported "
                          "element type ")
           << elt;
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  int64_t rank = resultType.getRank();
  int64_t dim = static_cast<int64_t>(op.getDimension());
  bool desc = op.getDescending();
  MLIRContext *ctx = b.getContext();
  // Iteration space: the operand dims, then j along `dim`.
  SmallVector<unsigned> targets;
  for (int64_t i = 0; i < rank; ++i)
    targets.push_back(i);
  AffineMap iMap = AffineMap::getMultiDimMapWithTargets(rank + 1, targets, ctx);
  targets[dim] = rank;
  AffineMap jMap = AffineMap::getMultiDimMapWithTargets(rank + 1, targets, ctx);
  SmallVector<IterType> iters(rank, IterType::parallel);
  iters.push_back(IterType::reduction);
  Type i64 = b.getI64Type();
  Value zeros = fill(b, loc, cstScalar(b, loc, i64, 0),
                     emptyTensor(b, loc, resultType, *dims));
  Value ranks =
      linalg::GenericOp::create(
          b, loc, TypeRange{resultType}, ValueRange{x, x}, ValueRange{zeros},
          SmallVector<AffineMap>{iMap, jMap, iMap}, iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value xi = args[0], xj = args[1];
            Value before, eq;
            if (isa<FloatType>(elt)) {
              before = arith::CmpFOp::create(nb, nl,
                                             desc ? arith::CmpFPredicate::OGT
                                                  : arith::CmpFPredicate::OLT,
                                             xj, xi);
              eq = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, xj,
                                         xi);
            } else {
              before = arith::CmpIOp::create(nb, nl,
                                             desc ? arith::CmpIPredicate::sgt
                                                  : arith::CmpIPredicate::slt,
                                             xj, xi);
              eq = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, xj,
                                         xi);
            }
            Value lower =
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                      linalg::IndexOp::create(nb, nl, rank),
                                      linalg::IndexOp::create(nb, nl, dim));
            Value pre = arith::OrIOp::create(
                nb, nl, before, arith::AndIOp::create(nb, nl, eq, lower));
            Value inc = arith::ExtUIOp::create(nb, nl, nb.getI64Type(), pre);
            linalg::YieldOp::create(
                nb, nl,
                arith::AddIOp::create(nb, nl, args[2], inc).getResult());
          })
          .getResult(0);
  Value zeros2 = fill(b, loc, cstScalar(b, loc, i64, 0),
                      emptyTensor(b, loc, resultType, *dims));
  // result[.., p, ..] = sum_j (ranks[.., j, ..] == p ? j : 0)
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{ranks},
             ValueRange{zeros2}, SmallVector<AffineMap>{jMap, iMap}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value p = arith::IndexCastOp::create(
                   nb, nl, nb.getI64Type(),
                   linalg::IndexOp::create(nb, nl, dim));
               Value j = arith::IndexCastOp::create(
                   nb, nl, nb.getI64Type(),
                   linalg::IndexOp::create(nb, nl, rank));
               Value hit = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::eq, args[0], p);
               Value add = arith::SelectOp::create(
                   nb, nl, hit, j, cstScalar(nb, nl, nb.getI64Type(), 0));
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddIOp::create(nb, nl, args[1], add).getResult());
             })
      .getResult(0);
}

/// ONNX GridSample (PyTorch `grid_sample` semantics): a generic over the
/// result; the grid point is unnormalized to pixel coordinates, padded
/// (border clamp / reflection) and interpolated; taps outside the input
/// read 0. Arithmetic in the element type (f32 for narrower floats).
FailureOr<Value> lowerGridSample(OpBuilder &b, GridSampleOp op) {
  Location loc = op.getLoc();
  FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, op);
  if (failed(dims))
    return failure();
  RankedTensorType resultType = op.getType();
  Value x = op.getInput(), grid = op.getGrid();
  Type elt = resultType.getElementType();
  Type ct = (elt.isF32() || elt.isF64()) ? elt : b.getF32Type();
  std::string mode = op.getMode().str(), pad = op.getPaddingMode().str();
  bool ac = op.getAlignCorners();
  SmallVector<Value> xDims = dimValues(b, loc, x);
  Value dest = emptyTensor(b, loc, resultType, *dims);
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{dest},
             SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(4, ctx)},
             SmallVector<IterType>(4, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange) {
               using P = arith::CmpFPredicate;
               auto c = [&](double v) { return cstScalar(nb, nl, ct, v); };
               auto add = [&](Value l, Value r) {
                 return arith::AddFOp::create(nb, nl, l, r).getResult();
               };
               auto sub = [&](Value l, Value r) {
                 return arith::SubFOp::create(nb, nl, l, r).getResult();
               };
               auto mul = [&](Value l, Value r) {
                 return arith::MulFOp::create(nb, nl, l, r).getResult();
               };
               auto div = [&](Value l, Value r) {
                 return arith::DivFOp::create(nb, nl, l, r).getResult();
               };
               auto sel = [&](Value cond, Value l, Value r) {
                 return arith::SelectOp::create(nb, nl, cond, l, r).getResult();
               };
               auto floorF = [&](Value v) {
                 return math::FloorOp::create(nb, nl, v).getResult();
               };
               auto fmin = [&](Value l, Value r) {
                 return arith::MinimumFOp::create(nb, nl, l, r).getResult();
               };
               auto fmax = [&](Value l, Value r) {
                 return arith::MaximumFOp::create(nb, nl, l, r).getResult();
               };
               auto toF = [&](Value i) {
                 Value w =
                     arith::IndexCastOp::create(nb, nl, nb.getI64Type(), i);
                 return arith::SIToFPOp::create(nb, nl, ct, w).getResult();
               };
               SmallVector<Value> iv;
               for (int64_t i = 0; i < 4; ++i)
                 iv.push_back(linalg::IndexOp::create(nb, nl, i));
               Value hF = toF(xDims[2]), wF = toF(xDims[3]);
               auto gridAt = [&](int64_t k) {
                 Value g = tensor::ExtractOp::create(
                     nb, nl, grid,
                     ValueRange{iv[0], iv[2], iv[3], cstIndex(nb, nl, k)});
                 return convertScalar(nb, nl, g, ct, false, false);
               };
               auto unnormalize = [&](Value coord, Value size) {
                 if (ac)
                   return mul(div(add(coord, c(1)), c(2)), sub(size, c(1)));
                 return div(sub(mul(add(coord, c(1)), size), c(1)), c(2));
               };
               auto clip = [&](Value coord, Value size) {
                 return fmin(fmax(coord, c(0)), sub(size, c(1)));
               };
               auto reflect = [&](Value coord, Value twiceLow,
                                  Value twiceHigh) {
                 Value lo = div(twiceLow, c(2));
                 Value span = div(sub(twiceHigh, twiceLow), c(2));
                 Value in = math::AbsFOp::create(nb, nl, sub(coord, lo));
                 Value extra = arith::RemFOp::create(nb, nl, in, span);
                 Value flips = floorF(div(in, span));
                 Value even = arith::CmpFOp::create(
                     nb, nl, P::OEQ, arith::RemFOp::create(nb, nl, flips, c(2)),
                     c(0));
                 Value r = sel(even, add(extra, lo), add(sub(span, extra), lo));
                 return sel(
                     arith::CmpFOp::create(nb, nl, P::OEQ, twiceLow, twiceHigh),
                     c(0), r);
               };
               auto padCoord = [&](Value coord, Value size) {
                 if (pad == "border")
                   return clip(coord, size);
                 if (pad == "reflection") {
                   Value r =
                       ac ? reflect(coord, c(0), mul(c(2), sub(size, c(1))))
                          : reflect(coord, c(-1), sub(mul(c(2), size), c(1)));
                   return clip(r, size);
                 }
                 return coord;
               };
               // The input at integral coordinates (y, x); 0 outside.
               auto fetch = [&](Value y, Value xx) {
                 Value inside = arith::AndIOp::create(
                     nb, nl,
                     arith::AndIOp::create(
                         nb, nl, arith::CmpFOp::create(nb, nl, P::OGE, y, c(0)),
                         arith::CmpFOp::create(nb, nl, P::OLT, y, hF)),
                     arith::AndIOp::create(
                         nb, nl,
                         arith::CmpFOp::create(nb, nl, P::OGE, xx, c(0)),
                         arith::CmpFOp::create(nb, nl, P::OLT, xx, wF)));
                 auto toIdx = [&](Value v, Value size) {
                   Value cl = clip(v, size);
                   Value i =
                       arith::FPToSIOp::create(nb, nl, nb.getI64Type(), cl);
                   return arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                     i)
                       .getResult();
                 };
                 Value v = tensor::ExtractOp::create(
                     nb, nl, x,
                     ValueRange{iv[0], iv[1], toIdx(y, hF), toIdx(xx, wF)});
                 v = convertScalar(nb, nl, v, ct, false, false);
                 return sel(inside, v, c(0));
               };
               Value gx = gridAt(0), gy = gridAt(1);
               Value result;
               if (mode == "bicubic") {
                 Value ix = unnormalize(gx, wF), iy = unnormalize(gy, hF);
                 Value x0 = floorF(ix), y0 = floorF(iy);
                 Value tx = sub(ix, x0), ty = sub(iy, y0);
                 double a = -0.75;
                 auto cc1 = [&](Value t) { // |t| <= 1
                   return add(mul(mul(sub(mul(c(a + 2), t), c(a + 3)), t), t),
                              c(1));
                 };
                 auto cc2 = [&](Value t) { // 1 < |t| < 2
                   Value v = add(mul(sub(mul(c(a), t), c(5 * a)), t), c(8 * a));
                   return sub(mul(v, t), c(4 * a));
                 };
                 auto coeffs = [&](Value t) {
                   return SmallVector<Value>{cc2(add(t, c(1))), cc1(t),
                                             cc1(sub(c(1), t)),
                                             cc2(sub(c(2), t))};
                 };
                 SmallVector<Value> cx = coeffs(tx), cy = coeffs(ty);
                 Value acc;
                 for (int64_t j = 0; j < 4; ++j) {
                   Value yj = padCoord(add(y0, c(j - 1)), hF);
                   Value row;
                   for (int64_t i = 0; i < 4; ++i) {
                     Value xi = padCoord(add(x0, c(i - 1)), wF);
                     Value term = mul(fetch(yj, xi), cx[i]);
                     row = row ? add(row, term) : term;
                   }
                   Value term = mul(row, cy[j]);
                   acc = acc ? add(acc, term) : term;
                 }
                 result = acc;
               } else {
                 Value ix = padCoord(unnormalize(gx, wF), wF);
                 Value iy = padCoord(unnormalize(gy, hF), hF);
                 if (mode == "nearest") {
                   result = fetch(math::RoundEvenOp::create(nb, nl, iy),
                                  math::RoundEvenOp::create(nb, nl, ix));
                 } else {
                   Value x0 = floorF(ix), y0 = floorF(iy);
                   Value x1 = add(x0, c(1)), y1 = add(y0, c(1));
                   Value wx1 = sub(ix, x0), wx0 = sub(x1, ix);
                   Value wy1 = sub(iy, y0), wy0 = sub(y1, iy);
                   result = add(add(mul(fetch(y0, x0), mul(wx0, wy0)),
                                    mul(fetch(y0, x1), mul(wx1, wy0))),
                                add(mul(fetch(y1, x0), mul(wx0, wy1)),
                                    mul(fetch(y1, x1), mul(wx1, wy1))));
                 }
               }
               linalg::YieldOp::create(
                   nb, nl, convertScalar(nb, nl, result, elt, false, false));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

/// Ops lowered by lowerElementwise (operands broadcast to the result).
bool isBroadcasting(Operation *op) {
  return isa<AbsOp, NegOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, ErfOp,
             FloorOp, CeilOp, RoundOp, SinOp, CosOp, TanOp, AsinOp, AcosOp,
             AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, SignOp, NotOp,
             LogisticOp, ReciprocalOp, IsNanOp, IsInfOp, AddOp, SubOp, MulOp,
             DivOp, RemOp, PowOp, MaxOp, MinOp, AndOp, OrOp, XorOp, CompareOp,
             SelectOp, ConvertOp, ExpandOp>(op);
}

/// Records the range of each input dim of `func` (kInputDimRangesAttr) for
/// disc-check-allocations, when some dynamic input dim has a maximum.
void recordInputDimRanges(func::FuncOp func, ShapeAnalysis &sa) {
  SmallVector<Attribute> args;
  bool anyMax = false;
  for (BlockArgument arg : func.getArguments()) {
    SmallVector<int64_t> r;
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    SmallVector<AffineExpr> dims =
        t ? sa.getDims(arg) : SmallVector<AffineExpr>{};
    for (int64_t i = 0; t && i < t.getRank(); ++i) {
      int64_t lo = 0, hi = -1;
      if (!t.isDynamicDim(i)) {
        lo = hi = t.getDimSize(i);
      } else if (i < (int64_t)dims.size()) {
        if (auto c = dyn_cast<AffineConstantExpr>(dims[i])) {
          lo = hi = c.getValue();
        } else if (auto s = dyn_cast<AffineSymbolExpr>(dims[i])) {
          const SymbolInfo &info = sa.getSolver().getSymbol(s.getPosition());
          lo = info.min;
          hi = info.max.value_or(-1);
          anyMax |= info.max.has_value();
        }
      }
      r.append({lo, hi});
    }
    args.push_back(DenseI64ArrayAttr::get(func.getContext(), r));
  }
  if (!anyMax)
    return;
  auto module = func->getParentOfType<ModuleOp>();
  NamedAttrList all;
  if (auto d = module->getAttrOfType<DictionaryAttr>(kInputDimRangesAttr))
    all.append(d.getValue());
  all.set(func.getSymName(), ArrayAttr::get(func.getContext(), args));
  module->setAttr(kInputDimRangesAttr, all.getDictionary(func.getContext()));
}

/// Runs the symbolic shape analysis on every function of `module` and
/// records, for each broadcasting op, which dynamic operand dims are proven
/// equal to their result dim (so they need no run-time version).
BroadcastFacts collectBroadcastFacts(ModuleOp module,
                                     ProvenReshapes &provenReshapes) {
  BroadcastFacts facts;
  llvm::StringMap<DimRange> ranges = collectDimRanges(module);
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    ShapeAnalysis sa(func, ranges);
    sa.run();
    sa.mergeEqualSymbols();
    recordInputDimRanges(func, sa);
    func.walk([&](Operation *op) {
      if (isa<DynamicReshapeOp>(op) && sa.isReshapeProven(op))
        provenReshapes.insert(op);
      if (auto e = dyn_cast<ExpandOp>(op)) {
        bool allNonNegative = true;
        for (int64_t i = 0, n = e.getShape().getType().getDimSize(0); i < n;
             ++i)
          allNonNegative &= sa.isValueNonNegative(e.getShape(), i);
        if (allNonNegative)
          provenReshapes.insert(op);
      }
      if (!isBroadcasting(op) || op->getNumResults() != 1)
        return;
      Value result = op->getResult(0);
      auto rt = dyn_cast<RankedTensorType>(result.getType());
      if (!rt)
        return;
      SmallVector<SmallVector<bool>> perOperand;
      bool any = false;
      for (Value v : op->getOperands()) {
        auto t = dyn_cast<RankedTensorType>(v.getType());
        SmallVector<bool> p;
        int64_t shift = t ? rt.getRank() - t.getRank() : 0;
        for (int64_t j = 0; t && j < t.getRank(); ++j) {
          bool same = t.isDynamicDim(j) && shift + j >= 0 &&
                      sa.isProvenEqual(v, j, result, j + shift);
          any |= same;
          p.push_back(same);
        }
        perOperand.push_back(std::move(p));
      }
      if (any)
        facts[op] = std::move(perOperand);
    });
  }
  return facts;
}

FailureOr<Value> lowerOp(OpBuilder &b, Operation *op,
                         const BroadcastFacts *facts,
                         const ProvenReshapes &provenReshapes,
                         RuntimeChecks &checks, bool libraryCalls) {
  auto elementwise = [&](Operation *o) {
    return lowerElementwise(
        b, o, o->getOperands(),
        [o, &checks](OpBuilder &nb, Location nl, ValueRange a, Type outElt) {
          // Integer division: a zero divisor is an error (ONNX leaves it
          // undefined; it traps on the CPU).
          if (isa<DivOp, RemOp>(o) && isa<IntegerType>(a[0].getType()) &&
              !a[0].getType().isInteger(1)) {
            Value zero = cstScalar(nb, nl, a[1].getType(), 0);
            checks.check(nb, nl,
                         arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne,
                                               a[1], zero),
                         "", "integer division by zero");
          }
          return emitScalar(o, nb, nl, a, outElt);
        },
        facts, checks);
  };
  // A post-op of a library call (markLibraryCalls): the call already wrote
  // its value into the chain operand's buffer.
  if (libraryCalls)
    if (auto idx = op->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr))
      return op->getOperand(idx.getInt());
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](ConstantOp c) -> FailureOr<Value> {
        return arith::ConstantOp::create(b, c.getLoc(),
                                         cast<TypedAttr>(c.getValue()))
            .getResult();
      })
      .Case<AbsOp, NegOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, ErfOp, FloorOp,
            CeilOp, RoundOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp,
            SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, SignOp, NotOp,
            LogisticOp, ReciprocalOp, IsNanOp, IsInfOp, AddOp, SubOp, MulOp,
            DivOp, RemOp, PowOp, MaxOp, MinOp, AndOp, OrOp, XorOp, ShiftLeftOp,
            ShiftRightOp, CompareOp, SelectOp, ConvertOp>(
          [&](Operation *o) -> FailureOr<Value> {
            FailureOr<Value> v = elementwise(o);
            if (failed(v) || !isFusedProducer(o))
              return v;
            // disc-fusion: the CPU pipeline fuses the tagged generic into
            // its consumer; the memory model already left it out.
            auto generic = v->getDefiningOp<linalg::GenericOp>();
            if (!generic)
              return o->emitOpError("is marked for fusion but its lowering "
                                    "is versioned on the run-time shapes");
            generic->setAttr(kFusedAttrName, b.getUnitAttr());
            return v;
          })
      .Case([&](ExpandOp e) {
        // Expand / ConstantOfShape: shape entries are sizes (>= 0).
        Location loc = e.getLoc();
        IMath m{b, loc};
        for (int64_t i = 0, n = tensorType(e.getShape()).getDimSize(0); i < n;
             ++i) {
          if (provenReshapes.contains(e)) {
            checks.countProven();
            continue;
          }
          Value s = foldedElementAsIndex(b, loc, e.getShape(), i);
          if (isKnownNonNegative(s)) {
            checks.countProven();
            continue;
          }
          checks.check(b, loc, m.cmp(arith::CmpIPredicate::sge, s, m.c(0)),
                       "Expand", "shape[" + std::to_string(i) + "] is {0}",
                       {s});
        }
        return lowerElementwise(
            b, e, ValueRange{e.getOperand()},
            [](OpBuilder &, Location, ValueRange a, Type) { return a[0]; },
            facts, checks, /*resultFromOperands=*/false);
      })
      .Case([&](DotGeneralOp o) {
        return lowerDotGeneral(b, o, checks, libraryCalls);
      })
      .Case([&](ConvOp o) { return lowerConv(b, o, checks, libraryCalls); })
      .Case([&](ConvTransposeOp o) -> FailureOr<Value> {
        if (libraryCalls) {
          FailureOr<SmallVector<OpFoldResult>> dims = reifiedDims(b, o);
          if (failed(dims))
            return failure();
          if (std::optional<Value> call =
                  lowerConvTransposeToLibraryCall(b, o, *dims))
            return *call;
        }
        return lowerConvTranspose(b, o);
      })
      .Case([&](CumSumOp o) { return lowerCumSum(b, o); })
      .Case([&](PoolOp o) { return lowerPool(b, o); })
      .Case([&](ReduceOp o) { return lowerReduce(b, o); })
      .Case([&](ArgReduceOp o) { return lowerArgReduce(b, o); })
      .Case([&](ShapeOfOp o) { return lowerShapeOf(b, o); })
      .Case([&](DynamicReshapeOp o) {
        return lowerDynamicReshape(b, o, checks, provenReshapes.contains(o));
      })
      .Case([&](TransposeOp o) { return lowerTranspose(b, o); })
      .Case([&](ConcatenateOp o) { return lowerConcatenate(b, o, checks); })
      .Case([&](SliceOp o) { return lowerSlice(b, o, checks); })
      .Case([&](GatherOp o) { return lowerGather(b, o, checks); })
      .Case([&](PadOp o) { return lowerPad(b, o); })
      .Case([&](RangeOp o) { return lowerRange(b, o, checks); })
      .Case([&](ResizeOp o) { return lowerResize(b, o); })
      .Case(
          [&](GatherElementsOp o) { return lowerGatherElements(b, o, checks); })
      .Case([&](GatherNdOp o) { return lowerGatherNd(b, o, checks); })
      .Case([&](ScatterElementsOp o) {
        return lowerScatterElements(b, o, checks);
      })
      .Case([&](ScatterNdOp o) { return lowerScatterNd(b, o, checks); })
      .Case([&](ArgSortOp o) { return lowerArgSort(b, o); })
      .Case([&](GridSampleOp o) { return lowerGridSample(b, o); })
      .Default([](Operation *o) -> FailureOr<Value> {
        return o->emitOpError("cannot be lowered to linalg yet: no lowering "
                              "for this op");
      });
}

struct DiscLowerToLinalgPass
    : public disc::impl::DiscLowerToLinalgBase<DiscLowerToLinalgPass> {
  using DiscLowerToLinalgBase::DiscLowerToLinalgBase;

  void runOnOperation() override {
    // "cuda": the calls of the ops marked for cuBLAS/cuDNN
    // (CudaLibraryCalls.h), only those.
    bool cudaCalls = libraryCallsOption == "cuda";
    bool libraryCalls = libraryCallsOption == "onednn" || cudaCalls;
    if (!libraryCalls && libraryCallsOption != "none") {
      getOperation().emitError("library-calls must be 'onednn', 'cuda' or "
                               "'none', got '")
          << libraryCallsOption << "'";
      return signalPassFailure();
    }
    // Library calls and their post-ops, unless the driver marked them
    // already (disc-compile does, before taking the memory model).
    if (libraryCalls) {
      bool marked = false;
      getOperation()->walk(
          [&](Operation *op) { marked |= op->hasAttr(kLibraryCallAttr); });
      if (!marked)
        getOperation()->walk([&](func::FuncOp f) {
          if (cudaCalls)
            markCudaLibraryCalls(f);
          else
            markLibraryCalls(f);
        });
    }
    ProvenReshapes provenReshapes;
    BroadcastFacts facts =
        collectBroadcastFacts(getOperation(), provenReshapes);
    RuntimeChecks checks(getOperation());
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<DiscDialect>(op->getDialect()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    bool failedAny = false;
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<Value> lowered =
          lowerOp(rewriter, op, &facts, provenReshapes, checks,
                  libraryCalls && (!cudaCalls || isLibraryCallUnit(op)));
      if (failed(lowered)) {
        failedAny = true;
        continue;
      }
      Value v =
          castTo(rewriter, op->getLoc(), *lowered, op->getResult(0).getType());
      rewriter.replaceOp(op, v);
    }
    checks.finish();
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace

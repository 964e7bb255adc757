//===- Elementwise.cpp - elementwise ops with NumPy broadcasting ----------===//
//
// Elementwise ops (the `Elementwise` trait) and disc.expand: the scalar
// body of each op and the broadcasting `linalg.generic` around it,
// versioned on the run-time shapes where an operand dim may stretch (see
// DiscToLinalg.cpp).
//
//===----------------------------------------------------------------------===//
#include "Utils.h"
#include "disc/Transforms/Fusion.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::lowering;

namespace {

//===----------------------------------------------------------------------===//
// Scalar bodies of elementwise ops
//===----------------------------------------------------------------------===//

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

/// A `linalg.generic` over `dest` computing `fn` of the operands. Without
/// `extractMaybe`, the operands are read with maps given by `kinds` where
/// `Maybe` is treated as `Same`; with it, the operands with `Maybe` dims are
/// read through `tensor.extract` at `select(dim == 1, 0, i)` instead.
Value buildBroadcastGeneric(OpBuilder &b, Location loc, ValueRange operands,
                            ArrayRef<SmallVector<DimKind>> kinds, Value dest,
                            ScalarFn fn, bool extractMaybe) {
  auto resultType = tensorType(dest);
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  IMath m{b, loc};
  SmallVector<Value> mapped;
  SmallVector<AffineMap> maps;
  // Per operand: whether it is read through `tensor.extract`, and then its
  // `dim == 1` flags.
  SmallVector<bool> viaExtract;
  SmallVector<SmallVector<Value>> isOne(operands.size());
  for (auto [n, vk] : llvm::enumerate(llvm::zip(operands, kinds))) {
    auto [v, k] = vk;
    bool extract = extractMaybe && llvm::is_contained(k, DimKind::Maybe);
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
               Value zero = extractMaybe ? cstIndex(nb, nl, 0) : Value();
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
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op->getLoc();
  RankedTensorType resultType = reified->type;
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
      return unsupportedElementType(
          op, (operands.empty() ? resultType.getElementType()
                                : tensorType(operands[0]).getElementType()));
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
        Value dv = dimValue(b, loc, v, j);
        Value rv = toValue(b, loc, reified->dims[j + shift]);
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

  Value dest = reified->empty(b, loc);
  bool anyMaybe = llvm::any_of(kinds, [](ArrayRef<DimKind> k) {
    return llvm::is_contained(k, DimKind::Maybe);
  });
  if (!anyMaybe)
    return buildBroadcastGeneric(b, loc, operands, kinds, dest, fn,
                                 /*extractMaybe=*/false);

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
      Value r = toValue(b, loc, reified->dims[j + shift]);
      Value eq = m.cmp(arith::CmpIPredicate::eq, d, r);
      cond = cond ? arith::AndIOp::create(b, loc, cond, eq).getResult() : eq;
    }
  }
  auto ifOp = scf::IfOp::create(
      b, loc, cond,
      [&](OpBuilder &tb, Location tl) {
        Value r = buildBroadcastGeneric(tb, tl, operands, kinds, dest, fn,
                                        /*extractMaybe=*/false);
        scf::YieldOp::create(tb, tl, r);
      },
      [&](OpBuilder &eb, Location el) {
        Value r = buildBroadcastGeneric(eb, el, operands, kinds, dest, fn,
                                        /*extractMaybe=*/true);
        scf::YieldOp::create(eb, el, r);
      });
  return ifOp.getResult(0);
}

/// Makes the loop nest that computes `v` write operand `idx` of `op`
/// (disc-fusion's kInPlaceOperandAttrName, Fusion.h): its fresh
/// destination becomes the operand, which the nest reads element by
/// element and nothing reads later, so bufferization writes the operand's
/// buffer. The memory model counts no buffer for the result, so an op it
/// cannot rewrite is an error, never a difference between predicted and
/// measured peak.
LogicalResult writeIntoOperand(Operation *op, Value v, int64_t idx) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  Value dest = op->getOperand(idx);
  // Through fused producers marked in place (their generic names the input
  // the root writes, markInPlaceInput): the root writes that input, and
  // disc-fuse-marked-producers then fuses the producers into the root.
  for (int guard = 0; guard < 64; ++guard) {
    auto producer = dest.getDefiningOp<linalg::GenericOp>();
    auto in =
        producer ? producer->getAttrOfType<IntegerAttr>(kInPlaceOperandAttrName)
                 : IntegerAttr();
    if (!in || !producer->hasAttr(kFusedAttrName))
      break;
    dest = producer.getDpsInputOperand(in.getInt())->get();
  }
  OpOperand *init = generic && generic->getNumResults() == 1
                        ? generic.getDpsInitOperand(0)
                        : nullptr;
  auto empty = init ? init->get().getDefiningOp<tensor::EmptyOp>() : nullptr;
  if (!empty || !empty->hasOneUse() ||
      generic.payloadUsesValueFromOperand(init) ||
      dest.getType() != empty.getType())
    return op->emitOpError("is marked to write into operand ")
           << idx << " but does not lower to one loop nest with a fresh "
           << "destination of its type";
  init->set(dest);
  empty->erase();
  return success();
}

/// A fused producer `op` (lowered to `generic`) marked in place on operand
/// `idx`: its root writes that operand's buffer. Names the generic's input
/// that reads it element for element (kInPlaceOperandAttrName on the
/// generic), for writeIntoOperand at the root.
LogicalResult markInPlaceInput(Operation *op, linalg::GenericOp generic,
                               int64_t idx) {
  Value operand = op->getOperand(idx);
  for (OpOperand *in : generic.getDpsInputOperands())
    if (in->get() == operand &&
        generic.getMatchingIndexingMap(in).isIdentity()) {
      generic->setAttr(kInPlaceOperandAttrName,
                       IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                        in->getOperandNumber()));
      return success();
    }
  return op->emitOpError("is marked to pass operand ")
         << idx << "'s buffer to its consumer but does not read it "
         << "element for element";
}

} // namespace

FailureOr<Value>
mlir::disc::lowering::lowerElementwiseFamily(OpBuilder &b, Operation *op,
                                             LoweringState &state) {
  const BroadcastFacts *facts = state.facts;
  RuntimeChecks &checks = state.checks;
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
  // A cast of an integer shape value to a float that the shape analysis
  // carries as that integer: the float must represent it exactly.
  if (auto it = state.exactCastChecks.find(op);
      it != state.exactCastChecks.end()) {
    Type elt = getElementTypeOrSelf(op->getResult(0).getType());
    int64_t limit = *SymbolicShapeContext::exactIntegerLimit(elt);
    Location loc = op->getLoc();
    IMath m{b, loc};
    std::string what;
    llvm::raw_string_ostream os(what);
    os << "value {0} is outside [-" << limit << ", " << limit
       << "], the integers " << elt
       << " represents exactly (the compiled shapes assume it is exact)";
    Value in = op->getOperand(0);
    ArrayRef<int64_t> shape = tensorType(in).getShape();
    for (int64_t i : it->second) {
      // Element `i` of the flattened (small, static) operand.
      SmallVector<Value> idx(shape.size());
      for (int64_t d = (int64_t)shape.size() - 1, rest = i; d >= 0; --d) {
        idx[d] = m.c(rest % shape[d]);
        rest /= shape[d];
      }
      Value e = tensor::ExtractOp::create(b, loc, in, idx);
      Value s = arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
      Value le = m.cmp(arith::CmpIPredicate::sle, s, m.c(limit));
      Value ge = m.cmp(arith::CmpIPredicate::sge, s, m.c(-limit));
      Value ok = b.createOrFold<arith::AndIOp>(loc, le, ge);
      checks.check(b, loc, ok, "Cast", what, {s});
    }
  }
  if (op->hasTrait<OpTrait::disc::Elementwise>()) {
    FailureOr<Value> v = elementwise(op);
    auto inPlace = op->getAttrOfType<IntegerAttr>(kInPlaceOperandAttrName);
    if (succeeded(v) && inPlace && !isFusedProducer(op))
      if (failed(writeIntoOperand(op, *v, inPlace.getInt())))
        return failure();
    if (failed(v) || !isFusedProducer(op))
      return v;
    // disc-fusion: the CPU pipeline fuses the tagged generic into
    // its consumer; the memory model already left it out.
    auto generic = v->getDefiningOp<linalg::GenericOp>();
    if (!generic)
      return op->emitOpError("is marked for fusion but its lowering "
                             "is versioned on the run-time shapes");
    generic->setAttr(kFusedAttrName, b.getUnitAttr());
    if (inPlace && failed(markInPlaceInput(op, generic, inPlace.getInt())))
      return failure();
    return v;
  }
  auto e = dyn_cast<ExpandOp>(op);
  if (!e)
    return noLowering(op);
  // Expand / ConstantOfShape: shape entries are sizes (>= 0).
  Location loc = e.getLoc();
  IMath m{b, loc};
  for (int64_t i = 0, n = tensorType(e.getShape()).getDimSize(0); i < n; ++i) {
    if (state.provenReshapes.contains(e)) {
      checks.countProven();
      continue;
    }
    Value s = foldedElementAsIndex(b, loc, e.getShape(), i);
    if (isKnownNonNegative(s)) {
      checks.countProven();
      continue;
    }
    checks.check(b, loc, m.cmp(arith::CmpIPredicate::sge, s, m.c(0)), "Expand",
                 "shape[" + std::to_string(i) + "] is {0}", {s});
  }
  return lowerElementwise(
      b, e, ValueRange{e.getOperand()},
      [](OpBuilder &, Location, ValueRange a, Type) { return a[0]; }, facts,
      checks, /*resultFromOperands=*/false);
}

//===- Elementwise.cpp - ONNX elementwise and math ops
//----------------------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace mlir::disc::onnx_import {

LogicalResult Importer::importElementwiseBinary(StringRef op) {
  Value l = in(0), r = in(1);
  if (op == "Pow" && elt(l) != elt(r))
    r = convert(r, elt(l), isUns(r), isUns(l));
  r = legacyBroadcast(l, r);
  if (::mlir::failed(sameElt(l, r)))
    return failure();
  if (op == "Pow" && ::mlir::failed(rejectUnsigned(l)))
    return failure();
  if (op == "Div" && isUns(l)) {
    FailureOr<Value> wl = widen(l), wr = widen(r);
    if (::mlir::failed(wl) || ::mlir::failed(wr))
      return failure();
    Value q = binary<DivOp>(*wl, *wr);
    if (!q)
      return failure();
    out(0, convert(q, elt(l), false, true));
    return success();
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
    return finish(binaryFolded(op, l, r));
  return finish(binaryNamed(op, l, r));
}

LogicalResult Importer::importVariadic(StringRef op) {
  Value acc = in(0);
  Type origType = elt(acc);
  bool wide = (op == "Max" || op == "Min") && isUns(acc);
  // uint64 cannot be widened: compare with the sign bit flipped instead.
  bool u64 = wide && elt(acc).getIntOrFloatBitWidth() >= 64;
  if (u64)
    wide = false;
  if (wide) {
    FailureOr<Value> w = widen(acc);
    if (::mlir::failed(w))
      return failure();
    acc = *w;
  }
  if (op == "Mean" && ::mlir::failed(requireFloat(acc)))
    return failure();
  for (unsigned i = 1; i < numIn(); ++i) {
    Value v = in(i);
    if (!v)
      return err() << "input #" << i << " is missing";
    if (elt(v) != origType)
      return err() << "operand element types differ: " << origType << " vs "
                   << elt(v);
    if (wide)
      v = convert(v, elt(acc), true, false);
    if (u64)
      acc = uint64MaxMin(op == "Max", acc, v);
    else
      acc = binaryNamed(op == "Max" || op == "Min" ? op : "Add", acc, v);
    if (!acc)
      return failure();
  }
  if (op == "Mean" && numIn() > 1)
    acc = binary<DivOp>(acc, scalarLike(acc, numIn()));
  if (!acc)
    return failure();
  if (wide)
    acc = convert(acc, origType, false, true);
  return finish(acc);
}

LogicalResult Importer::importMod(StringRef) {
  Value a = in(0), c = in(1);
  if (::mlir::failed(sameElt(a, c)))
    return failure();
  Type origType = elt(a);
  bool wide = isUns(a);
  if (wide && origType.getIntOrFloatBitWidth() >= 64) {
    // uint64: fmod does not matter for unsigned operands.
    Value r = uint64Rem(a, c);
    if (!r)
      return failure();
    out(0, r);
    return success();
  }
  if (wide) {
    FailureOr<Value> wa = widen(a), wc = widen(c);
    if (::mlir::failed(wa) || ::mlir::failed(wc))
      return failure();
    a = *wa;
    c = *wc;
  }
  int64_t fmod = aInt("fmod", 0);
  if (isFloat(a) && fmod != 1)
    return err() << "fmod must be 1 for floating-point inputs";
  Value r = binary<RemOp>(a, c);
  if (!r)
    return failure();
  // Known signed integer operands (a padding computed from static dims, as
  // torch.onnx exports Swin's `(w - W % w) % w`): the result is a constant
  // and its known values follow it into the shape computation.
  if (!wide && !isFloat(a))
    if (std::optional<Dims> k = knownMod(a, c, fmod == 1)) {
      Value folded = setKnown(r, *k);
      if (folded.getDefiningOp<ConstantOp>()) {
        out(0, folded);
        return success();
      }
    }
  if (fmod != 1) {
    // Floor modulo: r + c where r != 0 and sign(r) != sign(c).
    Value zero = scalarLike(a, 0);
    Value rNonZero = compare(CompareDirection::NE, r, zero);
    Value rNeg = compare(CompareDirection::LT, r, zero);
    Value cNeg = compare(CompareDirection::LT, c, zero);
    Value signDiff = compare(CompareDirection::NE, rNeg, cNeg);
    Value fix = binary<AndOp>(rNonZero, signDiff);
    Value sum = binary<AddOp>(r, c);
    if (!fix || !sum)
      return failure();
    r = select(fix, sum, r);
  }
  if (wide && r)
    r = convert(r, origType, false, true);
  out(0, r);
  return success();
}

std::optional<Dims> Importer::knownMod(Value a, Value c, bool truncated) {
  std::optional<SmallVector<int64_t>> ka = knownInts(a), kc = knownInts(c);
  if (!ka || !kc || ka->empty() || kc->empty())
    return std::nullopt;
  size_t n = std::max(ka->size(), kc->size());
  if ((ka->size() != n && ka->size() != 1) ||
      (kc->size() != n && kc->size() != 1))
    return std::nullopt;
  Dims k;
  for (size_t i = 0; i < n; ++i) {
    int64_t x = (*ka)[ka->size() == 1 ? 0 : i];
    int64_t m = (*kc)[kc->size() == 1 ? 0 : i];
    if (m == 0 || (m == -1 && x == std::numeric_limits<int64_t>::min()))
      return std::nullopt; // Left to the run time (undefined for integers).
    int64_t q = x % m;
    // ONNX Mod, fmod = 0: the remainder takes the divisor's sign.
    if (!truncated && q != 0 && ((q < 0) != (m < 0)))
      q += m;
    k.push_back(Dim(q));
  }
  return k;
}

LogicalResult Importer::importUnary(StringRef op) {
  Value x = in(0);
  if (op == "Not") {
    Value r = unary<NotOp>(x);
    if (std::optional<Dims> k = known(x); k && allInts(*k)) {
      Dims n;
      for (const Dim &d : *k)
        n.push_back(Dim(d.size != 0 ? 0 : 1));
      r = setKnown(r, n);
    }
    out(0, r);
    return success();
  }
  if (op == "IsNaN" || op == "IsInf") {
    Value r = op == "IsNaN" ? mk<IsNanOp>(dims(x), b.getI1Type(), x)
                            : mk<IsInfOp>(dims(x), b.getI1Type(), x,
                                          aInt("detect_positive", 1) != 0,
                                          aInt("detect_negative", 1) != 0);
    out(0, r);
    return success();
  }
  if (op == "Abs" || op == "Neg" || op == "Sign") {
    if (isUns(x)) {
      if (op == "Abs") {
        out(0, x);
        return success();
      }
      return rejectUnsigned(x);
    }
    Value r = op == "Abs"   ? unary<AbsOp>(x)
              : op == "Neg" ? unary<NegOp>(x)
                            : unary<SignOp>(x);
    if (op == "Neg")
      if (std::optional<Dims> k = known(x)) {
        Dims nk;
        for (const Dim &d : *k)
          nk.push_back(d.isStatic() ? Dim(-d.size) : Dim());
        r = setKnown(r, nk);
      }
    out(0, r);
    return success();
  }
  // Float-only ops with a `disc` op of their own.
  using UnaryFn = Value (Importer::*)(Value);
  static const llvm::StringMap<UnaryFn> floatOps = {
      {"Exp", &Importer::unary<ExpOp>},
      {"Log", &Importer::unary<LogOp>},
      {"Sqrt", &Importer::unary<SqrtOp>},
      {"Reciprocal", &Importer::unary<ReciprocalOp>},
      {"Tanh", &Importer::unary<TanhOp>},
      {"Sigmoid", &Importer::unary<LogisticOp>},
      {"Erf", &Importer::unary<ErfOp>},
      {"Floor", &Importer::unary<FloorOp>},
      {"Ceil", &Importer::unary<CeilOp>},
      {"Round", &Importer::unary<RoundOp>},
      {"Sin", &Importer::unary<SinOp>},
      {"Cos", &Importer::unary<CosOp>},
      {"Tan", &Importer::unary<TanOp>},
      {"Asin", &Importer::unary<AsinOp>},
      {"Acos", &Importer::unary<AcosOp>},
      {"Atan", &Importer::unary<AtanOp>},
      {"Sinh", &Importer::unary<SinhOp>},
      {"Cosh", &Importer::unary<CoshOp>},
      {"Asinh", &Importer::unary<AsinhOp>},
      {"Acosh", &Importer::unary<AcoshOp>},
      {"Atanh", &Importer::unary<AtanhOp>},
  };
  out(0, (this->*floatOps.lookup(op))(x));
  return success();
}

LogicalResult Importer::importActivation(StringRef op) {
  Value x = in(0);
  if (op == "Relu") {
    out(0, binary<MaxOp>(x, scalarLike(x, 0)));
    return success();
  }
  if (op == "PRelu") {
    Value slope = in(1);
    if (::mlir::failed(sameElt(x, slope)) || ::mlir::failed(rejectUnsigned(x)))
      return failure();
    // PRelu < 7: a 1-D slope is per channel (dim 1).
    if (opset < 7 && rank(slope) == 1 && rank(x) > 2 &&
        !(tt(slope).getDimSize(0) == 1)) {
      SmallVector<TDim> t = {tdimOf(slope, 0)};
      t.append(rank(x) - 2, tdimConst(1));
      slope = reshapeT(slope, t);
    }
    Value neg = compare(CompareDirection::LT, x, scalarLike(x, 0));
    Value scaled = binary<MulOp>(x, slope);
    if (!neg || !scaled)
      return failure();
    Value r = select(neg, scaled, x);
    if (!r)
      return failure();
    out(0, r);
    return success();
  }
  auto s = [&](double v) { return scalarLike(x, v); };
  Value zero = s(0);
  Value r;
  if (op == "LeakyRelu") {
    float alpha = aFloat("alpha", 0.01f);
    r = select(compare(CompareDirection::LT, x, zero),
               binary<MulOp>(x, s(alpha)), x);
  } else if (op == "Elu" || op == "Selu") {
    float alpha =
        aFloat("alpha", op == "Elu" ? 1.0f : 1.67326319217681884765625f);
    Value em1 = binary<SubOp>(unary<ExpOp>(x), s(1));
    Value neg = binary<MulOp>(em1, s(alpha));
    CompareDirection dir =
        op == "Elu" ? CompareDirection::LT : CompareDirection::LE;
    r = select(compare(dir, x, zero), neg, x);
    if (op == "Selu")
      r = binary<MulOp>(r, s(aFloat("gamma", 1.05070102214813232421875f)));
  } else if (op == "Celu") {
    float alpha = aFloat("alpha", 1.0f);
    Value e = unary<ExpOp>(binary<DivOp>(x, s(alpha)));
    Value neg = binary<MulOp>(binary<SubOp>(e, s(1)), s(alpha));
    r = binary<AddOp>(binary<MaxOp>(x, zero), binary<MinOp>(neg, zero));
  } else if (op == "Softplus" || op == "Mish") {
    // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)).
    Value t = unary<ExpOp>(unary<NegOp>(unary<AbsOp>(x)));
    Value sp = binary<AddOp>(binary<MaxOp>(x, zero),
                             unary<LogOp>(binary<AddOp>(t, s(1))));
    r = op == "Softplus" ? sp : binary<MulOp>(x, unary<TanhOp>(sp));
  } else if (op == "Softsign") {
    r = binary<DivOp>(x, binary<AddOp>(unary<AbsOp>(x), s(1)));
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    float alpha = op == "HardSigmoid" ? aFloat("alpha", 0.2f) : 1.0f / 6.0f;
    float beta = op == "HardSigmoid" ? aFloat("beta", 0.5f) : 0.5f;
    Value lin = binary<AddOp>(binary<MulOp>(x, s(alpha)), s(beta));
    Value hs = binary<MaxOp>(binary<MinOp>(lin, s(1)), zero);
    r = op == "HardSigmoid" ? hs : binary<MulOp>(x, hs);
  } else if (op == "ThresholdedRelu") {
    float alpha = aFloat("alpha", 1.0f);
    r = select(compare(CompareDirection::GT, x, s(alpha)), x, zero);
  }
  return finish(r);
}

LogicalResult Importer::importClip(StringRef) {
  Value x = in(0);
  Value lo, hi;
  if (opset < 11) {
    if (attr("min"))
      lo = scalarLike(x, aFloat("min", 0));
    if (attr("max"))
      hi = scalarLike(x, aFloat("max", 0));
  } else {
    lo = in(1);
    hi = in(2);
    for (Value v : {lo, hi})
      if (v && ::mlir::failed(sameElt(x, v)))
        return failure();
  }
  Value r = x;
  if (lo)
    r = binary<MaxOp>(r, lo);
  if (r && hi)
    r = binary<MinOp>(r, hi);
  return finish(r);
}

LogicalResult Importer::importCompare(StringRef op) {
  Value l = in(0), r = in(1);
  if (::mlir::failed(sameElt(l, r)))
    return failure();
  r = legacyBroadcast(l, r);
  auto dir = llvm::StringSwitch<CompareDirection>(op)
                 .Case("Less", CompareDirection::LT)
                 .Case("LessOrEqual", CompareDirection::LE)
                 .Case("Greater", CompareDirection::GT)
                 .Case("GreaterOrEqual", CompareDirection::GE)
                 .Default(CompareDirection::EQ);
  if (op != "Equal" && (isUns(l) || isUns(r))) {
    FailureOr<Value> wl = widen(l), wr = widen(r);
    if (::mlir::failed(wl) || ::mlir::failed(wr))
      return failure();
    l = *wl;
    r = *wr;
  }
  Value res = compare(dir, l, r);
  // Comparisons of known shape values (`Shape(x)[-1] == 1` before an If)
  // are known too.
  std::optional<Dims> kl = known(l), kr = known(r);
  if (res && kl && kr && allInts(*kl) && allInts(*kr) && rank(res) <= 1 &&
      tt(res).hasStaticShape()) {
    int64_t n = tt(res).getNumElements();
    if ((kl->size() == 1 || (int64_t)kl->size() == n) &&
        (kr->size() == 1 || (int64_t)kr->size() == n)) {
      Dims k;
      for (int64_t i = 0; i < n; ++i) {
        int64_t a = (*kl)[kl->size() == 1 ? 0 : i].size;
        int64_t c = (*kr)[kr->size() == 1 ? 0 : i].size;
        bool v = dir == CompareDirection::LT   ? a < c
                 : dir == CompareDirection::LE ? a <= c
                 : dir == CompareDirection::GT ? a > c
                 : dir == CompareDirection::GE ? a >= c
                                               : a == c;
        k.push_back(Dim(v ? 1 : 0));
      }
      res = setKnown(res, k);
    }
  }
  return finish(res);
}

LogicalResult Importer::importWhere(StringRef) {
  Value p = in(0), t = in(1), f = in(2);
  if (!elt(p).isInteger(1))
    return err() << "condition must be bool";
  if (::mlir::failed(sameElt(t, f)))
    return failure();
  Value r = select(p, t, f);
  if (!r)
    return failure();
  // Where on known shape vectors with a known condition.
  std::optional<Dims> kp = known(p), kt = known(t), kf = known(f);
  if (kp && kt && kf && allInts(*kp) && rank(r) <= 1 &&
      tt(r).hasStaticShape()) {
    int64_t n = tt(r).getNumElements();
    auto at = [&](const Dims &k, int64_t i) {
      return k[k.size() == 1 ? 0 : i];
    };
    if ((int64_t)kp->size() <= n && (int64_t)kt->size() <= n &&
        (int64_t)kf->size() <= n) {
      Dims k;
      for (int64_t i = 0; i < n; ++i)
        k.push_back(at(*kp, i).size ? at(*kt, i) : at(*kf, i));
      r = setKnown(r, k);
    }
  }
  out(0, r);
  return success();
}

LogicalResult Importer::importCast(StringRef op) {
  Value x = in(0);
  Type to;
  bool uns = false;
  if (op == "CastLike") {
    Value like = in(1);
    if (!like)
      return err() << "expects two inputs";
    to = elt(like);
    uns = isUns(like);
  } else {
    const onnx::AttributeProto *a = attr("to");
    if (!a)
      return err() << "missing attribute 'to'";
    int64_t t = 0;
    if (a->type() == onnx::AttributeProto_AttributeType_STRING) {
      onnx::TensorProto_DataType parsed;
      if (!onnx::TensorProto_DataType_Parse(a->s(), &parsed))
        return err() << "unknown target type '" << a->s() << "'";
      t = parsed;
    } else {
      t = aInt("to", 0);
    }
    to = convertElementType(&ctx, (int32_t)t, uns);
    if (!to)
      return err() << "unsupported target type " << elementTypeName((int32_t)t);
  }
  out(0, convert(x, to, isUns(x), uns));
  return success();
}

/// ONNX Dropout (opsets 1-13). Inference (no `training_mode`, or a
/// constant false): the identity and an all-true mask. Training mode
/// (opset 12+, a constant or run-time bool): `mask = u >= ratio` with `u`
/// the uniform draws of `disc.random_uniform` seeded with the `seed`
/// attribute (0 when absent: the same mask in every run), compared in f64
/// as the ONNX reference (NumPy) does, and `output = x * mask / (1 -
/// ratio)`; with a run-time `training_mode` that is false at run time the
/// output is `x` and the mask all true.
LogicalResult Importer::importDropout(StringRef) {
  Value x = in(0);
  auto inference = [&]() -> LogicalResult {
    out(0, x);
    if (wantOut(1)) {
      Type maskType = opset >= 10 ? b.getI1Type() : elt(x);
      Value one = constScalar(maskType, 1);
      out(1, expandTo(one, shapeOf(x), dims(x)));
    }
    return success();
  };
  if (opset < 12 || !has(2))
    return inference();
  Value t = in(2);
  if (!elt(t).isInteger(1) || !maybeScalar(t))
    return err() << "training_mode must be a bool scalar, got " << t.getType();
  std::optional<SmallVector<int64_t>> training = knownInts(t);
  if (training && training->size() == 1 && (*training)[0] == 0)
    return inference();
  if (::mlir::failed(requireFloat(x)))
    return failure();
  Value r = has(1) ? in(1) : constScalar(elt(x), 0.5);
  if (!isFloat(r) || !maybeScalar(r))
    return err() << "ratio must be a floating-point scalar, got "
                 << r.getType();
  if (rank(r) != 0)
    r = reshapeToScalar(r);
  Value u = mk<RandomUniformOp>(dims(x), b.getF64Type(), shapeOf(x),
                                (int64_t)aInt("seed", 0));
  Value keep = compare(CompareDirection::GE, u,
                       convert(r, b.getF64Type(), false, false));
  Value rx = convert(r, elt(x), false, false);
  Value y = binary<DivOp>(binary<MulOp>(x, convert(keep, elt(x), false, false)),
                          binary<SubOp>(scalarLike(x, 1.0), rx));
  Value mask = keep;
  if (!training) {
    // training_mode known only at run time.
    if (rank(t) != 0)
      t = reshapeToScalar(t);
    y = select(t, y, x);
    mask = binary<OrOp>(keep, unary<NotOp>(t));
  }
  if (!y || !mask)
    return failure();
  out(0, y);
  out(1, mask);
  return success();
}

LogicalResult Importer::importShrink(StringRef) {
  Value x = in(0);
  double lambd = aFloat("lambd", 0.5f), bias = aFloat("bias", 0.0f);
  Value lo = compare(CompareDirection::LT, x, scalarLike(x, -lambd));
  Value hi = compare(CompareDirection::GT, x, scalarLike(x, lambd));
  Value y = select(
      lo, binary<AddOp>(x, scalarLike(x, bias)),
      select(hi, binary<SubOp>(x, scalarLike(x, bias)), scalarLike(x, 0)));
  return finish(y);
}

LogicalResult Importer::importBitShift(StringRef) {
  Value x = in(0), y = in(1);
  if (::mlir::failed(sameElt(x, y)))
    return failure();
  if (!isa<IntegerType>(elt(x)) || elt(x).isInteger(1))
    return err() << "expects unsigned integer inputs";
  std::string dir = aStr("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return err() << "attribute 'direction' must be LEFT or RIGHT (opset "
                 << opset << "), got '" << dir << "'";
  Value r =
      dir == "LEFT" ? binary<ShiftLeftOp>(x, y) : binary<ShiftRightOp>(x, y);
  return finish(r);
}

} // namespace mlir::disc::onnx_import

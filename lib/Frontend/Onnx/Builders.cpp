//===- Builders.cpp - shared builders of the ONNX importer
//------------------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
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

FailureOr<Dims> Importer::broadcastDims(ArrayRef<Dims> all) {
  size_t r = 0;
  for (const Dims &d : all)
    r = std::max(r, d.size());
  Dims out(r, Dim(1));
  SmallVector<bool> first(r, true);
  for (const Dims &ds : all) {
    size_t shift = r - ds.size();
    for (size_t i = 0; i < ds.size(); ++i) {
      Dim &o = out[i + shift];
      const Dim &d = ds[i];
      if (first[i + shift]) {
        o = d;
        first[i + shift] = false;
        continue;
      }
      if (d.isStatic() && d.size == 1)
        continue;
      if (o.isStatic() && o.size == 1) {
        o = d;
        continue;
      }
      if (o.isStatic() && d.isStatic()) {
        if (o.size != d.size) {
          err() << "incompatible dims " << o.size << " and " << d.size
                << " for broadcasting";
          return failure();
        }
        continue;
      }
      if (d.isStatic()) { // o dynamic, d static non-1
        o = d;
        continue;
      }
      if (o.isStatic()) // o static non-1, d dynamic
        continue;
      if (!(o.name && o.name == d.name))
        o = Dim(); // two different dynamic dims: unknown
    }
  }
  return out;
}

std::optional<Dims> Importer::known(Value v) {
  auto it = knownVals.find(v);
  if (it != knownVals.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
      type.getNumElements() > kMaxKnown)
    return std::nullopt;
  DenseElementsAttr attr;
  if (auto c = v.getDefiningOp<ConstantOp>())
    attr = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  // Unsigned values (uint8 zero points >= 128, ...) read zero-extended.
  bool zext = isUns(v);
  Dims out;
  for (const APInt &a : attr.getValues<APInt>())
    out.push_back(Dim(a.getBitWidth() == 1 || zext ? (int64_t)a.getZExtValue()
                                                   : a.getSExtValue()));
  knownVals[v] = out;
  return out;
}

Value Importer::setKnown(Value v, const Dims &k) {
  RankedTensorType type = tt(v);
  if (!isa<IntegerType>(type.getElementType()) || type.getRank() > 1 ||
      (int64_t)k.size() > kMaxKnown || !type.hasStaticShape() ||
      type.getNumElements() != (int64_t)k.size())
    return v;
  if (allInts(k) && !v.getDefiningOp<ConstantOp>()) {
    SmallVector<APInt> vals;
    unsigned w = type.getElementType().getIntOrFloatBitWidth();
    for (const Dim &d : k)
      vals.push_back(
          APInt(w, d.size, /*isSigned=*/true, /*implicitTrunc=*/true));
    Value c = constDense(DenseElementsAttr::get(type, vals));
    if (unsignedVals.contains(v))
      unsignedVals.insert(c);
    if (Operation *op = v.getDefiningOp())
      if (op->use_empty() && op->getNumResults() == 1)
        eraseOp(op);
    knownVals[c] = k;
    return c;
  }
  knownVals[v] = k;
  return v;
}

std::optional<SmallVector<APInt>> Importer::constElements(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c || !type || !type.hasStaticShape() ||
      type.getNumElements() > kMaxKnown ||
      !isa<IntegerType>(type.getElementType()))
    return std::nullopt;
  auto attr = dyn_cast<DenseIntElementsAttr>(c.getValue());
  if (!attr)
    return std::nullopt;
  return llvm::to_vector(attr.getValues<APInt>());
}

Value Importer::foldTo(Value v, ArrayRef<APInt> vals) {
  RankedTensorType type = tt(v);
  if (!type.hasStaticShape() || type.getNumElements() != (int64_t)vals.size())
    return v;
  Value c = constDense(DenseElementsAttr::get(type, vals));
  if (unsignedVals.contains(v))
    unsignedVals.insert(c);
  if (Operation *op = v.getDefiningOp())
    if (op->use_empty() && op->getNumResults() == 1)
      eraseOp(op);
  return c;
}

Value Importer::constScalar(Type e, double v) {
  auto type = RankedTensorType::get({}, e);
  Attribute a;
  if (isa<FloatType>(e))
    a = FloatAttr::get(e, v);
  else {
    unsigned w = e.getIntOrFloatBitWidth();
    a = IntegerAttr::get(e, APInt(w, (int64_t)v, /*isSigned=*/w > 1,
                                  /*implicitTrunc=*/true));
  }
  Value c = constDense(DenseElementsAttr::get(type, a));
  if (isa<IntegerType>(e))
    knownVals[c] = Dims{Dim((int64_t)v)};
  return c;
}

Value Importer::constI64(ArrayRef<int64_t> vals) {
  auto type = RankedTensorType::get({(int64_t)vals.size()}, b.getI64Type());
  Value c = constDense(DenseIntElementsAttr::get(type, vals));
  if ((int64_t)vals.size() <= kMaxKnown) {
    Dims k;
    for (int64_t x : vals)
      k.push_back(Dim(x));
    knownVals[c] = k;
  }
  return c;
}

Value Importer::shapeOf(Value x) {
  Dims ds = dims(x);
  if (tt(x).hasStaticShape())
    return constI64(tt(x).getShape());
  auto it = shapeCache.find(x);
  if (it != shapeCache.end())
    return it->second;
  Value s = ShapeOfOp::create(
                b, loc, RankedTensorType::get({rank(x)}, b.getI64Type()), x)
                .getResult();
  knownVals[s] = ds;
  shapeCache[x] = s;
  return s;
}

Value Importer::dimOf(Value x, int64_t i) {
  Dim d = dims(x)[i];
  if (d.isStatic())
    return constI64({d.size});
  Value s = shapeOf(x);
  Value g = GatherOp::create(b, loc, RankedTensorType::get({1}, b.getI64Type()),
                             s, constI64({i}), (uint64_t)0)
                .getResult();
  knownVals[g] = Dims{d};
  return g;
}

TDim Importer::tdimMul(const TDim &a, const TDim &c) {
  if (a.d.isStatic() && c.d.isStatic())
    return tdimConst(a.d.size * c.d.size);
  if (a.d.isStatic() && a.d.size == 1)
    return c;
  if (c.d.isStatic() && c.d.size == 1)
    return a;
  Value av = a.v ? a.v : constI64({a.d.size});
  Value cv = c.v ? c.v : constI64({c.d.size});
  Value m =
      MulOp::create(b, loc, RankedTensorType::get({1}, b.getI64Type()), av, cv)
          .getResult();
  knownVals[m] = Dims{Dim()};
  return {Dim(), m};
}

Value Importer::concatI64(ArrayRef<Value> parts) {
  if (parts.size() == 1)
    return parts.front();
  Dims k;
  bool allKnown = true;
  int64_t len = 0;
  for (Value p : parts) {
    int64_t n = tt(p).getDimSize(0);
    if (ShapedType::isDynamic(n)) {
      allKnown = false;
      len = kDyn;
      continue;
    }
    if (len != kDyn)
      len += n;
    std::optional<Dims> pk = known(p);
    if (pk)
      k.append(pk->begin(), pk->end());
    else
      k.append(n, Dim());
  }
  if (allKnown && allInts(k)) {
    SmallVector<int64_t> vals;
    for (const Dim &d : k)
      vals.push_back(d.size);
    return constI64(vals);
  }
  Value c = ConcatenateOp::create(b, loc,
                                  RankedTensorType::get({len}, b.getI64Type()),
                                  parts, (uint64_t)0)
                .getResult();
  if (allKnown)
    knownVals[c] = k;
  return c;
}

Value Importer::shapeFrom(ArrayRef<TDim> t) {
  SmallVector<Value> parts;
  SmallVector<int64_t> pending;
  auto flush = [&] {
    if (!pending.empty())
      parts.push_back(constI64(pending));
    pending.clear();
  };
  for (const TDim &d : t) {
    if (d.d.isStatic() || !d.v) {
      pending.push_back(d.d.isStatic() ? d.d.size : -1);
      continue;
    }
    flush();
    parts.push_back(d.v);
  }
  flush();
  if (parts.empty())
    return constI64({});
  return concatI64(parts);
}

Value Importer::reshapeT(Value x, ArrayRef<TDim> t) {
  Dims outDims;
  for (const TDim &d : t)
    outDims.push_back(d.d);
  Dims inDims = dims(x);
  if (inDims.size() == outDims.size() &&
      llvm::all_of(llvm::zip(inDims, outDims),
                   [](auto p) { return std::get<0>(p) == std::get<1>(p); }))
    return x;
  // A constant reshaped to static dims is a constant (a Conv bias [C] as
  // [C, 1, 1]: the library-call post-ops take it as the call's bias).
  if (auto c = x.getDefiningOp<ConstantOp>();
      c && !c->hasAttr(kParamAttrName) &&
      llvm::all_of(outDims, [](const Dim &d) { return d.isStatic(); })) {
    SmallVector<int64_t> shape;
    for (const Dim &d : outDims)
      shape.push_back(d.size);
    auto type = RankedTensorType::get(shape, elt(x));
    Attribute v = c.getValue();
    TypedAttr folded;
    if (auto d = dyn_cast<DenseElementsAttr>(v))
      folded = d.reshape(type);
    else if (auto r = dyn_cast<DenseResourceElementsAttr>(v))
      folded = DenseResourceElementsAttr::get(type, r.getRawHandle());
    if (folded && type.getNumElements() == tt(x).getNumElements()) {
      Value r = ConstantOp::create(b, loc, folded).getResult();
      if (isUns(x))
        unsignedVals.insert(r);
      return r;
    }
  }
  Value shape = shapeFrom(t);
  Value r =
      mk<DynamicReshapeOp>(outDims, elt(x), x, shape, /*allow_zero=*/true);
  if (isUns(x))
    unsignedVals.insert(r);
  if (std::optional<Dims> k = known(x))
    r = setKnown(r, *k);
  return r;
}

Value Importer::convert(Value v, Type to, bool unsSrc, bool unsDst) {
  if (elt(v) == to && unsSrc == unsDst)
    return v;
  Value r = mk<ConvertOp>(dims(v), to, v, unsSrc, unsDst);
  if (unsDst)
    unsignedVals.insert(r);
  if (isa<IntegerType>(to) && to.getIntOrFloatBitWidth() >= 32)
    if (std::optional<Dims> k = known(v))
      if (isa<IntegerType>(elt(v)))
        r = setKnown(r, *k);
  // To bool: non-zero is true (`Cast(Shape(state)[0])` before an If).
  if (to.isInteger(1) && isa<IntegerType>(elt(v)))
    if (std::optional<Dims> k = known(v); k && allInts(*k)) {
      Dims b;
      for (const Dim &d : *k)
        b.push_back(Dim(d.size != 0 ? 1 : 0));
      r = setKnown(r, b);
    }
  return r;
}

/// `x` sliced along every axis by run-time bounds (one i64 [1] tensor per
/// axis in each of `starts`, `ends` and `steps`); the result's dims are
/// unknown.
Value Importer::sliceEveryAxis(Value x, ArrayRef<Value> starts,
                               ArrayRef<Value> ends, ArrayRef<Value> steps) {
  int64_t r = rank(x);
  return mk<SliceOp>(Dims(r, Dim()), elt(x), x, concatI64(starts),
                     concatI64(ends), concatI64(steps),
                     llvm::to_vector(llvm::seq<int64_t>(0, r)));
}

/// The elementwise op of the ONNX binary op `op` (Add, Sub, Mul, Div, Pow,
/// And, Or, Xor, Max, Min).
Value Importer::binaryNamed(StringRef op, Value l, Value r) {
  using BinaryFn = Value (Importer::*)(Value, Value);
  BinaryFn fn = llvm::StringSwitch<BinaryFn>(op)
                    .Case("Add", &Importer::binary<AddOp>)
                    .Case("Sub", &Importer::binary<SubOp>)
                    .Case("Mul", &Importer::binary<MulOp>)
                    .Case("Div", &Importer::binary<DivOp>)
                    .Case("Pow", &Importer::binary<PowOp>)
                    .Case("And", &Importer::binary<AndOp>)
                    .Case("Or", &Importer::binary<OrOp>)
                    .Case("Xor", &Importer::binary<XorOp>)
                    .Case("Max", &Importer::binary<MaxOp>)
                    .Case("Min", &Importer::binary<MinOp>)
                    .Default(nullptr);
  assert(fn && "not an elementwise binary op");
  return (this->*fn)(l, r);
}

/// Elementwise integer arithmetic (Add, Sub, Mul, Div) with known-value
/// folding (shape math).
Value Importer::binaryFolded(StringRef op, Value l, Value r) {
  Value res = binaryNamed(op, l, r);
  if (!res || !isa<IntegerType>(elt(res)) || elt(res).isInteger(1))
    return res;
  std::optional<Dims> kl = known(l), kr = known(r);
  if (!kl || !kr)
    return res;
  size_t n = std::max(kl->size(), kr->size());
  if ((kl->size() != n && kl->size() != 1) ||
      (kr->size() != n && kr->size() != 1))
    return res;
  Dims k;
  for (size_t i = 0; i < n; ++i) {
    const Dim &a = (*kl)[kl->size() == 1 ? 0 : i];
    const Dim &c = (*kr)[kr->size() == 1 ? 0 : i];
    Dim o;
    if (a.isStatic() && c.isStatic()) {
      if (op == "Add")
        o = Dim(a.size + c.size);
      else if (op == "Sub")
        o = Dim(a.size - c.size);
      else if (op == "Mul")
        o = Dim(a.size * c.size);
      else if (c.size != 0)
        o = Dim(a.size / c.size);
    } else if (c.isStatic() &&
               (((op == "Add" || op == "Sub") && c.size == 0) ||
                ((op == "Mul" || op == "Div") && c.size == 1))) {
      o = a;
    } else if (a.isStatic() &&
               ((op == "Add" && a.size == 0) || (op == "Mul" && a.size == 1))) {
      o = c;
    }
    k.push_back(o);
  }
  return setKnown(res, k);
}

Value Importer::compare(CompareDirection dir, Value l, Value r) {
  if (!l || !r) // An operand already failed (with a diagnostic).
    return nullptr;
  FailureOr<Dims> d = broadcastDims({dims(l), dims(r)});
  if (::mlir::failed(d))
    return nullptr;
  return mk<CompareOp>(*d, b.getI1Type(), dir, l, r);
}

Value Importer::select(Value p, Value t, Value f) {
  if (!p || !t || !f) // An operand already failed (with a diagnostic).
    return nullptr;
  FailureOr<Dims> d = broadcastDims({dims(p), dims(t), dims(f)});
  if (::mlir::failed(d))
    return nullptr;
  Value r = mk<SelectOp>(*d, elt(t), p, t, f);
  return markUnsigned(r, isUns(t) || isUns(f));
}

Value Importer::reduce(ReduceKind kind, Value x, ArrayRef<int64_t> axes,
                       bool keep) {
  if (!x) // The operand already failed (with a diagnostic).
    return nullptr;
  Dims in = dims(x), outDims;
  for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
    if (llvm::is_contained(axes, i)) {
      if (keep)
        outDims.push_back(Dim(1));
    } else {
      outDims.push_back(in[i]);
    }
  }
  Value r = mk<ReduceOp>(outDims, elt(x), kind, x, axes, keep);
  return markUnsigned(r, isUns(x));
}

Value Importer::transpose(Value x, ArrayRef<int64_t> perm) {
  Dims in = dims(x), outDims;
  for (int64_t p : perm)
    outDims.push_back(in[p]);
  Value r = mk<TransposeOp>(outDims, elt(x), x, perm);
  return markUnsigned(r, isUns(x));
}

/// x[start:end] on a 1-D tensor with static length (start, end in range).
Value Importer::slice1D(Value x, int64_t start, int64_t end) {
  Value r = mk<SliceOp>(Dims{Dim(end - start)}, elt(x), x, constI64({start}),
                        constI64({end}), constI64({1}), ArrayRef<int64_t>{0});
  if (std::optional<Dims> k = known(x))
    r = setKnown(r, Dims(k->begin() + start, k->begin() + end));
  return r;
}

Value Importer::expandTo(Value x, Value shape, const Dims &shapeDims) {
  FailureOr<Dims> d = broadcastDims({dims(x), shapeDims});
  if (::mlir::failed(d))
    return nullptr;
  Value r = mk<ExpandOp>(*d, elt(x), x, shape);
  return markUnsigned(r, isUns(x));
}

FailureOr<SmallVector<int64_t>> Importer::normAxes(ArrayRef<int64_t> axes,
                                                   int64_t r, bool sort) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normAxis(a, r);
    if (::mlir::failed(n))
      return failure();
    if (llvm::is_contained(out, *n)) {
      err() << "axis " << a << " repeated";
      return failure();
    }
    out.push_back(*n);
  }
  if (sort)
    llvm::sort(out);
  return out;
}

/// The value of a 0-d or 1-element constant as double.
std::optional<double> scalarConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto d = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!d || d.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(d.getElementType()))
    return (*d.getValues<APFloat>().begin()).convertToDouble();
  return (double)(*d.getValues<APInt>().begin()).getSExtValue();
}

/// 0-d i64 tensor holding dim `i` of `x`.
Value Importer::dimScalar(Value x, int64_t i) {
  TDim t = tdimOf(x, i);
  if (t.d.isStatic())
    return constI64Scalar(t.d.size);
  return reshapeToScalar(t.v);
}

/// i64 iota over dim `axis` of `x`, reshaped to rank `r` with the iota at
/// position `pos` and 1 elsewhere.
Value Importer::iotaAlong(Value x, int64_t axis, int64_t r, int64_t pos) {
  Dim d = dims(x)[axis];
  Value io = mk<RangeOp>(Dims{d}, b.getI64Type(), constI64Scalar(0),
                         dimScalar(x, axis), constI64Scalar(1));
  SmallVector<TDim> t(r, tdimConst(1));
  t[pos] = tdimOf(io, 0);
  return reshapeT(io, t);
}

/// Inserts a size-1 dim at `pos`.
Value Importer::unsqueezeAt(Value x, int64_t pos) {
  SmallVector<TDim> t;
  for (int64_t i = 0; i < rank(x); ++i) {
    if (i == pos)
      t.push_back(tdimConst(1));
    t.push_back(tdimOf(x, i));
  }
  if (pos == rank(x))
    t.push_back(tdimConst(1));
  return reshapeT(x, t);
}

/// Unsigned comparison of i64 values: flipping the sign bit maps the
/// unsigned order onto the signed one.
Value Importer::unsignedCompare(CompareDirection dir, Value l, Value r) {
  if (!l || !r) // An operand already failed (with a diagnostic).
    return nullptr;
  Value m = constScalar(elt(l), (double)std::numeric_limits<int64_t>::min());
  return compare(dir, binary<XorOp>(l, m), binary<XorOp>(r, m));
}

Value Importer::uint64MaxMin(bool isMax, Value l, Value r) {
  Value pick = unsignedCompare(
      isMax ? CompareDirection::GT : CompareDirection::LT, l, r);
  return pick ? select(pick, l, r) : Value();
}

/// Unsigned 64-bit remainder from signed ops: for c >= 2^63 the quotient is
/// 0 or 1; otherwise q = ((a >> 1) / c) << 1 leaves a - q * c < 2 * c, fixed
/// by one conditional subtraction. A zero divisor gives 0.
Value Importer::uint64Rem(Value a, Value c) {
  Value zero = scalarLike(a, 0), one = scalarLike(a, 1);
  Value big = compare(CompareDirection::LT, c, zero);
  Value r1 = select(unsignedCompare(CompareDirection::GE, a, c),
                    binary<SubOp>(a, c), a);
  Value cs = select(compare(CompareDirection::EQ, c, zero), one, c);
  Value q =
      binary<ShiftLeftOp>(binary<DivOp>(binary<ShiftRightOp>(a, one), cs), one);
  Value rr = binary<SubOp>(a, binary<MulOp>(q, cs));
  Value r2 = select(unsignedCompare(CompareDirection::GE, rr, cs),
                    binary<SubOp>(rr, cs), rr);
  if (!big || !r1 || !r2)
    return nullptr;
  return select(big, r1, r2);
}

/// Float values of a constant (scales), if any.
std::optional<SmallVector<double>> constFloats(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto d = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!d || !isa<FloatType>(d.getElementType()))
    return std::nullopt;
  SmallVector<double> out;
  for (const APFloat &f : d.getValues<APFloat>())
    out.push_back(f.convertToDouble());
  return out;
}

} // namespace mlir::disc::onnx_import

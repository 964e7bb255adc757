//===- TensorShape.cpp - ONNX shape and data movement ops
//-------------------===//
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

LogicalResult Importer::importShape(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  int64_t start = 0, end = r;
  if (opset >= 15) {
    start = aInt("start", 0);
    end = aInt("end", r);
  }
  auto clampIdx = [&](int64_t v) {
    if (v < 0)
      v += r;
    return std::min(std::max<int64_t>(v, 0), r);
  };
  start = clampIdx(start);
  end = clampIdx(end);
  if (start >= end) {
    out(0, constI64({}));
    return success();
  }
  Value s = shapeOf(x);
  if (start != 0 || end != r)
    s = slice1D(s, start, end);
  out(0, s);
  return success();
}

LogicalResult Importer::importSize(StringRef) {
  Value x = in(0);
  if (tt(x).hasStaticShape()) {
    out(0, constI64Scalar(tt(x).getNumElements()));
    return success();
  }
  Value p = reduce(ReduceKind::Prod, shapeOf(x), {0}, false);
  Dims ds = dims(x);
  int64_t staticProd = 1, numDyn = 0;
  Dim dyn;
  for (const Dim &d : ds) {
    if (d.isStatic())
      staticProd *= d.size;
    else {
      ++numDyn;
      dyn = d;
    }
  }
  knownVals[p] = Dims{numDyn == 1 && staticProd == 1 ? dyn : Dim()};
  out(0, p);
  return success();
}

/// Infers the -1 entry of a reshape by cancelling equal static products and
/// equal dim names between input and output.
static Dim inferReshapeDim(ArrayRef<Dim> in, ArrayRef<Dim> outDims,
                           int64_t skip) {
  int64_t inStatic = 1, outStatic = 1;
  SmallVector<StringAttr> names;
  for (const Dim &d : in) {
    if (d.isStatic())
      inStatic *= d.size;
    else if (d.name)
      names.push_back(d.name);
    else
      return Dim();
  }
  for (int64_t i = 0; i < (int64_t)outDims.size(); ++i) {
    if (i == skip)
      continue;
    const Dim &d = outDims[i];
    if (d.isStatic()) {
      outStatic *= d.size;
      continue;
    }
    if (!d.name)
      return Dim();
    auto it = llvm::find(names, d.name);
    if (it == names.end())
      return Dim();
    names.erase(it);
  }
  if (outStatic <= 0)
    return Dim();
  if (names.empty())
    return inStatic % outStatic == 0 ? Dim(inStatic / outStatic) : Dim();
  if (names.size() == 1 && inStatic == outStatic)
    return Dim(kDyn, names.front());
  return Dim();
}

LogicalResult Importer::importReshape(StringRef) {
  Value x = in(0), s = in(1);
  if (opset < 5 && !s)
    if (std::optional<SmallVector<int64_t>> shape = aInts("shape"))
      s = constI64(*shape);
  if (!s)
    return err() << "expects two inputs";
  if (rank(s) != 1 || !elt(s).isInteger(64) ||
      ShapedType::isDynamic(tt(s).getDimSize(0)))
    return err() << "the shape input must be a 1-D int64 tensor of static "
                    "length, got "
                 << s.getType();
  bool allowZero = opset >= 14 && aInt("allowzero", 0) != 0;
  int64_t n = tt(s).getDimSize(0);
  std::optional<Dims> k = known(s);
  if (!k)
    k = Dims(n, Dim());
  Dims in = dims(x), o(n, Dim());
  int64_t inferIdx = -1;
  for (int64_t i = 0; i < n; ++i) {
    const Dim &e = (*k)[i];
    if (!e.isStatic()) {
      o[i] = Dim(kDyn, e.name);
      continue;
    }
    if (e.size == 0 && !allowZero) {
      if (i >= (int64_t)in.size())
        return err() << "shape entry " << i << " is 0 but the input has rank "
                     << in.size();
      o[i] = in[i];
    } else if (e.size == -1) {
      if (inferIdx >= 0)
        return err() << "more than one -1 in the target shape";
      inferIdx = i;
    } else if (e.size < 0) {
      return err() << "invalid target shape entry " << e.size;
    } else {
      o[i] = Dim(e.size);
    }
  }
  if (inferIdx >= 0)
    o[inferIdx] = inferReshapeDim(in, o, inferIdx);
  if (tt(x).hasStaticShape() && typeFor(o, elt(x)).hasStaticShape() &&
      tt(x).getNumElements() != typeFor(o, elt(x)).getNumElements())
    return err() << "cannot reshape " << x.getType() << " to "
                 << typeFor(o, elt(x));
  Value r = mk<DynamicReshapeOp>(o, elt(x), x, s, allowZero);
  if (isUns(x))
    unsignedVals.insert(r);
  if (std::optional<Dims> kx = known(x))
    r = setKnown(r, *kx);
  // Known values are 1-D only: a constant of another rank is reshaped now
  // (the same elements, another shape).
  if (!r.getDefiningOp<ConstantOp>())
    if (std::optional<SmallVector<APInt>> cx = constElements(x))
      r = foldTo(r, *cx);
  return finish(r);
}

LogicalResult Importer::importFlatten(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  int64_t axis = aInt("axis", 1);
  if (axis < 0)
    axis += r;
  if (axis < 0 || axis > r)
    return err() << "axis out of range";
  TDim a = tdimConst(1), c = tdimConst(1);
  for (int64_t i = 0; i < r; ++i) {
    if (i < axis)
      a = tdimMul(a, tdimOf(x, i));
    else
      c = tdimMul(c, tdimOf(x, i));
  }
  out(0, reshapeT(x, {a, c}));
  return success();
}

LogicalResult Importer::importSqueeze(StringRef op) {
  bool unsqueeze = op == "Unsqueeze";
  Value x = in(0);
  std::optional<SmallVector<int64_t>> axes;
  if (opset < 13) {
    axes = aInts("axes");
  } else if (has(1)) {
    if (!knownInts(in(1)))
      return importSqueezeRuntimeAxes(unsqueeze);
    FailureOr<SmallVector<int64_t>> a = constInts(in(1), "axes");
    if (::mlir::failed(a))
      return failure();
    axes = *a;
  }
  int64_t r = rank(x);
  Dims ds = dims(x);
  SmallVector<TDim> t;
  if (unsqueeze) {
    if (!axes)
      return err() << "missing axes";
    int64_t outRank = r + axes->size();
    FailureOr<SmallVector<int64_t>> na = normAxes(*axes, outRank, true);
    if (::mlir::failed(na))
      return failure();
    int64_t next = 0;
    for (int64_t j = 0; j < outRank; ++j)
      t.push_back(llvm::is_contained(*na, j) ? tdimConst(1)
                                             : tdimOf(x, next++));
  } else {
    SmallVector<int64_t> drop;
    if (!axes || axes->empty()) {
      for (int64_t i = 0; i < r; ++i) {
        if (!ds[i].isStatic())
          return err() << "Squeeze without axes needs static dims (dim " << i
                       << " is dynamic)";
        if (ds[i].size == 1)
          drop.push_back(i);
      }
    } else {
      FailureOr<SmallVector<int64_t>> na = normAxes(*axes, r, true);
      if (::mlir::failed(na))
        return failure();
      drop = *na;
      for (int64_t i : drop)
        if (ds[i].isStatic() && ds[i].size != 1)
          return err() << "cannot squeeze dim " << i << " of size "
                       << ds[i].size;
    }
    for (int64_t i = 0; i < r; ++i)
      if (!llvm::is_contained(drop, i))
        t.push_back(tdimOf(x, i));
  }
  out(0, reshapeT(x, t));
  return success();
}

/// Squeeze/Unsqueeze whose axes are a run-time tensor of static length K:
/// the result rank is known (r + K, or r - K for Squeeze: axes are unique),
/// every result dim is dynamic, and the result shape is computed with disc
/// ops. With A the normalized axes as [K, 1] and J an iota as [1, n]:
///  - Unsqueeze (n = r + K): out[j] = 1 if j in A, else
///    shape[j - #{a in A: a < j}];
///  - Squeeze (n = r): out[p] = shape[i] for the kept i (i not in A) with
///    i - #{a in A: a < i} == p.
LogicalResult Importer::importSqueezeRuntimeAxes(bool unsqueeze) {
  Value x = in(0), axesV = in(1);
  if (rank(axesV) != 1 || tt(axesV).isDynamicDim(0))
    return err() << "axes given at run time must be a 1-D tensor of static "
                    "length (the result rank depends on it)";
  int64_t k = tt(axesV).getDimSize(0), r = rank(x);
  int64_t outRank = unsqueeze ? r + k : r - k;
  if (outRank < 0)
    return err() << "more axes (" << k << ") than dims (" << r << ")";
  Value a = toI64(axesV);
  Value base = constI64Scalar(unsqueeze ? outRank : r);
  a = select(compare(CompareDirection::LT, a, constI64Scalar(0)),
             binary<AddOp>(a, base), a);
  Type i64 = b.getI64Type();
  auto cnt = [&](CompareDirection dir, Value col, Value row) {
    // #{a : a dir j} for every j of `row` ([1, n]) -> [n]
    Value m = compare(dir, col, row);
    return reduce(ReduceKind::Sum, convert(m, i64, false, false), {0}, false);
  };
  Value aCol = reshapeT(a, {tdimConst(k), tdimConst(1)});
  auto iota = [&](int64_t n) {
    return constI64(llvm::to_vector(llvm::seq<int64_t>(0, n)));
  };
  Value shape = shapeOf(x);
  Value result;
  if (unsqueeze) {
    Value j = iota(outRank);
    Value jRow = reshapeT(j, {tdimConst(1), tdimConst(outRank)});
    Value isAxis =
        compare(CompareDirection::GT, cnt(CompareDirection::EQ, aCol, jRow),
                constI64Scalar(0));
    Value src = binary<SubOp>(j, cnt(CompareDirection::LT, aCol, jRow));
    if (r == 0) {
      result = constI64(SmallVector<int64_t>(outRank, 1));
    } else {
      src = binary<MaxOp>(binary<MinOp>(src, constI64Scalar(r - 1)),
                          constI64Scalar(0));
      Value g = mk<GatherOp>(Dims{Dim(outRank)}, i64, shape, src, (uint64_t)0);
      result = select(isAxis, constI64Scalar(1), g);
    }
  } else {
    Value i = iota(r);
    Value iRow = reshapeT(i, {tdimConst(1), tdimConst(r)});
    Value kept =
        compare(CompareDirection::EQ, cnt(CompareDirection::EQ, aCol, iRow),
                constI64Scalar(0));
    Value pos = binary<SubOp>(i, cnt(CompareDirection::LT, aCol, iRow)); // [r]
    Value p = reshapeT(iota(outRank), {tdimConst(outRank), tdimConst(1)});
    Value m = binary<AndOp>(
        compare(CompareDirection::EQ,
                reshapeT(pos, {tdimConst(1), tdimConst(r)}), p),
        reshapeT(kept, {tdimConst(1), tdimConst(r)})); // [outRank, r]
    Value sRow = reshapeT(shape, {tdimConst(1), tdimConst(r)});
    result =
        reduce(ReduceKind::Sum, select(m, sRow, constI64Scalar(0)), {1}, false);
  }
  if (!result)
    return failure();
  Dims od(outRank, Dim());
  Value y = mk<DynamicReshapeOp>(od, elt(x), x, result, /*allow_zero=*/true);
  if (isUns(x))
    unsignedVals.insert(y);
  out(0, y);
  return success();
}

LogicalResult Importer::importTranspose(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> p = aInts("perm"))
    perm = *p;
  else
    for (int64_t i = r - 1; i >= 0; --i)
      perm.push_back(i);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if ((int64_t)perm.size() != r ||
      sorted != llvm::to_vector(llvm::seq<int64_t>(0, r)))
    return err() << "perm is not a permutation of [0, " << r << ")";
  Value t = transpose(x, perm);
  // A small integer constant: transposed now (result index i reads the
  // operand at i permuted back).
  if (std::optional<SmallVector<APInt>> cx = constElements(x); cx && r > 1) {
    ArrayRef<int64_t> shape = tt(x).getShape();
    SmallVector<int64_t> outShape, idx(r, 0), stride(r, 1);
    for (int64_t i = r - 2; i >= 0; --i)
      stride[i] = stride[i + 1] * shape[i + 1];
    for (int64_t p : perm)
      outShape.push_back(shape[p]);
    SmallVector<APInt> vals;
    for (int64_t n = 0; n < (int64_t)cx->size(); ++n) {
      int64_t at = 0;
      for (int64_t i = 0; i < r; ++i)
        at += idx[i] * stride[perm[i]];
      vals.push_back((*cx)[at]);
      for (int64_t i = r - 1; i >= 0 && ++idx[i] == outShape[i]; --i)
        idx[i] = 0;
    }
    t = foldTo(t, vals);
  }
  out(0, t);
  return success();
}

LogicalResult Importer::importConcat(StringRef) {
  SmallVector<Value> ins;
  for (unsigned i = 0; i < numIn(); ++i)
    if (Value v = in(i))
      ins.push_back(v);
  int64_t r = rank(ins[0]);
  const onnx::AttributeProto *axisAttr = attr("axis");
  if (!axisAttr && opset >= 4)
    return err() << "missing attribute 'axis'";
  FailureOr<int64_t> axis = normAxis(aInt("axis", 1), r);
  if (::mlir::failed(axis))
    return failure();
  Dims o = dims(ins[0]);
  Dims k;
  bool allKnown = r == 1;
  for (auto [idx, v] : llvm::enumerate(ins)) {
    if (rank(v) != r || ::mlir::failed(sameElt(ins[0], v)))
      return err() << "inputs must have equal rank and element type";
    Dims dv = dims(v);
    for (int64_t i = 0; i < r; ++i) {
      if (idx == 0)
        continue;
      if (i == *axis) {
        o[i] = o[i].isStatic() && dv[i].isStatic() ? Dim(o[i].size + dv[i].size)
                                                   : Dim();
      } else if (!o[i].isStatic()) {
        if (dv[i].isStatic() || !(o[i] == dv[i]))
          o[i] = dv[i].isStatic() ? dv[i] : Dim();
      } else if (dv[i].isStatic() && dv[i].size != o[i].size) {
        return err() << "dim " << i << " differs between inputs";
      }
    }
    if (allKnown) {
      std::optional<Dims> kv = known(v);
      if (kv)
        k.append(kv->begin(), kv->end());
      else if (dv[0].isStatic())
        k.append(dv[0].size, Dim());
      else
        allKnown = false;
    }
  }
  if (ins.size() == 1) {
    out(0, ins[0]);
    return success();
  }
  Value res = mk<ConcatenateOp>(o, elt(ins[0]), ins, (uint64_t)*axis);
  if (allKnown)
    res = setKnown(res, k);
  out(0, res);
  return success();
}

/// ONNX Slice: number of elements selected from a dim of size `dim`.
static int64_t sliceBounds(int64_t dim, int64_t &start, int64_t &end,
                           int64_t step) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return std::max<int64_t>(0, ceilDiv(end - start, step));
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return std::max<int64_t>(0, ceilDiv(start - end, -step));
}

LogicalResult Importer::importSplit(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  int64_t axis = nodeAxis;
  int64_t n = node->output_size();
  // Given sizes are never clamped: disc.slice checks them at run time.
  std::string ax = "{2} (axis " + std::to_string(axis) + ")";
  auto checked = [&](Value v, int64_t i) {
    Operation *s = v.getDefiningOp();
    s->setAttr(kSliceBoundsMessageAttr,
               b.getStringAttr("split[" + std::to_string(i) +
                               "] is {3} at offset {0}: the sizes must be "
                               ">= 0 and sum to " +
                               ax));
    if (i == n - 1)
      s->setAttr(kSliceEndMessageAttr,
                 b.getStringAttr("split sizes sum to {1}, not " + ax));
    return v;
  };
  SmallVector<int64_t> sizes;
  if (opset < 13) {
    sizes = aInts("split").value_or(SmallVector<int64_t>{});
  } else if (has(1)) {
    Value splitV = toI64(in(1));
    if (rank(splitV) != 1 || tt(splitV).getDimSize(0) != n)
      return err() << "split must be 1-D with one entry per output";
    if (std::optional<SmallVector<int64_t>> s = knownInts(splitV)) {
      sizes = *s;
    } else {
      // Sizes known only at run time: cumulative starts at run time.
      std::optional<Dims> ks = known(splitV);
      auto i64x1 = RankedTensorType::get({1}, b.getI64Type());
      Value start = constI64({0}), one = constI64({1});
      for (int64_t i = 0; i < n; ++i) {
        Value size = slice1D(splitV, i, i + 1);
        Value end = AddOp::create(b, loc, i64x1, start, size).getResult();
        Dims o = dims(x);
        o[axis] = ks ? (*ks)[i] : Dim();
        out(i, checked(mk<SliceOp>(o, elt(x), x, start, end, one,
                                   ArrayRef<int64_t>{axis}),
                       i));
        start = end;
      }
      return success();
    }
  }
  Dim d = dims(x)[axis];
  if (sizes.empty() && d.isStatic()) {
    int64_t chunk = ceilDiv(d.size, n);
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(
          std::max<int64_t>(0, std::min(chunk, d.size - chunk * i)));
  }
  std::optional<Dims> kx = known(x);
  Value one = constI64({1});
  if (!sizes.empty()) {
    if ((int64_t)sizes.size() != n)
      return err() << "split has " << sizes.size() << " entries for " << n
                   << " outputs";
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        return err() << "negative split size";
      total += s;
    }
    if (d.isStatic() && total != d.size)
      return err() << "split sizes sum to " << total << ", not " << d.size;
    int64_t start = 0;
    for (int64_t i = 0; i < n; ++i) {
      Dims o = dims(x);
      o[axis] = Dim(sizes[i]);
      Value res = checked(mk<SliceOp>(o, elt(x), x, constI64({start}),
                                      constI64({start + sizes[i]}), one,
                                      ArrayRef<int64_t>{axis}),
                          i);
      if (kx && r == 1)
        res = setKnown(
            res, Dims(kx->begin() + start, kx->begin() + start + sizes[i]));
      out(i, res);
      start += sizes[i];
    }
    return success();
  }
  // Equal split of a dynamic dim: chunk = ceil(dim / n) at run time.
  Value dimV = dimOf(x, axis);
  auto i64x1 = RankedTensorType::get({1}, b.getI64Type());
  Value chunk =
      DivOp::create(b, loc, i64x1,
                    AddOp::create(b, loc, i64x1, dimV, constI64({n - 1})),
                    constI64({n}))
          .getResult();
  for (int64_t i = 0; i < n; ++i) {
    Value start = MulOp::create(b, loc, i64x1, chunk, constI64({i}));
    Value end = i == n - 1
                    ? dimV
                    : MulOp::create(b, loc, i64x1, chunk, constI64({i + 1}))
                          .getResult();
    Dims o = dims(x);
    o[axis] = Dim();
    out(i, mk<SliceOp>(o, elt(x), x, start, end, one, ArrayRef<int64_t>{axis}));
  }
  return success();
}

/// Slice whose `axes` input is only known at run time: the bounds become
/// full-rank vectors, entry i taken from the last j with
/// axes[j] (+ rank if negative) == i, else 0 / INT64_MAX / 1 (ONNX Slice-13
/// defaults). Out-of-range axes select no dim.
FailureOr<Value> Importer::sliceRuntimeAxes(Value x, Value axesV, Value startsV,
                                            Value endsV, Value stepsV) {
  int64_t r = rank(x);
  int64_t n = tt(startsV).getDimSize(0);
  for (Value v : {axesV, endsV, stepsV})
    if (rank(v) != 1 || tt(v).getDimSize(0) != n) {
      err() << "starts, ends, axes and steps need the same static length";
      return failure();
    }
  SmallVector<Value> axis, st, en, sp;
  for (int64_t j = 0; j < n; ++j) {
    axis.push_back(wrapNegative(slice1D(axesV, j, j + 1), r));
    st.push_back(slice1D(startsV, j, j + 1));
    en.push_back(slice1D(endsV, j, j + 1));
    sp.push_back(slice1D(stepsV, j, j + 1));
  }
  SmallVector<Value> fs, fe, fp;
  for (int64_t i = 0; i < r; ++i) {
    Value s0 = constI64({0});
    Value e0 = constI64({std::numeric_limits<int64_t>::max()});
    Value p0 = constI64({1});
    for (int64_t j = 0; j < n; ++j) {
      Value m = compare(CompareDirection::EQ, axis[j], constI64({i}));
      s0 = select(m, st[j], s0);
      e0 = select(m, en[j], e0);
      p0 = select(m, sp[j], p0);
    }
    fs.push_back(s0);
    fe.push_back(e0);
    fp.push_back(p0);
  }
  return markUnsigned(sliceEveryAxis(x, fs, fe, fp), isUns(x));
}

LogicalResult Importer::importSlice(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  Value startsV, endsV, stepsV;
  SmallVector<int64_t> axes;
  if (opset < 10) {
    std::optional<SmallVector<int64_t>> s = aInts("starts"), e = aInts("ends");
    if (!s || !e || s->size() != e->size())
      return err() << "needs 'starts' and 'ends' of equal length";
    axes = aInts("axes").value_or(
        llvm::to_vector(llvm::seq<int64_t>(0, s->size())));
    startsV = constI64(*s);
    endsV = constI64(*e);
    stepsV = constI64(SmallVector<int64_t>(s->size(), 1));
  } else {
    if (!in(1) || !in(2))
      return err() << "needs starts and ends inputs";
    startsV = toI64(in(1));
    endsV = toI64(in(2));
    if (rank(startsV) != 1 || ShapedType::isDynamic(tt(startsV).getDimSize(0)))
      return err() << "starts must be 1-D with a static length";
    int64_t n = tt(startsV).getDimSize(0);
    stepsV = has(4) ? toI64(in(4)) : constI64(SmallVector<int64_t>(n, 1));
    if (has(3) && !knownInts(in(3))) {
      // Axes given at run time: scatter the bounds into full-rank vectors
      // (defaults 0 / INT64_MAX / 1 for the axes not listed).
      FailureOr<Value> full =
          sliceRuntimeAxes(x, toI64(in(3)), startsV, endsV, stepsV);
      if (::mlir::failed(full))
        return failure();
      out(0, *full);
      return success();
    }
    if (has(3)) {
      FailureOr<SmallVector<int64_t>> a = constInts(in(3), "axes");
      if (::mlir::failed(a))
        return failure();
      axes = *a;
    } else {
      axes = llvm::to_vector(llvm::seq<int64_t>(0, n));
    }
  }
  FailureOr<SmallVector<int64_t>> na = normAxes(axes, r, false);
  if (::mlir::failed(na))
    return failure();
  int64_t n = na->size();
  for (Value v : {startsV, endsV, stepsV})
    if (rank(v) != 1 || tt(v).getDimSize(0) != n)
      return err() << "starts, ends and steps need one entry per axis";
  if (n == 0) {
    out(0, x);
    return success();
  }
  std::optional<Dims> ks = known(startsV), ke = known(endsV),
                      kp = known(stepsV);
  Dims o = dims(x);
  Dims in = o;
  constexpr int64_t kBig = std::numeric_limits<int32_t>::max();
  for (int64_t j = 0; j < n; ++j) {
    int64_t a = (*na)[j];
    std::optional<int64_t> st, en, sp;
    if (ks && (*ks)[j].isStatic())
      st = (*ks)[j].size;
    if (ke && (*ke)[j].isStatic())
      en = (*ke)[j].size;
    if (kp && (*kp)[j].isStatic())
      sp = (*kp)[j].size;
    if (sp && *sp == 0)
      return err() << "slice step must be non-zero";
    if (st && en && sp && in[a].isStatic()) {
      int64_t s0 = *st, e0 = *en;
      o[a] = Dim(sliceBounds(in[a].size, s0, e0, *sp));
    } else if (st && en && sp &&
               ((*sp == 1 && *st == 0 && *en >= kBig) ||
                (*sp == -1 && *st == -1 && *en <= -kBig))) {
      o[a] = in[a];
    } else {
      o[a] = Dim();
    }
  }
  Value res = mk<SliceOp>(o, elt(x), x, startsV, endsV, stepsV, *na);
  if (isUns(x))
    unsignedVals.insert(res);
  std::optional<Dims> kx = known(x);
  if (kx && r == 1 && ks && ke && kp && allInts(*ks) && allInts(*ke) &&
      allInts(*kp)) {
    int64_t s0 = (*ks)[0].size, e0 = (*ke)[0].size, sp = (*kp)[0].size;
    int64_t len = sliceBounds(kx->size(), s0, e0, sp);
    Dims k;
    for (int64_t i = 0; i < len; ++i)
      k.push_back((*kx)[s0 + i * sp]);
    res = setKnown(res, k);
  } else if (std::optional<SmallVector<APInt>> cx = constElements(x);
             cx && r > 1 && ks && ke && kp && allInts(*ks) && allInts(*ke) &&
             allInts(*kp) && tt(res).hasStaticShape()) {
    // A small integer constant of rank > 1: sliced now. Per dim, the first
    // index and the step (the whole dim, step 1, where no axis cuts it).
    ArrayRef<int64_t> shape = tt(x).getShape();
    ArrayRef<int64_t> outShape = tt(res).getShape();
    SmallVector<int64_t> first(r, 0), step(r, 1), stride(r, 1), idx(r, 0);
    for (int64_t i = r - 2; i >= 0; --i)
      stride[i] = stride[i + 1] * shape[i + 1];
    for (int64_t j = 0; j < n; ++j) {
      int64_t a = (*na)[j], s0 = (*ks)[j].size, e0 = (*ke)[j].size;
      step[a] = (*kp)[j].size;
      (void)sliceBounds(shape[a], s0, e0, step[a]);
      first[a] = s0;
    }
    SmallVector<APInt> vals;
    int64_t count = tt(res).getNumElements();
    for (int64_t m = 0; m < count; ++m) {
      int64_t at = 0;
      for (int64_t i = 0; i < r; ++i)
        at += (first[i] + idx[i] * step[i]) * stride[i];
      vals.push_back((*cx)[at]);
      for (int64_t i = r - 1; i >= 0 && ++idx[i] == outShape[i]; --i)
        idx[i] = 0;
    }
    res = foldTo(res, vals);
  }
  out(0, res);
  return success();
}

LogicalResult Importer::importExpand(StringRef) {
  Value x = in(0), s = in(1);
  if (rank(s) != 1 || !elt(s).isInteger(64) ||
      ShapedType::isDynamic(tt(s).getDimSize(0)))
    return err() << "the shape input must be a 1-D int64 tensor of static "
                    "length";
  std::optional<Dims> k = known(s);
  if (!k)
    k = Dims(tt(s).getDimSize(0), Dim());
  Value r = expandTo(x, s, *k);
  return finish(r);
}

LogicalResult Importer::importTile(StringRef) {
  Value x = in(0);
  if (!x || !in(1))
    return err() << "expects two inputs";
  int64_t r = rank(x);
  Value repsV = toI64(in(1));
  if (rank(repsV) != 1 || tt(repsV).getDimSize(0) != r)
    return err() << "repeats must be 1-D with " << r << " entries";
  std::optional<Dims> kr = known(repsV);
  if (!kr)
    kr = Dims(r, Dim());
  if (!allInts(*kr)) {
    // Repeats known only at run time: the same expand + reshape scheme with
    // run-time sizes.
    SmallVector<TDim> t1, t2, t3;
    for (int64_t i = 0; i < r; ++i) {
      Dim rd = (*kr)[i];
      TDim rep = rd.isStatic() ? tdimConst(rd.size)
                               : TDim{Dim(), slice1D(repsV, i, i + 1)};
      t1.append({tdimConst(1), tdimOf(x, i)});
      t2.append({rep, tdimConst(1)});
      t3.push_back(tdimMul(rep, tdimOf(x, i)));
    }
    Dims d2;
    for (const TDim &t : t2)
      d2.push_back(t.d);
    Value e = expandTo(reshapeT(x, t1), shapeFrom(t2), d2);
    if (!e)
      return failure();
    out(0, reshapeT(e, t3));
    return success();
  }
  std::optional<SmallVector<int64_t>> reps = knownInts(repsV);
  if (llvm::any_of(*reps, [](int64_t v) { return v < 0; }))
    return err() << "repeats must be non-negative";
  if (llvm::all_of(*reps, [](int64_t v) { return v == 1; })) {
    out(0, x);
    return success();
  }
  // [d0, d1..] -> [1, d0, 1, d1..] -> expand [r0, d0, r1, d1..] -> reshape.
  SmallVector<TDim> t1, t3;
  SmallVector<int64_t> shape2;
  Dims dims2;
  for (int64_t i = 0; i < r; ++i) {
    t1.push_back(tdimConst(1));
    t1.push_back(tdimOf(x, i));
    shape2.append({(*reps)[i], 1});
    dims2.append({Dim((*reps)[i]), Dim(1)});
    t3.push_back(tdimMul(tdimConst((*reps)[i]), tdimOf(x, i)));
  }
  Value a = reshapeT(x, t1);
  Value e = expandTo(a, constI64(shape2), dims2);
  if (!e)
    return failure();
  out(0, reshapeT(e, t3));
  return success();
}

LogicalResult Importer::importPad(StringRef) {
  Value x = in(0);
  std::string modeStr = aStr("mode", "constant");
  auto mode = llvm::StringSwitch<std::optional<PadMode>>(modeStr)
                  .Case("constant", PadMode::Constant)
                  .Case("reflect", PadMode::Reflect)
                  .Case("edge", PadMode::Edge)
                  .Default(std::nullopt);
  if (!mode)
    return err() << "unsupported mode '" << modeStr << "'";
  int64_t r = rank(x);
  Value padsV, valueV;
  if (opset < 11) {
    std::optional<SmallVector<int64_t>> p = aInts("pads");
    if (!p)
      p = aInts("paddings");
    if (!p)
      return err() << "missing attribute 'pads'";
    padsV = constI64(*p);
    valueV = scalarLike(x, aFloat("value", 0.0f));
  } else {
    if (!in(1))
      return err() << "missing pads input";
    padsV = toI64(in(1));
    if (Value v = in(2)) {
      if (!maybeScalar(v))
        return err() << "constant_value must be a scalar";
      if (rank(v) != 0)
        v = reshapeToScalar(v);
      valueV = convert(v, elt(x), isUns(v), isUns(x));
    } else {
      valueV = scalarLike(x, 0);
    }
    if (has(3)) {
      FailureOr<SmallVector<int64_t>> axes = constInts(in(3), "axes");
      if (::mlir::failed(axes))
        return failure();
      FailureOr<SmallVector<int64_t>> na = normAxes(*axes, r, false);
      if (::mlir::failed(na))
        return failure();
      int64_t na_ = na->size();
      if (tt(padsV).getDimSize(0) != 2 * na_)
        return err() << "pads needs " << 2 * na_ << " entries";
      SmallVector<Value> parts;
      for (int64_t side = 0; side < 2; ++side)
        for (int64_t i = 0; i < r; ++i) {
          auto it = llvm::find(*na, i);
          if (it == na->end())
            parts.push_back(constI64({0}));
          else {
            int64_t j = (it - na->begin()) + side * na_;
            parts.push_back(slice1D(padsV, j, j + 1));
          }
        }
      padsV = concatI64(parts);
    }
  }
  if (rank(padsV) != 1 || tt(padsV).getDimSize(0) != 2 * r)
    return err() << "pads needs " << 2 * r << " entries";
  Dims o = dims(x);
  std::optional<Dims> kp = known(padsV);
  for (int64_t i = 0; i < r; ++i) {
    if (!kp || !(*kp)[i].isStatic() || !(*kp)[i + r].isStatic()) {
      o[i] = Dim();
      continue;
    }
    int64_t lo = (*kp)[i].size, hi = (*kp)[i + r].size;
    if (lo < 0 || hi < 0)
      return err() << "negative pads are not supported";
    if (lo == 0 && hi == 0)
      continue;
    o[i] = o[i].isStatic() ? Dim(o[i].size + lo + hi) : Dim();
  }
  Value res = mk<PadOp>(o, elt(x), *mode, x, padsV, valueV);
  out(0, res);
  return success();
}

/// Depth/space rearrangements: reshape, transpose, reshape.
LogicalResult Importer::importDepthSpace(StringRef op) {
  bool toSpace = op == "DepthToSpace";
  Value x = in(0);
  int64_t bs = aInt("blocksize", 0);
  if (bs <= 0)
    return err() << "blocksize must be positive";
  TDim n = tdimOf(x, 0), c = tdimOf(x, 1), h = tdimOf(x, 2), w = tdimOf(x, 3);
  TDim bt = tdimConst(bs);
  auto divBy = [&](TDim d, int64_t f) -> TDim {
    if (d.d.isStatic())
      return tdimConst(d.d.size / f);
    Value q = binary<DivOp>(d.v, constI64({f}));
    return {Dim(), q};
  };
  Value y;
  if (toSpace) {
    bool crd = aStr("mode", "DCR") == "CRD";
    TDim cq = divBy(c, bs * bs);
    SmallVector<TDim> s1 = crd ? SmallVector<TDim>{n, cq, bt, bt, h, w}
                               : SmallVector<TDim>{n, bt, bt, cq, h, w};
    SmallVector<int64_t> perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3}
                                    : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
    Value t = transpose(reshapeT(x, s1), perm);
    y = reshapeT(t, {n, cq, tdimMul(h, bt), tdimMul(w, bt)});
  } else {
    TDim hq = divBy(h, bs), wq = divBy(w, bs);
    Value t =
        transpose(reshapeT(x, {n, c, hq, bt, wq, bt}), {0, 3, 5, 1, 2, 4});
    y = reshapeT(t, {n, tdimMul(c, tdimConst(bs * bs)), hq, wq});
  }
  return finish(y);
}

} // namespace mlir::disc::onnx_import

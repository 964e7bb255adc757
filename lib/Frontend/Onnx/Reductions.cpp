//===- Reductions.cpp - ONNX reductions, CumSum, TopK and Einsum
//------------===//
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
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace mlir::disc::onnx_import {

/// ReduceSum whose `axes` input (static length L > 0) is only known at run
/// time. Per dim i, mask_i = any_j(axes[j] (+ rank if negative) == i); the
/// sum along every masked dim is taken in place (the reduced value
/// broadcast back), then the masked dims are cut to 1 (keepdims) and, for
/// keepdims = 0, the result is reshaped to the unmasked dims in order (its
/// rank is rank - L, the axes being distinct as the spec requires).
FailureOr<Value> Importer::reduceSumRuntimeAxes(Value x, Value axesV,
                                                bool keep) {
  int64_t r = rank(x);
  if (rank(axesV) != 1 || ShapedType::isDynamic(tt(axesV).getDimSize(0))) {
    err() << "axes given at run time must be a 1-D tensor of static length";
    return failure();
  }
  int64_t n = tt(axesV).getDimSize(0);
  if (!keep && n > r) {
    err() << n << " axes for an input of rank " << r;
    return failure();
  }
  SmallVector<Value> axis;
  for (int64_t j = 0; j < n; ++j)
    axis.push_back(wrapNegative(slice1D(axesV, j, j + 1), r));
  Value zero = constI64({0}), one = constI64({1});
  SmallVector<Value> masked; // i64 [1]: 1 when dim i is reduced
  for (int64_t i = 0; i < r; ++i) {
    Value m = zero;
    for (int64_t j = 0; j < n; ++j)
      m = select(compare(CompareDirection::EQ, axis[j], constI64({i})), one, m);
    masked.push_back(m);
  }
  Value y = x;
  for (int64_t i = 0; i < r; ++i) {
    Value s = reduce(ReduceKind::Sum, y, {i}, /*keep=*/true);
    Value full = expandTo(s, shapeOf(y), dims(y));
    y = select(compare(CompareDirection::EQ, masked[i], one), full, y);
  }
  SmallVector<Value> starts, ends, steps;
  for (int64_t i = 0; i < r; ++i) {
    starts.push_back(zero);
    ends.push_back(select(compare(CompareDirection::EQ, masked[i], one), one,
                          constI64({std::numeric_limits<int64_t>::max()})));
    steps.push_back(one);
  }
  Value kept = markUnsigned(sliceEveryAxis(y, starts, ends, steps), isUns(x));
  if (keep)
    return kept;
  // Output dim k is the dim i that is the k-th unmasked one.
  SmallVector<Value> before; // number of unmasked dims before i
  Value count = zero;
  for (int64_t i = 0; i < r; ++i) {
    before.push_back(count);
    count = binary<AddOp>(count, binary<SubOp>(one, masked[i]));
  }
  SmallVector<TDim> target;
  for (int64_t k = 0; k < r - n; ++k) {
    Value sizeK = zero;
    for (int64_t i = 0; i < r; ++i) {
      Value pick = binary<MulOp>(
          binary<SubOp>(one, masked[i]),
          select(compare(CompareDirection::EQ, before[i], constI64({k})), one,
                 zero));
      sizeK = binary<AddOp>(sizeK, binary<MulOp>(pick, dimOf(x, i)));
    }
    target.push_back({Dim(), sizeK});
  }
  return reshapeT(kept, target);
}

LogicalResult Importer::importReduce(StringRef op) {
  Value x = in(0);
  bool axesAsInput = opset >= 18 || (op == "ReduceSum" && opset >= 13);
  SmallVector<int64_t> axes;
  if (axesAsInput) {
    Value axesV = in(1);
    bool emptyAxes = axesV && rank(axesV) == 1 && tt(axesV).getDimSize(0) == 0;
    if (axesV && !emptyAxes && !knownInts(axesV) && op == "ReduceSum") {
      FailureOr<Value> y =
          reduceSumRuntimeAxes(x, toI64(axesV), aInt("keepdims", 1) != 0);
      if (::mlir::failed(y))
        return failure();
      out(0, *y);
      return success();
    }
    FailureOr<SmallVector<int64_t>> a =
        emptyAxes ? FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>{})
                  : constInts(axesV, "axes");
    if (::mlir::failed(a))
      return failure();
    axes = *a;
  } else {
    axes = aInts("axes").value_or(SmallVector<int64_t>{});
  }
  bool keep = aInt("keepdims", 1) != 0;
  bool noop = aInt("noop_with_empty_axes", 0) != 0;
  int64_t r = rank(x);
  if (axes.empty()) {
    if (noop) {
      out(0, x);
      return success();
    }
    axes = llvm::to_vector(llvm::seq<int64_t>(0, r));
  }
  FailureOr<SmallVector<int64_t>> na = normAxes(axes, r, true);
  if (::mlir::failed(na))
    return failure();
  Value y;
  if (op == "ReduceSum")
    y = reduce(ReduceKind::Sum, x, *na, keep);
  else if (op == "ReduceMean")
    y = reduce(ReduceKind::Mean, x, *na, keep);
  else if (op == "ReduceMax")
    y = reduce(ReduceKind::Max, x, *na, keep);
  else if (op == "ReduceMin")
    y = reduce(ReduceKind::Min, x, *na, keep);
  else if (op == "ReduceProd")
    y = reduce(ReduceKind::Prod, x, *na, keep);
  else if (op == "ReduceL1")
    y = reduce(ReduceKind::Sum, unary<AbsOp>(x), *na, keep);
  else if (op == "ReduceL2")
    y = unary<SqrtOp>(reduce(ReduceKind::Sum, binary<MulOp>(x, x), *na, keep));
  else if (op == "ReduceSumSquare")
    y = reduce(ReduceKind::Sum, binary<MulOp>(x, x), *na, keep);
  else if (op == "ReduceLogSum")
    y = unary<LogOp>(reduce(ReduceKind::Sum, x, *na, keep));
  else if (op == "ReduceLogSumExp") {
    // max + log(sum(exp(x - max))).
    Value mk1 = reduce(ReduceKind::Max, x, *na, true);
    Value s =
        reduce(ReduceKind::Sum, unary<ExpOp>(binary<SubOp>(x, mk1)), *na, keep);
    Value m = keep ? mk1 : reduce(ReduceKind::Max, x, *na, false);
    y = binary<AddOp>(unary<LogOp>(s), m);
  } else
    return err() << "unsupported op";
  return finish(y);
}

LogicalResult Importer::importArgReduce(StringRef op) {
  Value x = in(0);
  int64_t r = rank(x);
  int64_t axis = nodeAxis;
  bool keep = aInt("keepdims", 1) != 0;
  bool last = aInt("select_last_index", 0) != 0;
  Dims in = dims(x), o;
  for (int64_t i = 0; i < r; ++i)
    if (i != axis)
      o.push_back(in[i]);
    else if (keep)
      o.push_back(Dim(1));
  out(0, mk<ArgReduceOp>(o, b.getI64Type(), x, (uint64_t)axis, op == "ArgMax",
                         keep, last));
  return success();
}

LogicalResult Importer::importCumSum(StringRef) {
  Value x = in(0), axis = in(1);
  int64_t r = rank(x);
  if (!maybeScalar(axis) || isFloat(axis))
    return err() << "axis must be an integer scalar";
  bool exclusive = aInt("exclusive", 0) != 0;
  bool reverse = aInt("reverse", 0) != 0;
  auto scan = [&](int64_t d) {
    Value v = mk<CumSumOp>(dims(x), elt(x), x, (uint64_t)d, exclusive, reverse);
    if (isUns(x))
      unsignedVals.insert(v);
    return v;
  };
  if (std::optional<SmallVector<int64_t>> ka = knownInts(axis)) {
    FailureOr<int64_t> a = normAxis((*ka)[0], r);
    if (::mlir::failed(a))
      return failure();
    out(0, scan(*a));
    return success();
  }
  if (r == 1) { // the only valid axis
    out(0, scan(0));
    return success();
  }
  // Run-time axis: one scan per dim, picked by comparing the axis.
  Value a = toI64(rank(axis) == 0 ? axis : reshapeToScalar(axis));
  a = select(compare(CompareDirection::LT, a, constI64Scalar(0)),
             binary<AddOp>(a, constI64Scalar(r)), a);
  Value res = scan(r - 1);
  for (int64_t d = r - 2; d >= 0 && res; --d)
    res = select(compare(CompareDirection::EQ, a, constI64Scalar(d)), scan(d),
                 res);
  return finish(res);
}

/// Einsum: per operand, repeated labels take the diagonal (mask and sum) and
/// labels used nowhere else are summed out; operands are then combined
/// pairwise with disc.dot_general (shared labels still needed are batch
/// dims, the others are contracted) and transposed to the output order.
/// Ellipsis dims get labels of their own, aligned from the right.
LogicalResult Importer::importEinsum(StringRef) {
  std::string eq;
  for (char ch : aStr("equation", ""))
    if (ch != ' ')
      eq.push_back(ch);
  if (failed)
    return failure();
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  SmallVector<StringRef> terms;
  StringRef(lhs).split(terms, ',');
  if (terms.size() != numIn() || numIn() == 0)
    return err() << "equation '" << eq << "' has " << terms.size()
                 << " operand terms for " << numIn() << " inputs";
  constexpr int64_t kEllipsis = 1000;
  auto letters = [](StringRef t) {
    int64_t n = 0;
    for (char ch : t)
      n += llvm::isAlpha(ch);
    return n;
  };
  int64_t ell = 0;
  for (auto [i, t] : llvm::enumerate(terms)) {
    if (!in(i))
      return err() << "input #" << i << " is missing";
    if (t.contains("..."))
      ell = std::max(ell, rank(in(i)) - letters(t));
  }
  // Labels of a term: letters by character, ellipsis dims as kEllipsis + j.
  auto parse = [&](StringRef t, int64_t r,
                   SmallVector<int64_t> &labels) -> LogicalResult {
    int64_t e = t.contains("...") ? r - letters(t) : 0;
    if (e < 0 || (!t.contains("...") && letters(t) != r))
      return err() << "term '" << t << "' does not match rank " << r;
    for (size_t p = 0; p < t.size(); ++p) {
      if (t.substr(p).starts_with("...")) {
        for (int64_t j = 0; j < e; ++j)
          labels.push_back(kEllipsis + ell - e + j);
        p += 2;
        continue;
      }
      if (!llvm::isAlpha(t[p]))
        return err() << "unexpected character '" << t[p] << "' in equation";
      labels.push_back(t[p]);
    }
    return success();
  };
  SmallVector<Value> vals;
  SmallVector<SmallVector<int64_t>> labs;
  for (auto [i, t] : llvm::enumerate(terms)) {
    SmallVector<int64_t> l;
    if (::mlir::failed(parse(t, rank(in(i)), l)))
      return failure();
    vals.push_back(in(i));
    labs.push_back(l);
  }
  SmallVector<int64_t> outLab;
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    int64_t n = letters(rhs) + (StringRef(rhs).contains("...") ? ell : 0);
    if (::mlir::failed(parse(rhs, n, outLab)))
      return failure();
  } else {
    for (int64_t j = 0; j < ell; ++j)
      outLab.push_back(kEllipsis + j);
    std::map<int64_t, int> count;
    for (auto &l : labs)
      for (int64_t x : l)
        if (x < kEllipsis)
          ++count[x];
    for (auto [x, c] : count)
      if (c == 1)
        outLab.push_back(x);
  }
  auto neededBy = [&](int64_t label, size_t skip, size_t from) {
    if (llvm::is_contained(outLab, label))
      return true;
    for (size_t t = from; t < labs.size(); ++t)
      if (t != skip && llvm::is_contained(labs[t], label))
        return true;
    return false;
  };
  for (size_t t = 0; t < vals.size(); ++t) {
    Value &v = vals[t];
    SmallVector<int64_t> &l = labs[t];
    // Diagonals of repeated labels.
    for (size_t p = 0; p < l.size(); ++p) {
      for (size_t q = p + 1; q < l.size();) {
        if (l[q] != l[p]) {
          ++q;
          continue;
        }
        int64_t r = rank(v);
        Value mask = compare(CompareDirection::EQ, iotaAlong(v, p, r, p),
                             iotaAlong(v, q, r, q));
        v = reduce(ReduceKind::Sum, select(mask, v, scalarLike(v, 0)),
                   {(int64_t)q}, false);
        if (!v)
          return failure();
        l.erase(l.begin() + q);
      }
    }
    // Labels nobody else needs.
    SmallVector<int64_t> sumAxes;
    SmallVector<int64_t> kept;
    for (auto [p, x] : llvm::enumerate(l)) {
      if (neededBy(x, t, 0))
        kept.push_back(x);
      else
        sumAxes.push_back(p);
    }
    if (!sumAxes.empty()) {
      v = reduce(ReduceKind::Sum, v, sumAxes, false);
      l = kept;
    }
  }
  Value cur = vals[0];
  SmallVector<int64_t> curLab = labs[0];
  for (size_t t = 1; t < vals.size(); ++t) {
    Value o = vals[t];
    ArrayRef<int64_t> oLab = labs[t];
    if (::mlir::failed(sameElt(cur, o)))
      return failure();
    // Ellipsis dims broadcast (NumPy): where one side may be 1 and the
    // other P, both operands are expanded to the common size first (at run
    // time, `a == 1 ? b : a`; the Expand checks that the sizes agree).
    {
      Dims dc = dims(cur), dO = dims(o);
      SmallVector<TDim> curT, oT;
      for (int64_t p = 0, e = rank(cur); p < e; ++p)
        curT.push_back(tdimOf(cur, p));
      for (int64_t q = 0, e = rank(o); q < e; ++q)
        oT.push_back(tdimOf(o, q));
      auto valueOf = [&](const TDim &d) {
        return d.v ? d.v : constI64({d.d.size});
      };
      bool expandCur = false, expandO = false;
      for (auto [p, x] : llvm::enumerate(curLab)) {
        auto it = llvm::find(oLab, x);
        if (x < kEllipsis || it == oLab.end())
          continue;
        int64_t q = it - oLab.begin();
        const Dim &a = dc[p], &c = dO[q];
        if (a.isStatic() && c.isStatic()) {
          if (a.size == c.size)
            continue;
          if (a.size != 1 && c.size != 1)
            return err() << "ellipsis dims of sizes " << a.size << " and "
                         << c.size << " do not broadcast";
          if (a.size == 1) {
            curT[p] = oT[q];
            expandCur = true;
          } else {
            oT[q] = curT[p];
            expandO = true;
          }
          continue;
        }
        if (a.name && a.name == c.name)
          continue;
        Value av = valueOf(curT[p]), cv = valueOf(oT[q]);
        Value isOne = compare(CompareDirection::EQ, av, constI64({1}));
        Value common = isOne ? select(isOne, cv, av) : Value();
        if (!common)
          return failure();
        Dim cd = a.isStatic() && a.size != 1   ? a
                 : c.isStatic() && c.size != 1 ? c
                                               : Dim();
        curT[p] = oT[q] = TDim{cd, cd.isStatic() ? Value() : common};
        expandCur = expandO = true;
      }
      auto expandToT = [&](Value v, ArrayRef<TDim> t) {
        Dims ds;
        for (const TDim &d : t)
          ds.push_back(d.d);
        return expandTo(v, shapeFrom(t), ds);
      };
      if (expandCur)
        cur = expandToT(cur, curT);
      if (expandO)
        o = expandToT(o, oT);
      if (!cur || !o)
        return failure();
    }
    SmallVector<int64_t> lb, rb, lc, rc, resLab;
    Dims resDims, dc = dims(cur), dO = dims(o);
    for (auto [p, x] : llvm::enumerate(curLab)) {
      auto it = llvm::find(oLab, x);
      if (it == oLab.end())
        continue;
      int64_t q = it - oLab.begin();
      bool later = llvm::is_contained(outLab, x);
      for (size_t u = t + 1; u < labs.size(); ++u)
        later |= llvm::is_contained(labs[u], x);
      if (dc[p].isStatic() && dO[q].isStatic() && dc[p].size != dO[q].size)
        return err() << "sizes of label dims differ (" << dc[p].size << " vs "
                     << dO[q].size << "); broadcasting is not supported";
      if (later) {
        lb.push_back(p);
        rb.push_back(q);
        resLab.push_back(x);
        resDims.push_back(dc[p].isStatic() ? dc[p] : dO[q]);
      } else {
        lc.push_back(p);
        rc.push_back(q);
      }
    }
    for (auto [p, x] : llvm::enumerate(curLab))
      if (!llvm::is_contained(lb, (int64_t)p) &&
          !llvm::is_contained(lc, (int64_t)p)) {
        resLab.push_back(x);
        resDims.push_back(dc[p]);
      }
    for (auto [q, x] : llvm::enumerate(oLab))
      if (!llvm::is_contained(rb, (int64_t)q) &&
          !llvm::is_contained(rc, (int64_t)q)) {
        resLab.push_back(x);
        resDims.push_back(dO[q]);
      }
    Value res = mk<DotGeneralOp>(resDims, elt(cur), cur, o, lb, rb, lc, rc);
    if (isUns(cur) || isUns(o))
      unsignedVals.insert(res);
    cur = res;
    curLab = resLab;
  }
  SmallVector<int64_t> perm;
  for (int64_t x : outLab) {
    auto it = llvm::find(curLab, x);
    if (it == curLab.end())
      return err() << "output label not found among the inputs";
    perm.push_back(it - curLab.begin());
  }
  if (perm.size() != curLab.size())
    return err() << "internal error: unreduced labels";
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    cur = transpose(cur, perm);
  out(0, cur);
  return success();
}

/// TopK: `disc.arg_sort`, the first k indices along the axis
/// (`disc.slice`, k may be run-time), values by `disc.gather_elements`.
/// The sorted order is also a valid answer for `sorted = 0`.
LogicalResult Importer::importTopK(StringRef) {
  Value x = in(0);
  int64_t axis = nodeAxis;
  bool largest = opset < 11 || aInt("largest", 1) != 0;
  Value kv;
  if (opset < 10) {
    const onnx::AttributeProto *ka = attr("k");
    if (!ka)
      return err() << "attribute 'k' is required (opset " << opset << ")";
    kv = constI64({aInt("k", 0)});
  } else {
    Value k = in(1);
    if (!k)
      return err() << "expects a 'K' input";
    if (!maybeScalar(k) || !isa<IntegerType>(elt(k)))
      return err() << "'K' must be a 1-element int64 tensor";
    kv = toI64(k);
    if (rank(kv) != 1 || tt(kv).getDimSize(0) != 1)
      kv = reshapeT(kv, {tdimConst(1)});
  }
  if (failed)
    return failure();
  Dims o = dims(x);
  if (std::optional<SmallVector<int64_t>> kc = knownInts(kv)) {
    if ((*kc)[0] < 0 || (o[axis].isStatic() && (*kc)[0] > o[axis].size))
      return err() << "k = " << (*kc)[0] << " out of range for the axis";
    o[axis] = Dim((*kc)[0]);
  } else {
    o[axis] = Dim();
  }
  Value perm =
      mk<ArgSortOp>(dims(x), b.getI64Type(), x, (uint64_t)axis, largest);
  Value idx = mk<SliceOp>(o, b.getI64Type(), perm, constI64({0}), kv,
                          constI64({1}), ArrayRef<int64_t>{axis});
  // k is never clamped: checked at run time.
  idx.getDefiningOp()->setAttr(
      kSliceBoundsMessageAttr,
      b.getStringAttr("k is {1}, out of range [0, {2}] for axis " +
                      std::to_string(axis)));
  out(0, mk<GatherElementsOp>(o, elt(x), x, idx, (uint64_t)axis));
  out(1, idx);
  return success();
}

} // namespace mlir::disc::onnx_import

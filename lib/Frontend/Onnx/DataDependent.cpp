//===- DataDependent.cpp - ONNX ops with data-dependent output sizes ------===//
//
// NonZero, Compress, Unique and NonMaxSuppression: their output sizes depend
// on the input values. Each is decomposed at import time into disc ops; the
// data-dependent size comes from a `disc.slice` whose end is a run-time count
// (a fresh dynamic dim, as TopK's run-time k), see compactIndices.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::disc::onnx_import {

/// The positions where the 1-D bool `mask` [n] is true, ascending: an i64
/// tensor [count] with a fresh dynamic dim. `pos = cumsum(mask) - 1` is each
/// true element's output slot; `disc.scatter_elements` writes the iota
/// `0..n-1` into a zero buffer [n + 1] at `pos` for true elements and at the
/// dump slot n for false ones (the scatter runs in order, so duplicates only
/// overwrite the dump slot), and `disc.slice [0, count)` with
/// `count = sum(mask)` keeps the compacted prefix. Cost O(n).
Value Importer::compactIndices(Value mask) {
  if (!mask)
    return nullptr;
  Type i64 = b.getI64Type();
  TDim n = tdimOf(mask, 0);
  Value nv = n.v ? n.v : constI64({n.d.size});
  Value m = convert(mask, i64, false, false);
  Value pos = binary<SubOp>(
      mk<CumSumOp>(dims(m), i64, m, (uint64_t)0, false, false), constI64({1}));
  Value target = select(mask, pos, nv);
  TDim n1 = n.d.isStatic() ? tdimConst(n.d.size + 1)
                           : TDim{Dim(), binary<AddOp>(nv, constI64({1}))};
  Value buf = expandTo(constI64Scalar(0), shapeFrom({n1}), Dims{n1.d});
  Value io = mk<RangeOp>(Dims{n.d}, i64, constI64Scalar(0), dimScalar(mask, 0),
                         constI64Scalar(1));
  if (!target || !buf)
    return nullptr;
  buf = mk<ScatterElementsOp>(dims(buf), i64, buf, target, io, (uint64_t)0,
                              "none");
  Value count =
      reshapeT(reduce(ReduceKind::Sum, m, {0}, false), {tdimConst(1)});
  return mk<SliceOp>(Dims{Dim()}, i64, buf, constI64({0}), count, constI64({1}),
                     ArrayRef<int64_t>{0});
}

/// `x` reshaped to 1-D (row-major).
Value Importer::flattenAll(Value x) {
  TDim total = tdimConst(1);
  for (int64_t i = 0; i < rank(x); ++i)
    total = tdimMul(total, tdimOf(x, i));
  return reshapeT(x, {total});
}

/// ONNX NonZero (opset 9, 13): the indices of the non-zero elements of X,
/// [rank(X), count] i64, in row-major order (numpy.nonzero; a 0-d X is
/// read as [1]). Decomposition: `compactIndices(flatten(X != 0))` gives the
/// flat positions [count]; coordinate d is `(flat / stride_d) % dim_d`.
LogicalResult Importer::importNonZero(StringRef) {
  Value x = in(0);
  if (failed)
    return failure();
  if (rank(x) == 0)
    x = reshapeT(x, {tdimConst(1)});
  int64_t r = rank(x);
  Value nz = elt(x).isInteger(1)
                 ? x
                 : compare(CompareDirection::NE, x, scalarLike(x, 0));
  Value idx = compactIndices(flattenAll(nz));
  if (!idx)
    return failure();
  Dim k = dims(idx)[0];
  SmallVector<Value> rows(r);
  TDim stride = tdimConst(1);
  for (int64_t i = r - 1; i >= 0; --i) {
    Value c = idx;
    if (!(stride.d.isStatic() && stride.d.size == 1))
      c = binary<DivOp>(c, stride.v ? stride.v : constI64({stride.d.size}));
    if (i > 0)
      c = binary<RemOp>(c, dimOf(x, i));
    rows[i] = reshapeT(c, {tdimConst(1), tdimOf(idx, 0)});
    stride = tdimMul(stride, tdimOf(x, i));
  }
  if (r == 1)
    return finish(rows[0]);
  return finish(
      mk<ConcatenateOp>(Dims{Dim(r), k}, b.getI64Type(), rows, (uint64_t)0));
}

/// ONNX Compress (opset 9, 11): the slices of `input` along `axis` (of the
/// flattened input when `axis` is absent) where the 1-D bool `condition` is
/// true. A condition shorter than the axis counts as false past its end
/// (it is padded with false, and cut to the axis length). Decomposition:
/// `disc.gather(input, compactIndices(condition), axis)`.
LogicalResult Importer::importCompress(StringRef) {
  Value x = in(0), cond = in(1);
  if (failed)
    return failure();
  if (rank(cond) != 1)
    return err() << "condition must be 1-D, got rank " << rank(cond);
  if (!isa<IntegerType>(elt(cond)))
    return err() << "condition must be a bool tensor, got " << elt(cond);
  int64_t axis = 0;
  if (attr("axis")) {
    FailureOr<int64_t> a = normAxis(aInt("axis", 0), rank(x));
    if (::mlir::failed(a))
      return failure();
    axis = *a;
  } else {
    x = flattenAll(x);
  }
  if (failed)
    return failure();
  Type i1 = b.getI1Type();
  if (!elt(cond).isInteger(1))
    cond = compare(CompareDirection::NE, cond, scalarLike(cond, 0));
  // The condition fitted to the axis length n: padded with false by
  // max(n - len, 0), then sliced to [0, n).
  Dim n = dims(x)[axis], len = dims(cond)[0];
  if (!(n.isStatic() && len.isStatic() && n.size == len.size)) {
    Value nv = dimOf(x, axis);
    Value padHi =
        binary<MaxOp>(binary<SubOp>(nv, dimOf(cond, 0)), constI64({0}));
    Value padded =
        mk<PadOp>(Dims{Dim()}, i1, PadMode::Constant, cond,
                  concatI64({constI64({0}), padHi}), constScalar(i1, 0));
    cond = mk<SliceOp>(Dims{n.isStatic() ? n : Dim()}, i1, padded,
                       constI64({0}), nv, constI64({1}), ArrayRef<int64_t>{0});
  }
  Value idx = compactIndices(cond);
  if (!idx)
    return failure();
  Dims o = dims(x);
  o[axis] = dims(idx)[0];
  Value res = mk<GatherOp>(o, elt(x), x, idx, (uint64_t)axis);
  return finish(markUnsigned(res, isUns(x)));
}

/// ONNX NonMaxSuppression (opset 10, 11), as the ONNX reference / ORT:
/// boxes [B, N, 4] (corners [y1, x1, y2, x2] in any order with
/// center_point_box = 0, [xc, yc, w, h] with 1), scores [B, C, N],
/// max_output_boxes_per_class (absent or <= 0: nothing selected),
/// iou_threshold (default 0), score_threshold (when given, boxes with
/// score <= threshold are dropped). Output [K, 3] i64 (batch, class, box),
/// ordered by batch, class, then descending score (ties: lower box first).
///
/// Decomposition: a stable descending `disc.arg_sort` of each (b, c) row of
/// scores (O(N^2) per row) orders the box extents (xmin, xmax, ymin, ymax,
/// area, each [B, C, N]); an `scf.for` over the sorted position i (0..N-1)
/// carries the selected flags [B, C, N] and the per-row count [B, C, 1]:
/// box i of every row is selected when its score passes the threshold, the
/// count is below the maximum and no selected box has IoU > iou_threshold
/// with it (IoU as the reference: 0 when the intersection or an area is
/// not positive); each step is vectorized over all rows (O(B C N) work, so
/// O(B C N^2) in all). The flags, in row-major (b, c, sorted position)
/// order, are compacted (compactIndices) into the output triples.
LogicalResult Importer::importNonMaxSuppression(StringRef) {
  Value boxes = in(0), scores = in(1);
  Value maxOut = in(2), iouIn = in(3), scoreIn = in(4);
  if (failed || ::mlir::failed(sameElt(boxes, scores)))
    return failure();
  if (rank(scores) != 3)
    return err() << "scores must be 3-D [batch, classes, boxes]";
  {
    Dims bx = dims(boxes), sc = dims(scores);
    if ((bx[2].isStatic() && bx[2].size != 4) ||
        (bx[0].isStatic() && sc[0].isStatic() && bx[0].size != sc[0].size) ||
        (bx[1].isStatic() && sc[2].isStatic() && bx[1].size != sc[2].size))
      return err() << "boxes must be [batch, boxes, 4] and scores [batch, "
                      "classes, boxes]";
  }
  int64_t cpb = aInt("center_point_box", 0);
  if (cpb != 0 && cpb != 1)
    return err() << "center_point_box must be 0 or 1, got " << cpb;
  for (Value v : {maxOut, iouIn, scoreIn})
    if (v && !maybeScalar(v))
      return err() << "max_output_boxes_per_class, iou_threshold and "
                      "score_threshold must have one element";
  if (maxOut && (!isa<IntegerType>(elt(maxOut)) || elt(maxOut).isInteger(1)))
    return err() << "max_output_boxes_per_class must be an integer tensor";
  for (Value v : {iouIn, scoreIn})
    if (v && !isFloat(v))
      return err() << "iou_threshold and score_threshold must be float";
  if (failed)
    return failure();
  Type e = elt(boxes), i64 = b.getI64Type(), i1 = b.getI1Type();
  // Absent (or constant <= 0) max_output_boxes_per_class: nothing selected.
  std::optional<SmallVector<int64_t>> km;
  if (maxOut)
    km = knownInts(maxOut);
  if (!maxOut || (km && (*km)[0] <= 0)) {
    auto type = RankedTensorType::get({0, 3}, i64);
    return finish(
        constDense(DenseElementsAttr::get(type, ArrayRef<int64_t>{})));
  }
  auto scalarOf = [&](Value v) {
    return rank(v) == 0 ? v : reshapeToScalar(v);
  };
  Value maxV = binary<MaxOp>(toI64(scalarOf(maxOut)), constI64Scalar(0));
  Value iouThr =
      iouIn ? convert(scalarOf(iouIn), e, false, false) : constScalar(e, 0);
  Value scoreThr =
      scoreIn ? convert(scalarOf(scoreIn), e, false, false) : Value();

  // Box extents [B, N] each.
  TDim bd = tdimOf(boxes, 0), nd = tdimOf(boxes, 1);
  auto coord = [&](int64_t k) {
    return reshapeT(sliceStatic(boxes, {2}, {k}, {k + 1}), {bd, nd});
  };
  Value c0 = coord(0), c1 = coord(1), c2 = coord(2), c3 = coord(3);
  Value xmin, xmax, ymin, ymax;
  if (cpb == 0) {
    ymin = binary<MinOp>(c0, c2);
    ymax = binary<MaxOp>(c0, c2);
    xmin = binary<MinOp>(c1, c3);
    xmax = binary<MaxOp>(c1, c3);
  } else {
    Value half = constScalar(e, 2);
    Value hw = binary<DivOp>(c2, half), hh = binary<DivOp>(c3, half);
    xmin = binary<SubOp>(c0, hw);
    xmax = binary<AddOp>(c0, hw);
    ymin = binary<SubOp>(c1, hh);
    ymax = binary<AddOp>(c1, hh);
  }
  Value area =
      binary<MulOp>(binary<SubOp>(xmax, xmin), binary<SubOp>(ymax, ymin));
  if (!area)
    return failure();

  // Sorted order of every (b, c) row; the extents in that order [B, C, N].
  Dims sd = dims(scores);
  Value perm = mk<ArgSortOp>(sd, i64, scores, (uint64_t)2, true);
  Value sortedScores = mk<GatherElementsOp>(sd, e, scores, perm, (uint64_t)2);
  Value scoreShape = shapeOf(scores);
  auto sorted = [&](Value v) {
    Value ex = expandTo(reshapeT(v, {bd, tdimConst(1), nd}), scoreShape, sd);
    return mk<GatherElementsOp>(sd, e, ex, perm, (uint64_t)2);
  };
  Value sx0 = sorted(xmin), sx1 = sorted(xmax), sy0 = sorted(ymin),
        sy1 = sorted(ymax), sa = sorted(area);
  Value valid = scoreThr ? compare(CompareDirection::GT, sortedScores, scoreThr)
                         : Value();
  Value pos = iotaAlong(scores, 2, 3, 2); // [1, 1, N]
  TDim bt = tdimOf(scores, 0), ct = tdimOf(scores, 1);
  Value sel0 = expandTo(constScalar(i1, 0), scoreShape, sd);
  Dims cntDims = {sd[0], sd[1], Dim(1)};
  Value cnt0 =
      expandTo(constI64Scalar(0), shapeFrom({bt, ct, tdimConst(1)}), cntDims);
  if (!sel0 || !cnt0 || !pos || (scoreThr && !valid))
    return failure();

  Value upper = tensor::DimOp::create(b, loc, scores, 2).getResult();
  Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0).getResult();
  Value oneIdx = arith::ConstantIndexOp::create(b, loc, 1).getResult();
  auto loop = scf::ForOp::create(b, loc, zeroIdx, upper, oneIdx,
                                 ValueRange{sel0, cnt0});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value sel = record(loop.getRegionIterArgs()[0], sd);
    Value cnt = record(loop.getRegionIterArgs()[1], cntDims);
    auto vec = [&](Value idx) {
      Value v = arith::IndexCastOp::create(b, loc, i64, idx).getResult();
      return tensor::FromElementsOp::create(b, loc,
                                            RankedTensorType::get({1}, i64), v)
          .getResult();
    };
    Value iv = loop.getInductionVar();
    Value start = vec(iv);
    Value end = vec(arith::AddIOp::create(b, loc, iv, oneIdx).getResult());
    auto at = [&](Value v) { // [B, C, 1]: sorted position i of every row
      return mk<SliceOp>(Dims{sd[0], sd[1], Dim(1)}, elt(v), v, start, end,
                         constI64({1}), ArrayRef<int64_t>{2});
    };
    Value ix0 = binary<MaxOp>(at(sx0), sx0);
    Value ix1 = binary<MinOp>(at(sx1), sx1);
    Value iy0 = binary<MaxOp>(at(sy0), sy0);
    Value iy1 = binary<MinOp>(at(sy1), sy1);
    Value ai = at(sa);
    Value inter =
        binary<MulOp>(binary<SubOp>(ix1, ix0), binary<SubOp>(iy1, iy0));
    Value uni = binary<SubOp>(binary<AddOp>(ai, sa), inter);
    Value zero = constScalar(e, 0);
    Value sup =
        compare(CompareDirection::GT, binary<DivOp>(inter, uni), iouThr);
    for (Value ok : {compare(CompareDirection::GT, ix1, ix0),
                     compare(CompareDirection::GT, iy1, iy0),
                     compare(CompareDirection::GT, inter, zero),
                     compare(CompareDirection::GT, ai, zero),
                     compare(CompareDirection::GT, sa, zero),
                     compare(CompareDirection::GT, uni, zero), sel})
      sup = binary<AndOp>(sup, ok);
    if (!sup)
      return failure();
    Value hit = reduce(ReduceKind::Max, convert(sup, i64, false, false), {2},
                       /*keep=*/true); // [B, C, 1]
    Value take =
        binary<AndOp>(compare(CompareDirection::EQ, hit, constI64Scalar(0)),
                      compare(CompareDirection::LT, cnt, maxV));
    if (valid)
      take = binary<AndOp>(take, at(valid));
    Value here = compare(CompareDirection::EQ, pos, start); // [1, 1, N]
    Value selNext = select(binary<AndOp>(here, take), constScalar(i1, 1), sel);
    Value cntNext = binary<AddOp>(cnt, convert(take, i64, false, false));
    if (!selNext || !cntNext)
      return failure();
    if (tt(selNext) != tt(sel))
      selNext = tensor::CastOp::create(b, loc, tt(sel), selNext).getResult();
    if (tt(cntNext) != tt(cnt))
      cntNext = tensor::CastOp::create(b, loc, tt(cnt), cntNext).getResult();
    scf::YieldOp::create(b, loc, ValueRange{selNext, cntNext});
  }
  // Shapes computed inside the loop must not be reused outside it.
  for (auto it = shapeCache.begin(); it != shapeCache.end();) {
    auto cur = it++;
    Operation *def = cur->second.getDefiningOp();
    if (def && loop->isProperAncestor(def))
      shapeCache.erase(cur);
  }
  Value selected = record(loop.getResult(0), sd);

  // Compaction in row-major (b, c, sorted position) order.
  Value idx = compactIndices(flattenAll(selected));
  if (!idx)
    return failure();
  TDim cn = tdimMul(ct, nd);
  Value cnV = cn.v ? cn.v : constI64({cn.d.size});
  Value nV = nd.v ? nd.v : constI64({nd.d.size});
  Value cV = ct.v ? ct.v : constI64({ct.d.size});
  Value batchIdx = binary<DivOp>(idx, cnV);
  Value classIdx = binary<RemOp>(binary<DivOp>(idx, nV), cV);
  Value boxIdx =
      mk<GatherOp>(dims(idx), i64, flattenAll(perm), idx, (uint64_t)0);
  TDim kt = tdimOf(idx, 0);
  SmallVector<Value> cols;
  for (Value v : {batchIdx, classIdx, boxIdx})
    cols.push_back(reshapeT(v, {kt, tdimConst(1)}));
  return finish(mk<ConcatenateOp>(Dims{kt.d, Dim(3)}, i64, cols, (uint64_t)1));
}

/// ONNX Unique (opset 11): the unique elements of the flattened X, or the
/// unique slices along `axis`; outputs Y, indices (first occurrence of each
/// unique value in X), inverse_indices (the unique value of every element /
/// slice of X) and counts, all i64 but Y. `sorted` = 1 orders Y ascending
/// (slices compared lexicographically, as numpy.unique); 0 keeps the order
/// of first occurrence.
///
/// Decomposition: X as rows [n, m] (n elements with m = 1, or n slices of
/// m elements along `axis`); a stable ascending `disc.arg_sort` per column,
/// from the last column to the first (an `scf.for` over the m columns when
/// m != 1), gives the lexicographic order `perm` of the rows (LSD sort:
/// O(m n^2) as arg_sort is quadratic). In that order a row starts a group
/// when it differs from the previous one (flags f); `g = cumsum(f) - 1` is
/// its group. With sorted = 1: the group starts (compactIndices(f)) index
/// `perm` for `indices` (a stable sort puts the first occurrence first),
/// `inverse_indices[perm[i]] = g[i]` (scatter), counts by a scatter-add.
/// With sorted = 0 the groups are renumbered by first occurrence: the first
/// occurrences flagged in X's order, compacted (`indices`), and their rank
/// (cumsum) gives each group's new id.
LogicalResult Importer::importUnique(StringRef) {
  Value x = in(0);
  if (failed)
    return failure();
  int64_t sortedAttr = aInt("sorted", 1);
  if (sortedAttr != 0 && sortedAttr != 1)
    return err() << "attribute 'sorted' must be 0 or 1, got " << sortedAttr;
  bool hasAxis = attr("axis") != nullptr;
  int64_t axis = 0;
  if (hasAxis) {
    FailureOr<int64_t> a = normAxis(aInt("axis", 0), rank(x));
    if (::mlir::failed(a))
      return failure();
    axis = *a;
  }
  if (failed)
    return failure();
  Type i64 = b.getI64Type();
  // The sort keys: bool as i32, unsigned widened to i64 (exact).
  FailureOr<Value> kx = widen(x);
  if (::mlir::failed(kx))
    return failure();
  Value keys =
      elt(*kx).isInteger(1) ? convert(*kx, b.getI32Type(), false, false) : *kx;
  // Rows [n, m] (or [n] when each row is one element).
  Value data = x, rows;
  TDim n, m = tdimConst(1);
  if (!hasAxis) {
    data = flattenAll(x);
    rows = flattenAll(keys);
    n = tdimOf(rows, 0);
  } else {
    SmallVector<int64_t> permAxes = {axis};
    for (int64_t i = 0; i < rank(x); ++i)
      if (i != axis)
        permAxes.push_back(i);
    Value moved = transpose(keys, permAxes);
    n = tdimOf(moved, 0);
    for (int64_t i = 1; i < rank(moved); ++i)
      m = tdimMul(m, tdimOf(moved, i));
    rows = reshapeT(moved, {n, m});
    if (m.d.isStatic() && m.d.size == 1)
      rows = reshapeT(rows, {n});
  }
  if (!rows)
    return failure();
  Dims nd = {n.d};
  Value iota = mk<RangeOp>(nd, i64, constI64Scalar(0), dimScalar(rows, 0),
                           constI64Scalar(1));
  Value perm;
  if (rank(rows) == 1) {
    perm = mk<ArgSortOp>(nd, i64, rows, (uint64_t)0, false);
  } else {
    // LSD: stable sorts by the columns m-1, ..., 0.
    Value mIdx = tensor::DimOp::create(b, loc, rows, 1).getResult();
    Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0).getResult();
    Value oneIdx = arith::ConstantIndexOp::create(b, loc, 1).getResult();
    Value nShape = shapeFrom({n});
    auto loop =
        scf::ForOp::create(b, loc, zeroIdx, mIdx, oneIdx, ValueRange{iota});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value p = record(loop.getRegionIterArgs()[0], nd);
      Value col =
          arith::SubIOp::create(
              b, loc,
              arith::SubIOp::create(b, loc, mIdx, loop.getInductionVar())
                  .getResult(),
              oneIdx)
              .getResult();
      auto vec = [&](Value idx) {
        Value v = arith::IndexCastOp::create(b, loc, i64, idx).getResult();
        return tensor::FromElementsOp::create(
                   b, loc, RankedTensorType::get({1}, i64), v)
            .getResult();
      };
      Value start = vec(col);
      Value end = vec(arith::AddIOp::create(b, loc, col, oneIdx).getResult());
      Value c = mk<SliceOp>(Dims{n.d, Dim(1)}, elt(rows), rows, start, end,
                            constI64({1}), ArrayRef<int64_t>{1});
      Value cp = mk<GatherOp>(Dims{n.d, Dim(1)}, elt(rows), c, p, (uint64_t)0);
      Value key = mk<DynamicReshapeOp>(nd, elt(rows), cp, nShape,
                                       /*allow_zero=*/true);
      Value order = mk<ArgSortOp>(nd, i64, key, (uint64_t)0, false);
      Value next = mk<GatherOp>(nd, i64, p, order, (uint64_t)0);
      if (tt(next) != tt(p))
        next = tensor::CastOp::create(b, loc, tt(p), next).getResult();
      scf::YieldOp::create(b, loc, ValueRange{next});
    }
    for (auto it = shapeCache.begin(); it != shapeCache.end();) {
      auto cur = it++;
      Operation *def = cur->second.getDefiningOp();
      if (def && loop->isProperAncestor(def))
        shapeCache.erase(cur);
    }
    perm = record(loop.getResult(0), nd);
  }
  // Group starts in sorted order.
  Value prevIdx =
      binary<MaxOp>(binary<SubOp>(iota, constI64Scalar(1)), constI64Scalar(0));
  Dims rd = dims(rows);
  rd[0] = n.d;
  Value srt = mk<GatherOp>(rd, elt(rows), rows, perm, (uint64_t)0);
  Value prev = mk<GatherOp>(rd, elt(rows), srt, prevIdx, (uint64_t)0);
  Value diff = compare(CompareDirection::NE, srt, prev);
  if (rank(rows) == 2)
    diff = compare(
        CompareDirection::GT,
        reduce(ReduceKind::Max, convert(diff, i64, false, false), {1}, false),
        constI64Scalar(0));
  Value first = binary<OrOp>(
      diff, compare(CompareDirection::EQ, iota, constI64Scalar(0)));
  if (!first)
    return failure();
  Value f64 = convert(first, i64, false, false);
  Value grp = binary<SubOp>(
      mk<CumSumOp>(nd, i64, f64, (uint64_t)0, false, false), constI64Scalar(1));
  Value starts = compactIndices(first); // [U], sorted positions
  Value zerosN = expandTo(constI64Scalar(0), shapeFrom({n}), nd);
  Value onesN = expandTo(constI64Scalar(1), shapeFrom({n}), nd);
  if (!starts || !grp || !zerosN || !onesN)
    return failure();
  auto scatter = [&](Value idx, Value upd, StringRef red) {
    return mk<ScatterElementsOp>(nd, i64, zerosN, idx, upd, (uint64_t)0, red);
  };
  auto gather1 = [&](Value src, Value idx) {
    return mk<GatherOp>(dims(idx), i64, src, idx, (uint64_t)0);
  };
  Value indices, inverse, counts;
  if (sortedAttr == 1) {
    indices = gather1(perm, starts);
    inverse = scatter(perm, grp, "none");
    counts = gather1(scatter(grp, onesN, "add"), gather1(grp, starts));
  } else {
    Value firstOrig = scatter(perm, f64, "none"); // X's order
    indices = compactIndices(
        compare(CompareDirection::NE, firstOrig, constI64Scalar(0)));
    if (!indices)
      return failure();
    Value newId = binary<SubOp>(
        mk<CumSumOp>(nd, i64, firstOrig, (uint64_t)0, false, false),
        constI64Scalar(1));
    // The first occurrence of the group of every sorted position.
    Value fo = gather1(perm, gather1(starts, grp));
    Value nid = gather1(newId, fo);
    inverse = scatter(perm, nid, "none");
    counts = gather1(scatter(nid, onesN, "add"), gather1(newId, indices));
  }
  Dims yd = dims(data);
  yd[axis] = dims(indices)[0];
  Value y = markUnsigned(
      mk<GatherOp>(yd, elt(data), data, indices, (uint64_t)axis), isUns(x));
  return finishAll({y, indices, inverse, counts});
}

} // namespace mlir::disc::onnx_import

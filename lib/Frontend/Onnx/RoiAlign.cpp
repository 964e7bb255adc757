//===- RoiAlign.cpp - ONNX RoiAlign ---------------------------------------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include <cmath>
#include <limits>

namespace mlir::disc::onnx_import {

namespace {
/// The bilinear taps of the sampling points along one axis (y or x) of
/// every roi: row and column indices and weights, [R, P] with
/// P = out * grid * 2 (bin, sample, low/high tap).
struct AxisTaps {
  Value idx, weight;
  /// Adaptive grids only: whether the sample exists in its roi's grid.
  Value inGrid;
  TDim p;
};
} // namespace

/// ONNX RoiAlign (opset 10, 16), as the ONNX reference implementation (the
/// ORT / Caffe2 algorithm): X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2),
/// batch_indices [R]; Y [R, C, output_height, output_width]. Each output
/// bin averages (mode avg) or maxes (mode max) its grid of sampling points;
/// a point at (y, x) outside [-1, H] x [-1, W] reads 0, otherwise the
/// coordinates are clamped to 0 and the 4 bilinear taps (clamped at the
/// last row/column) are weighted. Max mode is the reference's: the maximum
/// over the points of the maximum of the 4 *weighted* taps. Coordinates are
/// shifted by -0.5 with coordinate_transformation_mode half_pixel (the
/// opset-16 default); output_half_pixel (the opset-10 behavior) does not
/// shift them and makes degenerate rois at least 1 x 1.
///
/// sampling_ratio > 0 gives a grid of sampling_ratio^2 points per bin.
/// sampling_ratio = 0 (adaptive, ceil(roi_size / output_size) points per
/// axis and roi) is supported with a bound: every roi is sampled on the
/// grid of the largest one (a run-time size) and the points beyond its own
/// grid are masked out.
///
/// Decomposition: per axis, the sample coordinates [R, out, grid] give tap
/// indices and weights [R, P]; `disc.gather_nd` on X transposed to
/// [N, H, W, C] with (batch, y, x) index triples [R, Py, Px, 3] reads the
/// taps [R, Py, Px, C]; they are weighted by the outer product of the y and
/// x weights, reduced over the grid and taps ([R, oh, ow, C]) and transposed
/// to [R, C, oh, ow]. Cost: R * C * oh * ow * 4 * grid_h * grid_w gathered
/// elements (materialized unless fused).
LogicalResult Importer::importRoiAlign(StringRef) {
  Value x = in(0), rois = in(1), bidx = in(2);
  if (failed || ::mlir::failed(sameElt(x, rois)))
    return failure();
  if (rank(rois) != 2 ||
      (!tt(rois).isDynamicDim(1) && tt(rois).getDimSize(1) != 4))
    return err() << "rois must be [num_rois, 4], got " << tt(rois);
  if (rank(bidx) != 1 || !isa<IntegerType>(elt(bidx)) || elt(bidx).isInteger(1))
    return err() << "batch_indices must be a 1-D integer tensor";
  std::string mode = aStr("mode", "avg");
  if (mode != "avg" && mode != "max")
    return err() << "attribute 'mode' must be 'avg' or 'max', got '" << mode
                 << "'";
  std::string ctm = opset >= 16
                        ? aStr("coordinate_transformation_mode", "half_pixel")
                        : std::string("output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return err() << "attribute 'coordinate_transformation_mode' must be "
                    "'half_pixel' or 'output_half_pixel', got '"
                 << ctm << "'";
  int64_t oh = aInt("output_height", 1), ow = aInt("output_width", 1);
  int64_t sr = aInt("sampling_ratio", 0);
  float scale = aFloat("spatial_scale", 1.0f);
  if (oh <= 0 || ow <= 0)
    return err() << "output_height and output_width must be positive";
  if (sr < 0)
    return err() << "sampling_ratio must be >= 0, got " << sr;
  if (failed)
    return failure();
  bool halfPixel = ctm == "half_pixel", adaptive = sr == 0,
       isMax = mode == "max";
  Type e = elt(x), i64 = b.getI64Type();
  TDim rt = tdimOf(rois, 0);
  auto coord = [&](int64_t k) {
    Value v = reshapeT(sliceStatic(rois, {1}, {k}, {k + 1}),
                       {rt, tdimConst(1), tdimConst(1)});
    v = binary<MulOp>(v, constScalar(e, scale));
    return halfPixel ? binary<SubOp>(v, constScalar(e, 0.5)) : v;
  };
  // [R, 1, 1] each.
  Value sw = coord(0), sh = coord(1), ew = coord(2), eh = coord(3);
  Value rw = binary<SubOp>(ew, sw), rh = binary<SubOp>(eh, sh);
  if (!halfPixel) {
    rw = binary<MaxOp>(rw, constScalar(e, 1));
    rh = binary<MaxOp>(rh, constScalar(e, 1));
  }
  Value binH = binary<DivOp>(rh, constScalar(e, (double)oh));
  Value binW = binary<DivOp>(rw, constScalar(e, (double)ow));
  // Grid sizes: static, or per roi (ceil(roi_size / out), as float).
  Value gridH, gridW;
  if (adaptive) {
    gridH = unary<CeilOp>(binH);
    gridW = unary<CeilOp>(binW);
  } else {
    gridH = gridW = constScalar(e, (double)sr);
  }
  if (!gridH || !gridW)
    return failure();

  auto taps = [&](Value start, Value bin, Value grid, int64_t out,
                  int64_t dim) -> AxisTaps {
    Value o = mk<RangeOp>(Dims{Dim(out)}, e, constScalar(e, 0),
                          constScalar(e, (double)out), constScalar(e, 1));
    o = reshapeT(o, {tdimConst(1), tdimConst(out), tdimConst(1)});
    TDim g = tdimConst(sr);
    Value it;
    if (adaptive) {
      // The largest grid (>= 0) bounds every roi's.
      Value gmax = binary<MaxOp>(reduce(ReduceKind::Max, grid, {0, 1, 2},
                                        /*keep=*/false),
                                 constScalar(e, 0));
      Value gi = convert(gmax, i64, false, false);
      it = mk<RangeOp>(Dims{Dim()}, i64, constI64Scalar(0), gi,
                       constI64Scalar(1));
      it = convert(it, e, false, false);
      g = tdimOf(it, 0);
    } else {
      it = mk<RangeOp>(Dims{Dim(sr)}, e, constScalar(e, 0),
                       constScalar(e, (double)sr), constScalar(e, 1));
    }
    it = reshapeT(it, {tdimConst(1), tdimConst(1), g});
    Value frac = binary<AddOp>(it, constScalar(e, 0.5));
    // start + o * bin + (i + 0.5) * bin / grid: [R, out, grid]. An empty
    // adaptive grid (<= 0, all its points masked) divides by 1 instead, so
    // that no position is NaN or infinite.
    Value div = adaptive ? binary<MaxOp>(grid, constScalar(e, 1)) : grid;
    Value y = binary<AddOp>(binary<AddOp>(start, binary<MulOp>(o, bin)),
                            binary<MulOp>(frac, binary<DivOp>(bin, div)));
    Value size = convert(dimOf(x, dim), e, false, false);
    Value valid =
        binary<AndOp>(compare(CompareDirection::GE, y, constScalar(e, -1)),
                      compare(CompareDirection::LE, y, size));
    Value yc = binary<MaxOp>(y, constScalar(e, 0));
    Value low = unary<FloorOp>(yc);
    Value last = binary<SubOp>(size, constScalar(e, 1));
    Value edge = compare(CompareDirection::GE, low, last);
    low = select(edge, last, low);
    yc = select(edge, low, yc);
    Value high = select(edge, low, binary<AddOp>(low, constScalar(e, 1)));
    Value l = binary<SubOp>(yc, low);
    Value h = binary<SubOp>(constScalar(e, 1), l);
    Value vf = convert(valid, e, false, false);
    AxisTaps t;
    TDim og = tdimMul(tdimConst(out), g);
    t.p = tdimMul(og, tdimConst(2));
    TDim r = tdimOf(y, 0);
    auto pair = [&](Value a, Value c) -> Value {
      if (!a || !c)
        return nullptr;
      SmallVector<TDim> t4 = {r, tdimConst(out), g, tdimConst(1)};
      Value parts[] = {reshapeT(a, t4), reshapeT(c, t4)};
      Dims d = dims(parts[0]);
      d[3] = Dim(2);
      Value cat = mk<ConcatenateOp>(d, elt(a), parts, (uint64_t)3);
      return reshapeT(cat, {r, t.p});
    };
    t.idx =
        pair(convert(low, i64, false, false), convert(high, i64, false, false));
    t.weight = pair(binary<MulOp>(h, vf), binary<MulOp>(l, vf));
    if (adaptive) {
      // Sample i exists when i < the roi's grid: [R, 1, G], broadcast to
      // [R, out, G] (o == o is all true) and to both taps.
      Value inG = compare(CompareDirection::LT, it, grid);
      Value full = binary<AndOp>(inG, compare(CompareDirection::EQ, o, o));
      t.inGrid = pair(full, full);
    }
    return t;
  };
  AxisTaps ty = taps(sh, binH, gridH, oh, 2);
  AxisTaps tx = taps(sw, binW, gridW, ow, 3);
  if (!ty.idx || !ty.weight || !tx.idx || !tx.weight ||
      (adaptive && (!ty.inGrid || !tx.inGrid)))
    return failure();

  TDim ct = tdimOf(x, 1);
  SmallVector<TDim> full4 = {rt, ty.p, tx.p, tdimConst(1)};
  Dims fullDims = {rt.d, ty.p.d, tx.p.d, Dim(1)};
  Value shape4 = shapeFrom(full4);
  auto spread = [&](Value v, bool isY) {
    SmallVector<TDim> t = {rt, isY ? ty.p : tdimConst(1),
                           isY ? tdimConst(1) : tx.p, tdimConst(1)};
    return reshapeT(v, t);
  };
  Value bI =
      reshapeT(toI64(bidx), {rt, tdimConst(1), tdimConst(1), tdimConst(1)});
  Value parts[] = {expandTo(bI, shape4, fullDims),
                   expandTo(spread(ty.idx, true), shape4, fullDims),
                   expandTo(spread(tx.idx, false), shape4, fullDims)};
  for (Value v : parts)
    if (!v)
      return failure();
  Value ind = mk<ConcatenateOp>(Dims{rt.d, ty.p.d, tx.p.d, Dim(3)}, i64, parts,
                                (uint64_t)3);
  Value xt = transpose(x, {0, 2, 3, 1}); // [N, H, W, C]
  Value g =
      mk<GatherNdOp>(Dims{rt.d, ty.p.d, tx.p.d, ct.d}, e, xt, ind, (uint64_t)0);
  Value v = binary<MulOp>(
      g, binary<MulOp>(spread(ty.weight, true), spread(tx.weight, false)));
  // Points beyond their roi's own (adaptive) grid: excluded from the sum
  // and the maximum.
  if (adaptive)
    v = select(
        binary<AndOp>(spread(ty.inGrid, true), spread(tx.inGrid, false)), v,
        constScalar(e, isMax ? -std::numeric_limits<double>::infinity() : 0.0));
  if (!v)
    return failure();
  // [R, oh, grid_h * 2, ow, grid_w * 2, C]
  auto perBin = [&](const TDim &p, int64_t out) -> TDim {
    if (p.d.isStatic())
      return tdimConst(p.d.size / out);
    return {Dim(), binary<DivOp>(p.v, constI64({out}))};
  };
  Value v6 = reshapeT(v, {rt, tdimConst(oh), perBin(ty.p, oh), tdimConst(ow),
                          perBin(tx.p, ow), ct});
  Value res;
  if (isMax) {
    res = reduce(ReduceKind::Max, v6, {2, 4}, false); // [R, oh, ow, C]
    if (adaptive) {
      // No sampling point (an empty grid): 0, as the reference.
      Value any = binary<AndOp>(
          compare(CompareDirection::GE, gridH, constScalar(e, 1)),
          compare(CompareDirection::GE, gridW, constScalar(e, 1)));
      any = reshapeT(any, {rt, tdimConst(1), tdimConst(1), tdimConst(1)});
      res = select(any, res, constScalar(e, 0));
    }
  } else {
    Value count = binary<MaxOp>(binary<MulOp>(gridH, gridW),
                                constScalar(e, 1)); // [R, 1, 1] or 0-d
    if (rank(count) == 3)
      count = reshapeT(count, {rt, tdimConst(1), tdimConst(1), tdimConst(1)});
    res = binary<DivOp>(reduce(ReduceKind::Sum, v6, {2, 4}, false), count);
  }
  if (!res)
    return failure();
  return finish(transpose(res, {0, 3, 1, 2}));
}

} // namespace mlir::disc::onnx_import

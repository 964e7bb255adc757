//===- Signal.cpp - ONNX DFT, STFT and MelWeightMatrix --------------------===//
//
// The signal-processing ops of opset 17 as matrix products with cos/sin
// tables built at run time (the transform length may be a run-time value).
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include <cmath>

namespace mlir::disc::onnx_import {

/// The DFT of `x` [d_0, .., L (at `axis`), .., d_{r-2}, c] (c = 1: real,
/// c = 2: complex as (re, im)) along `axis`, as ONNX DFT-17 defines it:
/// `length` (a 0-d i64, or null for L) is the transform length N (the signal
/// truncated to its first N values, or zero-padded: the padding adds
/// nothing, so only the first min(L, N) values enter the product), the
/// result [.., M, .., 2] has M = N, or N / 2 + 1 when `onesided`, bins
///   Y[k] = sum_n x[n] exp(-+2 pi i n k / N)    (- forward, + inverse),
/// the inverse scaled by 1 / N. The tables C[n, k] = cos(2 pi (n k mod N) /
/// N) and S[n, k] = sin(..) [min(L, N), M] are computed in f64 (the reduced
/// angle keeps them exact to f64 rounding) and converted to x's element
/// type; the products are `disc.dot_general` contractions of the signal
/// dim, moved last (real input: 2, complex: 4; f32 ones are oneDNN
/// matmuls), O(L * M) per transformed vector; the tables take O(L * M)
/// memory (a direct DFT, not an FFT). A last dim not known at compile time
/// is padded to 2 with zeros at run time (a real input then goes through
/// the complex path) and checked to be 1 or 2; `onesided` on such an input
/// that turns out complex gives the first N / 2 + 1 bins of its transform
/// (the callers reject onesided complex inputs known at compile time).
FailureOr<Value> Importer::dft(Value x, int64_t axis, Value length,
                               bool inverse, bool onesided) {
  int64_t r = rank(x);
  Type e = elt(x), i64 = b.getI64Type(), f64 = b.getF64Type();
  Dims dx = dims(x);
  Dim cd = dx[r - 1];
  if (cd.isStatic() && cd.size != 1 && cd.size != 2) {
    err() << "the last dim of the input must be 1 (real) or 2 (complex), got "
          << cd.size;
    return failure();
  }
  Value x2 = x;
  if (!cd.isStatic()) {
    Value hi = binary<MaxOp>(binary<SubOp>(constI64({2}), dimOf(x, r - 1)),
                             constI64({0}));
    Value pv = concatI64({constI64(SmallVector<int64_t>(2 * r - 1, 0)), hi});
    Dims pd = dx;
    Value padded = mk<PadOp>(pd, e, PadMode::Constant, x, pv, scalarLike(x, 0));
    Dims sd = dx;
    sd[r - 1] = Dim(2);
    x2 = mk<SliceOp>(sd, e, padded, constI64({0}), constI64({2}), constI64({1}),
                     ArrayRef<int64_t>{r - 1});
    x2.getDefiningOp()->setAttr(
        kSliceEndMessageAttr,
        b.getStringAttr("the last dim of the input must be 1 (real) or 2 "
                        "(complex), got {2}"));
    cd = Dim(2);
  }
  SmallVector<TDim> sig;
  for (int64_t i = 0; i < r - 1; ++i)
    sig.push_back(tdimOf(x, i));
  auto part = [&](int64_t c) {
    return reshapeT(sliceStatic(x2, {r - 1}, {c}, {c + 1}), sig);
  };
  Value xr = cd.size == 1 ? reshapeT(x2, sig) : part(0);
  Value xi = cd.size == 2 ? part(1) : Value();

  // N, and the signal truncated to min(L, N).
  Dim nd = dx[axis];
  Value n = dimScalar(x, axis);
  if (length) {
    nd = Dim();
    if (std::optional<SmallVector<int64_t>> k = knownInts(length)) {
      if ((*k)[0] < 1) {
        err() << "the DFT length must be positive, got " << (*k)[0];
        return failure();
      }
      nd = Dim((*k)[0]);
    }
    n = length;
    Dim lt = Dim();
    if (nd.isStatic() && dx[axis].isStatic())
      lt = Dim(std::min(nd.size, dx[axis].size));
    auto trunc = [&](Value v) -> Value {
      if (!v)
        return v;
      Dims o = dims(v);
      o[axis] = lt;
      return mk<SliceOp>(o, e, v, constI64({0}), reshapeT(n, {tdimConst(1)}),
                         constI64({1}), ArrayRef<int64_t>{axis});
    };
    xr = trunc(xr);
    xi = trunc(xi);
  }
  // A zero length (a run-time value) gives an empty result; keep the
  // modulus and the scale away from 0.
  Value nSafe = binary<MaxOp>(n, constI64Scalar(1));
  Dim md = nd;
  Value m = n;
  if (onesided) {
    md = nd.isStatic() ? Dim(nd.size / 2 + 1) : Dim();
    m = binary<AddOp>(binary<DivOp>(n, constI64Scalar(2)), constI64Scalar(1));
  }
  Value nIdx = mk<RangeOp>(Dims{dims(xr)[axis]}, i64, constI64Scalar(0),
                           dimScalar(xr, axis), constI64Scalar(1));
  Value kIdx =
      mk<RangeOp>(Dims{md}, i64, constI64Scalar(0), m, constI64Scalar(1));
  Value nk = binary<RemOp>(
      binary<MulOp>(reshapeT(nIdx, {tdimOf(nIdx, 0), tdimConst(1)}),
                    reshapeT(kIdx, {tdimConst(1), tdimOf(kIdx, 0)})),
      nSafe);
  Value ang = binary<MulOp>(convert(nk, f64, false, false),
                            binary<DivOp>(constScalar(f64, 2 * M_PI),
                                          convert(nSafe, f64, false, false)));
  Value cosT = convert(unary<CosOp>(ang), e, false, false);
  Value sinT = convert(unary<SinOp>(ang), e, false, false);
  if (!cosT || !sinT)
    return failure();

  // The signal dim goes last: [.., L] x [L, M] is the matmul form that
  // gets a library call (oneDNN for f32).
  SmallVector<int64_t> toLast;
  for (int64_t i = 0; i < r - 1; ++i)
    if (i != axis)
      toLast.push_back(i);
  toLast.push_back(axis);
  if (axis != r - 2) {
    xr = transpose(xr, toLast);
    if (xi)
      xi = transpose(xi, toLast);
  }
  auto dot = [&](Value a, Value t) -> Value {
    if (!a || !t)
      return nullptr;
    Dims od = dims(a);
    od.back() = md;
    return mk<DotGeneralOp>(od, e, a, t, ArrayRef<int64_t>{},
                            ArrayRef<int64_t>{}, ArrayRef<int64_t>{r - 2},
                            ArrayRef<int64_t>{0});
  };
  Value yr, yi;
  Value rc = dot(xr, cosT), rs = dot(xr, sinT);
  if (!xi) {
    yr = rc;
    yi = inverse ? rs : unary<NegOp>(rs);
  } else {
    Value ic = dot(xi, cosT), is = dot(xi, sinT);
    yr = inverse ? binary<SubOp>(rc, is) : binary<AddOp>(rc, is);
    yi = inverse ? binary<AddOp>(ic, rs) : binary<SubOp>(ic, rs);
  }
  if (inverse) {
    Value scale = convert(nSafe, e, false, false);
    yr = binary<DivOp>(yr, scale);
    yi = binary<DivOp>(yi, scale);
  }
  // The bins come last; move them back to `axis` and stack (re, im).
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < r - 1; ++i)
    perm.push_back(i < axis ? i : i == axis ? r - 2 : i - 1);
  auto finishPart = [&](Value v) -> Value {
    if (!v)
      return v;
    return unsqueezeAt(transpose(v, perm), r - 1);
  };
  yr = finishPart(yr);
  yi = finishPart(yi);
  if (!yr || !yi)
    return failure();
  Dims od = dims(yr);
  od[r - 1] = Dim(2);
  return mk<ConcatenateOp>(od, e, ValueRange{yr, yi}, (uint64_t)(r - 1));
}

/// Whether `t` is an integer type other than bool.
static bool isIntScalar(Type t) {
  return isa<IntegerType>(t) && !t.isInteger(1);
}

/// ONNX DFT-17: input [batch, signal dims.., 1 or 2] (real, or complex as
/// (re, im)), optional dft_length (a scalar), attributes axis (default 1,
/// a signal dim: in [0, rank - 2], negative counts from the end of the
/// input rank), inverse, onesided (real input, forward only). See
/// Importer::dft for the decomposition.
LogicalResult Importer::importDft(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  int64_t axis = aInt("axis", 1);
  bool inverse = aInt("inverse", 0) != 0;
  bool onesided = aInt("onesided", 0) != 0;
  if (failed)
    return failure();
  if (axis < 0)
    axis += r;
  if (axis < 0 || axis > r - 2)
    return err() << "axis " << aInt("axis", 1)
                 << " must be a signal dim of the rank-" << r
                 << " input (not the last, real/imaginary, dim)";
  Dim cd = dims(x)[r - 1];
  if (onesided && inverse)
    return err() << "onesided inverse DFT is not supported";
  if (onesided && cd.isStatic() && cd.size == 2)
    return err() << "onesided requires a real input (last dim 1)";
  Value len;
  if (Value l = in(1)) {
    if (!isIntScalar(elt(l)) || !maybeScalar(l))
      return err() << "dft_length must be an integer scalar";
    len = toI64(rank(l) == 0 ? l : reshapeToScalar(l));
  }
  return finish(dft(x, axis, len, inverse, onesided));
}

/// ONNX STFT-17: signal [B, L, 1 or 2], frame_step (scalar), optional
/// window [W], optional frame_length (scalar; default W), attribute
/// onesided (default 1). F = (L - frame_length) / frame_step + 1 frames
/// (0 when L < frame_length) are gathered (`disc.gather` along dim 1 with
/// indices f * frame_step + j, [F, frame_length]) into [B, F,
/// frame_length, c], multiplied by the window, and transformed along dim 2
/// (Importer::dft): [B, F, M, 2], M = frame_length / 2 + 1 when onesided,
/// else frame_length. Cost O(B * F * frame_length * M).
LogicalResult Importer::importStft(StringRef) {
  Value sig = in(0), stepV = in(1), window = in(2), flV = in(3);
  if (rank(sig) != 3)
    return err() << "signal must be 3-D [batch, length, 1 or 2]";
  bool onesided = aInt("onesided", 1) != 0;
  if (failed)
    return failure();
  Dim cd = dims(sig)[2];
  if (onesided && cd.isStatic() && cd.size == 2)
    return err() << "onesided requires a real signal (last dim 1)";
  auto scalarIn = [&](Value v, StringRef what) -> Value {
    if (!isIntScalar(elt(v)) || !maybeScalar(v)) {
      err() << what << " must be an integer scalar";
      return nullptr;
    }
    return toI64(rank(v) == 0 ? v : reshapeToScalar(v));
  };
  Value step = scalarIn(stepV, "frame_step");
  if (!step)
    return failure();
  Value fl;
  Dim fld;
  if (flV) {
    fl = scalarIn(flV, "frame_length");
    if (!fl)
      return failure();
    if (std::optional<SmallVector<int64_t>> k = knownInts(fl))
      fld = Dim((*k)[0]);
  }
  if (window) {
    if (rank(window) != 1)
      return err() << "window must be 1-D";
    if (::mlir::failed(sameElt(sig, window)))
      return failure();
    if (!fl) {
      fl = dimScalar(window, 0);
      fld = dims(window)[0];
    }
  }
  if (!fl)
    return err() << "needs a window or a frame_length";
  if (std::optional<SmallVector<int64_t>> k = knownInts(step); k && (*k)[0] < 1)
    return err() << "frame_step must be positive, got " << (*k)[0];
  Type i64 = b.getI64Type(), e = elt(sig);
  // Frame count max(0, (L - FL) / step + 1); step kept >= 1.
  Value stepSafe = binary<MaxOp>(step, constI64Scalar(1));
  Value len = dimScalar(sig, 1);
  Value frames = binary<AddOp>(binary<DivOp>(binary<SubOp>(len, fl), stepSafe),
                               constI64Scalar(1));
  frames =
      select(compare(CompareDirection::GE, len, fl), frames, constI64Scalar(0));
  Dim fd;
  Dims ds = dims(sig);
  if (ds[1].isStatic() && fld.isStatic())
    if (std::optional<SmallVector<int64_t>> k = knownInts(step))
      fd = ds[1].size >= fld.size ? Dim((ds[1].size - fld.size) / (*k)[0] + 1)
                                  : Dim(0);
  Value fIdx =
      mk<RangeOp>(Dims{fd}, i64, constI64Scalar(0), frames, constI64Scalar(1));
  Value jIdx =
      mk<RangeOp>(Dims{fld}, i64, constI64Scalar(0), fl, constI64Scalar(1));
  Value idx = binary<AddOp>(
      binary<MulOp>(reshapeT(fIdx, {tdimOf(fIdx, 0), tdimConst(1)}), stepSafe),
      reshapeT(jIdx, {tdimConst(1), tdimOf(jIdx, 0)}));
  if (!idx)
    return failure();
  Value fr =
      mk<GatherOp>(Dims{ds[0], fd, fld, ds[2]}, e, sig, idx, (uint64_t)1);
  if (window)
    fr = binary<MulOp>(fr, reshapeT(window, {tdimConst(1), tdimConst(1),
                                             tdimOf(window, 0), tdimConst(1)}));
  if (!fr)
    return failure();
  return finish(dft(fr, 2, Value(), /*inverse=*/false, onesided));
}

/// ONNX MelWeightMatrix-17, after the reference of the ONNX backend test
/// (onnx/backend/test/case/node/melweightmatrix.py): with
/// mel(f) = 2595 log10(1 + f / 700), step = (mel(upper) - mel(lower)) /
/// (num_mel_bins + 2), all in f64 as the reference (NumPy promotes), the
/// band edges b(i) = floor((dft_length + 1) * 700 * (10^((i * step +
/// mel(lower)) / 2595) - 1) / sample_rate), i in [0, num_mel_bins + 2);
/// band i rises from b(i) to b(i+1) ((j - l) / (c - l), or 1 at j = c when
/// l = c) and falls to b(i+2) ((h - j) / (h - c)). Output [dft_length / 2 +
/// 1, num_mel_bins] of output_datatype (default float), elementwise over
/// that grid: O(bins * num_mel_bins).
LogicalResult Importer::importMelWeightMatrix(StringRef) {
  bool uns = false;
  Type ot = convertElementType(&ctx, (int32_t)aInt("output_datatype", 1), uns);
  if (failed)
    return failure();
  if (!ot)
    return err() << "unsupported output_datatype "
                 << aInt("output_datatype", 1);
  SmallVector<Value> ints;
  const char *names[] = {"num_mel_bins", "dft_length", "sample_rate"};
  for (int i = 0; i < 3; ++i) {
    Value v = in(i);
    if (!isIntScalar(elt(v)) || !maybeScalar(v))
      return err() << names[i] << " must be an integer scalar";
    ints.push_back(toI64(rank(v) == 0 ? v : reshapeToScalar(v)));
  }
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  SmallVector<Value> edges;
  for (int i = 3; i < 5; ++i) {
    Value v = in(i);
    if (!isFloat(v) || !maybeScalar(v))
      return err() << (i == 3 ? "lower" : "upper")
                   << "_edge_hertz must be a floating-point scalar";
    edges.push_back(
        convert(rank(v) == 0 ? v : reshapeToScalar(v), f64, false, false));
  }
  Value nMel = ints[0], dftLen = ints[1], rate = ints[2];
  auto c64 = [&](double v) { return constScalar(f64, v); };
  auto mel = [&](Value f) {
    return binary<MulOp>(c64(2595),
                         binary<DivOp>(unary<LogOp>(binary<AddOp>(
                                           c64(1), binary<DivOp>(f, c64(700)))),
                                       c64(std::log(10.0))));
  };
  Value lowMel = mel(edges[0]), highMel = mel(edges[1]);
  Value step = binary<DivOp>(
      binary<SubOp>(highMel, lowMel),
      convert(binary<AddOp>(nMel, constI64Scalar(2)), f64, false, false));
  Value scale = binary<DivOp>(
      convert(binary<AddOp>(dftLen, constI64Scalar(1)), f64, false, false),
      convert(rate, f64, false, false));
  // Band edge b(i) for an i64 tensor i, as f64 (integral values).
  auto edge = [&](Value i) {
    Value m = binary<AddOp>(binary<MulOp>(convert(i, f64, false, false), step),
                            lowMel);
    Value hz = binary<MulOp>(
        c64(700),
        binary<SubOp>(binary<PowOp>(c64(10), binary<DivOp>(m, c64(2595))),
                      c64(1)));
    return unary<FloorOp>(binary<MulOp>(hz, scale));
  };
  Dim melD, binD;
  if (std::optional<SmallVector<int64_t>> k = knownInts(nMel))
    melD = Dim((*k)[0]);
  if (std::optional<SmallVector<int64_t>> k = knownInts(dftLen))
    binD = Dim((*k)[0] / 2 + 1);
  Value bins = binary<AddOp>(binary<DivOp>(dftLen, constI64Scalar(2)),
                             constI64Scalar(1));
  Value iIdx =
      mk<RangeOp>(Dims{melD}, i64, constI64Scalar(0), nMel, constI64Scalar(1));
  Value jIdx =
      mk<RangeOp>(Dims{binD}, i64, constI64Scalar(0), bins, constI64Scalar(1));
  Value iRow = reshapeT(iIdx, {tdimConst(1), tdimOf(iIdx, 0)});
  Value j = convert(reshapeT(jIdx, {tdimOf(jIdx, 0), tdimConst(1)}), f64, false,
                    false);
  Value l = edge(iRow);
  Value c = edge(binary<AddOp>(iRow, constI64Scalar(1)));
  Value h = edge(binary<AddOp>(iRow, constI64Scalar(2)));
  if (!l || !c || !h || !j)
    return failure();
  auto cmp = [&](CompareDirection d, Value a, Value v) {
    return compare(d, a, v);
  };
  Value zero = c64(0), one = c64(1);
  // Rising edge on [l, c]; a zero-width rise is 1 at j = c.
  Value riseW = binary<SubOp>(c, l);
  Value riseSafe = select(cmp(CompareDirection::GT, riseW, zero), riseW, one);
  Value rise = select(cmp(CompareDirection::GT, riseW, zero),
                      binary<DivOp>(binary<SubOp>(j, l), riseSafe),
                      select(cmp(CompareDirection::EQ, j, c), one, zero));
  Value inRise = binary<AndOp>(cmp(CompareDirection::GE, j, l),
                               cmp(CompareDirection::LE, j, c));
  // Falling edge on [c, h).
  Value fallW = binary<SubOp>(h, c);
  Value fallSafe = select(cmp(CompareDirection::GT, fallW, zero), fallW, one);
  Value fall = binary<DivOp>(binary<SubOp>(h, j), fallSafe);
  Value inFall = binary<AndOp>(cmp(CompareDirection::GE, j, c),
                               cmp(CompareDirection::LT, j, h));
  Value w = select(inRise, rise, select(inFall, fall, zero));
  if (!w)
    return failure();
  return finish(convert(w, ot, false, uns));
}

} // namespace mlir::disc::onnx_import

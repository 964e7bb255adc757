//===- Misc.cpp - ONNX constants, ranges, windows, Resize, GridSample
//-------===//
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

LogicalResult Importer::importConstantOfShape(StringRef) {
  Value s = in(0);
  if (rank(s) != 1 || ShapedType::isDynamic(tt(s).getDimSize(0)))
    return err() << "the shape input must be 1-D with a static length";
  s = toI64(s);
  Attribute splat = FloatAttr::get(b.getF32Type(), 0.0);
  Type e = b.getF32Type();
  bool uns = false;
  FailureOr<Value> c = importValueAttr();
  if (::mlir::failed(c))
    return failure();
  if (*c) {
    auto cst = c->getDefiningOp<ConstantOp>();
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    if (!dense || dense.getNumElements() != 1)
      return err() << "attribute 'value' must have one element";
    uns = isUns(*c);
    e = dense.getElementType();
    splat = dense.getSplatValue<Attribute>();
    eraseOp(cst);
  }
  std::optional<Dims> k = known(s);
  Dims o = k ? *k : Dims(tt(s).getDimSize(0), Dim());
  for (Dim &d : o)
    if (d.isStatic() && d.size < 0)
      return err() << "negative dim " << d.size;
  RankedTensorType type = typeFor(o, e);
  Value res;
  if (type.hasStaticShape()) {
    res = constDense(DenseElementsAttr::get(type, splat));
  } else {
    Value scalar =
        constDense(DenseElementsAttr::get(RankedTensorType::get({}, e), splat));
    res = expandTo(scalar, s, o);
  }
  out(0, markUnsigned(res, uns));
  return success();
}

LogicalResult Importer::importRange(StringRef) {
  Value s = in(0), l = in(1), d = in(2);
  if (::mlir::failed(sameElt(s, l)) || ::mlir::failed(sameElt(s, d)))
    return failure();
  for (Value *v : {&s, &l, &d}) {
    if (!maybeScalar(*v))
      return err() << "start, limit and delta must be scalars";
    if (rank(*v) != 0)
      *v = reshapeToScalar(*v);
  }
  // The element count is ceil((limit - start) / delta), at least 0. With
  // constant operands it is computed here exactly (integers without a trip
  // through double) and a count that does not fit is an error; otherwise
  // the lowering checks it at run time.
  auto exactInt = [&](Value v) -> std::optional<int64_t> {
    if (auto c = v.getDefiningOp<ConstantOp>())
      if (auto a = dyn_cast<DenseIntElementsAttr>(c.getValue());
          a && a.getNumElements() == 1)
        return (*a.getValues<APInt>().begin()).getSExtValue();
    std::optional<SmallVector<int64_t>> k = knownInts(v);
    if (k && k->size() == 1)
      return (*k)[0];
    return std::nullopt;
  };
  Dim len;
  std::optional<int64_t> is, il, id;
  if (isa<IntegerType>(elt(s))) {
    is = exactInt(s), il = exactInt(l), id = exactInt(d);
    if (is && il && id) {
      if (*id == 0)
        return err() << "delta must be non-zero";
      int64_t diff;
      if (llvm::SubOverflow(*il, *is, diff))
        return err() << "limit - start (" << *il << " - " << *is
                     << ") overflows int64";
      if (diff == std::numeric_limits<int64_t>::min() && *id == -1)
        return err() << "the element count ceil((limit - start) / delta) = "
                        "2^63 does not fit in int64";
      len = Dim(std::max<int64_t>(0, llvm::divideCeilSigned(diff, *id)));
    }
  } else {
    std::optional<double> cs = scalarConstant(s), cl = scalarConstant(l),
                          cd = scalarConstant(d);
    if (cs && cl && cd) {
      if (*cd == 0)
        return err() << "delta must be non-zero";
      double q = std::ceil((*cl - *cs) / *cd);
      // 2^63: the first double above int64's range.
      if (!(q < 9223372036854775808.0))
        return err() << "the element count ceil((limit - start) / delta) = "
                     << q << " does not fit in int64";
      len = Dim(q > 0 ? (int64_t)q : 0);
    }
  }
  if (len.isStatic()) {
    int64_t bytes;
    if (llvm::MulOverflow(
            len.size,
            (int64_t)llvm::divideCeil(elt(s).getIntOrFloatBitWidth(), 8),
            bytes))
      return err() << "the result has " << len.size
                   << " elements; its byte size overflows int64";
  }
  Value res = mk<RangeOp>(Dims{len}, elt(s), s, l, d);
  if (len.isStatic() && is && len.size <= kMaxKnown) {
    Dims k;
    for (int64_t i = 0; i < len.size; ++i)
      k.push_back(Dim(*is + i * *id));
    res = setKnown(res, k);
  }
  out(0, res);
  return success();
}

/// Hann/Hamming/Blackman windows as the ONNX function bodies:
/// a0 - a1 * cos(2 pi n / N) (+ a2 * cos(4 pi n / N)), N = size (periodic)
/// or size - 1 (symmetric).
LogicalResult Importer::importWindow(StringRef op) {
  Value size = in(0);
  if (!maybeScalar(size) || !isa<IntegerType>(elt(size)) ||
      elt(size).isInteger(1))
    return err() << "size must be an integer scalar";
  bool periodic = aInt("periodic", 1) != 0;
  bool uns = false;
  Type ot = convertElementType(&ctx, (int32_t)aInt("output_datatype", 1), uns);
  if (!ot)
    return err() << "unsupported output_datatype "
                 << aInt("output_datatype", 1);
  if (failed)
    return failure();
  Value n = toI64(rank(size) == 0 ? size : reshapeToScalar(size));
  Dim len;
  if (std::optional<SmallVector<int64_t>> k = knownInts(size))
    len = Dim((*k)[0]);
  Value idx = mk<RangeOp>(Dims{len}, b.getI64Type(), constI64Scalar(0), n,
                          constI64Scalar(1));
  Type f32 = b.getF32Type();
  Value nf = convert(n, f32, false, false);
  if (!periodic)
    nf = binary<SubOp>(nf, constScalar(f32, 1));
  Value ang = binary<MulOp>(convert(idx, f32, false, false),
                            binary<DivOp>(constScalar(f32, 6.2831853), nf));
  double a0 = 0.5, a1 = 0.5, a2 = 0;
  if (op == "HammingWindow") {
    a0 = 25.0 / 46.0;
    a1 = 1.0 - a0;
  } else if (op == "BlackmanWindow") {
    a0 = 0.42;
    a1 = 0.5;
    a2 = 0.08;
  }
  Value y =
      binary<SubOp>(constScalar(f32, a0),
                    binary<MulOp>(constScalar(f32, a1), unary<CosOp>(ang)));
  if (a2 != 0)
    y = binary<AddOp>(
        y,
        binary<MulOp>(constScalar(f32, a2),
                      unary<CosOp>(binary<MulOp>(ang, constScalar(f32, 2)))));
  if (!y)
    return failure();
  y = convert(y, ot, false, uns);
  out(0, y);
  return success();
}

/// The node's tensor attribute `value` as a constant; null when the node has
/// none.
FailureOr<Value> Importer::importValueAttr() {
  const onnx::AttributeProto *a = attr("value");
  if (!a)
    return Value();
  if (a->type() != onnx::AttributeProto_AttributeType_TENSOR)
    return err() << "attribute 'value' must be a tensor";
  return importTensor(a->t(), "attribute 'value'");
}

LogicalResult Importer::importConstant(StringRef) {
  FailureOr<Value> value = importValueAttr();
  if (::mlir::failed(value))
    return failure();
  if (*value) {
    out(0, *value);
    return success();
  }
  if (attr("value_float")) {
    out(0, constScalar(b.getF32Type(), aFloat("value_float", 0)));
    return success();
  }
  if (attr("value_int")) {
    out(0, constI64Scalar(aInt("value_int", 0)));
    return success();
  }
  if (attr("value_ints")) {
    out(0, constI64(aInts("value_ints").value_or(SmallVector<int64_t>{})));
    return success();
  }
  if (attr("value_floats")) {
    SmallVector<float> f =
        aFloats("value_floats").value_or(SmallVector<float>{});
    auto type = RankedTensorType::get({(int64_t)f.size()}, b.getF32Type());
    out(0, constDense(DenseElementsAttr::get(type, ArrayRef<float>(f))));
    return success();
  }
  return err() << "only value, value_float(s) and value_int(s) are supported "
                  "(not sparse_value or strings)";
}

/// `s == num / den` with `den` a power of two (every float is one); then
/// `floor(d * s) == (d * num) floordiv den` for a size `d`.
static bool dyadic(double s, int64_t &num, int64_t &den) {
  for (den = 1; den <= (int64_t(1) << 30); den *= 2) {
    double n = s * (double)den;
    if (n == std::floor(n) && n < (double)(int64_t(1) << 31)) {
      num = (int64_t)n;
      return true;
    }
  }
  return false;
}

/// Resize (10, 11, 13, 18) and Upsample (7, 9) as one `disc.resize`. The
/// result shape is `sizes`, or `floor(in * scale)`: integer arithmetic on
/// the input dims when the scales are constants (so the dims stay
/// symbolic), f64 arithmetic when they come at run time. Dims that
/// provably keep their size (scale 1) under a coordinate transformation
/// that maps them to themselves are copied, not interpolated.
LogicalResult Importer::importResize(StringRef op) {
  Value x = in(0);
  int64_t r = rank(x);
  bool legacy = op == "Upsample" || opset < 11;
  std::string mode = aStr("mode", "nearest");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, mode) ||
      (legacy && mode == "cubic"))
    return err() << "mode '" << mode << "' is not supported (opset " << opset
                 << ")";
  std::string ctm = legacy
                        ? "asymmetric"
                        : aStr("coordinate_transformation_mode", "half_pixel");
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn",
                           "tf_crop_and_resize"},
                          ctm))
    return err() << "coordinate_transformation_mode '" << ctm
                 << "' is not supported (opset " << opset << ")";
  std::string nm =
      legacy ? "simple" : aStr("nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained({"round_prefer_floor", "round_prefer_ceil", "floor",
                           "ceil", "simple"},
                          nm) ||
      (!legacy && nm == "simple"))
    return err() << "nearest_mode '" << nm << "' is not supported (opset "
                 << opset << ")";
  if (op == "Resize" && opset >= 18) {
    if (aInt("antialias", 0) != 0)
      return err() << "attribute 'antialias' = 1 is not supported (opset "
                   << opset << ")";
    if (attr("axes"))
      return err() << "attribute 'axes' is not supported (opset " << opset
                   << ")";
    std::string policy = aStr("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch")
      return err() << "attribute 'keep_aspect_ratio_policy' = '" << policy
                   << "' is not supported (opset " << opset << ")";
  }
  if (mode != "nearest" && !isFloat(x))
    return err() << "attribute 'mode' = '" << mode
                 << "' expects a floating-point input, got " << elt(x)
                 << " (opset " << opset << ")";
  if (failed)
    return failure();

  Value scalesIn, sizesIn, roiIn;
  if (op == "Upsample" && opset < 9) {
    std::optional<SmallVector<float>> s = aFloats("scales");
    if (!s)
      return err() << "attribute 'scales' is required (opset " << opset << ")";
    scalesIn = constDense(DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)s->size()}, b.getF32Type()),
        ArrayRef<float>(*s)));
  } else if (legacy) {
    scalesIn = in(1);
  } else {
    roiIn = in(1);
    scalesIn = in(2);
    sizesIn = in(3);
  }
  auto emptyVec = [&](Value v) {
    return v && rank(v) == 1 && tt(v).getDimSize(0) == 0;
  };
  if (emptyVec(sizesIn))
    sizesIn = nullptr;
  if (emptyVec(scalesIn))
    scalesIn = nullptr;
  if (sizesIn && scalesIn && tt(scalesIn).hasStaticShape())
    return err() << "only one of 'scales' and 'sizes' may be given";
  if (!sizesIn && !scalesIn)
    return err() << "expects 'scales' or 'sizes'";
  for (Value v : {sizesIn, scalesIn}) {
    if (!v)
      continue;
    if (rank(v) != 1 || (!tt(v).isDynamicDim(0) && tt(v).getDimSize(0) != r))
      return err() << "'scales' / 'sizes' must be 1-D with " << r << " entries";
  }
  if (sizesIn && !isa<IntegerType>(elt(sizesIn)))
    return err() << "'sizes' must be int64";
  if (scalesIn && !isFloat(scalesIn))
    return err() << "'scales' must be float";

  Type f64 = b.getF64Type();
  Dims inDims = dims(x), outDims(r, Dim());
  SmallVector<bool> sameSize(r, false);
  Value sizesV, scalesV;
  if (sizesIn) {
    sizesV = toI64(sizesIn);
    std::optional<Dims> k = known(sizesV);
    for (int64_t i = 0; i < r; ++i)
      if (k && (int64_t)k->size() == r) {
        outDims[i] = (*k)[i];
        sameSize[i] = (*k)[i] == inDims[i];
      }
    // The reference's scale is `sizes / input shape` in f64.
    scalesV = binary<DivOp>(convert(sizesV, f64, false, false),
                            convert(shapeOf(x), f64, false, false));
  } else {
    scalesV = convert(scalesIn, f64, false, false);
    std::optional<SmallVector<double>> cs = constFloats(scalesIn);
    if (cs && (int64_t)cs->size() == r) {
      SmallVector<TDim> parts;
      for (int64_t i = 0; i < r; ++i) {
        double s = (*cs)[i];
        if (!(s > 0))
          return err() << "scales must be positive, got " << s;
        int64_t num, den;
        sameSize[i] = s == 1.0;
        if (inDims[i].isStatic()) {
          outDims[i] = Dim((int64_t)std::floor((double)inDims[i].size * s));
          parts.push_back(tdimConst(outDims[i].size));
        } else if (s == 1.0) {
          outDims[i] = inDims[i];
          parts.push_back(tdimOf(x, i));
        } else if (dyadic(s, num, den)) {
          Value v = dimOf(x, i);
          if (num != 1)
            v = binaryFolded("Mul", v, constI64({num}));
          if (den != 1)
            v = binaryFolded("Div", v, constI64({den}));
          parts.push_back({Dim(), v});
        } else {
          Value sf = constDense(DenseElementsAttr::get(
              RankedTensorType::get({1}, f64), ArrayRef<double>{s}));
          Value v = binary<MulOp>(convert(dimOf(x, i), f64, false, false), sf);
          parts.push_back({Dim(), convert(v, b.getI64Type(), false, false)});
        }
      }
      sizesV = shapeFrom(parts);
    } else {
      // Truncation is the floor: sizes and scales are non-negative.
      sizesV = convert(
          binary<MulOp>(convert(shapeOf(x), f64, false, false), scalesV),
          b.getI64Type(), false, false);
    }
  }
  Value roiV;
  if (ctm == "tf_crop_and_resize") {
    if (!roiIn || emptyVec(roiIn))
      return err() << "tf_crop_and_resize expects a 'roi' input";
    if (!isFloat(roiIn) || rank(roiIn) != 1)
      return err() << "'roi' must be a 1-D float tensor";
    roiV = convert(roiIn, f64, false, false);
  }
  bool selfMapping = llvm::is_contained(
      {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}, ctm);
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < r; ++i) {
    if (selfMapping && sameSize[i]) {
      outDims[i] = inDims[i];
      continue;
    }
    axes.push_back(i);
  }
  Value res =
      mk<ResizeOp>(outDims, elt(x), b.getStringAttr(mode), x, sizesV, scalesV,
                   roiV, b.getStringAttr(ctm), b.getStringAttr(nm),
                   b.getF64FloatAttr(aFloat("cubic_coeff_a", -0.75f)),
                   b.getBoolAttr(aInt("exclude_outside", 0) != 0),
                   b.getF64FloatAttr(aFloat("extrapolation_value", 0.0f)),
                   b.getDenseI64ArrayAttr(axes));
  return finish(res);
}

/// GridSample (opset 16, 4-d input) as `disc.grid_sample`.
LogicalResult Importer::importGridSample(StringRef) {
  Value x = in(0), grid = in(1);
  if (::mlir::failed(sameElt(x, grid)))
    return failure();
  if (rank(x) != 4 || rank(grid) != 4)
    return err() << "input and grid must be 4-D (opset " << opset << ")";
  if (!tt(grid).isDynamicDim(3) && tt(grid).getDimSize(3) != 2)
    return err() << "grid must have shape [N, H_out, W_out, 2]";
  std::string mode = aStr("mode", "bilinear");
  if (!llvm::is_contained({"bilinear", "nearest", "bicubic"}, mode))
    return err() << "attribute 'mode' = '" << mode
                 << "' is not supported (opset " << opset << ")";
  std::string pad = aStr("padding_mode", "zeros");
  if (!llvm::is_contained({"zeros", "border", "reflection"}, pad))
    return err() << "attribute 'padding_mode' = '" << pad
                 << "' is not supported (opset " << opset << ")";
  bool ac = aInt("align_corners", 0) != 0;
  if (failed)
    return failure();
  Dims dx = dims(x), dg = dims(grid);
  out(0, mk<GridSampleOp>(Dims{dx[0], dx[1], dg[1], dg[2]}, elt(x), x, grid,
                          mode, pad, ac));
  return success();
}

} // namespace mlir::disc::onnx_import

namespace mlir::disc::onnx_import {

/// ONNX Bernoulli (15), RandomUniform and RandomUniformLike (1): the
/// uniform draws of `disc.random_uniform` (MT19937, NumPy's doubles) with
/// the `seed` attribute (a float in these ops, truncated to an integer; 0
/// when absent, so every run draws the same values). Bernoulli:
/// `y = u < p` in f64, as `dtype` (default: the input's type).
/// RandomUniform(Like): `low + (high - low) * u` rounded to `dtype`
/// (default f32, or the input's type for the Like form); RandomUniform's
/// dims come from its `shape` attribute.
LogicalResult Importer::importRandom(StringRef op) {
  const onnx::AttributeProto *seedAttr =
      attr("seed", onnx::AttributeProto_AttributeType_FLOAT, "a float");
  if (failed)
    return failure();
  float seedF = seedAttr ? seedAttr->f() : 0.0f;
  if (!(seedF >= 0.0f && seedF < 4294967296.0f))
    return err() << "seed " << seedF << " is outside [0, 2^32)";
  int64_t seed = static_cast<int64_t>(seedF);
  Value shape;
  Dims d;
  Type def = b.getF32Type();
  bool defUns = false;
  if (op == "RandomUniform") {
    std::optional<SmallVector<int64_t>> s = aInts("shape");
    if (!s)
      return err() << "expects the attribute 'shape'";
    for (int64_t v : *s) {
      if (v < 0)
        return err() << "negative dim " << v << " in 'shape'";
      d.push_back(Dim(v));
    }
    shape = constI64(*s);
  } else {
    Value x = in(0);
    if (op == "Bernoulli" && ::mlir::failed(requireFloat(x)))
      return failure();
    shape = shapeOf(x);
    d = dims(x);
    def = elt(x);
    defUns = isUns(x);
  }
  Type to = def;
  bool uns = defUns;
  if (const onnx::AttributeProto *a = attr("dtype")) {
    to = convertElementType(&ctx, (int32_t)a->i(), uns);
    if (!to)
      return err() << "unsupported dtype " << elementTypeName((int32_t)a->i());
  }
  Value u = mk<RandomUniformOp>(d, b.getF64Type(), shape, seed);
  Value y;
  if (op == "Bernoulli") {
    y = compare(CompareDirection::LT, u,
                convert(in(0), b.getF64Type(), false, false));
  } else {
    if (!isa<FloatType>(to))
      return err() << "dtype must be a floating-point type, got " << to;
    double lo = aFloat("low", 0.0f), hi = aFloat("high", 1.0f);
    y = binary<AddOp>(binary<MulOp>(u, constScalar(b.getF64Type(), hi - lo)),
                      constScalar(b.getF64Type(), lo));
  }
  if (!y)
    return failure();
  out(0, markUnsigned(convert(y, to, false, uns), uns));
  return success();
}

} // namespace mlir::disc::onnx_import

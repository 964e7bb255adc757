//===- Pooling.cpp - max and average pooling ------------------------------===//
//
// disc.pool: a sliding-window `linalg.generic`; max pooling reads the input
// in place (positions in the padding read as -inf), average pooling reads a
// padded copy, and averages that do not count the padding divide by
// per-position counts.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"
#include "Utils.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::lowering;

namespace {

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

/// Max pooling that reads `input` [N, C, D...] in place, without a padded
/// copy: a `linalg.generic` over [N, C, O..., K...] whose body reads
/// input[n, c, o * s + k * dil - lo] with `tensor.extract` at the position
/// clamped into the input and takes -inf (the lowest integer) where the
/// position is outside it, which is what the padding (and ceil_mode's
/// overhang) would hold. One loop nest, so one GPU kernel.
Value windowMaxInPlace(OpBuilder &b, Location loc, Value input,
                       ArrayRef<int64_t> lo, ArrayRef<int64_t> window,
                       ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                       Value init) {
  MLIRContext *ctx = b.getContext();
  int64_t k = window.size(), lead = 2, loops = lead + 2 * k;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> wExprs, outExprs;
  for (int64_t i = 0; i < lead; ++i)
    outExprs.push_back(d(i));
  for (int64_t i = 0; i < k; ++i) {
    wExprs.push_back(d(lead + k + i));
    outExprs.push_back(d(lead + i));
  }
  Type elt = tensorType(init).getElementType();
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < k; ++i)
    sizes.push_back(dimValue(b, loc, input, lead + i));
  Value windowTensor = tensor::EmptyOp::create(b, loc, window, elt);
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, wExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<IterType> iters(lead + k, IterType::parallel);
  iters.append(k, IterType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{windowTensor},
             ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = extractWindowElement(
                   nb, nl, input, lead, sizes, lo, strides, dilations,
                   extremeScalar(nb, nl, elt, /*negative=*/true));
               Value acc = args[1];
               Value r =
                   isa<FloatType>(elt)
                       ? arith::MaximumFOp::create(nb, nl, acc, x).getResult()
                       : arith::MaxSIOp::create(nb, nl, acc, x).getResult();
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// ONNX MaxPool / AveragePool. Max pooling reads the input in place
/// (windowMaxInPlace). For an average, the input is padded by `lo` and by
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
    return unsupportedElementType(op, elt);
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  int64_t k = resultType.getRank() - 2;
  ArrayRef<int64_t> window = op.getWindow(), strides = op.getStrides(),
                    dil = op.getDilations(), pad = op.getPadding();
  Value input = op.getInput();
  if (isMax)
    return windowMaxInPlace(
        b, loc, input, pad.take_front(k), window, strides, dil,
        fill(b, loc, extremeScalar(b, loc, elt, /*negative=*/true),
             reified->empty(b, loc)));
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
    Value o = toValue(b, loc, reified->dims[2 + i]);
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
  Value init = fill(b, loc, padValue, reified->empty(b, loc));
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
    SmallVector<OpFoldResult> outSpatialDims(reified->dims.begin() + 2,
                                             reified->dims.end());
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

} // namespace

FailureOr<Value>
mlir::disc::lowering::lowerPoolingFamily(OpBuilder &b, Operation *op,
                                         LoweringState &state) {
  if (auto pool = dyn_cast<PoolOp>(op)) {
    // oneDNN's pooling where markLibraryCalls marked it.
    if (state.libraryCalls && pool->hasAttr(kLibraryCallAttr)) {
      FailureOr<ReifiedResult> reified = reifyResult(b, op);
      if (failed(reified))
        return failure();
      return lowerPoolToLibraryCall(b, pool, reified->dims);
    }
    return lowerPool(b, pool);
  }
  return noLowering(op);
}

//===- Linear.cpp - matmul, gemm, conv and conv_transpose -----------------===//
//
// disc.dot_general (MatMul, Gemm), disc.conv and disc.conv_transpose:
// named linalg ops for the canonical forms, a `linalg.generic` otherwise,
// or a library call (LibraryCalls.h) where the pass enables them.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"
#include "Utils.h"
#include "disc/Transforms/Fusion.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::lowering;

namespace {

Value mulAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  if (isa<FloatType>(acc.getType())) {
    Value p = arith::MulFOp::create(b, loc, x, y);
    return arith::AddFOp::create(b, loc, acc, p);
  }
  Value p = arith::MulIOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, acc, p);
}

/// dot_general: `linalg.matmul` / `linalg.batch_matmul` for the canonical
/// forms, else one `linalg.generic` over [batch, lhs free, rhs free,
/// contracting].
FailureOr<Value> lowerDotGeneral(OpBuilder &b, DotGeneralOp op,
                                 RuntimeChecks &checks, bool libraryCalls) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  if (!isFloatOrInt(elt))
    return unsupportedElementType(op, elt);
  // Batch and contracted dims of the operands agree (MatMul's inner dims).
  {
    IMath m{b, loc};
    auto pairs = [&](ArrayRef<int64_t> l, ArrayRef<int64_t> r) {
      for (auto [i, j] : llvm::zip(l, r)) {
        Value lv = dimValue(b, loc, op.getLhs(), i);
        Value rv = dimValue(b, loc, op.getRhs(), j);
        checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, lv, rv), "",
                     "A dim " + std::to_string(i) + " is {0} but B dim " +
                         std::to_string(j) + " is {1}",
                     {lv, rv});
      }
    };
    pairs(op.getLhsBatchingDimensions(), op.getRhsBatchingDimensions());
    pairs(op.getLhsContractingDimensions(), op.getRhsContractingDimensions());
  }
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  if (libraryCalls)
    if (std::optional<Value> call =
            lowerDotGeneralToLibraryCall(b, op, reified->dims))
      return *call;
  Value init = fill(b, loc, cstScalar(b, loc, elt, 0), reified->empty(b, loc));
  auto lb = op.getLhsBatchingDimensions(), rb = op.getRhsBatchingDimensions();
  auto lc = op.getLhsContractingDimensions();
  auto rc = op.getRhsContractingDimensions();
  int64_t lr = op.getLhs().getType().getRank();
  int64_t rr = op.getRhs().getType().getRank();
  SmallVector<Value> ins = {op.getLhs(), op.getRhs()};
  auto eq = [](ArrayRef<int64_t> a, ArrayRef<int64_t> c) { return a == c; };
  if (lr == 2 && rr == 2 && lb.empty() && eq(lc, {1}) && eq(rc, {0}))
    return linalg::MatmulOp::create(b, loc, TypeRange{resultType}, ins,
                                    ValueRange{init})
        .getResult(0);
  if (lr == 3 && rr == 3 && eq(lb, {0}) && eq(rb, {0}) && eq(lc, {2}) &&
      eq(rc, {1}))
    return linalg::BatchMatmulOp::create(b, loc, TypeRange{resultType}, ins,
                                         ValueRange{init})
        .getResult(0);

  MLIRContext *ctx = b.getContext();
  int64_t nb = lb.size(), nc = lc.size();
  int64_t lf = lr - nb - nc, rf = rr - nb - nc;
  int64_t loops = nb + lf + rf + nc;
  auto operandMap = [&](int64_t r, ArrayRef<int64_t> batch,
                        ArrayRef<int64_t> contract, int64_t freeBase) {
    SmallVector<AffineExpr> exprs;
    int64_t free = 0;
    for (int64_t i = 0; i < r; ++i) {
      if (auto *it = llvm::find(batch, i); it != batch.end())
        exprs.push_back(getAffineDimExpr(it - batch.begin(), ctx));
      else if (auto *ct = llvm::find(contract, i); ct != contract.end())
        exprs.push_back(
            getAffineDimExpr(nb + lf + rf + (ct - contract.begin()), ctx));
      else
        exprs.push_back(getAffineDimExpr(freeBase + free++, ctx));
    }
    return AffineMap::get(loops, 0, exprs, ctx);
  };
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < nb + lf + rf; ++i)
    outExprs.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps = {operandMap(lr, lb, lc, nb),
                                 operandMap(rr, rb, rc, nb + lf),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<IterType> iters(nb + lf + rf, IterType::parallel);
  iters.append(nc, IterType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ins, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb2, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb2, nl, mulAdd(nb2, nl, args[0], args[1], args[2]));
             })
      .getResult(0);
}

Value convOnPadded(OpBuilder &b, Location loc, Value input, Value filter,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                   int64_t groups, RankedTensorType resultType,
                   ArrayRef<OpFoldResult> dims);

/// A depthwise convolution (ConvOp::isDepthwise) that disc-fusion chose as
/// loops (kDepthwiseLoopsAttrName, the CUDA targets) of `input` [N, C, D...]
/// with `filter` [C, 1, K...] that reads the input in place: one
/// `linalg.generic` over [N, C, O..., K...] (its init a fill) whose body
/// reads input[n, c, o * s + k * dil - lo] at the position clamped into
/// the input, 0 outside it (the zero padding), times filter[c, 0, k...].
/// No padded copy; on the GPU the fill, the window sums and the bias and
/// activation after them are one nest, so one kernel, and an elementwise
/// producer of the input fuses into the read (disc-fuse-marked-producers).
Value depthwiseInPlace(OpBuilder &b, Location loc, Value input, Value filter,
                       ArrayRef<int64_t> lo, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations, RankedTensorType resultType,
                       ArrayRef<OpFoldResult> dims) {
  MLIRContext *ctx = b.getContext();
  Type elt = resultType.getElementType();
  int64_t k = resultType.getRank() - 2, lead = 2, loops = lead + 2 * k;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> fExprs = {d(1), getAffineConstantExpr(0, ctx)};
  SmallVector<AffineExpr> outExprs = {d(0), d(1)};
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < k; ++i) {
    fExprs.push_back(d(lead + k + i));
    outExprs.push_back(d(lead + i));
    sizes.push_back(dimValue(b, loc, input, lead + i));
  }
  Value init = fill(b, loc, cstScalar(b, loc, elt, 0),
                    emptyTensor(b, loc, resultType, dims));
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, fExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<IterType> iters(lead + k, IterType::parallel);
  iters.append(k, IterType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{filter},
             ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x =
                   extractWindowElement(nb, nl, input, lead, sizes, lo, strides,
                                        dilations, cstScalar(nb, nl, elt, 0));
               linalg::YieldOp::create(nb, nl,
                                       mulAdd(nb, nl, x, args[0], args[1]));
             })
      .getResult(0);
}

/// The checks the Conv and ConvTranspose (`what`, in the diagnostic)
/// lowerings start with: a float or integer element type, and static
/// channel counts in the filter of a grouped one.
template <typename ConvLike>
LogicalResult checkConvLowerable(ConvLike op, StringRef what) {
  Type elt = op.getType().getElementType();
  if (!isFloatOrInt(elt))
    return unsupportedElementType(op, elt);
  RankedTensorType fType = tensorType(op.getFilter());
  if (op.getFeatureGroupCount() > 1 &&
      (fType.isDynamicDim(0) || fType.isDynamicDim(1)))
    return op.emitOpError("cannot be lowered to linalg yet: grouped ")
           << what << " needs static channel counts";
  return success();
}

/// ONNX Conv (zero padding, strides, dilations, groups). 2-D ungrouped
/// convolutions become `linalg.conv_2d_nchw_fchw`; all others one
/// `linalg.generic` over [N, (G,) OCg, O..., ICg, K...]. With
/// `libraryCalls`, f32 convolutions become a library call instead.
FailureOr<Value> lowerConv(OpBuilder &b, ConvOp op, RuntimeChecks &checks,
                           bool libraryCalls) {
  // The filter (usually a constant) fixes the channel counts: C = G * Cg.
  if (failed(checkConvLowerable(op, "convolution")))
    return failure();
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  int64_t k = resultType.getRank() - 2;
  int64_t groups = op.getFeatureGroupCount();
  Value filter = op.getFilter();
  // Input channels = groups x filter channels (ONNX Conv's C = group * C/g).
  {
    IMath m{b, loc};
    Value c = dimValue(b, loc, op.getInput(), 1);
    Value cg = dimValue(b, loc, filter, 1);
    Value want = m.mul(cg, m.c(groups));
    checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, c, want), "",
                 "input has {0} channels, the weights expect {1}", {c, want});
  }
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  if (libraryCalls)
    if (std::optional<Value> call =
            lowerConvToLibraryCall(b, op, reified->dims))
      return *call;

  ArrayRef<int64_t> pad = op.getPadding();
  if (op->hasAttr(kDepthwiseLoopsAttrName))
    return depthwiseInPlace(b, loc, op.getInput(), filter, pad.take_front(k),
                            op.getStrides(), op.getDilations(), resultType,
                            reified->dims);
  SmallVector<OpFoldResult> hi;
  for (int64_t v : pad.drop_front(k))
    hi.push_back(b.getIndexAttr(v));
  Value input = padSpatial(b, loc, op.getInput(), pad.take_front(k), hi,
                           cstScalar(b, loc, elt, 0));
  return convOnPadded(b, loc, input, filter, op.getStrides(), op.getDilations(),
                      groups, resultType, reified->dims);
}

/// Convolution of an already padded `input` [N, C, D...] with `filter`
/// [OC, C / groups, K...] into `resultType` with dims `dims`.
Value convOnPadded(OpBuilder &b, Location loc, Value input, Value filter,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                   int64_t groups, RankedTensorType resultType,
                   ArrayRef<OpFoldResult> dims) {
  Type elt = resultType.getElementType();
  int64_t k = resultType.getRank() - 2;
  RankedTensorType fType = tensorType(filter);
  RankedTensorType inType = tensorType(input);
  Value zero = cstScalar(b, loc, elt, 0);

  if (k == 2 && groups == 1) {
    Value init = fill(b, loc, zero, emptyTensor(b, loc, resultType, dims));
    auto attr = [&](ArrayRef<int64_t> v) {
      return DenseIntElementsAttr::get(
          RankedTensorType::get({2}, b.getI64Type()), v);
    };
    return linalg::Conv2DNchwFchwOp::create(
               b, loc, TypeRange{resultType}, ValueRange{input, filter},
               ValueRange{init}, attr(strides), attr(dilations))
        .getResult(0);
  }

  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> inSizes = tensor::getMixedSizes(b, loc, input);
  SmallVector<OpFoldResult> fSizes = tensor::getMixedSizes(b, loc, filter);
  int64_t g = groups > 1 ? 1 : 0; // extra group loop
  // Loops: n, [g], ocg, o_1..o_k, icg, k_1..k_k.
  int64_t loops = 2 + g + 2 * k + 1;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  int64_t oBase = 2 + g, cLoop = 2 + g + k, kBase = 3 + g + k;

  SmallVector<AffineExpr> inExprs = {d(0)}, fExprs, outExprs = {d(0)};
  if (g) {
    inExprs.push_back(d(1));
    fExprs.push_back(d(1));
    outExprs.push_back(d(1));
  }
  inExprs.push_back(d(cLoop));
  fExprs.push_back(d(1 + g));
  fExprs.push_back(d(cLoop));
  outExprs.push_back(d(1 + g));
  for (int64_t i = 0; i < k; ++i) {
    inExprs.push_back(d(oBase + i) * strides[i] + d(kBase + i) * dilations[i]);
    fExprs.push_back(d(kBase + i));
    outExprs.push_back(d(oBase + i));
  }

  Value out;
  RankedTensorType outType = resultType;
  SmallVector<OpFoldResult> outDims(dims.begin(), dims.end());
  if (g) {
    int64_t c = groups * fType.getDimSize(1), oc = fType.getDimSize(0);
    if (inType.isDynamicDim(1)) {
      // ONNX Conv requires C = G * Cg; the input must have that many.
      SmallVector<int64_t> staticC(tensorType(input).getShape());
      staticC[1] = c;
      input = tensor::CastOp::create(
          b, loc, RankedTensorType::get(staticC, elt), input);
      inSizes[1] = b.getIndexAttr(c);
    }
    int64_t cg = c / groups, ocg = oc / groups;
    // input [N, G, Cg, D...]
    SmallVector<int64_t> inShape = {tensorType(input).getDimSize(0), groups,
                                    cg};
    SmallVector<OpFoldResult> inOut = {inSizes[0], b.getIndexAttr(groups),
                                       b.getIndexAttr(cg)};
    SmallVector<ReassociationIndices> inAssoc = {{0}, {1, 2}};
    for (int64_t i = 0; i < k; ++i) {
      inShape.push_back(tensorType(input).getDimSize(2 + i));
      inOut.push_back(inSizes[2 + i]);
      inAssoc.push_back({3 + i});
    }
    input = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(inShape, elt), input, inAssoc, inOut);
    // filter [G, OCg, Cg, K...]
    SmallVector<int64_t> fShape = {groups, ocg, fType.getDimSize(1)};
    SmallVector<OpFoldResult> fOut = {b.getIndexAttr(groups),
                                      b.getIndexAttr(ocg), fSizes[1]};
    SmallVector<ReassociationIndices> fAssoc = {{0, 1}, {2}};
    for (int64_t i = 0; i < k; ++i) {
      fShape.push_back(fType.getDimSize(2 + i));
      fOut.push_back(fSizes[2 + i]);
      fAssoc.push_back({3 + i});
    }
    filter = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(fShape, elt), filter, fAssoc, fOut);
    // output [N, G, OCg, O...]
    SmallVector<int64_t> oShape = {resultType.getDimSize(0), groups, ocg};
    outDims = {dims[0], b.getIndexAttr(groups), b.getIndexAttr(ocg)};
    for (int64_t i = 0; i < k; ++i) {
      oShape.push_back(resultType.getDimSize(2 + i));
      outDims.push_back(dims[2 + i]);
    }
    outType = RankedTensorType::get(oShape, elt);
  }
  out = fill(b, loc, zero, emptyTensor(b, loc, outType, outDims));
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, inExprs, ctx),
                                 AffineMap::get(loops, 0, fExprs, ctx),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<IterType> iters(2 + g + k, IterType::parallel);
  iters.append(1 + k, IterType::reduction);
  Value result = linalg::GenericOp::create(
                     b, loc, TypeRange{outType}, ValueRange{input, filter},
                     ValueRange{out}, maps, iters,
                     [&](OpBuilder &nb, Location nl, ValueRange args) {
                       linalg::YieldOp::create(
                           nb, nl, mulAdd(nb, nl, args[0], args[1], args[2]));
                     })
                     .getResult(0);
  if (g) {
    SmallVector<ReassociationIndices> assoc = {{0}, {1, 2}};
    for (int64_t i = 0; i < k; ++i)
      assoc.push_back({3 + i});
    result = tensor::CollapseShapeOp::create(b, loc, result, assoc);
  }
  return castTo(b, loc, result, resultType);
}

/// ONNX ConvTranspose as a convolution. The input is spread with the
/// strides (zero insertion) into a zero tensor Z at offset
/// `(K - 1) * dil + max(0, -pad_lo)`, Z is cropped at `max(0, pad_lo)`, and
/// convolved (stride 1, same dilation) with the filter flipped along its
/// spatial dims and with input/output channels swapped within each group.
FailureOr<Value> lowerConvTranspose(OpBuilder &b, ConvTransposeOp op) {
  if (failed(checkConvLowerable(op, "transposed convolution")))
    return failure();
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  Type elt = reified->type.getElementType();
  int64_t k = reified->type.getRank() - 2;
  int64_t groups = op.getFeatureGroupCount();
  Value x = op.getInput(), w = op.getFilter();
  IMath m{b, loc};
  ArrayRef<int64_t> strides = op.getStrides(), dil = op.getDilations(),
                    pad = op.getPadding();
  SmallVector<OpFoldResult> xs = tensor::getMixedSizes(b, loc, x);
  SmallVector<OpFoldResult> ws = tensor::getMixedSizes(b, loc, w);
  SmallVector<OpFoldResult> zSizes = {xs[0], xs[1]};
  SmallVector<OpFoldResult> insOff(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> insStride(2, b.getIndexAttr(1));
  SmallVector<OpFoldResult> cropOff(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> cropSize = {xs[0], xs[1]};
  SmallVector<OpFoldResult> ones(2 + k, b.getIndexAttr(1));
  for (int64_t i = 0; i < k; ++i) {
    Value d = toValue(b, loc, xs[2 + i]), kk = toValue(b, loc, ws[2 + i]);
    Value o = toValue(b, loc, reified->dims[2 + i]);
    Value span = m.mul(m.sub(kk, m.c(1)), m.c(dil[i]));
    Value dataLen = m.add(m.mul(m.sub(d, m.c(1)), m.c(strides[i])), m.c(1));
    int64_t lo = pad[i];
    Value offset = m.add(span, m.c(std::max<int64_t>(0, -lo)));
    int64_t crop = std::max<int64_t>(0, lo);
    Value cropLen = m.add(o, span);
    Value zLen = m.max(m.add(cropLen, m.c(crop)), m.add(offset, dataLen));
    zSizes.push_back(getAsOpFoldResult(zLen));
    insOff.push_back(getAsOpFoldResult(offset));
    insStride.push_back(b.getIndexAttr(strides[i]));
    cropOff.push_back(b.getIndexAttr(crop));
    cropSize.push_back(getAsOpFoldResult(cropLen));
  }
  Value zero = cstScalar(b, loc, elt, 0);
  Value z = fill(b, loc, zero, tensor::EmptyOp::create(b, loc, zSizes, elt));
  z = tensor::InsertSliceOp::create(b, loc, x, z, insOff, xs, insStride);
  Value cropped =
      tensor::ExtractSliceOp::create(b, loc, z, cropOff, cropSize, ones);

  // Filter [C, OCg, K...] -> [OC, Cg, K...], flipped spatially.
  OpFoldResult ocg = ws[1];
  OpFoldResult oc =
      getAsOpFoldResult(m.mul(toValue(b, loc, ws[1]), m.c(groups)));
  OpFoldResult cg = getAsOpFoldResult(
      b.createOrFold<arith::DivSIOp>(loc, toValue(b, loc, ws[0]), m.c(groups)));
  SmallVector<OpFoldResult> wtSizes = {oc, cg};
  for (int64_t i = 0; i < k; ++i)
    wtSizes.push_back(ws[2 + i]);
  Value wtInit = tensor::EmptyOp::create(b, loc, wtSizes, elt);
  Value ocgV = toValue(b, loc, ocg), cgV = toValue(b, loc, cg);
  SmallVector<Value> kV;
  for (int64_t i = 0; i < k; ++i)
    kV.push_back(toValue(b, loc, ws[2 + i]));
  Value wt = generateTensor(
      b, loc, wtInit, [&](OpBuilder &nb, Location nl, ValueRange) {
        IMath nm{nb, nl};
        Value mIdx = linalg::IndexOp::create(nb, nl, 0);
        Value cIdx = linalg::IndexOp::create(nb, nl, 1);
        Value g = arith::DivUIOp::create(nb, nl, mIdx, ocgV);
        Value mg = arith::RemUIOp::create(nb, nl, mIdx, ocgV);
        Value c = nm.add(nm.mul(g, cgV), cIdx);
        SmallVector<Value> idx = {c, mg};
        for (int64_t i = 0; i < k; ++i)
          idx.push_back(nm.sub(nm.sub(kV[i], nm.c(1)),
                               linalg::IndexOp::create(nb, nl, 2 + i)));
        Value v = tensor::ExtractOp::create(nb, nl, w, idx);
        linalg::YieldOp::create(nb, nl, v);
      });
  return convOnPadded(b, loc, cropped, wt, SmallVector<int64_t>(k, 1), dil,
                      groups, reified->type, reified->dims);
}

} // namespace

FailureOr<Value> mlir::disc::lowering::lowerLinearFamily(OpBuilder &b,
                                                         Operation *op,
                                                         LoweringState &state) {
  bool libraryCalls = state.libraryCalls;
  RuntimeChecks &checks = state.checks;
  // `o` as the library call `call` makes it (with the library calls on),
  // else as `fallback` does.
  auto viaLibrary = [&](auto o, auto call, auto fallback) -> FailureOr<Value> {
    if (libraryCalls) {
      FailureOr<ReifiedResult> reified = reifyResult(b, o);
      if (failed(reified))
        return failure();
      if (std::optional<Value> v = call(b, o, reified->dims))
        return *v;
    }
    return fallback();
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](DotGeneralOp o) {
        return lowerDotGeneral(b, o, checks, libraryCalls);
      })
      .Case([&](ConvOp o) { return lowerConv(b, o, checks, libraryCalls); })
      .Case([&](ConvBackwardFilterOp o) {
        // Made only for the oneDNN target (disc-form-conv-backward-filter).
        return viaLibrary(
            o, lowerConvBackwardFilterToLibraryCall, [&]() -> FailureOr<Value> {
              return o.emitOpError("lowers only to a oneDNN library call "
                                   "(--library-calls=onednn on the CPU)");
            });
      })
      .Case([&](ConvTransposeOp o) {
        return viaLibrary(o, lowerConvTransposeToLibraryCall,
                          [&]() { return lowerConvTranspose(b, o); });
      })
      .Default([](Operation *o) { return noLowering(o); });
}

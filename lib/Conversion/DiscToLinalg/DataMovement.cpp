//===- DataMovement.cpp - reshape, transpose, concat, slice, pad ----------===//
//
// Shape and data movement ops whose element positions follow from the
// shapes alone: disc.shape_of, disc.dynamic_reshape, disc.transpose,
// disc.concatenate, disc.slice, disc.pad and disc.range.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "disc/Conversion/LibraryCallAttrs.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::lowering;

namespace {

FailureOr<Value> lowerShapeOf(OpBuilder &b, ShapeOfOp op) {
  Location loc = op.getLoc();
  Value v = op.getOperand();
  SmallVector<Value> elems;
  for (int64_t i = 0, e = tensorType(v).getRank(); i < e; ++i)
    elems.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                               dimValue(b, loc, v, i)));
  Value r = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({tensorType(v).getRank()}, b.getI64Type()),
      elems);
  return castTo(b, loc, r, op.getType());
}

/// `src` as a `tensor.reshape` of `sizes` (an index shape tensor): a view
/// of a dense buffer once bufferized.
Value reshapeTo(OpBuilder &b, Location loc, RankedTensorType resultType,
                Value src, ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> elems;
  for (OpFoldResult d : sizes)
    elems.push_back(toValue(b, loc, d));
  Value shape = tensor::FromElementsOp::create(
      b, loc,
      RankedTensorType::get({static_cast<int64_t>(elems.size())},
                            b.getIndexType()),
      elems);
  return tensor::ReshapeOp::create(b, loc, resultType, src, shape).getResult();
}

/// ONNX Reshape through `tensor.reshape` with the reified dims (0 copied,
/// -1 inferred) as an index shape tensor; a proven reshape that only splits
/// dims (`expansion`, ShapeAnalysis::getExpansion) through
/// `tensor.expand_shape`, a view of any strided operand.
FailureOr<Value>
lowerDynamicReshape(OpBuilder &b, DynamicReshapeOp op, RuntimeChecks &checks,
                    bool proven, ArrayRef<SmallVector<int64_t, 2>> expansion) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Value src = op.getOperand();
  int64_t rank = resultType.getRank(), inRank = tensorType(src).getRank();
  IMath m{b, loc};
  // ONNX Reshape: entries >= -1, at most one -1, a 0 (without allowzero)
  // copies an input dim that must exist; the element counts agree. A
  // reshape the shape analysis proves valid needs none of the checks.
  if (proven) {
    checks.countProven(rank + 2);
    FailureOr<ReifiedResult> reified = reifyResult(b, op);
    if (failed(reified))
      return failure();
    // Only splitting dims: a view of any strided operand (a reshape of a
    // slice would otherwise be copied first).
    if (!expansion.empty()) {
      SmallVector<ReassociationIndices> groups(expansion.begin(),
                                               expansion.end());
      return tensor::ExpandShapeOp::create(
                 b, loc, resultType, src, groups,
                 sizesForType(b, loc, resultType, reified->dims))
          .getResult();
    }
    return reshapeTo(b, loc, resultType, src,
                     sizesForType(b, loc, resultType, reified->dims));
  }
  Value numMinusOne = m.c(0);
  for (int64_t i = 0; i < rank; ++i) {
    Value e = foldedElementAsIndex(b, loc, op.getShape(), i);
    if (isKnownNonNegative(e) && (op.getAllowZero() || i < inRank)) {
      checks.countProven(2);
      continue;
    }
    checks.check(b, loc, m.cmp(arith::CmpIPredicate::sge, e, m.c(-1)),
                 "Reshape", "shape[" + std::to_string(i) + "] is {0}", {e});
    if (!op.getAllowZero() && i >= inRank)
      checks.check(
          b, loc, m.cmp(arith::CmpIPredicate::ne, e, m.c(0)), "Reshape",
          "shape[" + std::to_string(i) + "] is 0 but the input has rank " +
              std::to_string(inRank));
    numMinusOne =
        m.add(numMinusOne, m.select(m.cmp(arith::CmpIPredicate::eq, e, m.c(-1)),
                                    m.c(1), m.c(0)));
  }
  checks.check(b, loc, m.cmp(arith::CmpIPredicate::sle, numMinusOne, m.c(1)),
               "Reshape", "more than one -1 in the shape");
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  SmallVector<OpFoldResult> sizes =
      sizesForType(b, loc, resultType, reified->dims);
  Value numelIn = m.c(1), numelOut = m.c(1);
  for (int64_t i = 0; i < inRank; ++i)
    numelIn = m.mul(numelIn, dimValue(b, loc, src, i));
  for (OpFoldResult d : sizes)
    numelOut = m.mul(numelOut, toValue(b, loc, d));
  checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, numelIn, numelOut),
               "Reshape", "cannot reshape {0} elements into {1} elements",
               {numelIn, numelOut});
  return reshapeTo(b, loc, resultType, src, sizes);
}

/// A transpose between NHWC and NCHW next to a Conv call that reads or
/// writes NHWC (kNhwcViewAttr, markLibraryCalls) keeps its operand's bytes:
/// a reshape of the dense buffer (a view), not a copy.
FailureOr<Value> lowerTranspose(OpBuilder &b, TransposeOp op) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  if (op->hasAttr(kNhwcViewAttr))
    return reshapeTo(b, loc, op.getType(), op.getOperand(),
                     sizesForType(b, loc, op.getType(), reified->dims));
  return linalg::TransposeOp::create(b, loc, op.getOperand(),
                                     reified->empty(b, loc),
                                     op.getPermutation())
      .getResult()[0];
}

/// Inserts each input into the destination at a running offset. A Concat
/// along the channels of NHWC data (kNhwcConcatAttr, markLibraryCalls)
/// does so on NHWC views of its operands and result (`tensor.reshape` of
/// the dense buffers, dims permuted channels-last): the axis is the last.
FailureOr<Value> lowerConcatenate(OpBuilder &b, ConcatenateOp op,
                                  RuntimeChecks &checks) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  int64_t rank = reified->type.getRank(), axis = op.getDimension();
  IMath m{b, loc};
  // `order[j]`: the op's dim at position j of the tensors the copies see.
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  bool nhwc = op->hasAttr(kNhwcConcatAttr);
  if (nhwc) {
    assert(axis == 1 && rank >= 3 && "NHWC concat along the channels");
    order.erase(order.begin() + 1);
    order.push_back(1);
  }
  auto permuted = [&](RankedTensorType t, ArrayRef<OpFoldResult> dims,
                      SmallVector<OpFoldResult> &outDims) {
    SmallVector<int64_t> shape;
    outDims.clear();
    for (int64_t d : order) {
      shape.push_back(t.getDimSize(d));
      outDims.push_back(dims[d]);
    }
    return RankedTensorType::get(shape, t.getElementType());
  };
  SmallVector<OpFoldResult> destDims;
  RankedTensorType destType = permuted(reified->type, reified->dims, destDims);
  Value dest = emptyTensor(b, loc, destType, destDims);
  int64_t destAxis = nhwc ? rank - 1 : axis;
  OpFoldResult offset = b.getIndexAttr(0);
  for (Value in : op.getInputs()) {
    // An operand empty along the axis adds nothing (and an insert at the
    // end offset would be out of bounds for the static verifier).
    if (tensorType(in).getDimSize(axis) == 0)
      continue;
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, in);
    bool resized = false;
    for (int64_t i = 0; i < rank; ++i) {
      if (i == axis)
        continue;
      Value got = toValue(b, loc, sizes[i]);
      Value want = toValue(b, loc, reified->dims[i]);
      checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, got, want), "Concat",
                   "operand dim " + std::to_string(i) +
                       " is {0}, the other operands have {1}",
                   {got, want});
      // Checked equal: the result's dim, so that the copies of all
      // operands have the same loop bounds (one GPU kernel gathers them):
      // the operand is read through a full slice with the result's dims.
      if (tensorType(in).isDynamicDim(i) && isa<Value>(reified->dims[i])) {
        sizes[i] = reified->dims[i];
        resized = true;
      }
    }
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    SmallVector<OpFoldResult> insertSizes = sizes;
    if (nhwc) {
      // The operand's NHWC bytes, viewed channels-last with the checked
      // dims (a view: no slice needed).
      RankedTensorType viewType = permuted(tensorType(in), sizes, insertSizes);
      in = reshapeTo(b, loc, viewType, in, insertSizes);
    } else if (resized) {
      in = tensor::ExtractSliceOp::create(b, loc, in, offsets, sizes, strides);
    }
    offsets[destAxis] = offset;
    dest = tensor::InsertSliceOp::create(b, loc, in, dest, offsets, insertSizes,
                                         strides);
    offset = getAsOpFoldResult(
        m.add(toValue(b, loc, offset), toValue(b, loc, sizes[axis])));
  }
  if (nhwc)
    return reshapeTo(b, loc, reified->type, dest,
                     sizesForType(b, loc, reified->type, reified->dims));
  return dest;
}

/// ONNX Slice. Starts are normalized as the spec says (negative + dim,
/// clamped to [0, dim] for positive steps and [0, dim - 1] for negative
/// ones); the counts come from the reified shape. Constant positive steps
/// give a `tensor.extract_slice`; otherwise a generic reads
/// `start + i * step` with `tensor.extract`.
FailureOr<Value> lowerSlice(OpBuilder &b, SliceOp op, RuntimeChecks &checks) {
  Location loc = op.getLoc();
  // ONNX: a step is never 0 (the count divides by it).
  for (int64_t k = 0, e = op.getAxes().size(); k < e; ++k) {
    Value step = foldedElementAsIndex(b, loc, op.getSteps(), k);
    checks.check(b, loc,
                 b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                               step, cstIndex(b, loc, 0)),
                 "Slice", "steps[" + std::to_string(k) + "] is 0");
  }
  // Bounds given by the op's contract (TopK `k`, Split sizes): no clamping
  // is allowed, 0 <= start <= end <= dim (and end == dim) must hold.
  auto boundsMsg = op->getAttrOfType<StringAttr>(kSliceBoundsMessageAttr);
  auto endMsg = op->getAttrOfType<StringAttr>(kSliceEndMessageAttr);
  if (boundsMsg || endMsg) {
    IMath m{b, loc};
    for (auto [k, axis] : llvm::enumerate(op.getAxes())) {
      Value d = dimValue(b, loc, op.getOperand(), axis);
      Value start = foldedElementAsIndex(b, loc, op.getStarts(), k);
      Value end = foldedElementAsIndex(b, loc, op.getEnds(), k);
      SmallVector<Value> vals = {start, end, d, m.sub(end, start)};
      auto le = [&](Value x, Value y) {
        return m.cmp(arith::CmpIPredicate::sle, x, y);
      };
      if (boundsMsg) {
        Value ok = b.createOrFold<arith::AndIOp>(
            loc,
            b.createOrFold<arith::AndIOp>(loc, le(m.c(0), start),
                                          le(start, end)),
            le(end, d));
        checks.check(b, loc, ok, "Slice", boundsMsg.getValue(), vals);
      }
      if (endMsg)
        checks.check(b, loc, m.cmp(arith::CmpIPredicate::eq, end, d), "Slice",
                     endMsg.getValue(), vals);
    }
  }
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Value src = op.getOperand();
  int64_t rank = reified->type.getRank();
  IMath m{b, loc};
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  DenseIntElementsAttr stepsAttr;
  SmallVector<APInt> stepVals;
  if (matchPattern(op.getSteps(), m_Constant(&stepsAttr)))
    stepVals = llvm::to_vector(stepsAttr.getValues<APInt>());
  bool positiveSteps =
      !stepVals.empty() && llvm::all_of(stepVals, [](const APInt &s) {
        return s.isStrictlyPositive();
      });
  for (auto [k, axis] : llvm::enumerate(op.getAxes())) {
    Value d = dimValue(b, loc, src, axis);
    Value start = elementAsIndex(b, loc, op.getStarts(), k);
    Value step = positiveSteps ? m.c(stepVals[k].getSExtValue())
                               : elementAsIndex(b, loc, op.getSteps(), k);
    Value wrapped = m.select(m.cmp(arith::CmpIPredicate::slt, start, m.c(0)),
                             m.add(start, d), start);
    Value clampedPos = m.min(m.max(wrapped, m.c(0)), d);
    Value clampedNeg = m.min(m.max(wrapped, m.c(0)), m.sub(d, m.c(1)));
    Value s = positiveSteps
                  ? clampedPos
                  : m.select(m.cmp(arith::CmpIPredicate::slt, step, m.c(0)),
                             clampedNeg, clampedPos);
    offsets[axis] = getAsOpFoldResult(s);
    strides[axis] = getAsOpFoldResult(step);
  }
  SmallVector<OpFoldResult> sizes =
      sizesForType(b, loc, reified->type, reified->dims);
  if (positiveSteps)
    return tensor::ExtractSliceOp::create(b, loc, reified->type, src, offsets,
                                          sizes, strides)
        .getResult();

  return extractEach(b, loc, reified->empty(b, loc), src,
                     [&](OpBuilder &nb, Location nl, ValueRange) {
                       SmallVector<Value> idx;
                       for (int64_t i = 0; i < rank; ++i) {
                         Value iv = linalg::IndexOp::create(nb, nl, i);
                         if (llvm::is_contained(op.getAxes(), i)) {
                           Value st = toValue(nb, nl, strides[i]);
                           Value off = toValue(nb, nl, offsets[i]);
                           iv = arith::AddIOp::create(
                               nb, nl, off,
                               arith::MulIOp::create(nb, nl, iv, st));
                         }
                         idx.push_back(iv);
                       }
                       return idx;
                     });
}

/// ONNX Pad. Constant mode is `tensor.pad` (static bounds when `pads` is a
/// constant); reflect and edge modes are a generic over the result reading
/// the operand at the reflected / clamped index.
FailureOr<Value> lowerPad(OpBuilder &b, PadOp op) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Value src = op.getOperand();
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> low, high;
  DenseIntElementsAttr padsAttr;
  if (matchPattern(op.getPads(), m_Constant(&padsAttr))) {
    auto values = llvm::to_vector(padsAttr.getValues<APInt>());
    for (int64_t i = 0; i < rank; ++i) {
      low.push_back(b.getIndexAttr(values[i].getSExtValue()));
      high.push_back(b.getIndexAttr(values[rank + i].getSExtValue()));
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) {
      low.push_back(elementAsIndex(b, loc, op.getPads(), i));
      high.push_back(elementAsIndex(b, loc, op.getPads(), rank + i));
    }
  }
  if (op.getMode() == PadMode::Constant) {
    Value v = tensor::ExtractOp::create(b, loc, op.getValue(), ValueRange{});
    Value r = tensor::PadOp::create(b, loc, Type(), src, low, high, v);
    return castTo(b, loc, r, resultType);
  }
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  bool reflect = op.getMode() == PadMode::Reflect;
  SmallVector<Value> srcDims, lows;
  for (int64_t i = 0; i < rank; ++i) {
    srcDims.push_back(dimValue(b, loc, src, i));
    lows.push_back(toValue(b, loc, low[i]));
  }
  return extractEach(
      b, loc, reified->empty(b, loc), src,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        IMath mm{nb, nl};
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i) {
          Value j = mm.sub(linalg::IndexOp::create(nb, nl, i), lows[i]);
          Value last = mm.sub(srcDims[i], mm.c(1));
          if (reflect) {
            // j < 0 -> -j; j > last -> 2 * last - j.
            Value neg = mm.sub(mm.c(0), j);
            j = mm.select(mm.cmp(arith::CmpIPredicate::slt, j, mm.c(0)), neg,
                          j);
            Value over = mm.sub(mm.mul(last, mm.c(2)), j);
            j = mm.select(mm.cmp(arith::CmpIPredicate::sgt, j, last), over, j);
          }
          // Edge mode, and a guard for reflect beyond one period.
          j = mm.min(mm.max(j, mm.c(0)), last);
          idx.push_back(j);
        }
        return idx;
      });
}

/// ONNX Range: element i is `start + i * delta`.
FailureOr<Value> lowerRange(OpBuilder &b, RangeOp op, RuntimeChecks &checks) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  if (!isFloatOrInt(elt))
    return unsupportedElementType(op, elt);
  // ONNX: the element count is ceil((limit - start) / delta).
  Value delta = tensor::ExtractOp::create(b, loc, op.getDelta(), ValueRange{});
  {
    Value zero = cstScalar(b, loc, elt, 0);
    Value nonZero = isa<FloatType>(elt)
                        ? b.createOrFold<arith::CmpFOp>(
                              loc, arith::CmpFPredicate::ONE, delta, zero)
                        : b.createOrFold<arith::CmpIOp>(
                              loc, arith::CmpIPredicate::ne, delta, zero);
    checks.check(b, loc, nonZero, "Range", "delta is 0");
  }
  // The element count ceil((limit - start) / delta) must fit in int64 (the
  // shape is computed in i64; a wrapped difference would give a wrong,
  // often empty, result).
  {
    Value start =
        tensor::ExtractOp::create(b, loc, op.getStart(), ValueRange{});
    Value limit =
        tensor::ExtractOp::create(b, loc, op.getLimit(), ValueRange{});
    if (auto it = dyn_cast<IntegerType>(elt)) {
      Type i64 = b.getI64Type();
      auto wide = [&](Value v) -> Value {
        return it.getWidth() < 64 ? arith::ExtSIOp::create(b, loc, i64, v) : v;
      };
      Value s = wide(start), l = wide(limit), d = wide(delta);
      Value diff = arith::SubIOp::create(b, loc, l, s);
      // Signed l - s overflows iff l and s differ in sign and the
      // difference's sign differs from l's.
      Value sx = arith::XOrIOp::create(b, loc, l, s);
      Value dx = arith::XOrIOp::create(b, loc, l, diff);
      Value both = arith::AndIOp::create(b, loc, sx, dx);
      Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
      Value noOverflow = b.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::sge, both, zero);
      checks.check(b, loc, noOverflow, "Range",
                   "limit - start ({0} - {1}) overflows int64", {l, s});
      Value minI64 = arith::ConstantIntOp::create(
          b, loc, i64, std::numeric_limits<int64_t>::min());
      Value minusOne = arith::ConstantIntOp::create(b, loc, i64, -1);
      Value isMin =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, diff, minI64);
      Value isM1 =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, minusOne);
      Value fits = b.createOrFold<arith::XOrIOp>(
          loc, arith::AndIOp::create(b, loc, isMin, isM1),
          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
      checks.check(b, loc, fits, "Range",
                   "the element count ceil((limit - start) / delta) does not "
                   "fit in int64");
    } else {
      Value q = arith::DivFOp::create(
          b, loc, arith::SubFOp::create(b, loc, limit, start), delta);
      // Ordered: a NaN count fails too. 2^63 is the first value above
      // int64's range.
      Value fits = b.createOrFold<arith::CmpFOp>(
          loc, arith::CmpFPredicate::OLT, q,
          cstScalar(b, loc, elt, 9223372036854775808.0));
      checks.check(b, loc, fits, "Range",
                   "the element count (limit - start) / delta is not a "
                   "finite value below 2^63");
    }
  }
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Value start = tensor::ExtractOp::create(b, loc, op.getStart(), ValueRange{});
  return generateTensor(
      b, loc, reified->empty(b, loc),
      [&](OpBuilder &nb, Location nl, ValueRange) {
        Value i = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 0));
        Value r;
        if (isa<FloatType>(elt)) {
          Value fi = arith::SIToFPOp::create(nb, nl, elt, i);
          r = arith::AddFOp::create(nb, nl, start,
                                    arith::MulFOp::create(nb, nl, fi, delta));
        } else {
          Value ii = convertScalar(nb, nl, i, elt, false, false);
          r = arith::AddIOp::create(nb, nl, start,
                                    arith::MulIOp::create(nb, nl, ii, delta));
        }
        linalg::YieldOp::create(nb, nl, r);
      });
}

} // namespace

FailureOr<Value>
mlir::disc::lowering::lowerDataMovementFamily(OpBuilder &b, Operation *op,
                                              LoweringState &state) {
  RuntimeChecks &checks = state.checks;
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](ShapeOfOp o) { return lowerShapeOf(b, o); })
      .Case([&](DynamicReshapeOp o) {
        auto proven = state.provenReshapes.find(o);
        return lowerDynamicReshape(b, o, checks,
                                   proven != state.provenReshapes.end(),
                                   proven != state.provenReshapes.end()
                                       ? ArrayRef(proven->second)
                                       : ArrayRef<SmallVector<int64_t, 2>>());
      })
      .Case([&](TransposeOp o) { return lowerTranspose(b, o); })
      .Case([&](ConcatenateOp o) { return lowerConcatenate(b, o, checks); })
      .Case([&](SliceOp o) { return lowerSlice(b, o, checks); })
      .Case([&](PadOp o) { return lowerPad(b, o); })
      .Case([&](RangeOp o) { return lowerRange(b, o, checks); })
      .Default([](Operation *o) { return noLowering(o); });
}

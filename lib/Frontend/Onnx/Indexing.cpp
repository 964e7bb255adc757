//===- Indexing.cpp - ONNX gather, scatter and mask ops
//---------------------===//
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

LogicalResult Importer::importGather(StringRef) {
  Value data = in(0), idx = in(1);
  if (!(elt(idx).isInteger(32) || elt(idx).isInteger(64)) || isUns(idx))
    return err() << "indices must be int32 or int64";
  int64_t r = rank(data);
  int64_t axis = nodeAxis;
  Dims dd = dims(data), o;
  o.append(dd.begin(), dd.begin() + axis);
  Dims di = dims(idx);
  o.append(di.begin(), di.end());
  o.append(dd.begin() + axis + 1, dd.end());
  Value res = mk<GatherOp>(o, elt(data), data, idx, (uint64_t)axis);
  if (isUns(data))
    unsignedVals.insert(res);
  std::optional<Dims> kd = known(data);
  std::optional<SmallVector<int64_t>> ki = knownInts(idx);
  if (kd && ki && r == 1 && rank(idx) <= 1) {
    Dims k;
    int64_t len = kd->size();
    for (int64_t i : *ki) {
      if (i < 0)
        i += len;
      if (i < 0 || i >= len)
        return err() << "index " << i << " out of range for length " << len;
      k.push_back((*kd)[i]);
    }
    res = setKnown(res, k);
  }
  out(0, res);
  return success();
}

LogicalResult Importer::importTrilu(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  Value k = has(1) ? in(1) : constI64Scalar(0);
  if (!maybeScalar(k))
    return err() << "k must be a scalar";
  if (rank(k) != 0)
    k = reshapeToScalar(k);
  k = toI64(k);
  Value row = iotaAlong(x, r - 2, 2, 0), col = iotaAlong(x, r - 1, 2, 1);
  Value diff = binary<SubOp>(col, row);
  bool upper = aInt("upper", 1) != 0;
  Value mask =
      compare(upper ? CompareDirection::GE : CompareDirection::LE, diff, k);
  Value y = select(mask, x, scalarLike(x, 0));
  return finish(y);
}

LogicalResult Importer::importEyeLike(StringRef) {
  Value x = in(0);
  Type e = elt(x);
  bool uns = isUns(x);
  if (attr("dtype")) {
    e = convertElementType(&ctx, (int32_t)aInt("dtype", 1), uns);
    if (!e)
      return err() << "unsupported dtype " << aInt("dtype", 1);
  }
  int64_t k = aInt("k", 0);
  Value row = iotaAlong(x, 0, 2, 0), col = iotaAlong(x, 1, 2, 1);
  Value mask =
      compare(CompareDirection::EQ, binary<SubOp>(col, row), constI64Scalar(k));
  Value y = select(mask, constScalar(e, 1), constScalar(e, 0));
  return finish(markUnsigned(y, uns));
}

LogicalResult Importer::importOneHot(StringRef) {
  Value idx = in(0), depth = in(1), vals = in(2);
  if (!maybeScalar(depth))
    return err() << "depth must be a scalar";
  if (rank(vals) != 1 ||
      (!tt(vals).isDynamicDim(0) && tt(vals).getDimSize(0) != 2))
    return err() << "values must be a 2-element vector";
  int64_t r = rank(idx) + 1;
  FailureOr<int64_t> axis = normAxis(aInt("axis", -1), r);
  if (::mlir::failed(axis))
    return failure();
  if (rank(depth) != 0)
    depth = reshapeToScalar(depth);
  if (isFloat(depth))
    depth = unary<FloorOp>(depth);
  FailureOr<Value> di = widen(depth);
  if (::mlir::failed(di))
    return failure();
  depth = toI64(*di);
  FailureOr<Value> ii = widen(idx);
  if (::mlir::failed(ii))
    return failure();
  Value ix = *ii;
  if (isFloat(ix))
    ix = unary<FloorOp>(ix);
  ix = toI64(ix);
  // Negative indices count from the end.
  ix = select(compare(CompareDirection::LT, ix, constI64Scalar(0)),
              binary<AddOp>(ix, depth), ix);
  Dim dd;
  if (std::optional<SmallVector<int64_t>> kd = knownInts(depth))
    dd = Dim((*kd)[0]);
  Value io = mk<RangeOp>(Dims{dd}, b.getI64Type(), constI64Scalar(0), depth,
                         constI64Scalar(1));
  SmallVector<TDim> t(r, tdimConst(1));
  t[*axis] = tdimOf(io, 0);
  io = reshapeT(io, t);
  Value mask = compare(CompareDirection::EQ, unsqueezeAt(ix, *axis), io);
  Value off = reshapeToScalar(slice1D(vals, 0, 1));
  Value on = reshapeToScalar(slice1D(vals, 1, 2));
  Value y = select(mask, on, off);
  return finish(y);
}

/// out[t, b] = x[len[b] - 1 - t, b] for t < len[b], else x[t, b]: a one-hot
/// mask over (t, source t) selects and sums the source rows.
LogicalResult Importer::importReverseSequence(StringRef) {
  Value x = in(0), lens = in(1);
  int64_t r = rank(x);
  if (rank(lens) != 1 || !isa<IntegerType>(elt(lens)))
    return err() << "sequence_lens must be a 1-D integer tensor";
  int64_t ba = aInt("batch_axis", 1), ta = aInt("time_axis", 0);
  if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
    return err() << "batch_axis/time_axis must be 0 and 1";
  SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, r));
  std::swap(swap[0], swap[1]);
  Value v = ta == 0 ? x : transpose(x, swap); // [T, B, ...]
  Value len = reshapeT(
      toI64(lens), {tdimConst(1), tdimConst(1), tdimOf(lens, 0)}); // [1, 1, B]
  Value t = iotaAlong(v, 0, 3, 0), src = iotaAlong(v, 0, 3, 1);
  Value rev = binary<SubOp>(binary<SubOp>(len, constI64Scalar(1)), t);
  Value from = select(compare(CompareDirection::LT, t, len), rev, t); // [T,1,B]
  Value mask = compare(CompareDirection::EQ, src, from);              // [T,T,B]
  if (!mask)
    return failure();
  SmallVector<TDim> ms;
  for (int64_t i = 0; i < 3; ++i)
    ms.push_back(tdimOf(mask, i));
  ms.append(r - 2, tdimConst(1));
  mask = reshapeT(mask, ms);
  Value y =
      reduce(ReduceKind::Sum, select(mask, unsqueezeAt(v, 0), scalarLike(v, 0)),
             {1}, false);
  if (!y)
    return failure();
  if (ta == 1)
    y = transpose(y, swap);
  out(0, y);
  return success();
}

LogicalResult Importer::checkIndices(Value idx) {
  if (!(elt(idx).isInteger(32) || elt(idx).isInteger(64)) || isUns(idx))
    return err() << "indices must be int32 or int64";
  return success();
}

LogicalResult Importer::importGatherElements(StringRef) {
  Value data = in(0), idx = in(1);
  if (::mlir::failed(checkIndices(idx)))
    return failure();
  int64_t r = rank(data);
  if (rank(idx) != r)
    return err() << "data and indices must have the same rank";
  int64_t axis = nodeAxis;
  out(0, mk<GatherElementsOp>(dims(idx), elt(data), data, idx, (uint64_t)axis));
  return success();
}

LogicalResult Importer::importGatherNd(StringRef) {
  Value data = in(0), idx = in(1);
  if (::mlir::failed(checkIndices(idx)))
    return failure();
  int64_t r = rank(data), q = rank(idx);
  int64_t bd = aInt("batch_dims", 0);
  if (q < 1 || r < 1 || bd < 0 || bd >= std::min(r, q))
    return err() << "batch_dims " << bd
                 << " must be below the ranks of data and indices";
  int64_t k = tt(idx).getDimSize(q - 1);
  if (ShapedType::isDynamic(k)) {
    // The tuple length sets the result rank: take it from the declared
    // rank of the output.
    std::optional<int64_t> outRank = declaredRank(node->output(0));
    if (!outRank)
      return err() << "the last dim of 'indices' must be known at compile "
                      "time (it sets the result rank; opset "
                   << opset << ")";
    k = q - 1 + r - bd - *outRank;
  }
  if (k < 1 || k > r - bd)
    return err() << "index tuples of " << k << " entries do not fit data of "
                 << "rank " << r << " with batch_dims " << bd;
  Dims di = dims(idx), dd = dims(data);
  Dims o(di.begin(), di.end() - 1);
  o.append(dd.begin() + bd + k, dd.end());
  out(0, mk<GatherNdOp>(o, elt(data), data, idx, (uint64_t)bd));
  return success();
}

FailureOr<std::string> Importer::scatterReduction() {
  std::string red = aStr("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul"}, red)) {
    err() << "attribute 'reduction' = '" << red << "' is not supported (opset "
          << opset << ")";
    return failure();
  }
  return red;
}

LogicalResult Importer::importScatterElements(StringRef) {
  Value data = in(0), idx = in(1), upd = in(2);
  if (::mlir::failed(checkIndices(idx)) || ::mlir::failed(sameElt(data, upd)))
    return failure();
  int64_t r = rank(data);
  if (rank(idx) != r || rank(upd) != r)
    return err() << "data, indices and updates must have the same rank";
  FailureOr<std::string> red = scatterReduction();
  if (::mlir::failed(red))
    return failure();
  out(0, mk<ScatterElementsOp>(dims(data), elt(data), data, idx, upd,
                               (uint64_t)nodeAxis, *red));
  return success();
}

LogicalResult Importer::importScatterNd(StringRef) {
  Value data = in(0), idx = in(1), upd = in(2);
  if (::mlir::failed(checkIndices(idx)) || ::mlir::failed(sameElt(data, upd)))
    return failure();
  int64_t r = rank(data), q = rank(idx);
  int64_t k = r - rank(upd) + q - 1;
  if (q < 1 || k < 1 || k > r)
    return err() << "the ranks of data (" << r << "), indices (" << q
                 << ") and updates (" << rank(upd) << ") do not match";
  FailureOr<std::string> red = scatterReduction();
  if (::mlir::failed(red))
    return failure();
  out(0, mk<ScatterNdOp>(dims(data), elt(data), data, idx, upd, *red));
  return success();
}

} // namespace mlir::disc::onnx_import

//===- LinearAlgebra.cpp - ONNX Det ---------------------------------------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::disc::onnx_import {

/// ONNX Det-11: X [*, M, M] (float) -> [*], by LU decomposition with
/// partial pivoting. The batch dims are flattened to B; an `scf.for` over
/// the column k in [0, M) (M may be a run-time value) carries the matrices
/// A [B, M, M] and the running determinant d [B] (init 1); its body is
/// vectorized over the batch with `disc` ops:
///   p = arg max over rows i >= k of |A[:, i, k]|        (first maximum)
///   swap rows k and p (gathers and selects); d *= A[:, k, k] * (p == k ? 1
///   : -1) after the swap;
///   A[:, i, :] -= A[:, i, k] / A[:, k, k] * A[:, k, :] for rows i > k.
/// A zero pivot (the column is zero from row k down) leaves d = 0 and skips
/// the elimination. Cost O(B * M^3), M steps. Non-square matrices of
/// run-time size stop the run with an error.
LogicalResult Importer::importDet(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  Dims dx = dims(x);
  Type e = elt(x), i64 = b.getI64Type();
  if (dx[r - 1].isStatic() && dx[r - 2].isStatic() &&
      dx[r - 1].size != dx[r - 2].size)
    return err() << "expects square matrices, got " << dx[r - 2].size << "x"
                 << dx[r - 1].size;
  if (!dx[r - 1].isStatic() || !dx[r - 2].isStatic()) {
    // Rows == columns, checked at run time by a slice whose end must be
    // the dim.
    Dims o = dx;
    o[r - 2] = dx[r - 1];
    x = mk<SliceOp>(o, e, x, constI64({0}), dimOf(x, r - 1), constI64({1}),
                    ArrayRef<int64_t>{r - 2});
    x.getDefiningOp()->setAttr(
        kSliceEndMessageAttr,
        b.getStringAttr("expects square matrices, got {2} rows and {1} "
                        "columns"));
  }
  TDim bt = tdimConst(1);
  SmallVector<TDim> batch;
  for (int64_t i = 0; i < r - 2; ++i) {
    batch.push_back(tdimOf(x, i));
    bt = tdimMul(bt, batch.back());
  }
  TDim mt = tdimOf(x, r - 1);
  Value a = reshapeT(x, {bt, mt, mt});
  Dim bd = bt.d, md = mt.d;

  // Everything the loop body needs from outside is built here.
  Value rows = mk<RangeOp>(Dims{md}, i64, constI64Scalar(0), dimScalar(a, 2),
                           constI64Scalar(1));
  Value rows2 = reshapeT(rows, {tdimConst(1), mt});
  Value rows3 = reshapeT(rows, {tdimConst(1), mt, tdimConst(1)});
  Value rowShape = shapeFrom({bt, tdimConst(1), mt});
  Value det0 = expandTo(scalarLike(x, 1), shapeFrom({bt}), Dims{bd});
  Value zero = scalarLike(x, 0), one = scalarLike(x, 1);
  Value minusOne = scalarLike(x, -1);
  if (!rows2 || !rows3 || !det0)
    return failure();

  Value mIdx = tensor::DimOp::create(b, loc, a, 2).getResult();
  Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0).getResult();
  Value oneIdx = arith::ConstantIndexOp::create(b, loc, 1).getResult();
  SmallVector<Value> inits = {a, det0};
  auto loop = scf::ForOp::create(b, loc, zeroIdx, mIdx, oneIdx, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange args = loop.getRegionIterArgs();
    for (auto [arg, init] : llvm::zip(args, inits))
      record(arg, dims(init));
    Value am = args[0], det = args[1];
    Value ki = arith::IndexCastOp::create(b, loc, i64, loop.getInductionVar())
                   .getResult();
    Value k = tensor::FromElementsOp::create(b, loc,
                                             RankedTensorType::get({}, i64), ki)
                  .getResult();
    Dims bm = {bd, md}, b1m = {bd, Dim(1), md};
    // Pivot row p: the first max of |A[:, i, k]| over i >= k.
    Value col = mk<GatherOp>(bm, e, am, k, (uint64_t)2);
    Value below = compare(CompareDirection::GE, rows2, k);
    Value cand = select(below, unary<AbsOp>(col), minusOne);
    Value p = mk<ArgReduceOp>(Dims{bd}, i64, cand, (uint64_t)1, true,
                              /*keep_dims=*/false,
                              /*select_last_index=*/false);
    Value p3 = reshapeT(p, {bt, tdimConst(1), tdimConst(1)});
    Value rowP = mk<GatherElementsOp>(b1m, e, am, expandTo(p3, rowShape, b1m),
                                      (uint64_t)1);
    Value rowK = reshapeT(mk<GatherOp>(bm, e, am, k, (uint64_t)1),
                          {bt, tdimConst(1), mt});
    // Swap rows k and p.
    Value swapped =
        select(compare(CompareDirection::EQ, rows3, k), rowP,
               select(compare(CompareDirection::EQ, rows3, p3), rowK, am));
    Value piv =
        mk<GatherOp>(Dims{bd}, e, reshapeT(rowP, {bt, mt}), k, (uint64_t)1);
    Value sign = select(compare(CompareDirection::EQ, p, k), one, minusOne);
    Value detNew = binary<MulOp>(det, binary<MulOp>(piv, sign));
    // Eliminate below row k.
    Value safe = select(compare(CompareDirection::EQ, piv, zero), one, piv);
    Value colK = mk<GatherOp>(bm, e, swapped, k, (uint64_t)2);
    Value f =
        select(compare(CompareDirection::GT, rows2, k),
               binary<DivOp>(colK, reshapeT(safe, {bt, tdimConst(1)})), zero);
    Value next = binary<SubOp>(
        swapped, binary<MulOp>(reshapeT(f, {bt, mt, tdimConst(1)}), rowP));
    if (!next || !detNew)
      return failure();
    scf::YieldOp::create(b, loc, ValueRange{next, detNew});
  }
  // Shapes computed inside the loop must not be reused outside it.
  for (auto it = shapeCache.begin(); it != shapeCache.end();) {
    auto cur = it++;
    Operation *def = cur->second.getDefiningOp();
    if (def && loop->isProperAncestor(def))
      shapeCache.erase(cur);
  }
  Value det = record(loop.getResult(1), Dims{bd});
  return finish(reshapeT(det, batch));
}

} // namespace mlir::disc::onnx_import

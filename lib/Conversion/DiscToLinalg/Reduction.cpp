//===- Reduction.cpp - reductions, scans and sorting along axes -----------===//
//
// disc.reduce, disc.arg_reduce, disc.cumsum and disc.arg_sort: ops that
// combine the elements along some axes.
//
//===----------------------------------------------------------------------===//
#include "Utils.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::lowering;

namespace {

/// The loops of a reduction of a rank-`rank` operand over the dims
/// `reduced`: their iterator types and the result's indexing map, which
/// drops the reduced dims, or reads them at 0 with `keepDims`.
std::pair<SmallVector<IterType>, AffineMap>
reductionLoops(MLIRContext *ctx, int64_t rank, ArrayRef<int64_t> reduced,
               bool keepDims) {
  SmallVector<AffineExpr> outExprs;
  SmallVector<IterType> iters;
  for (int64_t i = 0; i < rank; ++i) {
    bool isReduced = llvm::is_contained(reduced, i);
    iters.push_back(isReduced ? IterType::reduction : IterType::parallel);
    if (!isReduced)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    else if (keepDims)
      outExprs.push_back(getAffineConstantExpr(0, ctx));
  }
  return {iters, AffineMap::get(rank, 0, outExprs, ctx)};
}

/// Whether the float or integer scalar `x` comes strictly before `y` in
/// ascending (or `descending`) order, and whether they are equal.
std::pair<Value, Value> compareOrder(OpBuilder &b, Location loc, Value x,
                                     Value y, bool descending) {
  if (isa<FloatType>(x.getType())) {
    Value before = arith::CmpFOp::create(b, loc,
                                         descending ? arith::CmpFPredicate::OGT
                                                    : arith::CmpFPredicate::OLT,
                                         x, y);
    return {before,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y)};
  }
  Value before = arith::CmpIOp::create(
      b, loc,
      descending ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt, x, y);
  return {before,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y)};
}

/// Reduction over `dimensions`; keep_dims uses constant-0 result maps.
/// Mean divides the sum by the product of the reduced dims at run time.
FailureOr<Value> lowerReduce(OpBuilder &b, ReduceOp op) {
  RankedTensorType resultType = op.getType();
  Type elt = resultType.getElementType();
  FailureOr<ReifiedResult> reified = reifyFloatOrIntResult(b, op, elt);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  bool isFloat = isa<FloatType>(elt);
  ReduceKind kind = op.getKind();
  Value initValue;
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    initValue = cstScalar(b, loc, elt, 0);
    break;
  case ReduceKind::Prod:
    initValue = cstScalar(b, loc, elt, 1);
    break;
  case ReduceKind::Max:
    initValue = extremeScalar(b, loc, elt, /*negative=*/true);
    break;
  case ReduceKind::Min:
    initValue = extremeScalar(b, loc, elt, /*negative=*/false);
    break;
  }
  MLIRContext *ctx = b.getContext();
  Value input = op.getInput();
  int64_t rank = tensorType(input).getRank();
  ArrayRef<int64_t> red = op.getDimensions();
  auto [iters, outMap] = reductionLoops(ctx, rank, red, op.getKeepDims());
  Value init = fill(b, loc, initValue, reified->empty(b, loc));
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 outMap};
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{resultType}, ValueRange{input}, ValueRange{init},
          maps, iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value x = args[0], acc = args[1], r;
            switch (kind) {
            case ReduceKind::Sum:
            case ReduceKind::Mean:
              r = isFloat ? arith::AddFOp::create(nb, nl, acc, x).getResult()
                          : arith::AddIOp::create(nb, nl, acc, x).getResult();
              break;
            case ReduceKind::Prod:
              r = isFloat ? arith::MulFOp::create(nb, nl, acc, x).getResult()
                          : arith::MulIOp::create(nb, nl, acc, x).getResult();
              break;
            case ReduceKind::Max:
              r = isFloat
                      ? arith::MaximumFOp::create(nb, nl, acc, x).getResult()
                      : arith::MaxSIOp::create(nb, nl, acc, x).getResult();
              break;
            case ReduceKind::Min:
              r = isFloat
                      ? arith::MinimumFOp::create(nb, nl, acc, x).getResult()
                      : arith::MinSIOp::create(nb, nl, acc, x).getResult();
              break;
            }
            linalg::YieldOp::create(nb, nl, r);
          })
          .getResult(0);
  if (kind != ReduceKind::Mean)
    return result;

  IMath m{b, loc};
  Value count = m.c(1);
  for (int64_t d : red)
    count = m.mul(count, dimValue(b, loc, input, d));
  Value countI64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  Value divisor =
      isFloat ? arith::SIToFPOp::create(b, loc, elt, countI64).getResult()
              : convertScalar(b, loc, countI64, elt, false, false);
  if (!isFloat) // avoid dividing by zero for empty integer means
    divisor =
        arith::MaxSIOp::create(b, loc, divisor, cstScalar(b, loc, elt, 1));
  // Divide in place.
  int64_t outRank = resultType.getRank();
  SmallVector<AffineMap> divMaps(
      1, AffineMap::getMultiDimIdentityMap(outRank, ctx));
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{result},
             divMaps, SmallVector<IterType>(outRank, IterType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value r = isFloat
                             ? arith::DivFOp::create(nb, nl, args[0], divisor)
                                   .getResult()
                             : arith::DivSIOp::create(nb, nl, args[0], divisor)
                                   .getResult();
               linalg::YieldOp::create(nb, nl, r);
             })
      .getResult(0);
}

/// ArgMax / ArgMin: a generic with a value and an i64 index accumulator.
/// An element replaces the accumulator when strictly better, or equal with
/// a smaller (first) / larger (last) index, so the result does not depend
/// on the iteration order.
FailureOr<Value> lowerArgReduce(OpBuilder &b, ArgReduceOp op) {
  Value input = op.getInput();
  Type elt = tensorType(input).getElementType();
  FailureOr<ReifiedResult> reified = reifyFloatOrIntResult(b, op, elt);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  RankedTensorType resultType = reified->type;
  RankedTensorType valType = resultType.clone(elt);
  bool isMax = op.getIsMax(), last = op.getSelectLastIndex();
  int64_t axis = op.getDimension();
  MLIRContext *ctx = b.getContext();
  int64_t rank = tensorType(input).getRank();
  auto [iters, outMap] = reductionLoops(ctx, rank, axis, op.getKeepDims());
  Value valInit = fill(b, loc, extremeScalar(b, loc, elt, isMax),
                       emptyTensor(b, loc, valType, reified->dims));
  Value idxInit = fill(b, loc, cstScalar(b, loc, b.getI64Type(), 0),
                       reified->empty(b, loc));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{valType, resultType}, ValueRange{input},
      ValueRange{valInit, idxInit},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                             outMap, outMap},
      iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = args[0], accV = args[1], accI = args[2];
        Value i = arith::IndexCastOp::create(
            nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, axis));
        auto [better, eq] = compareOrder(nb, nl, x, accV, isMax);
        Value tie = arith::CmpIOp::create(nb, nl,
                                          last ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::slt,
                                          i, accI);
        Value take = arith::OrIOp::create(
            nb, nl, better, arith::AndIOp::create(nb, nl, eq, tie));
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, take, x, accV),
                       arith::SelectOp::create(nb, nl, take, i, accI)});
      });
  return generic.getResult(1);
}

/// ONNX CumSum: an `scf.for` over the scanned dim carrying the running sum
/// of one slab (the operand with that dim of size 1) and the result.
FailureOr<Value> lowerCumSum(OpBuilder &b, CumSumOp op) {
  Type elt = op.getType().getElementType();
  if (elt.isInteger(1))
    return unsupportedElementType(op, elt);
  FailureOr<ReifiedResult> reified = reifyFloatOrIntResult(b, op, elt);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  int64_t r = reified->type.getRank(), axis = op.getDimension();
  Value x = op.getOperand();
  SmallVector<OpFoldResult> slabSizes(reified->dims);
  slabSizes[axis] = b.getIndexAttr(1);
  Value zero = cstScalar(b, loc, elt, 0);
  Value acc0 =
      fill(b, loc, zero, tensor::EmptyOp::create(b, loc, slabSizes, elt));
  auto slabType = cast<RankedTensorType>(acc0.getType());
  Value dest = reified->empty(b, loc);
  Value n = toValue(b, loc, reified->dims[axis]);
  MLIRContext *ctx = b.getContext();
  SmallVector<OpFoldResult> ones(r, b.getIndexAttr(1));
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  auto loop = scf::ForOp::create(
      b, loc, cstIndex(b, loc, 0), n, cstIndex(b, loc, 1),
      ValueRange{acc0, dest},
      [&](OpBuilder &lb, Location ll, Value iv, ValueRange iter) {
        IMath lm{lb, ll};
        Value pos = reverse ? lm.sub(lm.sub(n, lm.c(1)), iv) : iv;
        SmallVector<OpFoldResult> offs(r, lb.getIndexAttr(0));
        offs[axis] = pos;
        Value slab = tensor::ExtractSliceOp::create(lb, ll, slabType, x, offs,
                                                    slabSizes, ones);
        Value acc = iter[0];
        // Exclusive: store the running sum before adding this slab, so the
        // sum can be updated in place (the loop carries one slab buffer).
        Value res = iter[1];
        if (exclusive)
          res = tensor::InsertSliceOp::create(lb, ll, acc, res, offs, slabSizes,
                                              ones);
        Value sum =
            linalg::GenericOp::create(
                lb, ll, TypeRange{slabType}, ValueRange{acc, slab},
                ValueRange{acc},
                SmallVector<AffineMap>(
                    3, AffineMap::getMultiDimIdentityMap(r, ctx)),
                SmallVector<IterType>(r, IterType::parallel),
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  Value s =
                      isa<FloatType>(elt)
                          ? arith::AddFOp::create(nb, nl, args[0], args[1])
                                .getResult()
                          : arith::AddIOp::create(nb, nl, args[0], args[1])
                                .getResult();
                  linalg::YieldOp::create(nb, nl, s);
                })
                .getResult(0);
        if (!exclusive)
          res = tensor::InsertSliceOp::create(lb, ll, sum, res, offs, slabSizes,
                                              ones);
        scf::YieldOp::create(lb, ll, ValueRange{sum, res});
      });
  return loop.getResult(1);
}

/// Stable arg sort by counting: the rank of element i is the number of
/// elements j that precede it (strictly better, or equal with j < i); a
/// second generic inverts the permutation (`result[p]` is the i of rank p).
FailureOr<Value> lowerArgSort(OpBuilder &b, ArgSortOp op) {
  Value x = op.getOperand();
  FailureOr<ReifiedResult> reified =
      reifyFloatOrIntResult(b, op, tensorType(x).getElementType());
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  RankedTensorType resultType = reified->type;
  int64_t rank = resultType.getRank();
  int64_t dim = static_cast<int64_t>(op.getDimension());
  bool desc = op.getDescending();
  MLIRContext *ctx = b.getContext();
  // Iteration space: the operand dims, then j along `dim`.
  SmallVector<unsigned> targets;
  for (int64_t i = 0; i < rank; ++i)
    targets.push_back(i);
  AffineMap iMap = AffineMap::getMultiDimMapWithTargets(rank + 1, targets, ctx);
  targets[dim] = rank;
  AffineMap jMap = AffineMap::getMultiDimMapWithTargets(rank + 1, targets, ctx);
  SmallVector<IterType> iters(rank, IterType::parallel);
  iters.push_back(IterType::reduction);
  Type i64 = b.getI64Type();
  Value zeros = fill(b, loc, cstScalar(b, loc, i64, 0), reified->empty(b, loc));
  Value ranks =
      linalg::GenericOp::create(
          b, loc, TypeRange{resultType}, ValueRange{x, x}, ValueRange{zeros},
          SmallVector<AffineMap>{iMap, jMap, iMap}, iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value xi = args[0], xj = args[1];
            auto [before, eq] = compareOrder(nb, nl, xj, xi, desc);
            Value lower =
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                      linalg::IndexOp::create(nb, nl, rank),
                                      linalg::IndexOp::create(nb, nl, dim));
            Value pre = arith::OrIOp::create(
                nb, nl, before, arith::AndIOp::create(nb, nl, eq, lower));
            Value inc = arith::ExtUIOp::create(nb, nl, nb.getI64Type(), pre);
            linalg::YieldOp::create(
                nb, nl,
                arith::AddIOp::create(nb, nl, args[2], inc).getResult());
          })
          .getResult(0);
  Value zeros2 =
      fill(b, loc, cstScalar(b, loc, i64, 0), reified->empty(b, loc));
  // result[.., p, ..] = sum_j (ranks[.., j, ..] == p ? j : 0)
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{ranks},
             ValueRange{zeros2}, SmallVector<AffineMap>{jMap, iMap}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value p = arith::IndexCastOp::create(
                   nb, nl, nb.getI64Type(),
                   linalg::IndexOp::create(nb, nl, dim));
               Value j = arith::IndexCastOp::create(
                   nb, nl, nb.getI64Type(),
                   linalg::IndexOp::create(nb, nl, rank));
               Value hit = arith::CmpIOp::create(
                   nb, nl, arith::CmpIPredicate::eq, args[0], p);
               Value add = arith::SelectOp::create(
                   nb, nl, hit, j, cstScalar(nb, nl, nb.getI64Type(), 0));
               linalg::YieldOp::create(
                   nb, nl,
                   arith::AddIOp::create(nb, nl, args[1], add).getResult());
             })
      .getResult(0);
}

/// MT19937 (Matsumoto and Nishimura, 1998) as NumPy's legacy RandomState
/// draws doubles: the state is initialized at compile time from the seed
/// (init_genrand); each block of 624 words starts with the twist, and
/// consecutive word pairs (a, b) give ((a >> 5) * 2^26 + (b >> 6)) / 2^53,
/// written in row-major order (312 doubles per block).
FailureOr<Value> lowerRandomUniform(OpBuilder &b, RandomUniformOp op) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  constexpr int64_t kN = 624, kM = 397, kPerBlock = kN / 2;
  uint32_t mt[kN];
  mt[0] = static_cast<uint32_t>(op.getSeed());
  for (int64_t i = 1; i < kN; ++i)
    mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) +
            static_cast<uint32_t>(i);
  Type i32 = b.getI32Type(), f64 = b.getF64Type();
  auto stateType = RankedTensorType::get({kN}, i32);
  SmallVector<int32_t> words(mt, mt + kN);
  Value state0 = arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(stateType, ArrayRef<int32_t>(words)));
  IMath m{b, loc};
  int64_t rank = reified->type.getRank();
  SmallVector<Value> dims;
  Value n = m.c(1);
  for (OpFoldResult d : reified->dims) {
    dims.push_back(toValue(b, loc, d));
    n = m.mul(n, dims.back());
  }
  Value blocks = b.createOrFold<arith::CeilDivUIOp>(loc, n, m.c(kPerBlock));
  auto u32 = [&](OpBuilder &lb, Location ll, uint32_t v) -> Value {
    return arith::ConstantOp::create(
        lb, ll, lb.getIntegerAttr(i32, static_cast<int32_t>(v)));
  };
  auto loop = scf::ForOp::create(
      b, loc, m.c(0), blocks, m.c(1),
      ValueRange{state0, reified->empty(b, loc)},
      [&](OpBuilder &lb, Location ll, Value blk, ValueRange iter) {
        IMath lm{lb, ll};
        // The twist, in place and in order: word k reads words k + 1 and
        // k + 397 (mod 624), the later ones already new, as the reference.
        auto twist = scf::ForOp::create(
            lb, ll, lm.c(0), lm.c(kN), lm.c(1), ValueRange{iter[0]},
            [&](OpBuilder &tb, Location tl, Value k, ValueRange st) {
              IMath tm{tb, tl};
              auto at = [&](Value idx) -> Value {
                return tensor::ExtractOp::create(tb, tl, st[0],
                                                 ValueRange{idx});
              };
              Value next =
                  arith::RemUIOp::create(tb, tl, tm.add(k, tm.c(1)), tm.c(kN));
              Value far =
                  arith::RemUIOp::create(tb, tl, tm.add(k, tm.c(kM)), tm.c(kN));
              Value y = arith::OrIOp::create(
                  tb, tl,
                  arith::AndIOp::create(tb, tl, at(k),
                                        u32(tb, tl, 0x80000000u)),
                  arith::AndIOp::create(tb, tl, at(next),
                                        u32(tb, tl, 0x7fffffffu)));
              Value odd = arith::TruncIOp::create(tb, tl, tb.getI1Type(), y);
              Value mag = arith::SelectOp::create(
                  tb, tl, odd, u32(tb, tl, 0x9908b0dfu), u32(tb, tl, 0));
              Value w = arith::XOrIOp::create(
                  tb, tl, at(far),
                  arith::XOrIOp::create(
                      tb, tl, arith::ShRUIOp::create(tb, tl, y, u32(tb, tl, 1)),
                      mag));
              scf::YieldOp::create(
                  tb, tl,
                  tensor::InsertOp::create(tb, tl, w, st[0], ValueRange{k})
                      .getResult());
            });
        Value st = twist.getResult(0);
        Value base = lm.mul(blk, lm.c(kPerBlock));
        Value count = lm.min(lm.c(kPerBlock), lm.sub(n, base));
        auto fillBlock = scf::ForOp::create(
            lb, ll, lm.c(0), count, lm.c(1), ValueRange{iter[1]},
            [&](OpBuilder &fb, Location fl, Value j, ValueRange res) {
              IMath fm{fb, fl};
              auto temper = [&](Value idx) -> Value {
                Value y =
                    tensor::ExtractOp::create(fb, fl, st, ValueRange{idx});
                auto step = [&](Value v, bool left, uint32_t sh,
                                std::optional<uint32_t> mask) {
                  Value s =
                      left ? arith::ShLIOp::create(fb, fl, v, u32(fb, fl, sh))
                                 .getResult()
                           : arith::ShRUIOp::create(fb, fl, v, u32(fb, fl, sh))
                                 .getResult();
                  if (mask)
                    s = arith::AndIOp::create(fb, fl, s, u32(fb, fl, *mask));
                  return arith::XOrIOp::create(fb, fl, v, s).getResult();
                };
                y = step(y, false, 11, std::nullopt);
                y = step(y, true, 7, 0x9d2c5680u);
                y = step(y, true, 15, 0xefc60000u);
                return step(y, false, 18, std::nullopt);
              };
              Value w0 = fm.mul(j, fm.c(2));
              Value a =
                  arith::ShRUIOp::create(fb, fl, temper(w0), u32(fb, fl, 5));
              Value c = arith::ShRUIOp::create(
                  fb, fl, temper(fm.add(w0, fm.c(1))), u32(fb, fl, 6));
              Value af = arith::UIToFPOp::create(fb, fl, f64, a);
              Value cf = arith::UIToFPOp::create(fb, fl, f64, c);
              Value u = arith::DivFOp::create(
                  fb, fl,
                  arith::AddFOp::create(
                      fb, fl,
                      arith::MulFOp::create(fb, fl, af,
                                            cstScalar(fb, fl, f64, 67108864.0)),
                      cf),
                  cstScalar(fb, fl, f64, 9007199254740992.0));
              // Row-major position base + j.
              SmallVector<Value> idx(rank);
              Value lin = fm.add(base, j);
              for (int64_t d = rank - 1; d >= 0; --d) {
                if (d == 0) {
                  idx[d] = lin;
                  break;
                }
                idx[d] = arith::RemUIOp::create(fb, fl, lin, dims[d]);
                lin = arith::DivUIOp::create(fb, fl, lin, dims[d]);
              }
              scf::YieldOp::create(
                  fb, fl,
                  tensor::InsertOp::create(fb, fl, u, res[0], idx).getResult());
            });
        scf::YieldOp::create(lb, ll, ValueRange{st, fillBlock.getResult(0)});
      });
  return loop.getResult(1);
}

} // namespace

FailureOr<Value> mlir::disc::lowering::lowerReductionFamily(OpBuilder &b,
                                                            Operation *op,
                                                            LoweringState &) {
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](ReduceOp o) { return lowerReduce(b, o); })
      .Case([&](ArgReduceOp o) { return lowerArgReduce(b, o); })
      .Case([&](CumSumOp o) { return lowerCumSum(b, o); })
      .Case([&](ArgSortOp o) { return lowerArgSort(b, o); })
      .Case([&](RandomUniformOp o) { return lowerRandomUniform(b, o); })
      .Default([](Operation *o) { return noLowering(o); });
}

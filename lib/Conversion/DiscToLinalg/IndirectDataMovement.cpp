//===- IndirectDataMovement.cpp - gather, scatter, resize -----------------===//
//
// Ops that read or write elements at computed positions: disc.gather,
// disc.gather_elements, disc.gather_nd, disc.scatter_elements,
// disc.scatter_nd, disc.resize and disc.grid_sample.
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

/// ONNX Gather: a generic over the result reading the index through an
/// indexing map and the data with `tensor.extract`; negative indices wrap.
FailureOr<Value> lowerGather(OpBuilder &b, GatherOp op, RuntimeChecks &checks) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  Value data = op.getData(), indices = op.getIndices();
  int64_t rank = reified->type.getRank(), axis = op.getAxis();
  int64_t q = tensorType(indices).getRank();
  int64_t dataRank = tensorType(data).getRank();
  MLIRContext *ctx = b.getContext();
  Value axisDim = dimValue(b, loc, data, axis);
  // Constant indices within a static axis need no run-time check.
  bool indicesInRange = false;
  DenseIntElementsAttr constIdx;
  int64_t staticAxis = tensorType(data).getDimSize(axis);
  if (!ShapedType::isDynamic(staticAxis) &&
      matchPattern(indices, m_Constant(&constIdx))) {
    indicesInRange = llvm::all_of(constIdx.getValues<APInt>(), [&](APInt v) {
      return v.getSExtValue() >= -staticAxis && v.getSExtValue() < staticAxis;
    });
    if (indicesInRange)
      checks.countProven();
  }
  SmallVector<AffineExpr> idxExprs;
  for (int64_t i = 0; i < q; ++i)
    idxExprs.push_back(getAffineDimExpr(axis + i, ctx));
  return extractEach(
      b, loc, reified->empty(b, loc), data,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value fixed = wrapIndex(nb, nl, args[0], axisDim,
                                indicesInRange ? nullptr : &checks);
        SmallVector<Value> idx;
        for (int64_t i = 0; i < axis; ++i)
          idx.push_back(linalg::IndexOp::create(nb, nl, i));
        idx.push_back(fixed);
        for (int64_t i = axis + 1; i < dataRank; ++i)
          idx.push_back(linalg::IndexOp::create(nb, nl, i + q - 1));
        return idx;
      },
      indices, AffineMap::get(rank, 0, idxExprs, ctx));
}

/// Scalar arithmetic in the float type `t`.
struct FMath {
  OpBuilder &b;
  Location loc;
  Type t;
  Value c(double v) { return cstScalar(b, loc, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value min(Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  Value max(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value fromIndex(Value i) {
    Value w = arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
    return arith::SIToFPOp::create(b, loc, t, w);
  }
  /// Truncates toward zero.
  Value toIndex(Value x) {
    Value w = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), w);
  }
};

/// Nested `scf.for` loops over `[0, ubs[i])` threading one tensor through
/// `body`, which gets the induction variables and returns the next tensor.
Value tensorLoopNest(
    OpBuilder &b, Location loc, ArrayRef<Value> ubs, Value init,
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value>, Value)> body) {
  SmallVector<Value> ivs;
  std::function<Value(OpBuilder &, Location, size_t, Value)> rec =
      [&](OpBuilder &nb, Location nl, size_t d, Value acc) -> Value {
    if (d == ubs.size())
      return body(nb, nl, ivs, acc);
    auto loop = scf::ForOp::create(
        nb, nl, cstIndex(nb, nl, 0), ubs[d], cstIndex(nb, nl, 1),
        ValueRange{acc},
        [&](OpBuilder &lb, Location ll, Value iv, ValueRange args) {
          ivs.push_back(iv);
          Value next = rec(lb, ll, d + 1, args[0]);
          ivs.pop_back();
          scf::YieldOp::create(lb, ll, next);
        });
    return loop.getResult(0);
  };
  return rec(b, loc, 0, init);
}

SmallVector<Value> dimValues(OpBuilder &b, Location loc, Value t) {
  SmallVector<Value> out;
  for (int64_t i = 0, e = tensorType(t).getRank(); i < e; ++i)
    out.push_back(dimValue(b, loc, t, i));
  return out;
}

/// ONNX Resize: a generic over the result; per resized dim the source
/// coordinate, the taps and their weights follow the ONNX reference
/// implementation (onnx/backend/test/case/node/resize.py); the taps of
/// several dims combine as a tensor product, accumulated in f64.
FailureOr<Value> lowerResize(OpBuilder &b, ResizeOp op) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  Value src = op.getOperand();
  Type elt = reified->type.getElementType();
  int64_t rank = reified->type.getRank();
  std::string mode = op.getMode().str();
  std::string ct = op.getCoordinateTransformationMode().str();
  std::string nearestMode = op.getNearestMode().str();
  bool exclude = op.getExcludeOutside();
  double a = op.getCubicCoeffA().convertToDouble();
  SmallVector<int64_t> axes(op.getAxes());

  struct Axis {
    int64_t dim;
    Value in, inF, scale, outW, roiStart, roiEnd;
  };
  SmallVector<Axis> info;
  FMath f{b, loc, b.getF64Type()};
  for (int64_t d : axes) {
    Axis ax;
    ax.dim = d;
    ax.in = dimValue(b, loc, src, d);
    ax.inF = f.fromIndex(ax.in);
    ax.scale = tensor::ExtractOp::create(b, loc, op.getScales(),
                                         ValueRange{cstIndex(b, loc, d)});
    ax.outW = f.mul(ax.scale, ax.inF);
    if (op.getRoi()) {
      ax.roiStart = tensor::ExtractOp::create(b, loc, op.getRoi(),
                                              ValueRange{cstIndex(b, loc, d)});
      ax.roiEnd = tensor::ExtractOp::create(
          b, loc, op.getRoi(), ValueRange{cstIndex(b, loc, rank + d)});
    }
    info.push_back(ax);
  }
  Value extrapolation =
      cstScalar(b, loc, elt, op.getExtrapolationValue().convertToDouble());

  return generateTensor(
      b, loc, reified->empty(b, loc),
      [&](OpBuilder &nb, Location nl, ValueRange) {
        FMath fm{nb, nl, nb.getF64Type()};
        IMath im{nb, nl};
        using P = arith::CmpFPredicate;
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i)
          idx.push_back(linalg::IndexOp::create(nb, nl, i));
        Value outside;
        // Per resized dim: tap indices (clamped) and weights.
        SmallVector<SmallVector<Value>> tapIdx, tapW;
        for (const Axis &ax : info) {
          Value y = fm.fromIndex(idx[ax.dim]);
          Value inM1 = fm.sub(ax.inF, fm.c(1));
          Value wIsOne = fm.cmp(P::OEQ, ax.outW, fm.c(1));
          Value x;
          if (ct == "half_pixel" || ct == "pytorch_half_pixel") {
            x = fm.sub(fm.div(fm.add(y, fm.c(0.5)), ax.scale), fm.c(0.5));
            if (ct == "pytorch_half_pixel")
              x = fm.select(wIsOne, fm.c(-0.5), x);
          } else if (ct == "align_corners") {
            x = fm.select(wIsOne, fm.c(0),
                          fm.div(fm.mul(y, inM1), fm.sub(ax.outW, fm.c(1))));
          } else if (ct == "asymmetric") {
            x = fm.div(y, ax.scale);
          } else if (ct == "tf_half_pixel_for_nn") {
            x = fm.div(fm.add(y, fm.c(0.5)), ax.scale);
          } else { // tf_crop_and_resize
            Value span = fm.sub(ax.roiEnd, ax.roiStart);
            Value one = fm.div(fm.mul(span, inM1), fm.c(2));
            Value many =
                fm.div(fm.mul(fm.mul(y, span), inM1), fm.sub(ax.outW, fm.c(1)));
            x = fm.add(fm.select(wIsOne, one, many), fm.mul(ax.roiStart, inM1));
            Value out = arith::OrIOp::create(nb, nl, fm.cmp(P::OLT, x, fm.c(0)),
                                             fm.cmp(P::OGT, x, inM1));
            outside =
                outside ? arith::OrIOp::create(nb, nl, outside, out).getResult()
                        : out;
          }
          Value last = im.sub(ax.in, im.c(1));
          auto clampIdx = [&](Value i) {
            return im.min(im.max(i, im.c(0)), last);
          };
          Value fl = fm.floor(x);
          Value isInt = fm.cmp(P::OEQ, x, fl);
          if (mode == "nearest") {
            Value ratio = fm.sub(x, fl);
            Value up = fm.add(fl, fm.c(1));
            Value pick;
            if (nearestMode == "round_prefer_floor")
              pick = fm.select(fm.cmp(P::OLE, ratio, fm.c(0.5)), fl, up);
            else if (nearestMode == "round_prefer_ceil")
              pick = fm.select(fm.cmp(P::OLT, ratio, fm.c(0.5)), fl, up);
            else if (nearestMode == "floor")
              pick = fl;
            else if (nearestMode == "ceil")
              pick = up;
            else // simple: ceil when downsampling, else truncate
              pick = fm.select(fm.cmp(P::OLT, ax.scale, fm.c(1)),
                               math::CeilOp::create(nb, nl, x), x);
            pick = fm.select(isInt, x, pick);
            tapIdx.push_back({clampIdx(fm.toIndex(pick))});
            tapW.push_back({});
            continue;
          }
          // The left tap is the largest index below x (x - 1 when x
          // is an integer), so ratio lies in (0, 1].
          Value i0f = fm.select(isInt, fm.sub(x, fm.c(1)), fl);
          Value r = fm.sub(x, i0f);
          Value i0 = fm.toIndex(i0f);
          SmallVector<Value> w;
          SmallVector<int64_t> offsets;
          if (mode == "linear") {
            w = {fm.sub(fm.c(1), r), r};
            offsets = {0, 1};
          } else {
            Value ca = fm.c(a);
            auto outer = [&](Value t) { // t = distance + 1, in [1, 2]
              Value v = fm.sub(fm.mul(ca, t), fm.c(5 * a));
              v = fm.add(fm.mul(v, t), fm.c(8 * a));
              return fm.sub(fm.mul(v, t), fm.c(4 * a));
            };
            auto inner = [&](Value t) { // t in [0, 1]
              Value v = fm.sub(fm.mul(fm.c(a + 2), t), fm.c(a + 3));
              return fm.add(fm.mul(fm.mul(v, t), t), fm.c(1));
            };
            Value rc = fm.sub(fm.c(1), r);
            w = {outer(fm.add(r, fm.c(1))), inner(r), inner(rc),
                 outer(fm.add(rc, fm.c(1)))};
            offsets = {-1, 0, 1, 2};
          }
          SmallVector<Value> ti;
          Value sum;
          for (auto [k, off] : llvm::enumerate(offsets)) {
            Value t = im.add(i0, im.c(off));
            if (exclude) {
              Value inside = arith::AndIOp::create(
                  nb, nl, im.cmp(arith::CmpIPredicate::sge, t, im.c(0)),
                  im.cmp(arith::CmpIPredicate::slt, t, ax.in));
              w[k] = fm.select(inside, w[k], fm.c(0));
              sum = sum ? fm.add(sum, w[k]) : w[k];
            }
            ti.push_back(clampIdx(t));
          }
          if (exclude)
            for (Value &wk : w)
              wk = fm.div(wk, sum);
          tapIdx.push_back(ti);
          tapW.push_back(w);
        }
        Value result;
        if (mode == "nearest") {
          for (auto [k, ax] : llvm::enumerate(info))
            idx[ax.dim] = tapIdx[k][0];
          result = tensor::ExtractOp::create(nb, nl, src, idx);
        } else {
          Value acc = fm.c(0);
          std::function<void(size_t, Value)> rec = [&](size_t k, Value w) {
            if (k == info.size()) {
              Value v = tensor::ExtractOp::create(nb, nl, src, idx);
              v = convertScalar(nb, nl, v, nb.getF64Type(), false, false);
              Value term = w ? fm.mul(w, v) : v;
              acc = fm.add(acc, term);
              return;
            }
            for (size_t t = 0; t < tapIdx[k].size(); ++t) {
              idx[info[k].dim] = tapIdx[k][t];
              rec(k + 1, w ? fm.mul(w, tapW[k][t]) : tapW[k][t]);
            }
          };
          rec(0, Value());
          result = convertScalar(nb, nl, acc, elt, false, false);
        }
        if (outside)
          result =
              arith::SelectOp::create(nb, nl, outside, extrapolation, result);
        linalg::YieldOp::create(nb, nl, result);
      });
}

/// ONNX GatherElements: a generic over the result (the indices' shape).
FailureOr<Value> lowerGatherElements(OpBuilder &b, GatherElementsOp op,
                                     RuntimeChecks &checks) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  Value data = op.getData();
  int64_t rank = reified->type.getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  Value axisDim = dimValue(b, loc, data, axis);
  return extractEach(
      b, loc, reified->empty(b, loc), data,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i)
          idx.push_back(i == axis
                            ? wrapIndex(nb, nl, args[0], axisDim, &checks)
                            : linalg::IndexOp::create(nb, nl, i).getResult());
        return idx;
      },
      op.getIndices(), AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
}

/// The data position of GatherND / ScatterND for the position `ivs` of
/// the result / updates: the leading `q - 1` give the index tuple (of `k`
/// entries, each wrapped into its data dim), after the first `batchDims` of
/// them; the trailing ones the position inside the slice.
SmallVector<Value> ndPosition(OpBuilder &b, Location loc, Value indices,
                              ArrayRef<Value> ivs, int64_t batchDims, int64_t k,
                              ArrayRef<Value> dataDims, RuntimeChecks &checks) {
  int64_t q = tensorType(indices).getRank();
  SmallVector<Value> prefix(ivs.begin(), ivs.begin() + q - 1);
  SmallVector<Value> idx(prefix.begin(), prefix.begin() + batchDims);
  for (int64_t m = 0; m < k; ++m) {
    SmallVector<Value> at = prefix;
    at.push_back(cstIndex(b, loc, m));
    Value raw = tensor::ExtractOp::create(b, loc, indices, at);
    idx.push_back(wrapIndex(b, loc, raw, dataDims[batchDims + m], &checks));
  }
  idx.append(ivs.begin() + q - 1, ivs.end());
  return idx;
}

/// ONNX GatherND: a generic over the result reading the index tuple and
/// the data with `tensor.extract`.
FailureOr<Value> lowerGatherNd(OpBuilder &b, GatherNdOp op,
                               RuntimeChecks &checks) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  Value data = op.getData(), indices = op.getIndices();
  int64_t rank = reified->type.getRank();
  int64_t q = tensorType(indices).getRank(), r = tensorType(data).getRank();
  int64_t bd = static_cast<int64_t>(op.getBatchDims());
  int64_t k = q - 1 + r - bd - rank;
  SmallVector<Value> dataDims = dimValues(b, loc, data);
  return extractEach(b, loc, reified->empty(b, loc), data,
                     [&](OpBuilder &nb, Location nl, ValueRange) {
                       SmallVector<Value> ivs;
                       for (int64_t i = 0; i < rank; ++i)
                         ivs.push_back(linalg::IndexOp::create(nb, nl, i));
                       return ndPosition(nb, nl, indices, ivs, bd, k, dataDims,
                                         checks);
                     });
}

/// `old (reduction) upd` for ScatterElements / ScatterND.
Value scatterCombine(OpBuilder &b, Location loc, StringRef reduction, Value old,
                     Value upd) {
  bool isF = isa<FloatType>(upd.getType());
  if (reduction == "add")
    return isF ? arith::AddFOp::create(b, loc, old, upd).getResult()
               : arith::AddIOp::create(b, loc, old, upd).getResult();
  if (reduction == "mul")
    return isF ? arith::MulFOp::create(b, loc, old, upd).getResult()
               : arith::MulIOp::create(b, loc, old, upd).getResult();
  return upd;
}

/// ScatterElements / ScatterND: loops over `updates` in row-major order
/// inserting each update (combined with the old value by `reduction`) into
/// a copy of `data` (of the op's `resultType`) at the position `position`
/// gives for the loop indices, so duplicate positions apply in order.
Value scatterLoop(
    OpBuilder &b, Location loc, Value data, Value updates, StringRef reduction,
    Type resultType,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>)>
        position) {
  Value init = castTo(b, loc, data, resultType);
  return tensorLoopNest(
      b, loc, dimValues(b, loc, updates), init,
      [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs, Value acc) {
        SmallVector<Value> dst = position(nb, nl, ivs);
        Value upd = tensor::ExtractOp::create(nb, nl, updates, ivs);
        if (reduction != "none")
          upd = scatterCombine(
              nb, nl, reduction,
              tensor::ExtractOp::create(nb, nl, acc, dst).getResult(), upd);
        return tensor::InsertOp::create(nb, nl, upd, acc, dst).getResult();
      });
}

/// ONNX ScatterElements: the position is the update's with the index along
/// `axis`.
FailureOr<Value> lowerScatterElements(OpBuilder &b, ScatterElementsOp op,
                                      RuntimeChecks &checks) {
  Location loc = op.getLoc();
  Value data = op.getData(), indices = op.getIndices();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  Value axisDim = dimValue(b, loc, data, axis);
  return scatterLoop(
      b, loc, data, op.getUpdates(), op.getReduction(), op.getType(),
      [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs) {
        Value raw = tensor::ExtractOp::create(nb, nl, indices, ivs);
        SmallVector<Value> dst(ivs);
        dst[axis] = wrapIndex(nb, nl, raw, axisDim, &checks);
        return dst;
      });
}

/// ONNX ScatterND: the leading loop indices select the index tuple, the
/// trailing ones the position inside the slice.
FailureOr<Value> lowerScatterNd(OpBuilder &b, ScatterNdOp op,
                                RuntimeChecks &checks) {
  Location loc = op.getLoc();
  Value data = op.getData(), indices = op.getIndices(),
        updates = op.getUpdates();
  int64_t q = tensorType(indices).getRank(), r = tensorType(data).getRank();
  int64_t k = r - tensorType(updates).getRank() + q - 1;
  SmallVector<Value> dataDims = dimValues(b, loc, data);
  return scatterLoop(b, loc, data, updates, op.getReduction(), op.getType(),
                     [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs) {
                       return ndPosition(nb, nl, indices, ivs, /*batchDims=*/0,
                                         k, dataDims, checks);
                     });
}

/// ONNX GridSample (PyTorch `grid_sample` semantics): a generic over the
/// result; the grid point is unnormalized to pixel coordinates, padded
/// (border clamp / reflection) and interpolated; taps outside the input
/// read 0. Arithmetic in the element type (f32 for narrower floats).
FailureOr<Value> lowerGridSample(OpBuilder &b, GridSampleOp op) {
  FailureOr<ReifiedResult> reified = reifyResult(b, op);
  if (failed(reified))
    return failure();
  Location loc = op.getLoc();
  Value x = op.getInput(), grid = op.getGrid();
  Type elt = reified->type.getElementType();
  Type ct = (elt.isF32() || elt.isF64()) ? elt : b.getF32Type();
  std::string mode = op.getMode().str(), pad = op.getPaddingMode().str();
  bool ac = op.getAlignCorners();
  SmallVector<Value> xDims = dimValues(b, loc, x);
  return generateTensor(
      b, loc, reified->empty(b, loc),
      [&](OpBuilder &nb, Location nl, ValueRange) {
        using P = arith::CmpFPredicate;
        FMath fm{nb, nl, ct};
        SmallVector<Value> iv;
        for (int64_t i = 0; i < 4; ++i)
          iv.push_back(linalg::IndexOp::create(nb, nl, i));
        Value hF = fm.fromIndex(xDims[2]), wF = fm.fromIndex(xDims[3]);
        auto gridAt = [&](int64_t k) {
          Value g = tensor::ExtractOp::create(
              nb, nl, grid,
              ValueRange{iv[0], iv[2], iv[3], cstIndex(nb, nl, k)});
          return convertScalar(nb, nl, g, ct, false, false);
        };
        auto unnormalize = [&](Value coord, Value size) {
          if (ac)
            return fm.mul(fm.div(fm.add(coord, fm.c(1)), fm.c(2)),
                          fm.sub(size, fm.c(1)));
          return fm.div(fm.sub(fm.mul(fm.add(coord, fm.c(1)), size), fm.c(1)),
                        fm.c(2));
        };
        auto clip = [&](Value coord, Value size) {
          return fm.min(fm.max(coord, fm.c(0)), fm.sub(size, fm.c(1)));
        };
        auto reflect = [&](Value coord, Value twiceLow, Value twiceHigh) {
          Value lo = fm.div(twiceLow, fm.c(2));
          Value span = fm.div(fm.sub(twiceHigh, twiceLow), fm.c(2));
          Value in = math::AbsFOp::create(nb, nl, fm.sub(coord, lo));
          Value extra = arith::RemFOp::create(nb, nl, in, span);
          Value flips = fm.floor(fm.div(in, span));
          Value even = arith::CmpFOp::create(
              nb, nl, P::OEQ, arith::RemFOp::create(nb, nl, flips, fm.c(2)),
              fm.c(0));
          Value r = fm.select(even, fm.add(extra, lo),
                              fm.add(fm.sub(span, extra), lo));
          return fm.select(fm.cmp(P::OEQ, twiceLow, twiceHigh), fm.c(0), r);
        };
        auto padCoord = [&](Value coord, Value size) {
          if (pad == "border")
            return clip(coord, size);
          if (pad == "reflection") {
            Value r = ac ? reflect(coord, fm.c(0),
                                   fm.mul(fm.c(2), fm.sub(size, fm.c(1))))
                         : reflect(coord, fm.c(-1),
                                   fm.sub(fm.mul(fm.c(2), size), fm.c(1)));
            return clip(r, size);
          }
          return coord;
        };
        // The input at integral coordinates (y, x); 0 outside.
        auto fetch = [&](Value y, Value xx) {
          Value inside = arith::AndIOp::create(
              nb, nl,
              arith::AndIOp::create(nb, nl, fm.cmp(P::OGE, y, fm.c(0)),
                                    fm.cmp(P::OLT, y, hF)),
              arith::AndIOp::create(nb, nl, fm.cmp(P::OGE, xx, fm.c(0)),
                                    fm.cmp(P::OLT, xx, wF)));
          auto toIdx = [&](Value v, Value size) {
            return fm.toIndex(clip(v, size));
          };
          Value v = tensor::ExtractOp::create(
              nb, nl, x, ValueRange{iv[0], iv[1], toIdx(y, hF), toIdx(xx, wF)});
          v = convertScalar(nb, nl, v, ct, false, false);
          return fm.select(inside, v, fm.c(0));
        };
        Value gx = gridAt(0), gy = gridAt(1);
        Value result;
        if (mode == "bicubic") {
          Value ix = unnormalize(gx, wF), iy = unnormalize(gy, hF);
          Value x0 = fm.floor(ix), y0 = fm.floor(iy);
          Value tx = fm.sub(ix, x0), ty = fm.sub(iy, y0);
          double a = -0.75;
          auto cc1 = [&](Value t) { // |t| <= 1
            return fm.add(
                fm.mul(fm.mul(fm.sub(fm.mul(fm.c(a + 2), t), fm.c(a + 3)), t),
                       t),
                fm.c(1));
          };
          auto cc2 = [&](Value t) { // 1 < |t| < 2
            Value v = fm.add(fm.mul(fm.sub(fm.mul(fm.c(a), t), fm.c(5 * a)), t),
                             fm.c(8 * a));
            return fm.sub(fm.mul(v, t), fm.c(4 * a));
          };
          auto coeffs = [&](Value t) {
            return SmallVector<Value>{cc2(fm.add(t, fm.c(1))), cc1(t),
                                      cc1(fm.sub(fm.c(1), t)),
                                      cc2(fm.sub(fm.c(2), t))};
          };
          SmallVector<Value> cx = coeffs(tx), cy = coeffs(ty);
          Value acc;
          for (int64_t j = 0; j < 4; ++j) {
            Value yj = padCoord(fm.add(y0, fm.c(j - 1)), hF);
            Value row;
            for (int64_t i = 0; i < 4; ++i) {
              Value xi = padCoord(fm.add(x0, fm.c(i - 1)), wF);
              Value term = fm.mul(fetch(yj, xi), cx[i]);
              row = row ? fm.add(row, term) : term;
            }
            Value term = fm.mul(row, cy[j]);
            acc = acc ? fm.add(acc, term) : term;
          }
          result = acc;
        } else {
          Value ix = padCoord(unnormalize(gx, wF), wF);
          Value iy = padCoord(unnormalize(gy, hF), hF);
          if (mode == "nearest") {
            result = fetch(math::RoundEvenOp::create(nb, nl, iy),
                           math::RoundEvenOp::create(nb, nl, ix));
          } else {
            Value x0 = fm.floor(ix), y0 = fm.floor(iy);
            Value x1 = fm.add(x0, fm.c(1)), y1 = fm.add(y0, fm.c(1));
            Value wx1 = fm.sub(ix, x0), wx0 = fm.sub(x1, ix);
            Value wy1 = fm.sub(iy, y0), wy0 = fm.sub(y1, iy);
            result = fm.add(fm.add(fm.mul(fetch(y0, x0), fm.mul(wx0, wy0)),
                                   fm.mul(fetch(y0, x1), fm.mul(wx1, wy0))),
                            fm.add(fm.mul(fetch(y1, x0), fm.mul(wx0, wy1)),
                                   fm.mul(fetch(y1, x1), fm.mul(wx1, wy1))));
          }
        }
        linalg::YieldOp::create(
            nb, nl, convertScalar(nb, nl, result, elt, false, false));
      });
}

} // namespace

FailureOr<Value> mlir::disc::lowering::lowerIndirectDataMovementFamily(
    OpBuilder &b, Operation *op, LoweringState &state) {
  RuntimeChecks &checks = state.checks;
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](GatherOp o) { return lowerGather(b, o, checks); })
      .Case(
          [&](GatherElementsOp o) { return lowerGatherElements(b, o, checks); })
      .Case([&](GatherNdOp o) { return lowerGatherNd(b, o, checks); })
      .Case([&](ScatterElementsOp o) {
        return lowerScatterElements(b, o, checks);
      })
      .Case([&](ScatterNdOp o) { return lowerScatterNd(b, o, checks); })
      .Case([&](ResizeOp o) { return lowerResize(b, o); })
      .Case([&](GridSampleOp o) { return lowerGridSample(b, o); })
      .Default([](Operation *o) { return noLowering(o); });
}

//===- ConvPool.cpp - ONNX MatMul, Gemm, convolution and pooling
//------------===//
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

LogicalResult Importer::importMatMul(StringRef) {
  Value a = in(0), c = in(1);
  FailureOr<Value> r = matmul(a, c);
  return finish(r);
}

/// NumPy matmul of `a` and `c` (same element type).
FailureOr<Value> Importer::matmul(Value a, Value c) {
  if (::mlir::failed(sameElt(a, c)))
    return failure();
  if (elt(a).isInteger(1))
    return err() << "does not accept bool inputs";
  int64_t ra = rank(a), rc = rank(c);
  if (ra == 0 || rc == 0)
    return err() << "inputs must have rank >= 1";
  Type e = elt(a);
  auto sameDim = [](const Dim &x, const Dim &y) {
    return !x.isStatic() || !y.isStatic() || x.size == y.size;
  };
  if (!sameDim(dims(a)[ra - 1], dims(c)[rc == 1 ? 0 : rc - 2]))
    return err() << "contracting dims differ: " << tt(a) << " x " << tt(c);
  if (ra == 1 && rc == 1)
    return mk<DotGeneralOp>(Dims{}, e, a, c, ArrayRef<int64_t>{},
                            ArrayRef<int64_t>{}, ArrayRef<int64_t>{0},
                            ArrayRef<int64_t>{0});
  // Promote 1-D operands: [K] -> [1, K] (lhs), [K] -> [K, 1] (rhs).
  Value aa = ra == 1 ? reshapeT(a, {tdimConst(1), tdimOf(a, 0)}) : a;
  Value cc = rc == 1 ? reshapeT(c, {tdimOf(c, 0), tdimConst(1)}) : c;
  int64_t ra2 = rank(aa), rc2 = rank(cc);
  Dims da = dims(aa), dc = dims(cc);
  // An operand that is a Transpose of its last two dims (batch dims kept)
  // is read through the transpose: the dot contracts the other dim of the
  // transpose's input (`x.t() @ y`, common in exported backward passes),
  // so no transposed copy is made when nothing else reads it (the
  // library call takes transposed operands).
  auto swapsLastTwo = [](Value v, int64_t r) -> Value {
    auto t = v.getDefiningOp<TransposeOp>();
    if (!t || r < 2)
      return Value();
    ArrayRef<int64_t> perm = t.getPermutation();
    for (int64_t i = 0; i < r - 2; ++i)
      if (perm[i] != i)
        return Value();
    if (perm[r - 2] != r - 1 || perm[r - 1] != r - 2)
      return Value();
    return t.getOperand();
  };
  Value res;
  if (rc2 == 2) {
    Dims outDims(da.begin(), da.end() - 1);
    outDims.push_back(dc[1]);
    Value lhs = aa, rhs = cc;
    int64_t lc = ra2 - 1, rcd = 0;
    if (ra2 == 2)
      if (Value x = swapsLastTwo(aa, 2))
        lhs = x, lc = 0;
    if (Value x = swapsLastTwo(cc, 2))
      rhs = x, rcd = 1;
    res = mk<DotGeneralOp>(outDims, e, lhs, rhs, ArrayRef<int64_t>{},
                           ArrayRef<int64_t>{}, ArrayRef<int64_t>{lc},
                           ArrayRef<int64_t>{rcd});
  } else {
    Dims ba(da.begin(), da.end() - 2), bc(dc.begin(), dc.end() - 2);
    FailureOr<Dims> bd = broadcastDims({ba, bc});
    if (::mlir::failed(bd))
      return failure();
    int64_t nb = bd->size();
    // Broadcast the batch dims of one operand against the other's.
    auto broadcastBatch = [&](Value v, const Dims &own, Value other,
                              const Dims &otherBatch) -> Value {
      bool same = (int64_t)own.size() - 2 == nb;
      for (int64_t i = 0; same && i < nb; ++i)
        same = own[i] == (*bd)[i];
      if (same)
        return v;
      SmallVector<TDim> t;
      for (int64_t i = 0; i < (int64_t)otherBatch.size(); ++i)
        t.push_back(tdimOf(other, i));
      t.push_back(tdimConst(1));
      t.push_back(tdimConst(1));
      Dims sd;
      for (const TDim &x : t)
        sd.push_back(x.d);
      return expandTo(v, shapeFrom(t), sd);
    };
    Value ea = broadcastBatch(aa, da, cc, bc);
    Value ec = broadcastBatch(cc, dc, aa, ba);
    if (!ea || !ec)
      return failure();
    Dims outDims = *bd;
    outDims.push_back(da[ra2 - 2]);
    outDims.push_back(dc[rc2 - 1]);
    SmallVector<int64_t> batch = llvm::to_vector(llvm::seq<int64_t>(0, nb));
    int64_t lc = nb + 1, rcd = nb;
    if (ea == aa && ra2 == nb + 2)
      if (Value x = swapsLastTwo(ea, ra2))
        ea = x, lc = nb;
    if (ec == cc && rc2 == nb + 2)
      if (Value x = swapsLastTwo(ec, rc2))
        ec = x, rcd = nb + 1;
    res = mk<DotGeneralOp>(outDims, e, ea, ec, batch, batch,
                           ArrayRef<int64_t>{lc}, ArrayRef<int64_t>{rcd});
  }
  // Remove the promoted dims.
  if (ra == 1 || rc == 1) {
    int64_t r = rank(res);
    SmallVector<TDim> t;
    for (int64_t i = 0; i < r; ++i) {
      if ((ra == 1 && i == r - 2) || (rc == 1 && i == r - 1))
        continue;
      t.push_back(tdimOf(res, i));
    }
    res = reshapeT(res, t);
  }
  return res;
}

LogicalResult Importer::importGemm(StringRef) {
  Value a = in(0), c = in(1), bias = in(2);
  if (rank(a) != 2 || rank(c) != 2)
    return err() << "A and B must be 2-D";
  if (::mlir::failed(sameElt(a, c)) || ::mlir::failed(requireFloat(a)))
    return failure();
  bool ta = aInt("transA", 0) != 0, tb = aInt("transB", 0) != 0;
  float alpha = aFloat("alpha", 1.0f), beta = aFloat("beta", 1.0f);
  Dims da = dims(a), dc = dims(c);
  Dims outDims = {da[ta ? 1 : 0], dc[tb ? 0 : 1]};
  Value r = mk<DotGeneralOp>(outDims, elt(a), a, c, ArrayRef<int64_t>{},
                             ArrayRef<int64_t>{}, ArrayRef<int64_t>{ta ? 0 : 1},
                             ArrayRef<int64_t>{tb ? 1 : 0});
  if (alpha != 1.0f)
    r = binary<MulOp>(r, scalarLike(r, alpha));
  if (bias && beta != 0.0f) {
    if (::mlir::failed(sameElt(a, bias)))
      return failure();
    if (beta != 1.0f)
      bias = binary<MulOp>(bias, scalarLike(bias, beta));
    r = binary<AddOp>(r, bias);
  }
  return finish(r);
}

/// Resolves the node's auto_pad. SAME_* pads are static when the spatial
/// dim is static or the stride is 1 (total = (k - 1) * d); otherwise they
/// are run-time values (Importer::padSameRuntime) and `pads` stays zero.
LogicalResult Importer::resolveAutoPad(ArrayRef<Dim> spatial, Window &w) {
  std::string autoPad = aStr("auto_pad", "NOTSET");
  int64_t k = spatial.size();
  if (autoPad == "NOTSET" || autoPad.empty())
    return success();
  if (autoPad == "VALID") {
    w.pads.assign(2 * k, 0);
    return success();
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return err() << "unknown auto_pad '" << autoPad << "'";
  w.pads.assign(2 * k, 0);
  for (int64_t i = 0; i < k; ++i)
    if (!spatial[i].isStatic() && w.strides[i] != 1) {
      w.runtimeSame = autoPad == "SAME_UPPER" ? 1 : 2;
      return success();
    }
  for (int64_t i = 0; i < k; ++i) {
    int64_t s = w.strides[i], span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t total = span - 1;
    if (spatial[i].isStatic()) {
      int64_t d = spatial[i].size;
      total = std::max<int64_t>(0, (ceilDiv(d, s) - 1) * s + span - d);
    }
    int64_t small = total / 2, big = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : big;
    w.pads[i + k] = autoPad == "SAME_UPPER" ? big : small;
  }
  return success();
}

static Dim windowOut(const Dim &d, int64_t kernel, int64_t stride, int64_t dil,
                     int64_t lo, int64_t hi, bool ceilMode) {
  if (!d.isStatic() || kernel == kDyn)
    return Dim();
  int64_t num = d.size + lo + hi - dil * (kernel - 1) - 1;
  int64_t o = (ceilMode ? ceilDiv(num, stride) : floorDiv(num, stride)) + 1;
  return Dim(std::max<int64_t>(o, 0));
}

/// The 0-d padding that never wins a max of `x`'s element type: -inf, or
/// the lowest signed integer (unsigned inputs are pooled sign-flipped).
Value Importer::lowestScalar(Value x) {
  if (isFloat(x))
    return constScalar(elt(x), -std::numeric_limits<double>::infinity());
  unsigned w = elt(x).getIntOrFloatBitWidth();
  return constScalar(elt(x), -std::ldexp(1.0, (int)w - 1));
}

Value Importer::padSameRuntime(Value x, const Window &w, Value value) {
  int64_t r = rank(x), k = r - 2;
  auto vecType = RankedTensorType::get({1}, b.getI64Type());
  auto op = [&](auto tag, Value l, Value c) -> Value {
    using OpTy = decltype(tag);
    Value v = OpTy::create(b, loc, vecType, l, c).getResult();
    knownVals[v] = Dims{Dim()};
    return v;
  };
  SmallVector<Value> lo(2, constI64({0})), hi(2, constI64({0}));
  Dims o = dims(x);
  bool upper = w.runtimeSame == 1;
  for (int64_t i = 0; i < k; ++i) {
    int64_t s = w.strides[i], span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    Dim d = o[i + 2];
    if (d.isStatic() || s == 1) {
      int64_t total = d.isStatic()
                          ? std::max<int64_t>(0, (ceilDiv(d.size, s) - 1) * s +
                                                     span - d.size)
                          : span - 1;
      int64_t small = total / 2, big = total - small;
      lo.push_back(constI64({upper ? small : big}));
      hi.push_back(constI64({upper ? big : small}));
      if (d.isStatic())
        o[i + 2] = Dim(d.size + total);
      continue;
    }
    // total = max(ceil(in / s) * s + (span - s) - in, 0)
    Value in = dimOf(x, i + 2);
    Value outSize =
        op(DivOp(), op(AddOp(), in, constI64({s - 1})), constI64({s}));
    Value total =
        op(AddOp(), op(MulOp(), outSize, constI64({s})), constI64({span - s}));
    total = op(MaxOp(), op(SubOp(), total, in), constI64({0}));
    Value small = op(DivOp(), total, constI64({2}));
    Value big = op(SubOp(), total, small);
    lo.push_back(upper ? small : big);
    hi.push_back(upper ? big : small);
    o[i + 2] = Dim();
  }
  lo.append(hi);
  return mk<PadOp>(o, elt(x), PadMode::Constant, x, concatI64(lo), value);
}

LogicalResult Importer::importConv(StringRef) {
  Value x = in(0), w = in(1), bias = in(2);
  if (::mlir::failed(sameElt(x, w)))
    return failure();
  FailureOr<Value> res = conv(x, w);
  if (::mlir::failed(res))
    return failure();
  if (bias) {
    int64_t k = rank(x) - 2;
    if (rank(bias) != 1 || ::mlir::failed(sameElt(x, bias)))
      return err() << "bias must be 1-D of the input element type";
    *res = addChannelBias(*res, bias, k);
    if (!*res)
      return failure();
  }
  out(0, *res);
  return success();
}

/// `bias` [C] reshaped to [C, 1..] (k ones) and added to `x` [N, C, ...].
Value Importer::addChannelBias(Value x, Value bias, int64_t k) {
  SmallVector<TDim> t = {tdimOf(bias, 0)};
  t.append(k, tdimConst(1));
  return binary<AddOp>(x, reshapeT(bias, t));
}

/// Conv of `x` with `w` (attributes of the current node), without bias.
FailureOr<Value> Importer::conv(Value x, Value w) {
  int64_t r = rank(x);
  if (r < 3 || rank(w) != r)
    return err() << "input and weight must have equal rank >= 3";
  int64_t k = r - 2;
  Dims dx = dims(x), dw = dims(w);
  Window win;
  win.kernel = aInts("kernel_shape").value_or(SmallVector<int64_t>{});
  if (win.kernel.empty())
    for (int64_t i = 0; i < k; ++i)
      win.kernel.push_back(dw[i + 2].size);
  win.strides = aInts("strides").value_or(SmallVector<int64_t>(k, 1));
  win.dilations = aInts("dilations").value_or(SmallVector<int64_t>(k, 1));
  win.pads = aInts("pads").value_or(SmallVector<int64_t>(2 * k, 0));
  int64_t group = aInt("group", 1);
  if (!win.hasSpatialRank(k))
    return err() << "kernel_shape/strides/dilations/pads have the wrong length";
  if (::mlir::failed(resolveAutoPad(ArrayRef<Dim>(dx).drop_front(2), win)) ||
      failed)
    return failure();
  if (win.runtimeSame) {
    x = padSameRuntime(x, win, scalarLike(x, 0));
    dx = dims(x);
  }
  Dims outDims = {dx[0], dw[0]};
  for (int64_t i = 0; i < k; ++i)
    outDims.push_back(windowOut(dx[i + 2], win.kernel[i], win.strides[i],
                                win.dilations[i], win.pads[i], win.pads[i + k],
                                false));
  return mk<ConvOp>(outDims, elt(x), x, w, win.strides, win.dilations, win.pads,
                    (uint64_t)group);
}

LogicalResult Importer::importPool(StringRef op) {
  Value x = in(0);
  int64_t r = rank(x);
  int64_t k = r - 2;
  if (op.starts_with("Global")) {
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, r));
    out(0, reduce(op == "GlobalMaxPool" ? ReduceKind::Max : ReduceKind::Mean, x,
                  axes, true));
    return success();
  }
  bool wantIndices = op == "MaxPool" && wantOut(1);
  if (wantOut(1) && !wantIndices)
    return err() << "has only one output";
  // Integer MaxPool (the row admits any non-bool type): disc.pool compares
  // integers as signed; unsigned inputs are pooled with the sign bit
  // flipped (x ^ 2^(w-1) maps the unsigned order onto the signed one) and
  // flipped back. Exact at every width.
  Value signBit;
  if (!isFloat(x) && isUns(x)) {
    unsigned w = elt(x).getIntOrFloatBitWidth();
    signBit = constScalar(elt(x), -std::ldexp(1.0, (int)w - 1));
    x = binary<XorOp>(x, signBit);
  }
  auto setY = [&](Value v) {
    if (v && signBit)
      v = binary<XorOp>(v, signBit);
    out(0, v);
  };
  Dims dx = dims(x);
  Window win;
  std::optional<SmallVector<int64_t>> ks = aInts("kernel_shape");
  if (!ks)
    return err() << "missing attribute 'kernel_shape'";
  win.kernel = *ks;
  win.strides = aInts("strides").value_or(SmallVector<int64_t>(k, 1));
  win.dilations = aInts("dilations").value_or(SmallVector<int64_t>(k, 1));
  win.pads = aInts("pads").value_or(SmallVector<int64_t>(2 * k, 0));
  if (!win.hasSpatialRank(k))
    return err() << "kernel_shape/strides/dilations/pads have the wrong length";
  bool ceilMode = aInt("ceil_mode", 0) != 0;
  bool countPad = aInt("count_include_pad", 0) != 0;
  if (::mlir::failed(resolveAutoPad(ArrayRef<Dim>(dx).drop_front(2), win)) ||
      failed)
    return failure();
  Dims outDims = {dx[0], dx[1]};
  for (int64_t i = 0; i < k; ++i)
    outDims.push_back(windowOut(dx[i + 2], win.kernel[i], win.strides[i],
                                win.dilations[i], win.pads[i], win.pads[i + k],
                                ceilMode));
  // Indices (MaxPool's second output): of the pooling of the unpadded
  // input, the output itself without run-time SAME pads.
  if (wantIndices || !win.runtimeSame) {
    Value y = mk<PoolOp>(
        outDims, elt(x), op == "MaxPool" ? PoolKind::Max : PoolKind::Avg, x,
        win.kernel, win.strides, win.dilations, win.pads, ceilMode, countPad);
    if (wantIndices) {
      FailureOr<Value> idx = maxPoolIndices(
          x, win.kernel, win.strides, win.dilations, win.pads, outDims, y);
      if (::mlir::failed(idx))
        return failure();
      out(1, *idx);
    }
    setY(y);
    if (!win.runtimeSame)
      return success();
  }
  bool isMax = op == "MaxPool";
  auto pool = [&](Value v) {
    Dims dv = dims(v);
    Dims outDims = {dv[0], dv[1]};
    for (int64_t i = 0; i < k; ++i)
      outDims.push_back(windowOut(dv[i + 2], win.kernel[i], win.strides[i],
                                  win.dilations[i], win.pads[i],
                                  win.pads[i + k], ceilMode));
    return mk<PoolOp>(outDims, elt(v), isMax ? PoolKind::Max : PoolKind::Avg, v,
                      win.kernel, win.strides, win.dilations, win.pads,
                      ceilMode, countPad);
  };
  // Run-time SAME pads: pad explicitly (MaxPool with -inf). AveragePool
  // without count_include_pad divides the window sums of the zero-padded
  // input by those of a zero-padded ones tensor (the valid-element counts).
  if (isMax) {
    setY(pool(padSameRuntime(x, win, lowestScalar(x))));
    return success();
  }
  Value sum = pool(padSameRuntime(x, win, scalarLike(x, 0)));
  if (countPad) {
    out(0, sum);
    return success();
  }
  Value ones = expandTo(scalarLike(x, 1), shapeOf(x), dx);
  if (!ones)
    return failure();
  Value cnt = pool(padSameRuntime(ones, win, scalarLike(x, 0)));
  out(0, binary<DivOp>(sum, cnt));
  return success();
}

LogicalResult Importer::importConvTranspose(StringRef) {
  Value x = in(0), w = in(1), bias = in(2);
  if (::mlir::failed(sameElt(x, w)))
    return failure();
  int64_t r = rank(x);
  if (r < 3 || rank(w) != r)
    return err() << "input and weight must have equal rank >= 3";
  int64_t k = r - 2;
  Dims dx = dims(x), dw = dims(w);
  SmallVector<int64_t> kernel =
      aInts("kernel_shape").value_or(SmallVector<int64_t>{});
  if (kernel.empty())
    for (int64_t i = 0; i < k; ++i)
      kernel.push_back(dw[i + 2].size);
  SmallVector<int64_t> strides =
      aInts("strides").value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> dil =
      aInts("dilations").value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> outPad =
      aInts("output_padding").value_or(SmallVector<int64_t>(k, 0));
  SmallVector<int64_t> pads =
      aInts("pads").value_or(SmallVector<int64_t>(2 * k, 0));
  std::optional<SmallVector<int64_t>> outShape = aInts("output_shape");
  if (outShape && (int64_t)outShape->size() == k + 2)
    outShape->erase(outShape->begin(), outShape->begin() + 2);
  int64_t group = aInt("group", 1);
  std::string autoPad = aStr("auto_pad", "NOTSET");
  if (failed)
    return failure();
  if ((int64_t)kernel.size() != k || (int64_t)strides.size() != k ||
      (int64_t)dil.size() != k || (int64_t)outPad.size() != k ||
      (int64_t)pads.size() != 2 * k ||
      (outShape && (int64_t)outShape->size() != k))
    return err() << "kernel_shape/strides/dilations/output_padding/pads/"
                    "output_shape have the wrong length";
  if (group <= 0)
    return err() << "group must be positive";
  if (group > 1 && (!dw[0].isStatic() || !dw[1].isStatic()))
    return err() << "group = " << group
                 << " needs static weight channel dims (opset " << opset << ")";
  for (int64_t i = 0; i < k; ++i)
    if (dw[i + 2].isStatic() && kernel[i] != dw[i + 2].size)
      return err() << "kernel_shape does not match the weight's spatial dims";
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return err() << "unsupported auto_pad '" << autoPad << "' (opset " << opset
                 << ")";
  bool upper = autoPad == "SAME_UPPER";
  bool same = upper || autoPad == "SAME_LOWER";
  if (autoPad == "VALID")
    pads.assign(2 * k, 0);
  // With output_shape (or SAME: D * stride) the pads follow from the target
  // size: total = full - target, split as the ONNX spec says. They are
  // attributes when the sizes are static; otherwise the full result is
  // cropped (or extended) at run time.
  bool runtime = false;
  if (outShape || same) {
    for (int64_t i = 0; i < k; ++i) {
      Dim d = dx[i + 2];
      if (kernel[i] == kDyn || (outShape && !d.isStatic())) {
        runtime = true;
        break;
      }
      int64_t full = strides[i] * ((outShape ? d.size : 1) - 1) + outPad[i] +
                     (kernel[i] - 1) * dil[i] + 1;
      int64_t total = full - (outShape ? (*outShape)[i] : strides[i]);
      int64_t half = floorDiv(total, 2);
      pads[i] = upper ? half : total - half;
      pads[i + k] = upper ? total - half : half;
    }
  }
  SmallVector<int64_t> opPads = runtime ? SmallVector<int64_t>(2 * k, 0) : pads;
  Dims outDims = {dx[0], dw[1].isStatic() ? Dim(dw[1].size * group) : Dim()};
  for (int64_t i = 0; i < k; ++i) {
    Dim d = dx[i + 2];
    if (!d.isStatic() || kernel[i] == kDyn) {
      outDims.push_back(Dim());
      continue;
    }
    outDims.push_back(Dim(strides[i] * (d.size - 1) + outPad[i] +
                          (kernel[i] - 1) * dil[i] + 1 - opPads[i] -
                          opPads[i + k]));
  }
  Value y = mk<ConvTransposeOp>(outDims, elt(x), x, w, strides, dil, opPads,
                                outPad, (uint64_t)group);
  if (runtime) {
    SmallVector<Value> lo = {constI64({0, 0})}, hi = {constI64({0, 0})};
    SmallVector<Value> starts, ends;
    Dims padded = {outDims[0], outDims[1]}, final = {outDims[0], outDims[1]};
    Value zero = constI64({0});
    for (int64_t i = 0; i < k; ++i) {
      Value full = dimOf(y, i + 2), target;
      Dim td;
      if (outShape) {
        target = constI64({(*outShape)[i]});
        td = Dim((*outShape)[i]);
      } else {
        target = binaryFolded("Mul", dimOf(x, i + 2), constI64({strides[i]}));
        if (dx[i + 2].isStatic())
          td = Dim(dx[i + 2].size * strides[i]);
      }
      Value total = binary<SubOp>(full, target);
      // floor(total / 2) with a truncating division.
      Value neg = select(compare(CompareDirection::LT, total, zero),
                         constI64({1}), zero);
      Value half = binary<DivOp>(binary<SubOp>(total, neg), constI64({2}));
      Value begin = upper ? half : binary<SubOp>(total, half);
      Value padLo = binary<MaxOp>(unary<NegOp>(begin), zero);
      Value padHi = binary<MaxOp>(
          binary<SubOp>(binary<AddOp>(begin, target), full), zero);
      Value start = binary<AddOp>(begin, padLo);
      lo.push_back(padLo);
      hi.push_back(padHi);
      starts.push_back(start);
      ends.push_back(binary<AddOp>(start, target));
      padded.push_back(Dim());
      final.push_back(td);
    }
    SmallVector<Value> all(lo);
    all.append(hi);
    Value p = mk<PadOp>(padded, elt(y), PadMode::Constant, y, concatI64(all),
                        scalarLike(y, 0));
    y = mk<SliceOp>(final, elt(y), p, concatI64(starts), concatI64(ends),
                    constI64(SmallVector<int64_t>(k, 1)),
                    llvm::to_vector(llvm::seq<int64_t>(2, r)));
  }
  if (bias) {
    if (rank(bias) != 1 || ::mlir::failed(sameElt(x, bias)))
      return err() << "bias must be 1-D of the input element type";
    y = addChannelBias(y, bias, k);
    if (!y)
      return failure();
  }
  out(0, y);
  return success();
}

/// The Indices output of MaxPool: the flat index (row-major, or with the
/// spatial dims in reverse order when storage_order = 1) of the first max of
/// each window, by a running compare over the window offsets of strided
/// slices of the input padded with -inf.
FailureOr<Value> Importer::maxPoolIndices(Value x, ArrayRef<int64_t> kernel,
                                          ArrayRef<int64_t> strides,
                                          ArrayRef<int64_t> dilations,
                                          ArrayRef<int64_t> pads,
                                          ArrayRef<Dim> outDims,
                                          Value &values) {
  int64_t r = rank(x), k = r - 2;
  bool colMajor = aInt("storage_order", 0) != 0;
  Type e = elt(x);
  SmallVector<int64_t> pv(2 * r, 0);
  Dims dx = dims(x), padded = {dx[0], dx[1]};
  for (int64_t i = 0; i < k; ++i) {
    pv[2 + i] = pads[i];
    pv[r + 2 + i] = pads[k + i] + strides[i];
    padded.push_back(dx[2 + i].isStatic()
                         ? Dim(dx[2 + i].size + pv[2 + i] + pv[r + 2 + i])
                         : Dim());
  }
  Value xp =
      mk<PadOp>(padded, e, PadMode::Constant, x, constI64(pv), lowestScalar(x));
  // Flat offset of (n, c) and the spatial strides of the index.
  Value nc =
      binary<AddOp>(binary<MulOp>(iotaAlong(values, 0, r, 0), dimScalar(x, 1)),
                    iotaAlong(values, 1, r, 1));
  Value plane = constI64Scalar(1);
  SmallVector<Value> mult(k);
  for (int64_t j = 0; j < k; ++j) {
    int64_t i = colMajor ? j : k - 1 - j;
    mult[i] = plane;
    plane = binary<MulOp>(plane, dimScalar(x, 2 + i));
  }
  // Index of the window's first element; a window offset adds a constant.
  Value idx0 = binary<MulOp>(nc, plane);
  for (int64_t i = 0; i < k; ++i) {
    Value h = binary<SubOp>(binary<MulOp>(iotaAlong(values, 2 + i, r, 2 + i),
                                          constI64Scalar(strides[i])),
                            constI64Scalar(pads[i]));
    idx0 = binary<AddOp>(idx0, binary<MulOp>(h, mult[i]));
  }
  // The window elements as slices stacked on a new leading dim (row-major
  // offset order); the first max along it gives the offset number.
  SmallVector<Value> cands;
  SmallVector<int64_t> off(k, 0);
  while (true) {
    SmallVector<Value> st, en;
    for (int64_t i = 0; i < k; ++i) {
      int64_t s0 = off[i] * dilations[i];
      st.push_back(constI64({s0}));
      en.push_back(binary<AddOp>(
          binary<MulOp>(binary<SubOp>(dimOf(values, 2 + i), constI64({1})),
                        constI64({strides[i]})),
          constI64({s0 + 1})));
    }
    Value cand = mk<SliceOp>(outDims, e, xp, concatI64(st), concatI64(en),
                             constI64(strides),
                             llvm::to_vector(llvm::seq<int64_t>(2, r)));
    cands.push_back(unsqueezeAt(cand, 0));
    int64_t i = k - 1;
    while (i >= 0 && ++off[i] == kernel[i])
      off[i--] = 0;
    if (i < 0)
      break;
  }
  Dims stackDims = {Dim((int64_t)cands.size())};
  stackDims.append(outDims.begin(), outDims.end());
  Value stack = cands.size() == 1
                    ? cands.front()
                    : mk<ConcatenateOp>(stackDims, e, cands, (uint64_t)0);
  Value best = reduce(ReduceKind::Max, stack, {0}, false);
  Value bestOff =
      mk<ArgReduceOp>(Dims(outDims.begin(), outDims.end()), b.getI64Type(),
                      stack, (uint64_t)0, true, /*keep_dims=*/false,
                      /*select_last_index=*/false);
  // Offset number -> per-dim offsets (row-major over the kernel).
  Value bestIdx = idx0, rest = bestOff;
  for (int64_t i = k - 1; i >= 0; --i) {
    Value ki = constI64Scalar(kernel[i]);
    Value oi = binary<RemOp>(rest, ki);
    rest = binary<DivOp>(rest, ki);
    bestIdx = binary<AddOp>(
        bestIdx, binary<MulOp>(binary<MulOp>(oi, constI64Scalar(dilations[i])),
                               mult[i]));
  }
  if (!bestIdx)
    return failure();
  values = best;
  return bestIdx;
}

} // namespace mlir::disc::onnx_import

//===- Normalization.cpp - ONNX normalization, softmax and losses
//-----------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace mlir::disc::onnx_import {

/// The f32 elements of constant `v` (dense or resource), or nothing.
static std::optional<std::vector<float>> f32Elements(Value v) {
  auto c = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!c)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(c.getType());
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
    return std::nullopt;
  std::vector<float> out(type.getNumElements());
  Attribute a = c.getValue();
  if (auto d = dyn_cast<DenseElementsAttr>(a)) {
    auto vals = d.getValues<float>();
    if (d.isSplat())
      std::fill(out.begin(), out.end(), d.getSplatValue<float>());
    else
      std::copy(vals.begin(), vals.end(), out.begin());
    return out;
  }
  if (auto r = dyn_cast<DenseResourceElementsAttr>(a)) {
    AsmResourceBlob *blob = r.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != out.size() * sizeof(float))
      return std::nullopt;
    std::memcpy(out.data(), blob->getData().data(), blob->getData().size());
    return out;
  }
  return std::nullopt;
}

/// BatchNormalization (inference) right after a Conv, folded at import:
/// W'[o] = W[o] * s[o], B'[o] = (B[o] - mean[o]) * s[o] + beta[o], with
/// s = scale / sqrt(var + eps) (the standard folding, e.g. PyTorch's
/// torch.nn.utils.fusion.fuse_conv_bn_eval). Applies when `x` is a Conv
/// (or Conv + constant channel bias) on constant f32 weights that nothing
/// else reads and the four BN operands are f32 constants; returns the
/// folded Conv + bias, or null (then BN is imported as arithmetic).
Value Importer::foldBatchNormIntoConv(Value x, Value scale, Value bias,
                                      Value mean, Value var, float eps) {
  auto it = onnxUses.find(node->input(0));
  if (options.markParameters || it == onnxUses.end() || it->second != 1 ||
      !x.use_empty())
    return nullptr;
  Operation *addOp = nullptr;
  Value convRes = x, oldBias;
  if (auto add = x.getDefiningOp<AddOp>()) {
    addOp = add;
    convRes = add.getOperand(0);
    oldBias = add.getOperand(1);
    if (!convRes.getDefiningOp<ConvOp>())
      std::swap(convRes, oldBias);
  }
  auto conv = convRes.getDefiningOp<ConvOp>();
  if (!conv || (addOp && !convRes.hasOneUse()) || !elt(x).isF32())
    return nullptr;
  Value filter = conv.getFilter();
  auto ft = dyn_cast<RankedTensorType>(filter.getType());
  if (!ft || !ft.hasStaticShape())
    return nullptr;
  int64_t oc = ft.getDimSize(0), per = ft.getNumElements() / oc;
  std::optional<std::vector<float>> w = f32Elements(filter),
                                    g = f32Elements(scale),
                                    be = f32Elements(bias),
                                    m = f32Elements(mean), v = f32Elements(var),
                                    b0;
  if (!w || !g || !be || !m || !v)
    return nullptr;
  for (const std::vector<float> *p : {&*g, &*be, &*m, &*v})
    if ((int64_t)p->size() != oc)
      return nullptr;
  if (oldBias) {
    b0 = f32Elements(oldBias);
    if (!b0 || (int64_t)b0->size() != oc ||
        tt(oldBias).getRank() != tt(x).getRank() - 1 ||
        tt(oldBias).getDimSize(0) != oc)
      return nullptr;
  }
  std::vector<float> nb(oc);
  for (int64_t o = 0; o < oc; ++o) {
    float s = (*g)[o] / std::sqrt((*v)[o] + eps);
    for (int64_t i = 0; i < per; ++i)
      (*w)[o * per + i] *= s;
    nb[o] = ((b0 ? (*b0)[o] : 0.0f) - (*m)[o]) * s + (*be)[o];
  }
  std::string key = "onnx_" + node->output(0) + "_folded_w";
  for (char &c : key)
    if (!llvm::isAlnum(c))
      c = '_';
  Value nw = ConstantOp::create(
                 b, loc,
                 DenseResourceElementsAttr::get(
                     ft, key,
                     HeapAsmResourceBlob::allocateAndCopyWithAlign(
                         ArrayRef<char>(reinterpret_cast<char *>(w->data()),
                                        w->size() * sizeof(float)),
                         alignof(uint64_t))))
                 .getResult();
  Operation *nc = b.clone(*conv);
  nc->setOperand(1, nw);
  record(nc->getResult(0), dims(convRes));
  SmallVector<int64_t> bshape(tt(x).getRank() - 1, 1);
  bshape[0] = oc;
  Value nbias = constDense(DenseElementsAttr::get(
      RankedTensorType::get(bshape, b.getF32Type()), ArrayRef<float>(nb)));
  Value y = binary<AddOp>(nc->getResult(0), nbias);
  if (!y)
    return nullptr;
  // The Conv (and its bias add) now read by nothing: erased with their
  // constants.
  SmallVector<Operation *> dead;
  if (addOp)
    dead.push_back(addOp);
  dead.push_back(conv);
  for (Operation *op : dead) {
    SmallVector<Value> operands(op->getOperands());
    if (!op->use_empty())
      break;
    eraseOp(op);
    for (Value o : operands)
      if (Operation *d = o.getDefiningOp())
        if (isa<ConstantOp>(d) && d->use_empty() &&
            !llvm::any_of(values,
                          [&](const auto &kv) { return kv.getValue() == o; }))
          eraseOp(d);
  }
  return y;
}

LogicalResult Importer::importBatchNorm(StringRef) {
  Value x = in(0), scale = in(1), bias = in(2), mean = in(3), var = in(4);
  if (aInt("training_mode", 0) != 0)
    return importBatchNormTraining(x, scale, bias, mean, var);
  if (wantOut(1) || wantOut(2) || wantOut(3) || wantOut(4))
    return err() << "outputs other than Y need training_mode=1";
  if (opset < 9 && aInt("spatial", 1) != 1)
    return err() << "spatial=0 is not supported";
  float eps = aFloat("epsilon", 1e-5f);
  if (Value folded = foldBatchNormIntoConv(x, scale, bias, mean, var, eps))
    return finish(folded);
  Type e = elt(x);
  for (Value *p : {&scale, &bias, &mean, &var}) {
    if (rank(*p) != 1)
      return err() << "scale, B, mean and var must be 1-D";
    *p = convert(*p, e, false, false);
  }
  // y = x * inv + (B - mean * inv), inv = scale / sqrt(var + eps).
  Value inv = binary<MulOp>(
      scale, unary<RsqrtOp>(binary<AddOp>(var, constScalar(e, eps))));
  Value shift = binary<SubOp>(bias, binary<MulOp>(mean, inv));
  if (!inv || !shift)
    return failure();
  int64_t r = rank(x);
  if (r > 2) {
    auto bcast = [&](Value v) {
      SmallVector<TDim> t = {tdimOf(v, 0)};
      t.append(r - 2, tdimConst(1));
      return reshapeT(v, t);
    };
    inv = bcast(inv);
    shift = bcast(shift);
  }
  Value y = binary<AddOp>(binary<MulOp>(x, inv), shift);
  return finish(y);
}

/// BatchNormalization with training_mode=1 (ONNX opset 14+): normalizes by
/// the batch statistics over every dim but 1, and gives the running
/// statistics `input * momentum + batch * (1 - momentum)` (the batch
/// variance is the population variance, as the ONNX spec says; PyTorch's
/// running_var uses the unbiased one). When parameters are marked for
/// training, the ops of the new running statistics name the initializers
/// they replace (`disc.state_update_of`): disc-build-training-step keeps
/// them as session state.
LogicalResult Importer::importBatchNormTraining(Value x, Value scale,
                                                Value bias, Value mean,
                                                Value var) {
  int64_t r = rank(x);
  if (r < 2)
    return err() << "input must have rank >= 2";
  float eps = aFloat("epsilon", 1e-5f), momentum = aFloat("momentum", 0.9f);
  Type e = elt(x);
  SmallVector<int64_t> axes = {0};
  for (int64_t i = 2; i < r; ++i)
    axes.push_back(i);
  Value batchMean = reduce(ReduceKind::Mean, x, axes, true);
  Value centered = binary<SubOp>(x, batchMean);
  Value batchVar =
      reduce(ReduceKind::Mean, binary<MulOp>(centered, centered), axes, true);
  if (!batchVar)
    return failure();
  SmallVector<TDim> channels = {tdimOf(x, 1)};
  SmallVector<TDim> perChannel(r, tdimConst(1));
  perChannel[1] = tdimOf(x, 1);
  auto bcast = [&](Value v) {
    return reshapeT(convert(v, e, false, false), perChannel);
  };
  Value y = binary<AddOp>(
      binary<MulOp>(
          binary<MulOp>(centered, unary<RsqrtOp>(binary<AddOp>(
                                      batchVar, constScalar(e, eps)))),
          bcast(scale)),
      bcast(bias));
  if (!y)
    return failure();
  out(0, y);
  auto running = [&](unsigned index, Value old, Value batch) -> Value {
    Value flat = reshapeT(batch, channels);
    Value updated = binary<AddOp>(
        binary<MulOp>(convert(old, e, false, false), constScalar(e, momentum)),
        binary<MulOp>(flat, constScalar(e, 1.0 - momentum)));
    if (!updated)
      return nullptr;
    const std::string &name = node->input(index);
    if (options.markParameters && initializers.count(name))
      updated.getDefiningOp()->setAttr(kStateUpdateOfAttrName,
                                       b.getStringAttr(name));
    return updated;
  };
  Value newMean = running(3, mean, batchMean);
  Value newVar = running(4, var, batchVar);
  if (!newMean || !newVar)
    return failure();
  out(1, newMean);
  out(2, newVar);
  return success();
}

LogicalResult Importer::importInstanceNorm(StringRef) {
  Value x = in(0), scale = in(1), bias = in(2);
  int64_t r = rank(x);
  float eps = aFloat("epsilon", 1e-5f);
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, r));
  Value mean = reduce(ReduceKind::Mean, x, axes, true);
  Value d = binary<SubOp>(x, mean);
  Value var = reduce(ReduceKind::Mean, binary<MulOp>(d, d), axes, true);
  Value norm =
      binary<MulOp>(d, unary<RsqrtOp>(binary<AddOp>(var, scalarLike(x, eps))));
  auto bcast = [&](Value v) {
    SmallVector<TDim> t = {tdimOf(v, 0)};
    t.append(r - 2, tdimConst(1));
    return reshapeT(convert(v, elt(x), false, false), t);
  };
  if (rank(scale) != 1 || rank(bias) != 1)
    return err() << "scale and B must be 1-D";
  Value y = binary<AddOp>(binary<MulOp>(norm, bcast(scale)), bcast(bias));
  return finish(y);
}

LogicalResult Importer::importLayerNorm(StringRef) {
  Value x = in(0), scale = in(1), bias = in(2);
  int64_t r = rank(x);
  int64_t axis = nodeAxis;
  float eps = aFloat("epsilon", 1e-5f);
  Type e = elt(x);
  Type stash = e;
  if (aInt("stash_type", 1) == 1 && !e.isF32() && !e.isF64())
    stash = b.getF32Type();
  Value xs = convert(x, stash, false, false);
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, r));
  Value mean = reduce(ReduceKind::Mean, xs, axes, true);
  Value d = binary<SubOp>(xs, mean);
  Value var = reduce(ReduceKind::Mean, binary<MulOp>(d, d), axes, true);
  Value inv = unary<RsqrtOp>(binary<AddOp>(var, constScalar(stash, eps)));
  Value y = convert(binary<MulOp>(d, inv), e, false, false);
  y = binary<MulOp>(y, convert(scale, e, false, false));
  if (bias && y)
    y = binary<AddOp>(y, convert(bias, e, false, false));
  return finishAll({y, mean, inv});
}

LogicalResult Importer::importSoftmax(StringRef op) {
  Value x = in(0);
  int64_t r = rank(x);
  FailureOr<int64_t> axis =
      r == 0 ? FailureOr<int64_t>(0)
             : normAxis(aInt("axis", opset < 13 ? 1 : -1), r);
  if (::mlir::failed(axis))
    return failure();
  SmallVector<int64_t> axes;
  if (r > 0) {
    if (opset < 13) // coerced to 2-D: reduce over all dims from axis on
      axes = llvm::to_vector(llvm::seq<int64_t>(*axis, r));
    else
      axes = {*axis};
  }
  Value m = reduce(ReduceKind::Max, x, axes, true);
  Value shifted = binary<SubOp>(x, m);
  Value e = unary<ExpOp>(shifted);
  Value s = reduce(ReduceKind::Sum, e, axes, true);
  Value y = op == "Softmax" ? binary<DivOp>(e, s)
                            : binary<SubOp>(shifted, unary<LogOp>(s));
  return finish(y);
}

LogicalResult Importer::importHardmax(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  Value v = x;
  int64_t ax = nodeAxis;
  if (opset < 13) { // coerced to 2-D [prod(:axis), prod(axis:)]
    TDim a = tdimConst(1), c = tdimConst(1);
    for (int64_t i = 0; i < r; ++i)
      (i < ax ? a : c) = tdimMul(i < ax ? a : c, tdimOf(x, i));
    v = reshapeT(x, {a, c});
    ax = 1;
  }
  int64_t vr = rank(v);
  Dims vd = dims(v), o;
  for (int64_t i = 0; i < vr; ++i)
    o.push_back(i == ax ? Dim(1) : vd[i]);
  Value am = mk<ArgReduceOp>(o, b.getI64Type(), v, (uint64_t)ax, true,
                             /*keep_dims=*/true, /*select_last_index=*/false);
  Value mask = compare(CompareDirection::EQ, iotaAlong(v, ax, vr, ax), am);
  Value y = select(mask, scalarLike(v, 1), scalarLike(v, 0));
  if (!y)
    return failure();
  if (opset < 13)
    y = mk<DynamicReshapeOp>(dims(x), elt(x), y, shapeOf(x), true);
  out(0, y);
  return success();
}

/// NegativeLogLikelihoodLoss on `x` [N, C, d...] (log-probabilities) with
/// `target` [N, d...]: the picked entry is selected with a one-hot mask
/// (target == iota over C), so an ignored target outside [0, C) is harmless.
FailureOr<Value> Importer::nllLoss(Value x, Value target, Value weight) {
  int64_t r = rank(x);
  if (r < 2) {
    err() << "input must have rank >= 2";
    return failure();
  }
  if (rank(target) != r - 1) {
    err() << "target must have rank " << r - 1;
    return failure();
  }
  if (!isa<IntegerType>(elt(target)) || elt(target).isInteger(1)) {
    err() << "target must be an integer tensor";
    return failure();
  }
  std::string red = aStr("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean") {
    err() << "unsupported reduction '" << red << "'";
    return failure();
  }
  FailureOr<Value> tw = widen(target);
  if (::mlir::failed(tw))
    return failure();
  Value ti = toI64(*tw);
  Value t = unsqueezeAt(ti, 1); // [N, 1, d...]
  Value onehot = compare(CompareDirection::EQ, t, iotaAlong(x, 1, r, 1));
  Value zero = scalarLike(x, 0);
  Value picked = reduce(ReduceKind::Sum, select(onehot, x, zero), {1}, false);
  Value w;
  if (weight) {
    if (rank(weight) != 1 || elt(weight) != elt(x))
      return err() << "weight must be a 1-D tensor of the input type",
             failure();
    SmallVector<TDim> ws(r, tdimConst(1));
    ws[1] = tdimOf(weight, 0);
    w = reduce(ReduceKind::Sum, select(onehot, reshapeT(weight, ws), zero), {1},
               false);
  } else {
    w = reduce(ReduceKind::Sum, select(onehot, scalarLike(x, 1), zero), {1},
               false);
  }
  if (attr("ignore_index")) {
    Value keep = compare(CompareDirection::NE, ti,
                         constI64Scalar(aInt("ignore_index", 0)));
    w = select(keep, w, zero);
  }
  if (!picked || !w)
    return failure();
  Value loss = unary<NegOp>(binary<MulOp>(picked, w));
  if (!loss)
    return failure();
  if (red == "none")
    return loss;
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, r - 1));
  Value s = reduce(ReduceKind::Sum, loss, all, false);
  if (red == "sum")
    return s;
  return binary<DivOp>(s, reduce(ReduceKind::Sum, w, all, false));
}

LogicalResult Importer::importNllLoss(StringRef) {
  Value x = in(0), target = in(1);
  FailureOr<Value> l = nllLoss(x, target, in(2));
  if (::mlir::failed(l) || !*l)
    return failure();
  out(0, *l);
  return success();
}

LogicalResult Importer::importSoftmaxCrossEntropy(StringRef) {
  Value x = in(0), target = in(1);
  Value m = reduce(ReduceKind::Max, x, {1}, true);
  Value shifted = binary<SubOp>(x, m);
  Value logp = binary<SubOp>(
      shifted,
      unary<LogOp>(reduce(ReduceKind::Sum, unary<ExpOp>(shifted), {1}, true)));
  if (!logp)
    return failure();
  FailureOr<Value> l = nllLoss(logp, target, in(2));
  if (::mlir::failed(l) || !*l)
    return failure();
  out(0, *l);
  out(1, logp);
  return success();
}

/// LRN: the channel-window sum of squares is an average pool (padding
/// counted) over [N, 1, C, prod(spatial)] times the window size.
LogicalResult Importer::importLrn(StringRef) {
  Value x = in(0);
  int64_t r = rank(x);
  int64_t size = aInt("size", 0);
  if (size <= 0)
    return err() << "attribute 'size' must be positive";
  double alpha = aFloat("alpha", 1e-4f), beta = aFloat("beta", 0.75f),
         bias = aFloat("bias", 1.0f);
  TDim spatial = tdimConst(1);
  for (int64_t i = 2; i < r; ++i)
    spatial = tdimMul(spatial, tdimOf(x, i));
  Value sq = binary<MulOp>(x, x);
  Value v = reshapeT(sq, {tdimOf(x, 0), tdimConst(1), tdimOf(x, 1), spatial});
  Dims vd = dims(v);
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  Value avg =
      mk<PoolOp>(vd, elt(x), PoolKind::Avg, v, ArrayRef<int64_t>{size, 1},
                 ArrayRef<int64_t>{1, 1}, ArrayRef<int64_t>{1, 1},
                 ArrayRef<int64_t>{lo, 0, hi, 0}, false, true);
  SmallVector<TDim> back;
  for (int64_t i = 0; i < r; ++i)
    back.push_back(tdimOf(x, i));
  avg = reshapeT(avg, back);
  // alpha / size * sum == alpha * average.
  Value den =
      binary<PowOp>(binary<AddOp>(binary<MulOp>(avg, scalarLike(x, alpha)),
                                  scalarLike(x, bias)),
                    scalarLike(x, beta));
  Value y = binary<DivOp>(x, den);
  return finish(y);
}

/// As the ONNX function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
LogicalResult Importer::importMvn(StringRef) {
  Value x = in(0);
  SmallVector<int64_t> axes =
      aInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  FailureOr<SmallVector<int64_t>> n = normAxes(axes, rank(x), true);
  if (::mlir::failed(n))
    return failure();
  Value mean = reduce(ReduceKind::Mean, x, *n, true);
  Value sqMean = reduce(ReduceKind::Mean, binary<MulOp>(x, x), *n, true);
  Value var = binary<SubOp>(sqMean, binary<MulOp>(mean, mean));
  Value y =
      binary<DivOp>(binary<SubOp>(x, mean),
                    binary<AddOp>(unary<SqrtOp>(var), scalarLike(x, 1e-9)));
  return finish(y);
}

} // namespace mlir::disc::onnx_import

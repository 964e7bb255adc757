//===- Recurrent.cpp - ONNX recurrent layers (RNN, GRU, LSTM)
//---------------===//
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

FailureOr<Importer::Activation>
Importer::parseActivation(StringRef name, ArrayRef<float> alphas,
                          ArrayRef<float> betas, size_t &ai, size_t &bi) {
  // Default alpha/beta per ONNX operator; -1 marks "takes none".
  static const struct {
    const char *name;
    float alpha, beta;
    bool hasAlpha, hasBeta;
  } table[] = {{"Tanh", 0, 0, false, false},
               {"Sigmoid", 0, 0, false, false},
               {"Relu", 0, 0, false, false},
               {"Softsign", 0, 0, false, false},
               {"Softplus", 0, 0, false, false},
               {"Affine", 1.0f, 0.0f, true, true},
               {"LeakyRelu", 0.01f, 0, true, false},
               {"ThresholdedRelu", 1.0f, 0, true, false},
               {"ScaledTanh", 1.0f, 1.0f, true, true},
               {"HardSigmoid", 0.2f, 0.5f, true, true},
               {"Elu", 1.0f, 0, true, false}};
  for (const auto &e : table) {
    if (!name.equals_insensitive(e.name))
      continue;
    Activation a{e.name, e.alpha, e.beta};
    if (e.hasAlpha && ai < alphas.size())
      a.alpha = alphas[ai++];
    if (e.hasBeta && bi < betas.size())
      a.beta = betas[bi++];
    return a;
  }
  err() << "opset " << opset << ": attribute 'activations': unsupported "
        << "activation '" << name << "'";
  return failure();
}

Value Importer::applyActivation(const Activation &a, Value v) {
  auto mul = [&](Value x, float c) {
    return c == 1.0f ? x : binary<MulOp>(x, scalarLike(x, c));
  };
  auto add = [&](Value x, float c) {
    return c == 0.0f ? x : binary<AddOp>(x, scalarLike(x, c));
  };
  Value zero = scalarLike(v, 0);
  StringRef n = a.name;
  if (n == "Tanh")
    return unary<TanhOp>(v);
  if (n == "Sigmoid")
    return unary<LogisticOp>(v);
  if (n == "Relu")
    return binary<MaxOp>(v, zero);
  if (n == "Softsign")
    return binary<DivOp>(v, add(unary<AbsOp>(v), 1.0f));
  if (n == "Softplus") // max(x, 0) + log(1 + exp(-|x|))
    return binary<AddOp>(
        binary<MaxOp>(v, zero),
        unary<LogOp>(add(unary<ExpOp>(unary<NegOp>(unary<AbsOp>(v))), 1.0f)));
  if (n == "Affine")
    return add(mul(v, a.alpha), a.beta);
  if (n == "LeakyRelu")
    return select(compare(CompareDirection::LT, v, zero), mul(v, a.alpha), v);
  if (n == "ThresholdedRelu")
    return select(compare(CompareDirection::GT, v, scalarLike(v, a.alpha)), v,
                  zero);
  if (n == "ScaledTanh")
    return mul(unary<TanhOp>(mul(v, a.beta)), a.alpha);
  if (n == "HardSigmoid")
    return binary<MinOp>(binary<MaxOp>(add(mul(v, a.alpha), a.beta), zero),
                         scalarLike(v, 1));
  assert(n == "Elu");
  return select(compare(CompareDirection::LT, v, zero),
                mul(add(unary<ExpOp>(v), -1.0f), a.alpha), v);
}

Value Importer::sliceStatic(Value x, ArrayRef<int64_t> axes,
                            ArrayRef<int64_t> starts, ArrayRef<int64_t> ends) {
  Dims o = dims(x);
  for (auto [i, a] : llvm::enumerate(axes))
    o[a] = Dim(ends[i] - starts[i]);
  return mk<SliceOp>(o, elt(x), x, constI64(starts), constI64(ends),
                     constI64(SmallVector<int64_t>(axes.size(), 1)), axes);
}

LogicalResult Importer::importRnn(StringRef op) {
  enum Kind {
    Rnn,
    Gru,
    Lstm
  } kind = op == "RNN"   ? Rnn
           : op == "GRU" ? Gru
                         : Lstm;
  int64_t numGates = kind == Rnn ? 1 : kind == Gru ? 3 : 4;
  Value x = in(0), w = in(1), r = in(2);
  if (::mlir::failed(requireFloat(x)) || ::mlir::failed(sameElt(x, w)) ||
      ::mlir::failed(sameElt(x, r)))
    return failure();
  if (rank(x) != 3 || rank(w) != 3 || rank(r) != 3)
    return err() << "X, W and R must be 3-D";
  Type e = elt(x);

  std::string direction = aStr("direction", "forward");
  int64_t numDir;
  if (direction == "forward" || direction == "reverse")
    numDir = 1;
  else if (direction == "bidirectional")
    numDir = 2;
  else
    return err() << "opset " << opset << ": attribute 'direction': unknown "
                 << "value '" << direction << "'";
  int64_t layout = aInt("layout", 0);
  if (layout != 0 && layout != 1)
    return err() << "opset " << opset << ": attribute 'layout' must be 0 or 1";
  int64_t hidden = aInt("hidden_size", kDyn);
  if (hidden == kDyn)
    hidden = tt(r).getDimSize(2);
  if (hidden == kDyn || hidden <= 0)
    return err() << "opset " << opset
                 << ": attribute 'hidden_size' is required when R's last dim "
                    "is dynamic";
  std::optional<float> clip;
  if (attr("clip"))
    clip = aFloat("clip", 0.0f);
  bool linearBeforeReset = kind == Gru && aInt("linear_before_reset", 0) != 0;
  bool inputForget = kind == Lstm && aInt("input_forget", 0) != 0;

  // Activations: f (RNN); f, g (GRU); f, g, h (LSTM), per direction.
  SmallVector<StringRef> defaults =
      kind == Rnn   ? SmallVector<StringRef>{"Tanh"}
      : kind == Gru ? SmallVector<StringRef>{"Sigmoid", "Tanh"}
                    : SmallVector<StringRef>{"Sigmoid", "Tanh", "Tanh"};
  SmallVector<std::string> actNames;
  if (const onnx::AttributeProto *a = attr("activations"))
    for (const std::string &s : a->strings())
      actNames.push_back(s);
  if (actNames.empty())
    for (int64_t d = 0; d < numDir; ++d)
      for (StringRef s : defaults)
        actNames.push_back(s.str());
  if ((int64_t)actNames.size() != (int64_t)defaults.size() * numDir)
    return err() << "opset " << opset << ": attribute 'activations' needs "
                 << defaults.size() * numDir << " entries, got "
                 << actNames.size();
  SmallVector<float>
      alphas = aFloats("activation_alpha").value_or(SmallVector<float>{}),
      betas = aFloats("activation_beta").value_or(SmallVector<float>{});
  SmallVector<Activation> acts;
  size_t ai = 0, bi = 0;
  for (const std::string &n : actNames) {
    FailureOr<Activation> a = parseActivation(n, alphas, betas, ai, bi);
    if (::mlir::failed(a))
      return failure();
    acts.push_back(*a);
  }

  Value bias = in(3), seqLens = in(4), h0 = in(5);
  Value c0 = kind == Lstm ? in(6) : Value(),
        peep = kind == Lstm ? in(7) : Value();
  for (Value v : {bias, h0, c0, peep})
    if (v && ::mlir::failed(sameElt(x, v)))
      return failure();
  if (seqLens && direction != "forward")
    return err() << "opset " << opset
                 << ": input 'sequence_lens' is only supported with direction "
                    "'forward'";
  if (seqLens && (rank(seqLens) != 1 || !isa<IntegerType>(elt(seqLens))))
    return err() << "sequence_lens must be a 1-D integer tensor";
  for (Value v : {h0, c0})
    if (v && rank(v) != 3)
      return err() << "initial_h/initial_c must be 3-D";
  if (bias && rank(bias) != 2)
    return err() << "B must be 2-D";
  if (peep && rank(peep) != 2)
    return err() << "P must be 2-D";

  if (layout == 1) {
    x = transpose(x, {1, 0, 2});
    if (h0)
      h0 = transpose(h0, {1, 0, 2});
    if (c0)
      c0 = transpose(c0, {1, 0, 2});
  }
  // Everything the loop body needs from outside is built here, so that no
  // cached shape computation ends up inside a loop.
  TDim batch = tdimOf(x, 1), inSize = tdimOf(x, 2), hid = tdimConst(hidden);
  Dims dx = dims(x);
  Dims stateDims = {dx[1], Dim(hidden)};
  Dims yDims = {dx[0], dx[1], Dim(hidden)};
  Value stateShape = shapeFrom({batch, hid});
  Value yShape = shapeFrom({tdimOf(x, 0), batch, hid});
  Value lens;
  if (seqLens)
    lens = reshapeT(toI64(seqLens), {batch, tdimConst(1)});
  bool wantY = wantOut(0);

  Value seqLen = tensor::DimOp::create(b, loc, x, 0).getResult();
  Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0).getResult();
  Value oneIdx = arith::ConstantIndexOp::create(b, loc, 1).getResult();

  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < numDir; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    ArrayRef<Activation> act =
        ArrayRef<Activation>(acts).slice(d * defaults.size(), defaults.size());
    // Per-gate weights [H, I] / [H, H] and biases [H].
    SmallVector<Value> wg, rg, wb, rb, pg;
    for (int64_t g = 0; g < numGates; ++g) {
      wg.push_back(reshapeT(
          sliceStatic(w, {0, 1}, {d, g * hidden}, {d + 1, (g + 1) * hidden}),
          {hid, tdimOf(w, 2)}));
      rg.push_back(reshapeT(
          sliceStatic(r, {0, 1}, {d, g * hidden}, {d + 1, (g + 1) * hidden}),
          {hid, hid}));
      if (bias) {
        int64_t wo = g * hidden, ro = (numGates + g) * hidden;
        wb.push_back(reshapeT(
            sliceStatic(bias, {0, 1}, {d, wo}, {d + 1, wo + hidden}), {hid}));
        rb.push_back(reshapeT(
            sliceStatic(bias, {0, 1}, {d, ro}, {d + 1, ro + hidden}), {hid}));
      }
    }
    if (peep)
      for (int64_t g = 0; g < 3; ++g)
        pg.push_back(reshapeT(sliceStatic(peep, {0, 1}, {d, g * hidden},
                                          {d + 1, (g + 1) * hidden}),
                              {hid}));
    auto initState = [&](Value v) -> Value {
      if (!v)
        return expandTo(scalarLike(x, 0), stateShape, stateDims);
      return reshapeT(sliceStatic(v, {0}, {d}, {d + 1}), {batch, hid});
    };
    SmallVector<Value> inits = {initState(h0)};
    if (kind == Lstm)
      inits.push_back(initState(c0));
    if (wantY)
      inits.push_back(expandTo(scalarLike(x, 0), yShape, yDims));
    for (Value v : inits)
      if (!v)
        return failure();

    auto loop = scf::ForOp::create(b, loc, zeroIdx, seqLen, oneIdx, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      ValueRange args = loop.getRegionIterArgs();
      for (auto [arg, init] : llvm::zip(args, inits))
        record(arg, dims(init));
      Value h = args[0], c = kind == Lstm ? args[1] : Value();
      Value y = wantY ? args.back() : Value();

      Value t = loop.getInductionVar();
      if (reverse)
        t = arith::SubIOp::create(
                b, loc,
                arith::SubIOp::create(b, loc, seqLen, oneIdx).getResult(), t)
                .getResult();
      auto vec = [&](Value idx) {
        Value i =
            arith::IndexCastOp::create(b, loc, b.getI64Type(), idx).getResult();
        return tensor::FromElementsOp::create(
                   b, loc, RankedTensorType::get({1}, b.getI64Type()), i)
            .getResult();
      };
      Value tv = vec(t);
      Value tEnd = vec(arith::AddIOp::create(b, loc, t, oneIdx).getResult());
      Value xt = mk<SliceOp>(Dims{Dim(1), dx[1], dx[2]}, e, x, tv, tEnd,
                             constI64({1}), ArrayRef<int64_t>{0});
      xt = reshapeT(xt, {batch, inSize});

      auto dot = [&](Value a, Value wt) {
        return mk<DotGeneralOp>(stateDims, e, a, wt, ArrayRef<int64_t>{},
                                ArrayRef<int64_t>{}, ArrayRef<int64_t>{1},
                                ArrayRef<int64_t>{1});
      };
      auto clipped = [&](Value v) {
        if (!clip)
          return v;
        return binary<MinOp>(binary<MaxOp>(v, scalarLike(v, -*clip)),
                             scalarLike(v, *clip));
      };
      auto addBias = [&](Value v, int64_t g, bool wBias, bool rBias) {
        if (bias && wBias)
          v = binary<AddOp>(v, wb[g]);
        if (bias && rBias)
          v = binary<AddOp>(v, rb[g]);
        return v;
      };
      // Gate pre-activation X_t W_g^T + H R_g^T + Wb_g + Rb_g.
      auto gate = [&](int64_t g) {
        return addBias(binary<AddOp>(dot(xt, wg[g]), dot(h, rg[g])), g, true,
                       true);
      };
      Value one = scalarLike(x, 1);
      Value hNew, cNew;
      if (kind == Rnn) {
        hNew = applyActivation(act[0], clipped(gate(0)));
      } else if (kind == Gru) {
        // Gates z, r, h.
        Value z = applyActivation(act[0], clipped(gate(0)));
        Value rt = applyActivation(act[0], clipped(gate(1)));
        Value pre;
        if (linearBeforeReset)
          pre = binary<AddOp>(
              addBias(dot(xt, wg[2]), 2, true, false),
              binary<MulOp>(rt, addBias(dot(h, rg[2]), 2, false, true)));
        else
          pre = addBias(
              binary<AddOp>(dot(xt, wg[2]), dot(binary<MulOp>(rt, h), rg[2])),
              2, true, true);
        Value hh = applyActivation(act[1], clipped(pre));
        hNew = binary<AddOp>(binary<MulOp>(binary<SubOp>(one, z), hh),
                             binary<MulOp>(z, h));
      } else {
        // Gates i, o, f, c; peepholes i, o, f.
        auto peephole = [&](Value v, int64_t p, Value state) {
          return peep ? binary<AddOp>(v, binary<MulOp>(pg[p], state)) : v;
        };
        Value it = applyActivation(act[0], clipped(peephole(gate(0), 0, c)));
        Value ft =
            inputForget
                ? binary<SubOp>(one, it)
                : applyActivation(act[0], clipped(peephole(gate(2), 2, c)));
        Value ct = applyActivation(act[1], clipped(gate(3)));
        cNew = binary<AddOp>(binary<MulOp>(ft, c), binary<MulOp>(it, ct));
        Value ot = applyActivation(act[0], clipped(peephole(gate(1), 1, cNew)));
        hNew = binary<MulOp>(ot, applyActivation(act[2], cNew));
      }
      Value yt = hNew;
      if (lens) {
        // Steps past a sequence's length keep the state and output zeros.
        Value valid = compare(CompareDirection::LT, tv, lens);
        yt = select(valid, hNew, scalarLike(x, 0));
        hNew = select(valid, hNew, h);
        if (cNew)
          cNew = select(valid, cNew, c);
      }
      SmallVector<Value> next = {hNew};
      if (kind == Lstm)
        next.push_back(cNew);
      if (wantY) {
        auto yType = tt(y);
        SmallVector<OpFoldResult> offsets = {t, b.getIndexAttr(0),
                                             b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
        for (int64_t i = 1; i < 3; ++i)
          sizes.push_back(
              yType.isDynamicDim(i)
                  ? OpFoldResult(
                        tensor::DimOp::create(b, loc, y, i).getResult())
                  : OpFoldResult(b.getIndexAttr(yType.getDimSize(i))));
        SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
        auto srcType = RankedTensorType::get(
            {yType.getDimSize(1), yType.getDimSize(2)}, e);
        Value src = yt;
        if (yt.getType() != srcType)
          src = tensor::CastOp::create(b, loc, srcType, yt).getResult();
        next.push_back(record(tensor::InsertSliceOp::create(
                                  b, loc, src, y, offsets, sizes, strides)
                                  .getResult(),
                              dims(y)));
      }
      for (Value v : next)
        if (!v)
          return failure();
      scf::YieldOp::create(b, loc, next);
    }
    // Shapes computed inside the loop must not be reused outside it.
    for (auto it = shapeCache.begin(); it != shapeCache.end();) {
      auto cur = it++;
      Operation *def = cur->second.getDefiningOp();
      if (def && loop->isProperAncestor(def))
        shapeCache.erase(cur);
    }
    ValueRange res = loop.getResults();
    for (auto [v, init] : llvm::zip(res, inits))
      record(v, dims(init));
    if (wantOut(1))
      hs.push_back(unsqueezeAt(res[0], 0));
    if (wantOut(2))
      cs.push_back(unsqueezeAt(res[1], 0));
    if (wantY)
      ys.push_back(unsqueezeAt(res.back(), 1));
  }
  auto join = [&](ArrayRef<Value> parts, int64_t axis) {
    if (parts.size() == 1)
      return parts[0];
    Dims o = dims(parts[0]);
    o[axis] = Dim(2);
    return mk<ConcatenateOp>(o, e, parts, (uint64_t)axis);
  };
  if (wantY) {
    Value y = join(ys, 1);
    out(0, layout == 1 ? transpose(y, {2, 0, 1, 3}) : y);
  }
  if (wantOut(1)) {
    Value yh = join(hs, 0);
    out(1, layout == 1 ? transpose(yh, {1, 0, 2}) : yh);
  }
  if (wantOut(2)) {
    Value yc = join(cs, 0);
    out(2, layout == 1 ? transpose(yc, {1, 0, 2}) : yc);
  }
  return success();
}

} // namespace mlir::disc::onnx_import

//===- Optimizers.cpp - ONNX training-domain optimizer steps --------------===//
//
// Adagrad, Adam and Momentum of the `ai.onnx.preview.training` domain
// (opset 1): one optimizer step on n tensors as elementwise `disc` ops. A
// compiled step is a function of its inputs like any other graph (the
// caller feeds the new state back); nothing here trains.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

namespace mlir::disc::onnx_import {

/// One optimizer step (ONNX ai.onnx.preview.training Adagrad-1, Adam-1,
/// Momentum-1). Inputs: R (learning rate, float scalar), T (update count,
/// int64 scalar), then the n tensors X_1..X_n, their gradients G_1..G_n and
/// the optimizer state (Adagrad: H_1..H_n; Momentum: V_1..V_n; Adam:
/// V_1..V_n, H_1..H_n), every G/state tensor of its X's shape. Outputs: the
/// new X_1..X_n, then the new state in input order. Per tensor, with
/// g = norm_coefficient * X + G (computed in X's element type; R and T are
/// converted to it):
///   Adagrad:  r = R / (1 + T * decay_factor); H' = H + g * g;
///             X' = X - r * g / (sqrt(H') + epsilon)
///   Momentum: b = T > 0 ? beta : 1; V' = alpha * V + b * g;
///             X' = X - R * V'                      (mode "standard")
///             X' = X - R * (g + alpha * V')        (mode "nesterov")
///   Adam:     V' = alpha * V + (1 - alpha) * g;
///             H' = beta * H + (1 - beta) * g * g;
///             r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
///             X' = (1 - norm_coefficient_post) * (X - r * V' /
///                  (sqrt(H') + epsilon))
/// Cost: a few elementwise ops per element.
LogicalResult Importer::importOptimizer(StringRef op) {
  int64_t states = op == "Adam" ? 2 : 1;
  int64_t perTensor = 2 + states;
  int64_t nIn = numIn();
  if (nIn < 2 + perTensor || (nIn - 2) % perTensor != 0)
    return err() << "expects R, T and " << perTensor
                 << " inputs per optimized tensor, got " << nIn << " inputs";
  int64_t n = (nIn - 2) / perTensor;
  for (int64_t i = 0; i < nIn; ++i)
    if (!has(i))
      return err() << "input #" << i << " is missing";
  if (node->output_size() > (1 + states) * n)
    return err() << "has at most " << (1 + states) * n << " outputs";

  Value r = in(0), t = in(1);
  if (!isFloat(r) || !maybeScalar(r))
    return err() << "R must be a floating-point scalar";
  if (!elt(t).isInteger(64) || !maybeScalar(t))
    return err() << "T must be an int64 scalar";
  if (rank(r) != 0)
    r = reshapeToScalar(r);
  if (rank(t) != 0)
    t = reshapeToScalar(t);

  // Attributes (the spec's defaults; Momentum's are required).
  float norm = 0, eps = 1e-6f, decay = 0, alpha = 0.9f, beta = 0.999f;
  float normPost = 0;
  bool nesterov = false;
  if (op == "Momentum") {
    for (StringRef a : {"alpha", "beta", "mode", "norm_coefficient"})
      if (!attr(a))
        return err() << "missing attribute '" << a << "'";
    std::string mode = aStr("mode", "standard");
    if (mode != "standard" && mode != "nesterov")
      return err() << "attribute 'mode' must be \"standard\" or \"nesterov\", "
                      "got \""
                   << mode << "\"";
    nesterov = mode == "nesterov";
  }
  norm = aFloat("norm_coefficient", norm);
  eps = aFloat("epsilon", eps);
  decay = aFloat("decay_factor", decay);
  alpha = aFloat("alpha", alpha);
  beta = aFloat("beta", beta);
  normPost = aFloat("norm_coefficient_post", normPost);
  if (failed)
    return failure();

  SmallVector<Value> outs((1 + states) * n);
  for (int64_t i = 0; i < n; ++i) {
    Value x = in(2 + i), g = in(2 + n + i);
    Value s0 = in(2 + 2 * n + i);
    Value s1 = states == 2 ? in(2 + 3 * n + i) : Value();
    if (!isFloat(x))
      return err() << "X_" << i + 1 << " must be a floating-point tensor";
    for (Value v : {g, s0, s1})
      if (v && ::mlir::failed(sameElt(x, v)))
        return failure();
    Type e = elt(x);
    auto c = [&](double v) { return constScalar(e, v); };
    Value rx = convert(r, e, false, false);
    Value tx = convert(t, e, false, false);
    Value tPos = compare(CompareDirection::GT, t, constI64Scalar(0));
    Value gr = g;
    if (norm != 0)
      gr = binary<AddOp>(binary<MulOp>(c(norm), x), g);
    Value xNew, st0, st1;
    if (op == "Adagrad") {
      Value rAdj =
          binary<DivOp>(rx, binary<AddOp>(c(1), binary<MulOp>(tx, c(decay))));
      st0 = binary<AddOp>(s0, binary<MulOp>(gr, gr));
      Value denom = binary<AddOp>(unary<SqrtOp>(st0), c(eps));
      xNew = binary<SubOp>(x, binary<DivOp>(binary<MulOp>(rAdj, gr), denom));
    } else if (op == "Momentum") {
      Value bAdj = select(tPos, c(beta), c(1));
      st0 = binary<AddOp>(binary<MulOp>(c(alpha), s0), binary<MulOp>(bAdj, gr));
      Value step =
          nesterov ? binary<AddOp>(gr, binary<MulOp>(c(alpha), st0)) : st0;
      xNew = binary<SubOp>(x, binary<MulOp>(rx, step));
    } else {
      st0 = binary<AddOp>(binary<MulOp>(c(alpha), s0),
                          binary<MulOp>(c(1.0 - (double)alpha), gr));
      st1 = binary<AddOp>(
          binary<MulOp>(c(beta), s1),
          binary<MulOp>(c(1.0 - (double)beta), binary<MulOp>(gr, gr)));
      Value corr = binary<DivOp>(
          unary<SqrtOp>(binary<SubOp>(c(1), binary<PowOp>(c(beta), tx))),
          binary<SubOp>(c(1), binary<PowOp>(c(alpha), tx)));
      Value rAdj = select(tPos, binary<MulOp>(rx, corr), rx);
      Value denom = binary<AddOp>(unary<SqrtOp>(st1), c(eps));
      xNew = binary<SubOp>(x, binary<MulOp>(rAdj, binary<DivOp>(st0, denom)));
      if (normPost != 0)
        xNew = binary<MulOp>(c(1.0 - (double)normPost), xNew);
    }
    outs[i] = xNew;
    outs[n + i] = st0;
    if (states == 2)
      outs[2 * n + i] = st1;
  }
  return finishAll(outs);
}

} // namespace mlir::disc::onnx_import

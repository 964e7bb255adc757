"""One SGD training step of a residual MLP, backward written out.

`TrainStep` is a torch.nn.Module whose forward computes, with plain tensor
ops only (so that torch 1.13 exports it to standard ONNX with dynamic batch
and seq), the forward pass of the network, the squared-error loss against
`y` (summed over the D_OUT features, averaged over the batch * seq
positions), every parameter's gradient by hand, and the SGD update:

    (x, y, *params) -> (loss, *new_params)
    new_p = p - LR * dloss/dp

`autograd_step` computes the same step from standard PyTorch layers
(F.linear, torch.tanh, F.mse_loss) and torch.autograd; it is the reference,
independent of the hand-written gradients, and `check_against_autograd`
asserts that both agree (rtol 1e-4).

Model: the feed-forward half of a transformer, without attention or
normalization. x [batch, seq, D_IN] -> `h_0 = x @ w_in` of width WIDTH,
then BLOCKS residual blocks

    u_l = h_l @ w1_l + b1_l          [batch, seq, HIDDEN]   (HIDDEN = 4 WIDTH)
    a_l = tanh(u_l)
    h_{l+1} = h_l + a_l @ w2_l + b2_l  [batch, seq, WIDTH]

and a linear head `out = h_L @ w_out` of width D_OUT. The backward pass
reads every block's a_l (for tanh' = 1 - a^2 and for the gradient of w2_l)
and h_l (for the gradient of w1_l): the wide a_l (batch * seq * HIDDEN
floats each) dominate the peak, while each can be recomputed from the
four times narrower h_l, which the backward pass keeps anyway, by one
MatMul, one Add and one Tanh: the pattern rematerialization targets.

The step is large (LR 0.5) so that in the compared outputs the update is
not lost in the old parameter value.
"""

import math

import numpy as np

D_IN = 32
WIDTH = 64
HIDDEN = 4 * WIDTH
D_OUT = 16
BLOCKS = 8
LR = 0.5
PARAM_SEED = 8765


def param_specs():
    """[(name, shape)] in graph-input order. Matrices are [in, out]."""
    specs = [("w_in", (D_IN, WIDTH))]
    for block in range(BLOCKS):
        specs += [(f"w1_{block}", (WIDTH, HIDDEN)), (f"b1_{block}", (HIDDEN,)),
                  (f"w2_{block}", (HIDDEN, WIDTH)), (f"b2_{block}", (WIDTH,))]
    specs += [("w_out", (WIDTH, D_OUT))]
    return specs


PARAM_NAMES = [n for n, _ in param_specs()]


def init_params():
    """Deterministic float32 parameters {name: ndarray}, the same for every
    case (seed PARAM_SEED): matrices normal with variance 1 / fan-in (so
    tanh stays out of saturation), the blocks' output matrices w2 further
    scaled by 1 / sqrt(BLOCKS) (so the residual stream keeps its scale over
    the blocks), biases small normal values."""
    rng = np.random.default_rng(PARAM_SEED)
    out = {}
    for name, shape in param_specs():
        if len(shape) == 1:
            v = 0.05 * rng.standard_normal(shape)
        else:
            v = rng.standard_normal(shape) / math.sqrt(shape[0])
            if name.startswith("w2_"):
                v /= math.sqrt(BLOCKS)
        out[name] = v.astype(np.float32)
    return out


def make_inputs(shape, rng):
    """Inputs for one case: x float32 [batch, seq, D_IN] and y float32
    [batch, seq, D_OUT], standard normal, then the parameters."""
    if len(shape) != 2:
        raise ValueError(f"resmlp_train_step wants batch x seq, got {shape}")
    inputs = {"x": rng.standard_normal(shape + (D_IN,)).astype(np.float32),
              "y": rng.standard_normal(shape + (D_OUT,)).astype(np.float32)}
    inputs.update(init_params())
    return inputs


def build():
    import torch

    def linear_grad(x, dy, w):
        # x [B, T, I], dy [B, T, O], w [I, O] -> dx, dw [I, O]. The widths
        # are Python constants so that dw has a static shape in the graph.
        i, o = (int(n) for n in w.shape)
        dw = x.reshape(-1, i).t() @ dy.reshape(-1, o)
        return dy @ w.t(), dw

    class TrainStep(torch.nn.Module):
        def forward(self, x, y, *params):
            p = dict(zip(PARAM_NAMES, params))

            # ---- forward, keeping every block's input and activation ----
            hs = [x @ p["w_in"]]
            acts = []
            for block in range(BLOCKS):
                h = hs[-1]
                acts.append(torch.tanh(h @ p[f"w1_{block}"] + p[f"b1_{block}"]))
                hs.append(h + acts[-1] @ p[f"w2_{block}"] + p[f"b2_{block}"])
            out = hs[-1] @ p["w_out"]  # [B, T, D_OUT]
            diff = out - y
            count = torch.ones_like(diff[..., 0]).sum()  # batch * seq
            loss = (diff * diff).sum() / count

            # ---- backward ----
            grads = {}
            dout = diff * (2.0 / count)
            dh, grads["w_out"] = linear_grad(hs[-1], dout, p["w_out"])
            for block in reversed(range(BLOCKS)):
                a = acts[block]
                # h_{l+1} = h_l + a_l @ w2_l + b2_l: dh flows on unchanged
                # along the residual path and into the branch.
                da, grads[f"w2_{block}"] = linear_grad(a, dh, p[f"w2_{block}"])
                grads[f"b2_{block}"] = dh.sum((0, 1))
                du = da * (1.0 - a * a)  # tanh'(u) = 1 - tanh(u)^2
                dh_branch, grads[f"w1_{block}"] = linear_grad(
                    hs[block], du, p[f"w1_{block}"])
                grads[f"b1_{block}"] = du.sum((0, 1))
                dh = dh + dh_branch
            grads["w_in"] = x.reshape(-1, D_IN).t() @ dh.reshape(-1, WIDTH)

            # ---- SGD ----
            return (loss,) + tuple(p[n] - LR * grads[n] for n in PARAM_NAMES)

    return TrainStep()


def autograd_step(x, y, params):
    """The same step from standard PyTorch layers and torch.autograd:
    returns (loss, *new_params) as tensors."""
    import torch
    import torch.nn.functional as F

    ps = [p.detach().clone().requires_grad_(True) for p in params]
    p = dict(zip(PARAM_NAMES, ps))
    h = F.linear(x, p["w_in"].t())
    for block in range(BLOCKS):
        a = torch.tanh(F.linear(h, p[f"w1_{block}"].t(), p[f"b1_{block}"]))
        h = h + F.linear(a, p[f"w2_{block}"].t(), p[f"b2_{block}"])
    out = F.linear(h, p["w_out"].t())
    loss = F.mse_loss(out, y, reduction="sum") / (out.numel() // D_OUT)
    grads = torch.autograd.grad(loss, ps)
    with torch.no_grad():
        return (loss.detach(),) + tuple(q - LR * g for q, g in zip(ps, grads))


def check_against_autograd(model, x, y, params, rtol=1e-4, atol=1e-6):
    """Asserts that the hand-written step matches autograd_step: loss and
    every parameter's update (new - old, i.e. -LR * gradient), within rtol
    (atol for entries near zero). Returns autograd_step's outputs."""
    import torch

    with torch.no_grad():
        mine = model(x, y, *params)
    ref = autograd_step(x, y, params)
    torch.testing.assert_close(mine[0], ref[0], rtol=rtol, atol=atol,
                               msg=lambda m: f"loss: {m}")
    for name, old, a, r in zip(PARAM_NAMES, params, mine[1:], ref[1:]):
        torch.testing.assert_close(a - old, r - old, rtol=rtol, atol=atol,
                                   msg=lambda m, name=name: f"gradient of {name}: {m}")
    return ref

"""One SGD training step of a deep tanh MLP, backward written out.

`TrainStep` is a torch.nn.Module whose forward computes, with plain tensor
ops only (so that torch 1.13 exports it to standard ONNX with dynamic batch
and seq), the forward pass of the MLP, the squared-error loss against `y`
(summed over the D_OUT features, averaged over the batch * seq positions),
every parameter's gradient by hand, and the SGD update:

    (x, y, *params) -> (loss, *new_params)
    new_p = p - LR * dloss/dp

`autograd_step` computes the same step from standard PyTorch layers
(F.linear, torch.tanh, F.mse_loss) and torch.autograd; it is the reference,
independent of the hand-written gradients, and `check_against_autograd`
asserts that both agree (rtol 1e-4).

Model: x [batch, seq, D_IN] -> LAYERS hidden layers `h = tanh(h @ w + b)`
of width WIDTH -> a linear head of width D_OUT. Every hidden activation
(batch * seq * WIDTH floats) is kept from the forward pass until the
backward pass reads it (for tanh' = 1 - h^2 and for the weight gradient of
the next layer), so at large batch * seq these dominate the peak: the
pattern rematerialization targets. The step is large (LR 1) so that in the
compared outputs the update is not lost in the old parameter value.
"""

import math

import numpy as np

D_IN = 32
WIDTH = 256
D_OUT = 16
LAYERS = 6
LR = 1.0
PARAM_SEED = 4321


def param_specs():
    """[(name, shape)] in graph-input order. Matrices are [in, out]."""
    specs = []
    width_in = D_IN
    for layer in range(LAYERS):
        specs += [(f"w{layer}", (width_in, WIDTH)), (f"b{layer}", (WIDTH,))]
        width_in = WIDTH
    specs += [("head_w", (WIDTH, D_OUT)), ("head_b", (D_OUT,))]
    return specs


PARAM_NAMES = [n for n, _ in param_specs()]


def init_params():
    """Deterministic float32 parameters {name: ndarray}, the same for every
    case (seed PARAM_SEED): matrices normal with variance 1 / fan-in (so
    tanh stays out of saturation), biases small normal values."""
    rng = np.random.default_rng(PARAM_SEED)
    out = {}
    for name, shape in param_specs():
        if len(shape) == 1:
            v = 0.05 * rng.standard_normal(shape)
        else:
            v = rng.standard_normal(shape) / math.sqrt(shape[0])
        out[name] = v.astype(np.float32)
    return out


def make_inputs(shape, rng):
    """Inputs for one case: x float32 [batch, seq, D_IN] and y float32
    [batch, seq, D_OUT], standard normal, then the parameters."""
    if len(shape) != 2:
        raise ValueError(f"mlp_train_step wants batch x seq, got {shape}")
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

            # ---- forward, keeping every layer's input and output ----
            hs = [x]
            for layer in range(LAYERS):
                hs.append(torch.tanh(hs[-1] @ p[f"w{layer}"] + p[f"b{layer}"]))
            out = hs[-1] @ p["head_w"] + p["head_b"]  # [B, T, D_OUT]
            diff = out - y
            count = torch.ones_like(diff[..., 0]).sum()  # batch * seq
            loss = (diff * diff).sum() / count

            # ---- backward ----
            grads = {}
            dout = diff * (2.0 / count)
            dh, grads["head_w"] = linear_grad(hs[-1], dout, p["head_w"])
            grads["head_b"] = dout.sum((0, 1))
            for layer in reversed(range(LAYERS)):
                h = hs[layer + 1]
                da = dh * (1.0 - h * h)  # tanh'(a) = 1 - tanh(a)^2
                dh, grads[f"w{layer}"] = linear_grad(hs[layer], da, p[f"w{layer}"])
                grads[f"b{layer}"] = da.sum((0, 1))

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
    h = x
    for layer in range(LAYERS):
        h = torch.tanh(F.linear(h, p[f"w{layer}"].t(), p[f"b{layer}"]))
    out = F.linear(h, p["head_w"].t(), p["head_b"])
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

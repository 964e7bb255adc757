"""One SGD training step of a small GPT-style decoder, backward written out.

`TrainStep` is a torch.nn.Module whose forward computes, with plain tensor
ops only (so that torch 1.13 exports it to standard ONNX with dynamic batch
and seq), the forward pass of the decoder, the cross-entropy loss against
next-token targets, every parameter's gradient by hand, and the SGD update:

    (tokens, targets, *params) -> (loss, *new_params)
    new_p = p - LR * dloss/dp

`autograd_step` computes the same step from standard PyTorch layers
(F.embedding, F.layer_norm, F.gelu, F.cross_entropy) and torch.autograd; it
is the reference, independent of the hand-written gradients, and
`check_against_autograd` asserts that both agree (rtol 1e-4).

Model: vocabulary VOCAB, width D, HEADS heads, LAYERS pre-LayerNorm blocks
(causal self-attention without q/k/v biases, exact-erf GELU MLP of width
4*D), learned positions up to MAX_SEQ, final LayerNorm, vocabulary head.
Embedding and position gradients use one-hot matmuls (Equal, Cast, MatMul)
rather than a scatter-add.
"""

import math

import numpy as np

VOCAB = 64
D = 32
HEADS = 2
LAYERS = 2
FFN = 4 * D
MAX_SEQ = 64
LR = 0.5
EPS = 1e-5
PARAM_SEED = 1234

_LAYER_PARAMS = [
    ("ln1_g", (D,)), ("ln1_b", (D,)),
    ("wq", (D, D)), ("wk", (D, D)), ("wv", (D, D)), ("wo", (D, D)), ("bo", (D,)),
    ("ln2_g", (D,)), ("ln2_b", (D,)),
    ("w1", (D, FFN)), ("b1", (FFN,)), ("w2", (FFN, D)), ("b2", (D,)),
]


def param_specs():
    """[(name, shape)] in graph-input order. Matrices are [in, out]."""
    specs = [("wte", (VOCAB, D)), ("wpe", (MAX_SEQ, D))]
    for layer in range(LAYERS):
        specs += [(f"h{layer}_{n}", s) for n, s in _LAYER_PARAMS]
    specs += [("lnf_g", (D,)), ("lnf_b", (D,)), ("head_w", (D, VOCAB)),
              ("head_b", (VOCAB,))]
    return specs


PARAM_NAMES = [n for n, _ in param_specs()]


def init_params():
    """Deterministic float32 parameters {name: ndarray}, the same for every
    case (seed PARAM_SEED): LayerNorm gains near 1, biases and matrices
    small normal values."""
    rng = np.random.default_rng(PARAM_SEED)
    out = {}
    for name, shape in param_specs():
        if name.endswith("_g"):
            v = 1.0 + 0.1 * rng.standard_normal(shape)
        elif len(shape) == 1:
            v = 0.05 * rng.standard_normal(shape)
        else:
            v = rng.standard_normal(shape) / math.sqrt(shape[0])
        out[name] = v.astype(np.float32)
    return out


def make_inputs(shape, rng):
    """Inputs for one case: tokens and targets int64 [batch, seq] uniform in
    [0, VOCAB), then the parameters."""
    if len(shape) != 2 or shape[1] > MAX_SEQ:
        raise ValueError(f"gpt_train_step wants batch x seq (seq <= {MAX_SEQ}), got {shape}")
    inputs = {"tokens": rng.integers(0, VOCAB, size=shape, dtype=np.int64),
              "targets": rng.integers(0, VOCAB, size=shape, dtype=np.int64)}
    inputs.update(init_params())
    return inputs


def build():
    import torch

    def layer_norm(x, g, b):
        mu = x.mean(-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdim=True)
        rstd = 1.0 / torch.sqrt(var + EPS)
        xhat = xc * rstd
        return xhat * g + b, (xhat, rstd)

    def layer_norm_grad(dy, g, saved):
        # [B, T, C] -> dx [B, T, C], dg [C], db [C].
        xhat, rstd = saved
        dxhat = dy * g
        dx = rstd * (dxhat - dxhat.mean(-1, keepdim=True)
                     - xhat * (dxhat * xhat).mean(-1, keepdim=True))
        return dx, (dy * xhat).sum((0, 1)), dy.sum((0, 1))

    def linear_grad(x, dy, w):
        # x [B, T, I], dy [B, T, O], w [I, O] -> dx, dw [I, O]. The widths
        # are Python constants so that dw has a static shape in the graph.
        i, o = (int(n) for n in w.shape)
        dw = x.reshape(-1, i).t() @ dy.reshape(-1, o)
        return dy @ w.t(), dw

    def heads(x, b, t):
        # [B, T, D] -> [B, H, T, D / H]
        return x.reshape(b, t, HEADS, D // HEADS).transpose(1, 2)

    def merge(x, b, t):
        # [B, H, T, D / H] -> [B, T, D]
        return x.transpose(1, 2).reshape(b, t, D)

    class TrainStep(torch.nn.Module):
        def forward(self, tokens, targets, *params):
            p = dict(zip(PARAM_NAMES, params))
            b, t = tokens.shape[0], tokens.shape[1]
            pos = torch.arange(t)
            mask = pos[None, :] <= pos[:, None]  # [T, T] causal
            scale = 1.0 / math.sqrt(D // HEADS)

            # ---- forward, saving what the backward needs ----
            x = p["wte"][tokens] + p["wpe"][pos][None]
            saved = []
            for layer in range(LAYERS):
                w = {n: p[f"h{layer}_{n}"] for n, _ in _LAYER_PARAMS}
                h, ln1 = layer_norm(x, w["ln1_g"], w["ln1_b"])
                q, k, v = (heads(h @ w[n], b, t) for n in ("wq", "wk", "wv"))
                s = (q @ k.transpose(-2, -1)) * scale
                s = torch.where(mask, s, torch.full_like(s, -1e9))
                att = torch.softmax(s, -1)
                y = merge(att @ v, b, t)
                x1 = x + y @ w["wo"] + w["bo"]
                h2, ln2 = layer_norm(x1, w["ln2_g"], w["ln2_b"])
                u = h2 @ w["w1"] + w["b1"]
                cdf = 0.5 * (1.0 + torch.erf(u * (1.0 / math.sqrt(2.0))))
                g = u * cdf
                x = x1 + g @ w["w2"] + w["b2"]
                saved.append((w, h, ln1, q, k, v, att, y, h2, ln2, u, cdf, g))
            hf, lnf = layer_norm(x, p["lnf_g"], p["lnf_b"])
            logits = hf @ p["head_w"] + p["head_b"]  # [B, T, V]
            logp = torch.log_softmax(logits, -1)
            vocab = torch.arange(VOCAB)
            onehot = (targets[..., None] == vocab).to(logits.dtype)
            nll = -(onehot * logp).sum(-1)  # [B, T]
            loss = nll.mean()

            # ---- backward ----
            grads = {}
            count = torch.ones_like(nll).sum()
            dlogits = (torch.exp(logp) - onehot) / count
            dhf, grads["head_w"] = linear_grad(hf, dlogits, p["head_w"])
            grads["head_b"] = dlogits.sum((0, 1))
            dx, grads["lnf_g"], grads["lnf_b"] = layer_norm_grad(dhf, p["lnf_g"], lnf)
            for layer in reversed(range(LAYERS)):
                w, h, ln1, q, k, v, att, y, h2, ln2, u, cdf, g = saved[layer]
                lg = {}
                # MLP: x = x1 + gelu(h2 @ w1 + b1) @ w2 + b2
                dg, lg["w2"] = linear_grad(g, dx, w["w2"])
                lg["b2"] = dx.sum((0, 1))
                pdf = torch.exp(-0.5 * u * u) * (1.0 / math.sqrt(2.0 * math.pi))
                du = dg * (cdf + u * pdf)
                dh2, lg["w1"] = linear_grad(h2, du, w["w1"])
                lg["b1"] = du.sum((0, 1))
                dx1, lg["ln2_g"], lg["ln2_b"] = layer_norm_grad(dh2, w["ln2_g"], ln2)
                dx1 = dx1 + dx
                # Attention: x1 = x + merge(softmax(mask(q k^T * s)) v) @ wo + bo
                dy, lg["wo"] = linear_grad(y, dx1, w["wo"])
                lg["bo"] = dx1.sum((0, 1))
                dyh = heads(dy, b, t)
                datt = dyh @ v.transpose(-2, -1)
                dv = att.transpose(-2, -1) @ dyh
                ds = att * (datt - (datt * att).sum(-1, keepdim=True))
                ds = torch.where(mask, ds, torch.zeros_like(ds)) * scale
                dq = ds @ k
                dk = ds.transpose(-2, -1) @ q
                dh = None
                for n, dt in (("wq", dq), ("wk", dk), ("wv", dv)):
                    dhn, lg[n] = linear_grad(h, merge(dt, b, t), w[n])
                    dh = dhn if dh is None else dh + dhn
                dxl, lg["ln1_g"], lg["ln1_b"] = layer_norm_grad(dh, w["ln1_g"], ln1)
                dx = dxl + dx1
                for n, gr in lg.items():
                    grads[f"h{layer}_{n}"] = gr
            # Embeddings: one-hot matmuls instead of a scatter-add.
            tok_onehot = (tokens.reshape(-1)[:, None] == vocab).to(dx.dtype)  # [B*T, V]
            grads["wte"] = tok_onehot.t() @ dx.reshape(-1, D)
            pos_onehot = (pos[:, None] == torch.arange(MAX_SEQ)).to(dx.dtype)  # [T, P]
            grads["wpe"] = pos_onehot.t() @ dx.sum(0)

            # ---- SGD ----
            return (loss,) + tuple(p[n] - LR * grads[n] for n in PARAM_NAMES)

    return TrainStep()


def autograd_step(tokens, targets, params):
    """The same step from standard PyTorch layers and torch.autograd:
    returns (loss, *new_params) as tensors."""
    import torch
    import torch.nn.functional as F

    ps = [p.detach().clone().requires_grad_(True) for p in params]
    p = dict(zip(PARAM_NAMES, ps))
    bsz, t = tokens.shape
    x = F.embedding(tokens, p["wte"]) + p["wpe"][:t][None]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    for layer in range(LAYERS):
        w = {n: p[f"h{layer}_{n}"] for n, _ in _LAYER_PARAMS}
        h = F.layer_norm(x, (D,), w["ln1_g"], w["ln1_b"], EPS)
        q, k, v = (F.linear(h, w[n].t()).view(bsz, t, HEADS, D // HEADS).transpose(1, 2)
                   for n in ("wq", "wk", "wv"))
        s = (q @ k.transpose(-2, -1)) / math.sqrt(D // HEADS)
        att = s.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(bsz, t, D)
        x = x + F.linear(y, w["wo"].t(), w["bo"])
        h2 = F.layer_norm(x, (D,), w["ln2_g"], w["ln2_b"], EPS)
        x = x + F.linear(F.gelu(F.linear(h2, w["w1"].t(), w["b1"])), w["w2"].t(), w["b2"])
    logits = F.linear(F.layer_norm(x, (D,), p["lnf_g"], p["lnf_b"], EPS),
                      p["head_w"].t(), p["head_b"])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    grads = torch.autograd.grad(loss, ps)
    with torch.no_grad():
        return (loss.detach(),) + tuple(q - LR * g for q, g in zip(ps, grads))


def check_against_autograd(model, tokens, targets, params, rtol=1e-4, atol=1e-6):
    """Asserts that the hand-written step matches autograd_step: loss and
    every parameter's update (new - old, i.e. -LR * gradient), within rtol
    (atol for entries near zero). Returns autograd_step's outputs."""
    import torch

    with torch.no_grad():
        mine = model(tokens, targets, *params)
    ref = autograd_step(tokens, targets, params)
    torch.testing.assert_close(mine[0], ref[0], rtol=rtol, atol=atol,
                               msg=lambda m: f"loss: {m}")
    for name, old, a, r in zip(PARAM_NAMES, params, mine[1:], ref[1:]):
        torch.testing.assert_close(a - old, r - old, rtol=rtol, atol=atol,
                                   msg=lambda m, name=name: f"gradient of {name}: {m}")
    return ref

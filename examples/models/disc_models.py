"""Shared helpers for the DISC demo models.

Each demo model is rebuilt deterministically (fixed seed, random init; no
weights are downloaded) so that the ONNX export and the PyTorch reference
outputs always come from the same parameters.

Layout written under ``--out-dir`` for a model ``NAME``::

    NAME.onnx                              the exported model
    NAME.json                              manifest: inputs, outputs, cases
    NAME/inputs/<case>/<input>.npy         deterministic random inputs
    NAME/refs/<case>/<output>.npy          PyTorch reference outputs

``<case>`` is the shape string given on the command line (``1x3x224x224``).
Everything in the manifest is relative to the directory holding it.

Requires Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14, onnx 1.12).
"""

import argparse
import collections
import json
import os
import sys
import warnings

import numpy as np

SEED = 0
OPSET = 17


# --------------------------------------------------------------------------
# Model definitions (deterministic).
# --------------------------------------------------------------------------

def _calibrate_batchnorm(model, torch, shape, seed):
    """Gives BatchNorm layers realistic running statistics.

    With default statistics (mean 0, var 1) a randomly initialised ResNet's
    activations grow from block to block, which makes the outputs large and
    the comparison less meaningful. One training-mode forward pass over a
    fixed random batch (cumulative average, momentum=None) fixes that.
    """
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    model.train()
    with torch.no_grad():
        model(x)
    model.eval()


def build_resnet18():
    import torch
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.resnet18(weights=None)
    _calibrate_batchnorm(model, torch, (8, 3, 64, 64), SEED + 1)
    model.eval()
    return model


def build_transformer():
    import torch
    from torch import nn

    class TinyTransformer(nn.Module):
        """Embedding + 2-layer TransformerEncoder + vocabulary projection."""

        def __init__(self, vocab=1000, d_model=128, nhead=4, ffn=256, layers=2):
            super().__init__()
            self.embed = nn.Embedding(vocab, d_model)
            layer = nn.TransformerEncoderLayer(
                d_model=d_model, nhead=nhead, dim_feedforward=ffn,
                dropout=0.0, batch_first=True)
            # enable_nested_tensor=False: the nested-tensor fast path of
            # torch 1.13 is not traceable; the plain path exports to ONNX.
            self.encoder = nn.TransformerEncoder(
                layer, num_layers=layers, enable_nested_tensor=False)
            self.head = nn.Linear(d_model, vocab)

        def forward(self, tokens):
            return self.head(self.encoder(self.embed(tokens)))

    torch.manual_seed(SEED)
    model = TinyTransformer()
    model.eval()
    return model


def build_gpt_decoder():
    import math

    import torch
    from torch import nn

    class Block(nn.Module):
        """Pre-LayerNorm causal self-attention + GELU MLP."""

        def __init__(self, d=64, h=4):
            super().__init__()
            self.h = h
            self.qkv = nn.Linear(d, 3 * d)
            self.o = nn.Linear(d, d)
            self.ln = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln(x)).split(C, dim=2)
            q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
            k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
            v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // self.h)
            # Causal mask from the run-time seq: Shape/Range/LessOrEqual/Where.
            i = torch.arange(T)
            mask = i[None, :] <= i[:, None]
            att = torch.where(mask, att, torch.full_like(att, -1e9))
            att = att.softmax(-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.o(y)
            return x + self.mlp(x)

    class GPT(nn.Module):
        """Token + learned position embeddings, 2 blocks, vocabulary head."""

        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(100, 64)
            self.pos = nn.Embedding(512, 64)
            self.b = nn.Sequential(Block(), Block())
            self.head = nn.Linear(64, 100)

        def forward(self, tok):
            T = tok.shape[1]
            x = self.emb(tok) + self.pos(torch.arange(T))[None]
            return self.head(self.b(x))

    torch.manual_seed(SEED)
    model = GPT()
    model.eval()
    return model


def build_mobilenet_v2():
    import torch
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.mobilenet_v2(weights=None)
    _calibrate_batchnorm(model, torch, (8, 3, 64, 64), SEED + 1)
    model.eval()
    return model


def build_mobilenet_v3_small():
    """torchvision's MobileNetV3-Small: HardSwish after Convs (fused into
    the Conv calls as post-ops), squeeze-excite (GlobalAveragePool, 1x1
    Convs, HardSigmoid, Mul), depthwise Convs."""
    import torch
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.mobilenet_v3_small(weights=None)
    _calibrate_batchnorm(model, torch, (8, 3, 64, 64), SEED + 1)
    model.eval()
    return model


def build_shufflenet_v2():
    """torchvision's ShuffleNet V2 (x0.5): channel split (Slice by a size
    computed from Shape), channel shuffle (Reshape with -1 after pooling),
    depthwise convolutions."""
    import torch
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.shufflenet_v2_x0_5(weights=None)
    _calibrate_batchnorm(model, torch, (8, 3, 64, 64), SEED + 1)
    model.eval()
    return model


def build_unet():
    import torch
    from torch import nn

    def block(cin, cout):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True))

    class UNet(nn.Module):
        """Three levels: MaxPool down, ConvTranspose2d (2x2, stride 2) up,
        encoder features concatenated on the way up; H and W must be
        multiples of 8."""

        def __init__(self, cin=3, classes=2, c=16):
            super().__init__()
            self.enc = nn.ModuleList([block(cin, c), block(c, 2 * c), block(2 * c, 4 * c)])
            self.pool = nn.MaxPool2d(2)
            self.mid = block(4 * c, 8 * c)
            self.up = nn.ModuleList([nn.ConvTranspose2d(8 * c, 4 * c, 2, stride=2),
                                     nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2),
                                     nn.ConvTranspose2d(2 * c, c, 2, stride=2)])
            self.dec = nn.ModuleList([block(8 * c, 4 * c), block(4 * c, 2 * c),
                                      block(2 * c, c)])
            self.head = nn.Conv2d(c, classes, 1)

        def forward(self, x):
            skips = []
            for enc in self.enc:
                x = enc(x)
                skips.append(x)
                x = self.pool(x)
            x = self.mid(x)
            for up, dec, skip in zip(self.up, self.dec, reversed(skips)):
                x = dec(torch.cat([up(x), skip], dim=1))
            return self.head(x)

    torch.manual_seed(SEED)
    model = UNet()
    _calibrate_batchnorm(model, torch, (4, 3, 64, 64), SEED + 1)
    model.eval()
    return model


def nhwc_resnet(torch, stages=((16, 16, 1), (16, 32, 2), (32, 32, 1)),
                classes=10):
    """A ResNet-like network on an NHWC input as tf2onnx exports TensorFlow
    models: every Conv wrapped in Transposes (NHWC -> NCHW -> Conv ->
    NHWC), BatchNorm as a per-channel Mul and Add in NHWC, residual adds
    and the final mean over H, W in NHWC. `stages`: (in, out, stride) of
    each residual block after a stride-2 stem Conv of 3 -> stages[0][0]."""
    from torch import nn

    def conv_nhwc(conv, x):
        return conv(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.s1 = nn.Parameter(torch.rand(cout) + 0.5)
            self.b1 = nn.Parameter(torch.randn(cout) * 0.1)
            self.s2 = nn.Parameter(torch.rand(cout) + 0.5)
            self.b2 = nn.Parameter(torch.randn(cout) * 0.1)
            self.skip = (nn.Conv2d(cin, cout, 1, stride, bias=True)
                         if stride != 1 or cin != cout else None)

        def forward(self, x):
            y = torch.relu(conv_nhwc(self.c1, x) * self.s1 + self.b1)
            y = conv_nhwc(self.c2, y) * self.s2 + self.b2
            skip = x if self.skip is None else conv_nhwc(self.skip, x)
            return torch.relu(y + skip)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, stages[0][0], 3, 2, 1, bias=True)
            self.blocks = nn.ModuleList(Block(*c) for c in stages)
            self.fc = nn.Linear(stages[-1][1], classes)

        def forward(self, x):
            x = torch.relu(conv_nhwc(self.stem, x))
            for b in self.blocks:
                x = b(x)
            return self.fc(x.mean(dim=(1, 2)))

    return Net().eval()


def build_nhwc_resnet():
    import torch

    torch.manual_seed(SEED)
    return nhwc_resnet(torch)


def build_inception():
    import torch
    from torch import nn

    class Branchy(nn.Module):
        """Two Inception-style blocks written the way many model files (and
        so their ONNX exports) are: every branch's 1x1 head (a 4x channel
        expansion at full resolution) is computed first, then each branch's
        reduction (a strided 3x3 conv, or pooling and a 1x1 conv), then the
        concat. Program order keeps all wide heads alive at once; running
        each branch to its narrow output first does not."""

        def __init__(self, cin=3, c=16, branches=4):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(cin, c, 3, padding=1), nn.ReLU())
            self.blocks = nn.ModuleList()
            for _ in range(2):
                heads = nn.ModuleList(
                    [nn.Sequential(nn.Conv2d(c, 4 * c, 1), nn.ReLU())
                     for _ in range(branches)])
                tails = nn.ModuleList()
                for b in range(branches):
                    if b % 2 == 0:
                        tails.append(nn.Conv2d(4 * c, c // 2, 3, stride=2, padding=1))
                    else:
                        tails.append(nn.Sequential(nn.AvgPool2d(2), nn.Conv2d(4 * c, c // 2, 1)))
                self.blocks.append(nn.ModuleList([heads, tails]))
                c = branches * (c // 2)
            self.head = nn.Conv2d(c, 10, 1)

        def forward(self, x):
            x = self.stem(x)
            for heads, tails in self.blocks:
                hs = [h(x) for h in heads]
                x = torch.cat([t(h) for t, h in zip(tails, hs)], dim=1)
            return self.head(x).mean(dim=(2, 3))

    torch.manual_seed(SEED)
    model = Branchy()
    model.eval()
    return model


def build_gpt_train_step():
    import gpt_train_step

    return gpt_train_step.build()


def build_mlp_train_step():
    import mlp_train_step

    return mlp_train_step.build()


def build_resmlp_train_step():
    import resmlp_train_step

    return resmlp_train_step.build()


def build_llama_decoder(d=64, layers=2, ffn=176, heads=4):
    """The Llama-style decoder LM (vocabulary 256): model width `d`,
    `layers` blocks, SwiGLU hidden size `ffn`, `heads` attention heads
    (d divisible by heads, head dim even). Seeded (SEED)."""
    import math

    import torch
    import torch.nn.functional as F
    from torch import nn

    class RMSNorm(nn.Module):
        def __init__(self, d, eps=1e-6):
            super().__init__()
            self.eps = eps
            # Gains near 1 rather than exactly 1, so that they matter.
            self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat([-x[..., half:], x[..., :half]], dim=-1)

    class Block(nn.Module):
        """RMSNorm -> causal self-attention with rotary position
        embeddings -> residual; RMSNorm -> SwiGLU MLP -> residual. No
        biases."""

        def __init__(self, d, heads, ffn):
            super().__init__()
            self.heads = heads
            self.attn_norm = RMSNorm(d)
            self.wq = nn.Linear(d, d, bias=False)
            self.wk = nn.Linear(d, d, bias=False)
            self.wv = nn.Linear(d, d, bias=False)
            self.wo = nn.Linear(d, d, bias=False)
            self.mlp_norm = RMSNorm(d)
            self.w1 = nn.Linear(d, ffn, bias=False)
            self.w3 = nn.Linear(d, ffn, bias=False)
            self.w2 = nn.Linear(ffn, d, bias=False)

        def forward(self, x, cos, sin, mask):
            B, T, C = x.shape
            hd = C // self.heads
            h = self.attn_norm(x)
            q, k, v = (w(h).view(B, T, self.heads, hd).transpose(1, 2)
                       for w in (self.wq, self.wk, self.wv))
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd)) + mask
            y = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, C)
            x = x + self.wo(y)
            h = self.mlp_norm(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

    class Llama(nn.Module):
        """Token embedding, 2 blocks, final RMSNorm, vocabulary head;
        returns the logits and the mean cross-entropy against `targets`."""

        def __init__(self, vocab=256, d=64, heads=4, ffn=176, layers=2, base=10000.0):
            super().__init__()
            self.vocab = vocab
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList([Block(d, heads, ffn) for _ in range(layers)])
            self.norm = RMSNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            hd = d // heads
            self.register_buffer(
                "inv_freq", 1.0 / (base ** (torch.arange(0, hd, 2).float() / hd)),
                persistent=False)

        def forward(self, tokens, targets):
            T = tokens.shape[1]
            # Rotary embeddings from the run-time seq: Shape, Gather, Range.
            pos = torch.arange(0, T, dtype=self.inv_freq.dtype)
            freqs = pos[:, None] * self.inv_freq[None, :]
            emb = torch.cat([freqs, freqs], dim=-1)  # [T, head dim]
            cos, sin = emb.cos()[None, None], emb.sin()[None, None]
            # Causal mask [T, T]: Trilu over ConstantOfShape.
            mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
            x = self.emb(tokens)
            for block in self.blocks:
                x = block(x, cos, sin, mask)
            logits = self.head(self.norm(x))
            loss = F.cross_entropy(logits.reshape(-1, self.vocab), targets.reshape(-1))
            return logits, loss

    torch.manual_seed(SEED)
    model = Llama(d=d, heads=heads, ffn=ffn, layers=layers)
    model.eval()
    return model


def _mlp_train_step_reference(model, args):
    """Reference of the MLP training step: torch.autograd
    (mlp_train_step.autograd_step); asserts on the way that the exported
    hand-written gradients agree with it (rtol 1e-4)."""
    import mlp_train_step

    return mlp_train_step.check_against_autograd(model, args[0], args[1], args[2:])


def _mlp_train_step_inputs(shape, rng):
    import mlp_train_step

    return mlp_train_step.make_inputs(shape, rng)


def _resmlp_train_step_reference(model, args):
    """Reference of the residual MLP training step: torch.autograd
    (resmlp_train_step.autograd_step); asserts on the way that the exported
    hand-written gradients agree with it (rtol 1e-4)."""
    import resmlp_train_step

    return resmlp_train_step.check_against_autograd(model, args[0], args[1], args[2:])


def _resmlp_train_step_inputs(shape, rng):
    import resmlp_train_step

    return resmlp_train_step.make_inputs(shape, rng)


def _llama_inputs(shape, rng):
    if len(shape) != 2:
        raise ValueError(f"llama_decoder wants batch x seq, got {shape}")
    return {"tokens": rng.integers(0, 256, size=shape, dtype=np.int64),
            "targets": rng.integers(0, 256, size=shape, dtype=np.int64)}


def _gpt_train_step_reference(model, args):
    """Reference of the training step: standard PyTorch layers and
    torch.autograd (gpt_train_step.autograd_step); asserts on the way that
    the exported hand-written gradients agree with it (rtol 1e-4)."""
    import gpt_train_step

    return gpt_train_step.check_against_autograd(model, args[0], args[1], args[2:])


def _gpt_train_step_inputs(shape, rng):
    import gpt_train_step

    return gpt_train_step.make_inputs(shape, rng)


def _inception_inputs(shape, rng):
    if len(shape) != 4 or shape[1] != 3 or shape[2] % 4 or shape[3] % 4:
        raise ValueError(f"inception wants N x 3 x H x W, H and W multiples of 4, got {shape}")
    return {"input": rng.standard_normal(shape).astype(np.float32)}


def _resnet_inputs(shape, rng):
    if len(shape) != 4 or shape[1] != 3:
        raise ValueError(f"resnet18 wants N x 3 x H x W, got {shape}")
    return {"input": rng.standard_normal(shape).astype(np.float32)}


def _transformer_inputs(shape, rng):
    if len(shape) != 2:
        raise ValueError(f"transformer wants batch x seq, got {shape}")
    return {"tokens": rng.integers(0, 1000, size=shape, dtype=np.int64)}


def _gpt_inputs(shape, rng):
    if len(shape) != 2 or shape[1] > 512:
        raise ValueError(f"gpt_decoder wants batch x seq (seq <= 512), got {shape}")
    return {"tokens": rng.integers(0, 100, size=shape, dtype=np.int64)}


def _mobilenet_inputs(shape, rng):
    if len(shape) != 4 or shape[1] != 3:
        raise ValueError(f"the model wants N x 3 x H x W, got {shape}")
    return {"input": rng.standard_normal(shape).astype(np.float32)}


def _nhwc_inputs(shape, rng):
    if len(shape) != 4 or shape[3] != 3:
        raise ValueError(f"nhwc_resnet wants N x H x W x 3, got {shape}")
    return {"input": rng.standard_normal(shape).astype(np.float32)}


def _unet_inputs(shape, rng):
    if len(shape) != 4 or shape[1] != 3 or shape[2] % 8 or shape[3] % 8:
        raise ValueError(f"unet wants N x 3 x H x W, H and W multiples of 8, got {shape}")
    return {"input": rng.standard_normal(shape).astype(np.float32)}


def _gpt_train_step_names():
    import gpt_train_step

    return gpt_train_step.PARAM_NAMES


def _mlp_train_step_names():
    import mlp_train_step

    return mlp_train_step.PARAM_NAMES


def _resmlp_train_step_names():
    import resmlp_train_step

    return resmlp_train_step.PARAM_NAMES


MODELS = {
    "resnet18": dict(
        build=build_resnet18,
        inputs=["input"],
        outputs=["output"],
        dynamic_axes={"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}},
        make_inputs=_resnet_inputs,
        export_shape=(1, 3, 224, 224),
        default_shapes=["1x3x224x224", "2x3x160x192"],
    ),
    "transformer": dict(
        build=build_transformer,
        inputs=["tokens"],
        outputs=["logits"],
        dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                      "logits": {0: "batch", 1: "seq"}},
        make_inputs=_transformer_inputs,
        export_shape=(2, 8),
        grad=True,
        default_shapes=["1x16", "2x77"],
    ),
    "gpt_decoder": dict(
        build=build_gpt_decoder,
        inputs=["tokens"],
        outputs=["logits"],
        dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                      "logits": {0: "batch", 1: "seq"}},
        make_inputs=_gpt_inputs,
        export_shape=(2, 8),
        default_shapes=["1x16", "2x77", "3x1"],
    ),
    "mobilenet_v2": dict(
        build=build_mobilenet_v2,
        inputs=["input"],
        outputs=["output"],
        dynamic_axes={"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}},
        make_inputs=_mobilenet_inputs,
        export_shape=(1, 3, 224, 224),
        default_shapes=["1x3x96x96", "2x3x128x160", "1x3x224x224"],
    ),
    "mobilenet_v3_small": dict(
        build=build_mobilenet_v3_small,
        inputs=["input"],
        outputs=["output"],
        dynamic_axes={"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}},
        make_inputs=_mobilenet_inputs,
        export_shape=(1, 3, 224, 224),
        default_shapes=["1x3x96x96", "2x3x128x112", "1x3x224x224"],
    ),
    "shufflenet_v2": dict(
        build=build_shufflenet_v2,
        inputs=["input"],
        outputs=["output"],
        dynamic_axes={"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}},
        make_inputs=_mobilenet_inputs,
        export_shape=(1, 3, 224, 224),
        default_shapes=["1x3x96x96", "2x3x128x112", "1x3x224x224"],
    ),
    "unet": dict(
        build=build_unet,
        inputs=["input"],
        outputs=["output"],
        dynamic_axes={"input": {0: "N", 2: "H", 3: "W"},
                      "output": {0: "N", 2: "H", 3: "W"}},
        make_inputs=_unet_inputs,
        export_shape=(1, 3, 64, 64),
        default_shapes=["1x3x64x64", "2x3x48x80", "1x3x96x128"],
    ),
    "nhwc_resnet": dict(
        build=build_nhwc_resnet,
        inputs=["input"],
        outputs=["output"],
        dynamic_axes={"input": {0: "N", 1: "H", 2: "W"}, "output": {0: "N"}},
        make_inputs=_nhwc_inputs,
        export_shape=(1, 32, 32, 3),
        default_shapes=["1x32x32x3", "2x24x40x3", "1x57x31x3"],
    ),
    # Forward, hand-written backward and SGD update of a small GPT-style
    # decoder in one graph (gpt_train_step.py); the parameters are inputs.
    "gpt_train_step": dict(
        build=build_gpt_train_step,
        inputs=["tokens", "targets"] + _gpt_train_step_names(),
        outputs=["loss"] + ["new_" + n for n in _gpt_train_step_names()],
        dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                      "targets": {0: "batch", 1: "seq"}},
        make_inputs=_gpt_train_step_inputs,
        reference=_gpt_train_step_reference,
        export_shape=(2, 8),
        default_shapes=["2x16", "4x7", "3x64"],
    ),
    # Forward, hand-written backward and SGD update of a 6-layer tanh MLP
    # (mlp_train_step.py): every hidden activation lives until the backward
    # pass reads it.
    "mlp_train_step": dict(
        build=build_mlp_train_step,
        inputs=["x", "y"] + _mlp_train_step_names(),
        outputs=["loss"] + ["new_" + n for n in _mlp_train_step_names()],
        dynamic_axes={"x": {0: "batch", 1: "seq"},
                      "y": {0: "batch", 1: "seq"}},
        make_inputs=_mlp_train_step_inputs,
        reference=_mlp_train_step_reference,
        export_shape=(2, 8),
        default_shapes=["2x16", "3x77", "4x512"],
    ),
    # Forward, hand-written backward and SGD update of a residual MLP with 8
    # blocks (resmlp_train_step.py): each block's wide tanh activation lives
    # until the backward pass reads it, and can be recomputed from the
    # narrow residual stream by one MatMul.
    "resmlp_train_step": dict(
        build=build_resmlp_train_step,
        inputs=["x", "y"] + _resmlp_train_step_names(),
        outputs=["loss"] + ["new_" + n for n in _resmlp_train_step_names()],
        dynamic_axes={"x": {0: "batch", 1: "seq"},
                      "y": {0: "batch", 1: "seq"}},
        make_inputs=_resmlp_train_step_inputs,
        reference=_resmlp_train_step_reference,
        export_shape=(2, 8),
        default_shapes=["2x16", "3x77", "4x512"],
    ),
    # Llama-style decoder: rotary positions from Range over the run-time
    # seq, causal mask from Trilu, SwiGLU MLP, cross-entropy loss.
    "llama_decoder": dict(
        build=build_llama_decoder,
        inputs=["tokens", "targets"],
        outputs=["logits", "loss"],
        dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                      "targets": {0: "batch", 1: "seq"},
                      "logits": {0: "batch", 1: "seq"}},
        make_inputs=_llama_inputs,
        export_shape=(2, 8),
        default_shapes=["1x16", "2x33", "3x64"],
    ),
    "inception": dict(
        build=build_inception,
        inputs=["input"],
        outputs=["output"],
        dynamic_axes={"input": {0: "N", 2: "H", 3: "W"}, "output": {0: "N"}},
        make_inputs=_inception_inputs,
        export_shape=(1, 3, 32, 32),
        default_shapes=["1x3x32x32", "2x3x48x64", "1x3x96x96"],
    ),
}


# --------------------------------------------------------------------------
# Export, references, manifest.
# --------------------------------------------------------------------------

def parse_shape(text):
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad shape '{text}' (want e.g. 1x3x224x224)")
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(f"bad shape '{text}'")
    return dims


def shape_str(shape):
    return "x".join(str(d) for d in shape)


def _grad_mode(torch, spec):
    """Gradient mode for export and reference runs. The Transformer needs
    grad enabled: in torch 1.13, TransformerEncoderLayer takes a fused fast
    path (aten::_transformer_encoder_layer_fwd, not exportable to ONNX) in
    eval mode whenever grad is disabled. With grad enabled it runs the plain
    composite path, which exports to standard ONNX ops; the reference uses
    the same path so both sides compute the same math."""
    return torch.set_grad_enabled(bool(spec.get("grad", False)))


def export_onnx(name, model, path):
    import torch

    spec = MODELS[name]
    rng = np.random.default_rng(SEED)
    example = spec["make_inputs"](spec["export_shape"], rng)
    args = tuple(torch.from_numpy(example[n]) for n in spec["inputs"])
    tmp = path + ".tmp"
    if "reference" in spec:
        spec["reference"](model, args)  # raises if the model is wrong
    with _grad_mode(torch, spec), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, args, tmp,
            input_names=spec["inputs"], output_names=spec["outputs"],
            dynamic_axes=spec["dynamic_axes"], opset_version=OPSET,
            do_constant_folding=True)
    os.replace(tmp, path)


def check_onnx(path):
    """Checks the exported graph; returns its op histogram (domain-qualified
    for non-standard domains) and raises if a non-standard op shows up."""
    import onnx

    model = onnx.load(path)
    onnx.checker.check_model(model)
    hist = collections.Counter()
    nonstandard = set()
    for node in model.graph.node:
        if node.domain in ("", "ai.onnx"):
            hist[node.op_type] += 1
        else:
            key = f"{node.domain}::{node.op_type}"
            hist[key] += 1
            nonstandard.add(key)
    if nonstandard:
        raise SystemExit(f"{path}: non-standard ops {sorted(nonstandard)}")
    dims = []
    for vi in list(model.graph.input) + list(model.graph.output):
        shape = [d.dim_param or str(d.dim_value)
                 for d in vi.type.tensor_type.shape.dim]
        dims.append(f"{vi.name}[{','.join(shape)}]")
    return hist, dims, model.opset_import[0].version


def print_histogram(name, hist, dims, opset):
    total = sum(hist.values())
    print(f"{name}: opset {opset}, {total} nodes, {len(hist)} op types; "
          f"signature {' -> '.join(dims)}")
    for op, n in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {op:<24} {n}")


def case_seed(name, shape):
    # Stable across runs and Python versions (no hash()).
    return sum((i + 1) * d for i, d in enumerate(shape)) * 7919 + len(name)


def write_references(name, model, shapes, out_dir):
    """Runs the PyTorch model on deterministic inputs for each shape and
    writes inputs/refs .npy files. Returns the manifest's case list."""
    import torch

    spec = MODELS[name]
    cases = []
    for shape in shapes:
        case = shape_str(shape)
        rng = np.random.default_rng(case_seed(name, shape))
        inputs = spec["make_inputs"](shape, rng)
        args = [torch.from_numpy(inputs[n]) for n in spec["inputs"]]
        if "reference" in spec:
            out = spec["reference"](model, args)
        else:
            with _grad_mode(torch, spec):
                out = model(*args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        entry = {"name": case, "inputs": {}, "refs": {}, "input_shapes": {}}
        for n in spec["inputs"]:
            rel = os.path.join(name, "inputs", case, n + ".npy")
            os.makedirs(os.path.dirname(os.path.join(out_dir, rel)), exist_ok=True)
            np.save(os.path.join(out_dir, rel), inputs[n])
            entry["inputs"][n] = rel
            entry["input_shapes"][n] = list(inputs[n].shape)
        for n, t in zip(spec["outputs"], outs):
            arr = t.detach().cpu().numpy()
            rel = os.path.join(name, "refs", case, n + ".npy")
            os.makedirs(os.path.dirname(os.path.join(out_dir, rel)), exist_ok=True)
            np.save(os.path.join(out_dir, rel), arr)
            entry["refs"][n] = rel
            print(f"  case {case}: {n} {list(arr.shape)} {arr.dtype} "
                  f"range [{arr.min():.4g}, {arr.max():.4g}]")
        cases.append(entry)
    return cases


def write_manifest(name, out_dir, cases, merge=False):
    """Writes NAME.json. With merge, cases already listed there (from an
    earlier run on the same export) are kept unless rewritten now."""
    spec = MODELS[name]
    path = os.path.join(out_dir, name + ".json")
    if merge and os.path.exists(path):
        try:
            with open(path) as f:
                old = json.load(f).get("cases", [])
        except (OSError, ValueError):
            old = []
        fresh = {c["name"] for c in cases}
        cases = [c for c in old if c.get("name") not in fresh] + cases
    manifest = {
        "model": name,
        "onnx": name + ".onnx",
        "inputs": spec["inputs"],
        "outputs": spec["outputs"],
        "cases": cases,
    }
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    return path


def main(name, argv=None, export=True):
    spec = MODELS[name]
    p = argparse.ArgumentParser(
        description=f"Export the DISC demo model '{name}' to ONNX (opset {OPSET}) "
                    "and write PyTorch reference outputs.")
    p.add_argument("--out-dir", default=".", help="output directory (default: .)")
    p.add_argument("--shapes", nargs="+", type=parse_shape,
                   default=[parse_shape(s) for s in spec["default_shapes"]],
                   help="input shapes, e.g. " + " ".join(spec["default_shapes"]))
    if export:
        p.add_argument("--no-refs", action="store_true",
                       help="export the model only")
    args = p.parse_args(argv)

    import torch
    torch.set_num_threads(min(2, os.cpu_count() or 1))

    os.makedirs(args.out_dir, exist_ok=True)
    model = spec["build"]()
    onnx_path = os.path.join(args.out_dir, name + ".onnx")
    if export:
        export_onnx(name, model, onnx_path)
        hist, dims, opset = check_onnx(onnx_path)
        print(f"wrote {onnx_path}")
        print_histogram(name, hist, dims, opset)
    if not export or not args.no_refs:
        cases = write_references(name, model, args.shapes, args.out_dir)
        print(f"wrote {write_manifest(name, args.out_dir, cases, merge=not export)}")
    return 0


if __name__ == "__main__":
    sys.exit("import this module; run export_*.py or make_reference.py")

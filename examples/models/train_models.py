#!/usr/bin/python3
"""Forward + loss models for `disc-compile --train` (docs/training.md), and
their PyTorch training references.

Each model is a torch.nn.Module whose forward returns the loss (the Llama
decoder returns the logits and the loss), exported to ONNX opset 17 with
dynamic axes and without constant folding, so that every initializer keeps
its PyTorch parameter name (`disc-compile --train` trains the float
initializers the loss depends on; a folded copy of a weight would be a
different initializer), in training mode: BatchNormalization uses the batch
statistics, and parameters with equal values stay apart (in eval mode the
exporter merges equal initializers).

    /usr/bin/python3 train_models.py mlp OUT.onnx
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

SEED = 0


def build_mlp():
    """6 Linear layers 32 -> 64 -> ... -> 8 with tanh between them; the mean
    squared error against `y`. Inputs x [B, 32], y [B, 8]."""
    import torch
    from torch import nn

    class Mlp(nn.Module):
        def __init__(self, layers=6, d_in=32, d=64, d_out=8):
            super().__init__()
            dims = [d_in] + [d] * (layers - 1) + [d_out]
            self.layers = nn.ModuleList(
                [nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])])

        def forward(self, x, y):
            h = x
            for i, layer in enumerate(self.layers):
                h = layer(h)
                if i + 1 < len(self.layers):
                    h = torch.tanh(h)
            return ((h - y) ** 2).mean()

    torch.manual_seed(SEED)
    return Mlp()


def build_resnet18():
    """torchvision ResNet-18 with 10 classes, BatchNormalization in training
    mode (batch statistics), mean cross-entropy against `t`. Inputs x
    [N, 3, H, W], t int64 [N]."""
    import torch
    import torch.nn.functional as F
    import torchvision

    class ResNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = torchvision.models.resnet18(num_classes=10)

        def forward(self, x, t):
            return F.cross_entropy(self.net(x), t)

    torch.manual_seed(SEED)
    model = ResNet()
    model.train()
    return model


def build_cnn():
    """A small CNN for the windowed gradient rules: strided, dilated,
    depthwise and grouped convolutions, max pooling with padding and
    ceil_mode, average pooling without count_include_pad, global average
    pooling; cross-entropy against `t`. Inputs x [N, 3, H, W], t int64 [N]."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 12, 3, padding=1)
            self.dw = nn.Conv2d(12, 12, 3, stride=2, padding=1, groups=12)
            self.g3 = nn.Conv2d(12, 12, 3, padding=2, dilation=2, groups=3)
            self.c4 = nn.Conv2d(12, 16, 3, stride=2, padding=1, bias=False)
            self.fc = nn.Linear(16, 10)

        def forward(self, x, t):
            h = F.max_pool2d(F.relu(self.c1(x)), 3, stride=1, padding=1)
            h = F.relu(self.dw(h))
            h = F.avg_pool2d(F.relu(self.g3(h)), 3, stride=2, padding=1,
                             count_include_pad=False)
            h = F.max_pool2d(self.c4(h), 2, stride=2, ceil_mode=True)
            return F.cross_entropy(self.fc(h.mean(dim=(2, 3))), t)

    torch.manual_seed(SEED)
    return Cnn()


def build_encoder():
    """Embedding(100, 32), one nn.TransformerEncoderLayer (4 heads, GELU,
    LayerNorm, no dropout), a final LayerNorm and a vocabulary head; the mean
    cross-entropy against `targets`. Inputs tokens, targets int64 [B, T]."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Encoder(nn.Module):
        def __init__(self, vocab=100, d=32):
            super().__init__()
            self.vocab = vocab
            self.emb = nn.Embedding(vocab, d)
            self.enc = nn.TransformerEncoderLayer(
                d, 4, 2 * d, dropout=0.0, activation="gelu", batch_first=True)
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, tokens, targets):
            h = self.norm(self.enc(self.emb(tokens)))
            return F.cross_entropy(self.head(h).reshape(-1, self.vocab),
                                   targets.reshape(-1))

    torch.manual_seed(SEED)
    return Encoder()


def llama_size():
    """The Llama size from the environment: DISC_TRAIN_LLAMA_SIZE="d=128,
    layers=4,ffn=352,heads=4" (any subset; unset: d 64, 2 layers, ffn 176,
    4 heads). ValueError on an unknown key or a non-integer value."""
    size = {}
    for item in filter(None, os.environ.get("DISC_TRAIN_LLAMA_SIZE",
                                            "").split(",")):
        key, _, value = item.partition("=")
        if key.strip() not in ("d", "layers", "ffn", "heads"):
            raise ValueError(f"DISC_TRAIN_LLAMA_SIZE: unknown key '{key}'")
        size[key.strip()] = int(value)
    return size


def build_llama(**size):
    """The Llama-style decoder of disc_models.py (RMSNorm, rotary position
    embeddings from the run-time length, causal mask, SwiGLU), with its mean
    cross-entropy. Inputs tokens, targets int64 [B, T]; outputs logits and
    loss. `size` (d, layers, ffn, heads) defaults to llama_size()."""
    return disc_models.build_llama_decoder(**(size or llama_size()))


def _mlp_inputs(shape, rng):
    (b,) = shape
    return {"x": rng.standard_normal((b, 32)).astype(np.float32),
            "y": rng.standard_normal((b, 8)).astype(np.float32)}


def _resnet_inputs(shape, rng):
    n, c, h, w = shape
    return {"x": rng.standard_normal((n, c, h, w)).astype(np.float32),
            "t": rng.integers(0, 10, (n,)).astype(np.int64)}


def _encoder_inputs(shape, rng):
    b, t = shape
    return {"tokens": rng.integers(0, 100, (b, t)).astype(np.int64),
            "targets": rng.integers(0, 100, (b, t)).astype(np.int64)}


def _llama_inputs(shape, rng):
    b, t = shape
    return {"tokens": rng.integers(0, 256, (b, t)).astype(np.int64),
            "targets": rng.integers(0, 256, (b, t)).astype(np.int64)}


MODELS = {
    "mlp": dict(build=build_mlp, inputs=["x", "y"], outputs=["loss"],
                dynamic_axes={"x": {0: "B"}, "y": {0: "B"}},
                make_inputs=_mlp_inputs, export_shape=(4,),
                shapes=["4", "9", "17"]),
    # layer4 keeps at least 2x2 positions at these sizes: BatchNorm over
    # fewer values per channel is too ill-conditioned to compare in f32.
    "resnet18": dict(build=build_resnet18, inputs=["x", "t"],
                     outputs=["loss"],
                     dynamic_axes={"x": {0: "N", 2: "H", 3: "W"},
                                   "t": {0: "N"}},
                     make_inputs=_resnet_inputs, export_shape=(2, 3, 64, 64),
                     shapes=["2x3x64x64", "3x3x48x64", "4x3x64x48"]),
    "cnn": dict(build=build_cnn, inputs=["x", "t"], outputs=["loss"],
                dynamic_axes={"x": {0: "N", 2: "H", 3: "W"}, "t": {0: "N"}},
                make_inputs=_resnet_inputs, export_shape=(2, 3, 17, 19),
                shapes=["1x3x16x16", "2x3x17x19", "3x3x32x21"]),
    "encoder": dict(build=build_encoder, inputs=["tokens", "targets"],
                    outputs=["loss"],
                    dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                                  "targets": {0: "batch", 1: "seq"}},
                    make_inputs=_encoder_inputs, export_shape=(2, 8),
                    shapes=["1x5", "2x17", "3x40"]),
    "llama": dict(build=build_llama, inputs=["tokens", "targets"],
                  outputs=["logits", "loss"],
                  dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                                "targets": {0: "batch", 1: "seq"},
                                "logits": {0: "batch", 1: "seq"}},
                  make_inputs=_llama_inputs, export_shape=(2, 8),
                  shapes=["1x16", "2x33", "3x64"]),
}


def export(name, path):
    """Exports model `name` (forward + loss) to `path`."""
    import torch

    spec = MODELS[name]
    model = spec["build"]()
    example = spec["make_inputs"](spec["export_shape"],
                                  np.random.default_rng(SEED))
    args = tuple(torch.from_numpy(example[n]) for n in spec["inputs"])
    # Training mode: BatchNormalization uses the batch statistics, and the
    # exporter keeps parameters with equal values apart (in eval mode it
    # merges them: the LayerNorm gains, all 1, would be one initializer).
    mode = torch.onnx.TrainingMode.TRAINING
    tmp = path + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, tmp, input_names=spec["inputs"],
                          output_names=spec["outputs"],
                          dynamic_axes=spec["dynamic_axes"],
                          opset_version=disc_models.OPSET,
                          do_constant_folding=False, training=mode)
    os.replace(tmp, path)


def loss_of(outputs):
    """The loss among a model's outputs (the last one)."""
    return outputs[-1] if isinstance(outputs, tuple) else outputs


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: train_models.py {%s} OUT.onnx" % "|".join(MODELS))
    export(sys.argv[1], sys.argv[2])

#!/usr/bin/python3
"""The extended benchmark set: models no test of DISC contains, exported the
way a user would (docs/performance.md, *Extended set*).

torchvision 0.14 (Debian's python3-torchvision) classifiers and a segmenter
with random weights (seed 0, BatchNorm statistics calibrated on one random
batch, eval mode), a ViT, and an NHWC graph in the style of tf2onnx:

- mobilenet_v3_large: hardswish, squeeze-excite (GlobalAveragePool, 1x1
  Convs, HardSigmoid, Mul), depthwise Convs;
- lraspp: LRASPP with a dilated MobileNetV3-Large backbone (dilated 3x3
  depthwise Convs, squeeze-excite, bilinear Resize to the input size);
- efficientnet_b0: SiLU, squeeze-excite, depthwise Convs;
- squeezenet: SqueezeNet 1.1 fire modules (Concat of two Conv outputs) and
  ceil-mode MaxPool between stages;
- inception_v3: Inception-v3 (no auxiliary head);
- vit_b_16: ViT-B/16 at 224x224 (197 tokens, 12 layers), dynamic batch;
- nhwc_convnet: a ResNet-like network on an NHWC input whose every Conv is
  wrapped in Transposes (NHWC -> NCHW -> Conv -> NHWC), as tf2onnx exports
  TensorFlow models, with the BatchNorm as Mul/Add and the residual adds in
  NHWC.

Every model is exported to ONNX opset 17 with a dynamic batch (and dynamic
H, W for the convolutional ones), input `input`, output `output`; for each
shape the input and PyTorch's output are written as
OUT/NAME/inputs/SHAPE/input.npy and OUT/NAME/refs/SHAPE/output.npy, the
layout of examples/models.

    /usr/bin/python3 benchmarks/extended_models.py --out-dir OUT \\
        --model vit_b_16 --shapes 1x3x224x224 3x3x224x224
"""
import argparse
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples", "models"))
import disc_models  # noqa: E402

# name: (default shapes, whether H and W are dynamic)
MODELS = {
    "mobilenet_v3_large": (["1x3x224x224", "2x3x160x192"], True),
    "lraspp": (["1x3x224x224", "1x3x256x320"], True),
    "efficientnet_b0": (["1x3x224x224", "2x3x160x192"], True),
    "squeezenet": (["1x3x224x224", "2x3x160x192"], True),
    "inception_v3": (["1x3x299x299"], True),
    "vit_b_16": (["1x3x224x224", "3x3x224x224"], False),
    "nhwc_convnet": (["1x224x224x3", "2x160x192x3"], True),
}


def segmenter_output(torch, seg):
    """A module returning the 'out' entry of a torchvision segmenter's
    output dict (what torch.onnx exports as the model's one output)."""
    class Out(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.seg = seg

        def forward(self, x):
            return self.seg(x)["out"]
    return Out()


def build(name):
    import torch
    import torchvision

    torch.manual_seed(disc_models.SEED)
    tv = torchvision.models
    if name == "mobilenet_v3_large":
        model = tv.mobilenet_v3_large(weights=None)
    elif name == "lraspp":
        model = segmenter_output(
            torch, tv.segmentation.lraspp_mobilenet_v3_large(
                weights=None, weights_backbone=None))
    elif name == "efficientnet_b0":
        model = tv.efficientnet_b0(weights=None)
    elif name == "squeezenet":
        model = tv.squeezenet1_1(weights=None)
    elif name == "inception_v3":
        model = tv.inception_v3(weights=None, aux_logits=False,
                                init_weights=True)
    elif name == "vit_b_16":
        model = tv.vit_b_16(weights=None)
        # torchvision zero-initializes the classifier head (outputs all 0).
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    elif name == "nhwc_convnet":
        # The e2e test's nhwc_resnet at ResNet-18-like widths.
        model = disc_models.nhwc_resnet(
            torch, stages=((32, 32, 1), (32, 64, 2), (64, 64, 1),
                           (64, 128, 2), (128, 128, 1), (128, 256, 2),
                           (256, 256, 1)), classes=100)
    else:
        raise SystemExit(f"unknown model '{name}' (one of {', '.join(MODELS)})")
    if name in ("nhwc_convnet", "vit_b_16"):
        model.eval()  # no BatchNorm
    else:
        # Statistics from one batch at the model's usual size (Inception's
        # deep layers are 1x1 at 96x96 and its outputs then grow to 1e6).
        size = 299 if name == "inception_v3" else 96
        disc_models._calibrate_batchnorm(model, torch, (2, 3, size, size),
                                         disc_models.SEED + 1)
    return model


def _grad_mode(torch, name):
    """torch 1.13's nn.MultiheadAttention takes a fused fast path that does
    not export to ONNX when gradients are off in eval mode; the ViT is
    exported and run with gradients on (the same math)."""
    return torch.set_grad_enabled(name == "vit_b_16")


def export(name, out_dir, shapes):
    import torch

    model = build(name)
    dims = [disc_models.parse_shape(s) for s in shapes]
    nhwc = name == "nhwc_convnet"
    dyn = {0: "N"}
    if MODELS[name][1]:
        dyn.update({1: "H", 2: "W"} if nhwc else {2: "H", 3: "W"})
    out_dyn = {0: "N"}
    if name == "lraspp":
        out_dyn.update({2: "H", 3: "W"})
    path = os.path.join(out_dir, name + ".onnx")
    if not os.path.exists(path):
        example = torch.randn(*dims[0])
        tmp = path + ".tmp"
        with _grad_mode(torch, name), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (example,), tmp, input_names=["input"],
                              output_names=["output"],
                              dynamic_axes={"input": dyn, "output": out_dyn},
                              opset_version=disc_models.OPSET,
                              do_constant_folding=True)
        os.replace(tmp, path)
        hist, sig, opset = disc_models.check_onnx(path)
        disc_models.print_histogram(name, hist, sig, opset)
    for shape, s in zip(dims, shapes):
        rng = np.random.default_rng(disc_models.case_seed(name, shape))
        x = rng.standard_normal(shape).astype(np.float32)
        with _grad_mode(torch, name):
            y = model(torch.from_numpy(x)).detach().numpy()
        for kind, n, arr in (("inputs", "input", x), ("refs", "output", y)):
            d = os.path.join(out_dir, name, kind, s)
            os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, n + ".npy"), arr)
        print(f"  {name} {s}: output {list(y.shape)} "
              f"range [{y.min():.4g}, {y.max():.4g}]")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out-dir", required=True)
    p.add_argument("--model", required=True, choices=sorted(MODELS))
    p.add_argument("--shapes", nargs="+")
    args = p.parse_args()
    import torch
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    os.makedirs(args.out_dir, exist_ok=True)
    export(args.model, args.out_dir, args.shapes or MODELS[args.model][0])
    return 0


if __name__ == "__main__":
    sys.exit(main())

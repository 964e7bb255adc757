#!/usr/bin/env python3
"""Writes a grouped, strided, dilated ConvTranspose model with asymmetric
pads and output_padding, an input, and the expected output computed by a
direct scatter (every input element adds x * w at i * stride + k * dilation,
then the pads are cropped).

Usage: conv_transpose_ref.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.RandomState(0)
N, C, H, W, G, Mg = 2, 4, 5, 3, 2, 3
K, s, d, op = (3, 2), (2, 3), (2, 1), (1, 2)
pads = [1, 0, 2, 1]
x = rng.rand(N, C, H, W).astype(np.float32)
w = rng.rand(C, Mg, *K).astype(np.float32)
b = rng.rand(G * Mg).astype(np.float32)
Hf = s[0] * (H - 1) + op[0] + (K[0] - 1) * d[0] + 1
Wf = s[1] * (W - 1) + op[1] + (K[1] - 1) * d[1] + 1
full = np.zeros((N, G * Mg, Hf, Wf), np.float32)
Cg = C // G
for c in range(C):
    g = c // Cg
    for i in range(H):
        for j in range(W):
            for kh in range(K[0]):
                for kw in range(K[1]):
                    full[:, g * Mg:(g + 1) * Mg, i * s[0] + kh * d[0],
                         j * s[1] + kw * d[1]] += (
                             x[:, c, i, j][:, None] * w[c, :, kh, kw][None, :])
y = full[:, :, pads[0]:Hf - pads[2], pads[1]:Wf - pads[3]]
y = y + b[None, :, None, None]
node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name="ct",
                        group=G, strides=list(s), dilations=list(d),
                        pads=pads, output_padding=list(op))
g = helper.make_graph(
    [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                list(x.shape))],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(out, "model.onnx"))
for name, v in (("x", x), ("y", y)):
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(v, name).SerializeToString())

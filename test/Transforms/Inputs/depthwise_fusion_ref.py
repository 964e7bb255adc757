#!/usr/bin/python3
"""Writes x.pb, w1.pb, w2.pb and the NumPy reference y.pb for
depthwise-fusion.mlir: a = clip(conv1x1(x, w1) + b1, 0, 6), then
y = clip(depthwise3x3(a, w2, stride 2, pad 1) + b2, 0, 6) (a MobileNetV2
block's expansion and depthwise layers, BatchNorm folded)."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(11)
x = (3 * rng.standard_normal((2, 8, 9, 11))).astype(np.float32)
w1 = rng.standard_normal((8, 8, 1, 1)).astype(np.float32)
w2 = rng.standard_normal((8, 1, 3, 3)).astype(np.float32)
# The biases of depthwise-fusion.mlir.
b1 = np.array([2.041, -2.556, 0.418, -0.568, -0.453, -0.216, -2.02, -0.232],
              np.float32).reshape(8, 1, 1)
b2 = np.array([-0.865, 3.323, 0.226, -0.353, -0.281, -0.668, -1.055, -0.391],
              np.float32).reshape(8, 1, 1)
a = np.einsum("nchw,oc->nohw", x.astype(np.float64),
              w1[:, :, 0, 0].astype(np.float64)) + b1
a = np.clip(a, 0, 6)
n, c, h, w = a.shape
oh, ow = (h + 2 - 3) // 2 + 1, (w + 2 - 3) // 2 + 1
p = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
d = np.zeros((n, c, oh, ow))
for i in range(3):
    for j in range(3):
        d += p[:, :, i:i + 2 * oh:2, j:j + 2 * ow:2] * \
            w2[:, 0, i, j].reshape(1, c, 1, 1)
y = np.clip(d + b2, 0, 6).astype(np.float32)
for name, v in (("x", x), ("w1", w1), ("w2", w2), ("y", y)):
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(v, name).SerializeToString())

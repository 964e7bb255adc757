#!/usr/bin/python3
"""Writes x.pb, w.pb and the NumPy reference y.pb for
depthwise-fusion-returned.mlir: y = depthwise3x3(x, w, pad 1) + 0.5."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)
x = rng.standard_normal((1, 4, 4, 4)).astype(np.float32)
w = rng.standard_normal((4, 1, 3, 3)).astype(np.float32)
p = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
y = np.zeros((1, 4, 4, 4))
for i in range(3):
    for j in range(3):
        y += p[:, :, i:i + 4, j:j + 4] * w[:, 0, i, j].reshape(1, 4, 1, 1)
y = (y + 0.5).astype(np.float32)
for name, v in (("x", x), ("w", w), ("y", y)):
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(v, name).SerializeToString())

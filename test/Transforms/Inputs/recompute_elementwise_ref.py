#!/usr/bin/python3
"""Writes x.pb, g.pb and the NumPy reference y.pb for
recompute-elementwise.mlir: s = sigmoid(x), p = x * s, q = p - sum(p, 1),
f = tanh applied 17 times to g, y = f * s * p * q."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(11)
x = rng.standard_normal((6, 64)).astype(np.float32)
g = rng.standard_normal((6, 64)).astype(np.float32)
s = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
p = x * s
q = p - p.sum(axis=1, keepdims=True)
f = g.astype(np.float64)
for _ in range(17):
    f = np.tanh(f)
y = (f * s * p * q).astype(np.float32)
for name, v in (("x", x), ("g", g), ("y", y)):
    with open(os.path.join(out, name + ".pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(v, name).SerializeToString())

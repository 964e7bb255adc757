#!/usr/bin/python3
"""Writes x.pb and the NumPy reference y.pb for fusion.mlir: per row,
y = sum(exp(x - max(x))) * 0.5 * (1 + erf(m / sqrt(2))) with m = max(x)
(a softmax denominator times a GELU factor of the row maximum)."""
import math
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = np.random.default_rng(7).standard_normal((5, 16)).astype(np.float32)
m = x.max(axis=1, keepdims=True)
s = np.exp(x - m).sum(axis=1, keepdims=True)
erf = np.vectorize(math.erf)
y = (s * (0.5 * (1.0 + erf(m / math.sqrt(2.0))))).astype(np.float32)
for name, v in (("x", x), ("y", y)):
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(v, name).SerializeToString())

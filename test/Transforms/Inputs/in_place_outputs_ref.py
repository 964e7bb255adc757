#!/usr/bin/python3
"""Writes x.pb, dy.pb, w.pb, b.pb and the NumPy references of
in-place-outputs.mlir: an SGD step (lr 0.5) of y = x w + b,
w' = w - lr x^T dy and b' = b - lr sum_rows(dy), and the doubled rows of dy."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(3)
x = rng.standard_normal((5, 4)).astype(np.float32)
dy = rng.standard_normal((5, 3)).astype(np.float32)
w = rng.standard_normal((4, 3)).astype(np.float32)
b = rng.standard_normal((3,)).astype(np.float32)
x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
wn = (w - 0.5 * (x64.T @ dy64)).astype(np.float32)
bn = (b - 0.5 * dy64.sum(axis=0)).astype(np.float32)
d2 = (dy64 * 2).astype(np.float32)
for name, v in (("x", x), ("dy", dy), ("w", w), ("b", b), ("wn", wn),
                ("bn", bn), ("d2", d2)):
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(v, name).SerializeToString())

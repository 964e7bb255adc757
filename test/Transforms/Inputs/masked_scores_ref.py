#!/usr/bin/python3
"""Writes s.pb, m.pb and the NumPy reference y.pb of masked-scores-fusion.mlir:
y = where(m, s * 0.25, -inf) for scores s [2, 3, 4] and a mask m [3, 4]."""
import os
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(5)
s = rng.standard_normal((2, 3, 4)).astype(np.float32)
m = np.tril(np.ones((3, 4), dtype=bool))
y = np.where(m, s * np.float32(0.25), np.float32(-np.inf)).astype(np.float32)
for name, v in (("s", s), ("m", m), ("y", y)):
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(v, name).SerializeToString())

#!/usr/bin/env python3
"""Writes a Conv -> BatchNormalization -> Relu model (BN not folded by the
exporter), a second Conv whose output BN and a Sigmoid both read (no folding
possible), an input, and the expected outputs computed with NumPy.

Usage: conv_bn_ref.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.RandomState(0)
N, C, H, W, O = 2, 3, 9, 7, 8
eps = 1e-3
x = rng.randn(N, C, H, W).astype(np.float32)
w1 = rng.randn(O, C, 3, 3).astype(np.float32)
b1 = rng.randn(O).astype(np.float32)
w2 = rng.randn(O, C, 1, 1).astype(np.float32)
bn = [rng.rand(O).astype(np.float32) + 0.5, rng.randn(O).astype(np.float32),
      rng.randn(O).astype(np.float32), rng.rand(O).astype(np.float32) + 0.1]


def conv(x, w, b=None, pad=0):
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    Ho, Wo = xp.shape[2] - k + 1, xp.shape[3] - k + 1
    y = np.zeros((x.shape[0], w.shape[0], Ho, Wo), np.float64)
    for i in range(k):
        for j in range(k):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + Ho, j:j + Wo],
                           w[:, :, i, j])
    if b is not None:
        y += b[None, :, None, None]
    return y


def batchnorm(y, scale, bias, mean, var):
    c = lambda v: v[None, :, None, None]
    return (y - c(mean)) / np.sqrt(c(var) + eps) * c(scale) + c(bias)


c1 = conv(x, w1, b1, pad=1)
y1 = np.maximum(batchnorm(c1, *bn), 0).astype(np.float32)
c2 = conv(x, w2)
y2 = batchnorm(c2, *bn).astype(np.float32)
s2 = (1 / (1 + np.exp(-c2))).astype(np.float32)
names = ["scale", "bias", "mean", "var"]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                     pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c1"] + names, ["n1"], name="bn1",
                     epsilon=eps),
    helper.make_node("Relu", ["n1"], ["y1"], name="relu1"),
    helper.make_node("Conv", ["x", "w2"], ["c2"], name="conv2"),
    helper.make_node("BatchNormalization", ["c2"] + names, ["y2"], name="bn2",
                     epsilon=eps),
    helper.make_node("Sigmoid", ["c2"], ["s2"], name="sig2"),
]
inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2")]
inits += [numpy_helper.from_array(v, n) for n, v in zip(names, bn)]
g = helper.make_graph(
    nodes, "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", C, "H", "W"])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, [None] * 4)
     for n in ("y1", "y2", "s2")], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(out, "model.onnx"))
for name, v in (("x", x), ("y1", y1), ("y2", y2), ("s2", s2)):
    with open(os.path.join(out, name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(v, name).SerializeToString())

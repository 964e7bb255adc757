"""A ShuffleNet-style channel split (torchvision's shufflenet_v2: x.chunk(2,
dim=1), exported as Slice): the second half of the channels, a strided view
of the input, goes through a 1x1 Conv + Relu and is concatenated back after
the first half. With STEP 2 the halves are the even and the odd channels
(strided views in the channel dim too). Writes the model, an input
[2, 8, 5, 7] and its NumPy reference:
channel_split_conv.py MODEL.onnx X.npy Y.npy [STEP]"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

step = int(sys.argv[4]) if len(sys.argv) > 4 else 1
# [start, end) of each half along the channels, with `step`.
first, second = ((0, 4), (4, 8)) if step == 1 else ((0, 8), (1, 8))
rng = np.random.RandomState(7)
w = rng.randn(4, 4, 1, 1).astype(np.float32)
b = rng.randn(4).astype(np.float32)


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


nodes = [
    helper.make_node("Slice", ["x", "s0", "e0", "ax", "st"], ["a"],
                     name="first"),
    helper.make_node("Slice", ["x", "s1", "e1", "ax", "st"], ["c"],
                     name="second"),
    helper.make_node("Conv", ["c", "w", "b"], ["cv"], name="conv"),
    helper.make_node("Relu", ["cv"], ["r"], name="relu"),
    helper.make_node("Concat", ["a", "r"], ["y"], name="cat", axis=1),
]
g = helper.make_graph(
    nodes, "channel_split",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                   ["N", 8, "H", "W"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                   ["N", 8, "H", "W"])],
    initializer=[i64("s0", [first[0]]), i64("e0", [first[1]]),
                 i64("s1", [second[0]]), i64("e1", [second[1]]),
                 i64("ax", [1]), i64("st", [step]),
                 numpy_helper.from_array(w, "w"),
                 numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, sys.argv[1])

x = rng.randn(2, 8, 5, 7).astype(np.float32)
np.save(sys.argv[2], x)
x64 = x.astype(np.float64)
half_a = x64[:, first[0]:first[1]:step]
half_c = x64[:, second[0]:second[1]:step]
conv = np.einsum("oc,nchw->nohw", w[:, :, 0, 0].astype(np.float64),
                 half_c) + b.astype(np.float64)[None, :, None, None]
y = np.concatenate([half_a, np.maximum(conv, 0)], axis=1)
np.save(sys.argv[3], y.astype(np.float32))

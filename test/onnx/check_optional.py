#!/usr/bin/python3
"""Optional tensor graph inputs through disc-compile/disc-run, against NumPy.

An ONNX optional tensor input is passed as [count, dims...] with count 1
(the tensor) or 0 (an empty optional) (docs/runtime-abi.md). The model:
`has = OptionalHasElement(x)`; `y = If(has, OptionalGetElement(x) * 2,
zeros)`, so the element is read only in the branch where it exists, and
the shape analysis must not conclude from that branch that the count is 1.
Run with x present ([1, n], two n) and empty ([0, n]), from .npy files and
from ONNX OptionalProto files (present and empty).

    /usr/bin/python3 test/onnx/check_optional.py --bin-dir build/bin

Exit codes: 0 every run matched, 1 a mismatch or a failed command.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import checklib


def make_model():
    vi = h.make_tensor_value_info
    opt = h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, ['n']))
    then_g = h.make_graph([
        h.make_node('OptionalGetElement', ['x'], ['e']),
        h.make_node('Constant', [], ['two'],
                    value=numpy_helper.from_array(np.array(2, np.float32))),
        h.make_node('Mul', ['e', 'two'], ['t']),
    ], 'then', [], [vi('t', T.FLOAT, ['n'])])
    else_g = h.make_graph([
        h.make_node('Constant', [], ['z'],
                    value=numpy_helper.from_array(np.zeros(3, np.float32))),
    ], 'else', [], [vi('z', T.FLOAT, [3])])
    g = h.make_graph([
        h.make_node('OptionalHasElement', ['x'], ['has']),
        h.make_node('If', ['has'], ['y'], then_branch=then_g,
                    else_branch=else_g),
    ], 'optional', [h.make_value_info('x', opt)],
        [vi('has', T.BOOL, []), vi('y', T.FLOAT, [None])])
    return h.make_model(g, opset_imports=[h.make_opsetid('', 15)])


def cases():
    x5 = np.arange(5, dtype=np.float32) - 2
    runs = []
    for name, x, proto in [('present-5', x5[None], False),
                           ('present-1', np.array([[7.0]], np.float32), False),
                           ('empty', np.zeros((0, 3), np.float32), False),
                           ('proto-present', x5[None], True),
                           ('proto-empty', np.zeros((0, 3), np.float32), True)]:
        value = x
        if proto:
            o = onnx.OptionalProto()
            o.name = 'x'
            if x.shape[0]:
                o.elem_type = onnx.OptionalProto.TENSOR
                o.tensor_value.CopyFrom(numpy_helper.from_array(x[0]))
            value = o.SerializeToString()
        has = np.array(x.shape[0] == 1)
        y = x[0] * 2 if x.shape[0] else np.zeros(3, np.float32)
        runs.append((name, [('x', value)], ['has', 'y'], [has, y]))
    model = make_model()
    onnx.checker.check_model(model)
    return [('optional', model, runs)]


if __name__ == '__main__':
    sys.exit(checklib.main(__doc__.splitlines()[0], cases(),
                           checklib.runs_case(1e-6, 0), modes=(False,)))

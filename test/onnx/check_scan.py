#!/usr/bin/python3
"""ONNX Scan (Scan-8 and Scan-11) through disc-compile/disc-run, against NumPy.

Models built with onnx.helper, compiled once with a symbolic scan length
`T` and run at several lengths; the reference is a NumPy loop written from
the operator spec (ONNX Operators.md, Scan):

  scan11   two scan inputs on different axes, the second read in reverse
           (scan_input_directions), a state s += a * b, one scan output
           stacked on axis 1 in reverse order (scan_output_directions) and
           one on axis -1.
  scan8    the batched Scan-8 form ([batch, T, ...] inputs, `directions`):
           a running sum read backwards, per batch element.

    /usr/bin/python3 test/onnx/check_scan.py --bin-dir build/bin [-k REGEX]

Exit codes: 0 every run matched, 1 a mismatch or a failed command.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

import checklib


def scan11():
    vi = h.make_tensor_value_info
    body = h.make_graph([
        h.make_node('Mul', ['a', 'b'], ['ab']),
        h.make_node('Add', ['s', 'ab'], ['s2']),
        h.make_node('Sub', ['a', 'b'], ['d']),
        h.make_node('Identity', ['s2'], ['o1']),
    ], 'body', [vi(n, T.FLOAT, [2]) for n in ['s', 'a', 'b']],
        [vi(n, T.FLOAT, [2]) for n in ['s2', 'o1', 'd']])
    node = h.make_node('Scan', ['s0', 'A', 'B'], ['sf', 'Y1', 'Y2'],
                       body=body, num_scan_inputs=2, scan_input_axes=[1, 0],
                       scan_input_directions=[0, 1],
                       scan_output_axes=[1, -1],
                       scan_output_directions=[1, 0])
    g = h.make_graph([node], 'scan11',
                     [vi('s0', T.FLOAT, [2]), vi('A', T.FLOAT, [2, 'T']),
                      vi('B', T.FLOAT, ['T', 2])],
                     [vi('sf', T.FLOAT, [2]), vi('Y1', T.FLOAT, [2, 'T']),
                      vi('Y2', T.FLOAT, [2, 'T'])])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 11)])

    def ref(s0, A, B):
        n = A.shape[1]
        s, y1, y2 = s0.copy(), [], []
        for t in range(n):
            a, b = A[:, t], B[n - 1 - t]
            s = s + a * b
            y1.append(s.copy())
            y2.append(a - b)
        return {'sf': s, 'Y1': np.stack(y1[::-1], 0).T,
                'Y2': np.stack(y2, 0).T}

    def inputs(rng, n):
        return {'s0': rng.standard_normal(2), 'A': rng.standard_normal((2, n)),
                'B': rng.standard_normal((n, 2))}
    return model, ref, inputs, [1, 5, 17]


def scan8():
    vi = h.make_tensor_value_info
    body = h.make_graph([
        h.make_node('Add', ['s', 'x'], ['s2']),
        h.make_node('Identity', ['s2'], ['y']),
    ], 'body', [vi('s', T.FLOAT, [3]), vi('x', T.FLOAT, [3])],
        [vi('s2', T.FLOAT, [3]), vi('y', T.FLOAT, [3])])
    node = h.make_node('Scan', ['', 's0', 'X'], ['sf', 'Y'], body=body,
                       num_scan_inputs=1, directions=[1])
    g = h.make_graph([node], 'scan8',
                     [vi('s0', T.FLOAT, ['N', 3]),
                      vi('X', T.FLOAT, ['N', 'T', 3])],
                     [vi('sf', T.FLOAT, ['N', 3]),
                      vi('Y', T.FLOAT, ['N', 'T', 3])])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 8)])

    def ref(s0, X):
        rev = X[:, ::-1]
        y = s0[:, None] + np.cumsum(rev, axis=1)
        return {'sf': y[:, -1], 'Y': y}

    def inputs(rng, n):
        return {'s0': rng.standard_normal((2, 3)),
                'X': rng.standard_normal((2, n, 3))}
    return model, ref, inputs, [1, 4, 9]


def cases():
    out = []
    for name, make in [('scan11', scan11), ('scan8', scan8)]:
        model, ref, inputs, lengths = make()
        onnx.checker.check_model(model)
        rng = np.random.default_rng(0)
        runs = []
        for n in lengths:
            ins = {k: np.asarray(v, np.float32) for k, v in
                   inputs(rng, n).items()}
            want = {k: np.asarray(v, np.float32) for k, v in
                    ref(**ins).items()}
            runs.append((f'T={n}', list(ins.items()), list(want),
                         list(want.values())))
        out.append((name, model, runs))
    return out


if __name__ == '__main__':
    sys.exit(checklib.main(__doc__.splitlines()[0], cases(),
                           checklib.runs_case(1e-4, 1e-5), modes=(False,)))

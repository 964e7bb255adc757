#!/usr/bin/python3
"""Seeded random ops (training-mode Dropout, Bernoulli, RandomUniformLike)
through disc-compile/disc-run, against NumPy's MT19937 stream.

DISC draws uniform doubles from MT19937 seeded with the op's `seed` as
NumPy's `RandomState(seed).random_sample` does (disc.random_uniform), so
the reference here is NumPy itself: Dropout's mask is `u >= ratio` and its
output `x * mask / (1 - ratio)` (the ONNX reference), Bernoulli is `u < p`,
RandomUniformLike is `low + (high - low) * u`. Each model is compiled once
with symbolic dims and run at shapes of 1 to 2,000 elements (several
624-word MT19937 blocks), with `training_mode` true and false at run time.

    /usr/bin/python3 test/onnx/check_random.py --bin-dir build/bin

Exit codes: 0 every run matched, 1 a mismatch or a failed command.
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

import checklib

vi = h.make_tensor_value_info


def dropout():
    node = h.make_node('Dropout', ['x', 'r', 't'], ['y', 'm'], seed=7)
    g = h.make_graph([node], 'dropout',
                     [vi('x', T.FLOAT, ['a', 'b']), vi('r', T.FLOAT, []),
                      vi('t', T.BOOL, [])],
                     [vi('y', T.FLOAT, ['a', 'b']),
                      vi('m', T.BOOL, ['a', 'b'])])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 13)])
    cases = []
    for shape, ratio, train in [((1, 1), 0.5, True), ((7, 100), 0.3, True),
                                ((40, 50), 0.9, True), ((3, 5), 0.5, False)]:
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        r = np.array(ratio, np.float32)
        if train:
            u = np.random.RandomState(7).random_sample(shape)
            m = u >= r
            y = (x * m / (1.0 - r)).astype(np.float32)
        else:
            m, y = np.ones(shape, bool), x
        cases.append(({'x': x, 'r': r, 't': np.array(train)},
                      {'y': y, 'm': m}))
    return model, cases


def bernoulli():
    node = h.make_node('Bernoulli', ['p'], ['y'], seed=3.0,
                       dtype=T.INT32)
    g = h.make_graph([node], 'bernoulli', [vi('p', T.DOUBLE, ['n'])],
                     [vi('y', T.INT32, ['n'])])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 15)])
    cases = []
    for n in [5, 313, 2000]:
        p = np.random.default_rng(n).uniform(0, 1, n)
        u = np.random.RandomState(3).random_sample(n)
        cases.append(({'p': p}, {'y': (u < p).astype(np.int32)}))
    return model, cases


def uniform_like():
    node = h.make_node('RandomUniformLike', ['x'], ['y'], low=-2.0,
                       high=3.0, seed=11.0)
    g = h.make_graph([node], 'uniform_like',
                     [vi('x', T.FLOAT, ['a', 'b', 'c'])],
                     [vi('y', T.FLOAT, ['a', 'b', 'c'])])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 13)])
    cases = []
    for shape in [(1, 1, 1), (2, 3, 107)]:
        u = np.random.RandomState(11).random_sample(shape)
        cases.append(({'x': np.zeros(shape, np.float32)},
                      {'y': (-2.0 + 5.0 * u).astype(np.float32)}))
    return model, cases


def cases():
    out = []
    for name, make in [('dropout', dropout), ('bernoulli', bernoulli),
                       ('uniform_like', uniform_like)]:
        model, runs = make()
        onnx.checker.check_model(model)
        out.append((name, model, [
            (str(next(iter(ins.values())).shape), list(ins.items()),
             list(want), list(want.values())) for ins, want in runs]))
    return out


if __name__ == '__main__':
    # Exact: the draws are NumPy's, bit for bit.
    sys.exit(checklib.main(__doc__.splitlines()[0], cases(),
                           checklib.runs_case(1e-6, 0), modes=(False,)))

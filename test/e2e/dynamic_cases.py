#!/usr/bin/python3
"""Small dynamic-shape edge cases, checked against NumPy (ctest e2e-dyn-*).

Each case is a tiny ONNX model built with onnx.helper whose input dims are
symbolic (dim_param). It is compiled ONCE with disc-compile, then run with
disc-run at two or three input shapes (including ones where a broadcast dim
is 1 at run time, a slice bound is clamped, ...), and every output is
compared with an independent NumPy reference: shapes must match exactly,
floats within rtol 1e-3 / atol 1e-4, integers and bools exactly.

    /usr/bin/python3 test/e2e/dynamic_cases.py --bin-dir build/bin \
        --work-dir build/test/e2e/dyn [CASE ...]      (default: all)
    /usr/bin/python3 test/e2e/dynamic_cases.py --list

Exit codes: 0 every run of every case matched, 1 some case failed (the
failing case and run are named), 2 bad usage.
"""

import argparse
import os
import shlex
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
I32 = TensorProto.INT32
U8 = TensorProto.UINT8
I8 = TensorProto.INT8
BOOL = TensorProto.BOOL
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

RTOL = 1e-3
ATOL = 1e-4


# --------------------------------------------------------------------------
# Model helpers.
# --------------------------------------------------------------------------

def vi(name, elem, shape):
    """A value info; an int `shape` means that rank with unnamed dims."""
    if isinstance(shape, int):
        v = helper.make_tensor_value_info(name, elem, [None] * shape)
        if shape == 0:
            v.type.tensor_type.shape.SetInParent()
        return v
    v = helper.make_tensor_value_info(name, elem, shape)
    if shape is not None and len(shape) == 0:
        v.type.tensor_type.shape.SetInParent()  # a scalar, not an unknown rank
    return v


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=13, check=True):
    """`check=False` skips ONNX's checker (for node lists out of order)."""
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    return m


def rng_for(*shape):
    return np.random.default_rng(sum((i + 1) * d for i, d in enumerate(shape)) + 17)


def randn(*shape):
    return rng_for(*shape).standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------
# NumPy references.
# --------------------------------------------------------------------------

def ref_conv2d(x, w, b, strides, pads, dilations):
    """Plain NCHW convolution (group 1): pads = [top, left, bottom, right]."""
    n, c, h, wd = x.shape
    m, c2, kh, kw = w.shape
    assert c == c2
    sh, sw = strides
    dh, dw = dilations
    xp = np.pad(x.astype(np.float64),
                ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pads[1] + pads[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                       j * dw: j * dw + sw * (ow - 1) + 1: sw]
            out += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j].astype(np.float64))
    return (out + b.reshape(1, m, 1, 1)).astype(np.float32)


def ref_reshape(x, shape):
    """ONNX Reshape with allowzero = 0: 0 copies the input dim."""
    shape = [x.shape[i] if s == 0 else int(s) for i, s in enumerate(shape)]
    return x.reshape(shape)


def ref_slice(x, starts, ends, axes, steps):
    """ONNX Slice clamping, written out (independent of Python slices)."""
    idx = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        d = x.shape[a]
        s = int(s) + d if s < 0 else int(s)
        e = int(e) + d if e < 0 else int(e)
        if st > 0:
            s = min(max(s, 0), d)
            e = min(max(e, 0), d)
            rng = range(s, e, int(st))
        else:
            s = min(max(s, 0), d - 1)
            e = min(max(e, -1), d - 1)
            rng = range(s, e, int(st))
        idx[a] = np.array(list(rng), dtype=np.int64)
    out = x
    for a in range(x.ndim):
        if not isinstance(idx[a], slice):
            out = np.take(out, idx[a], axis=a)
    return out


# --------------------------------------------------------------------------
# Cases. Each returns (model, runs, reference); a run is a dict of inputs,
# the reference maps the inputs to a dict of outputs. A run that must be
# rejected is a Fails(inputs, message): disc-run must exit 2 and print
# `message`, and no output may be written.
# --------------------------------------------------------------------------


class Fails:
    """A run that must fail with exit code `code` and print `message`."""

    def __init__(self, inputs, message, code=2, extra_args=()):
        self.inputs = inputs
        self.message = message
        self.code = code
        self.extra_args = list(extra_args)


class CompileFails:
    """A model disc-compile must reject with exit `code`, printing every
    string of `messages`."""

    def __init__(self, *messages, code=2):
        self.messages = messages
        self.code = code


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def _conv_case(dilation):
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal(4).astype(np.float32)
    m = model([helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv",
                                strides=[2, 2], pads=[1, 1, 1, 1],
                                dilations=[dilation, dilation],
                                kernel_shape=[3, 3])],
              [vi("x", F, ["N", 3, "H", "W"])], [vi("y", F, 4)],
              [const("w", w), const("b", b)])
    # Odd and even sizes; the smallest H/W the window allows (3 + 2 pads
    # covers the dilated 5-wide window, 1 with dilation 1).
    small = 1 if dilation == 1 else 3
    runs = [{"x": randn(1, 3, 7, 9)}, {"x": randn(2, 3, 16, 5)},
            {"x": randn(1, 3, small, 12)}]

    def ref(x):
        return {"y": ref_conv2d(x, w, b, (2, 2), (1, 1, 1, 1), (dilation, dilation))}
    return m, runs, ref


@case
def conv_stride2_dil1():
    """Conv 3x3, stride 2, pads 1, dilation 1 on [N, 3, H, W]."""
    return _conv_case(1)


@case
def conv_stride2_dil2():
    """Conv 3x3, stride 2, pads 1, dilation 2 on [N, 3, H, W]."""
    return _conv_case(2)


@case
def pad_conv_pool_concat():
    """Zero Pads in front of a Conv and of an AveragePool (folded into their
    padding: the pooling then counts the padding, as the padded copy did),
    and a Concat of two Conv outputs read by a MaxPool and, through the
    pooling, a Conv (the Concat copies NHWC data between NHWC calls)."""
    g = np.random.default_rng(3)
    wa = g.standard_normal((8, 4, 3, 3)).astype(np.float32)
    wb = g.standard_normal((8, 4, 1, 1)).astype(np.float32)
    wc = g.standard_normal((5, 16, 1, 1)).astype(np.float32)
    ba = g.standard_normal(8).astype(np.float32)
    zb, zc = np.zeros(8, np.float32), np.zeros(5, np.float32)
    m = model([
        helper.make_node("Pad", ["x", "p1"], ["xp"], name="pad_x"),
        helper.make_node("Conv", ["xp", "wa", "ba"], ["a"], name="conv_a",
                         kernel_shape=[3, 3], pads=[0, 1, 0, 1]),
        helper.make_node("Relu", ["a"], ["ar"], name="relu_a"),
        helper.make_node("Conv", ["x", "wb"], ["b"], name="conv_b",
                         kernel_shape=[1, 1]),
        helper.make_node("Concat", ["ar", "b"], ["c"], name="concat", axis=1),
        helper.make_node("MaxPool", ["c"], ["mp"], name="maxpool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Pad", ["c", "p2", "zero"], ["cp"], name="pad_c"),
        helper.make_node("AveragePool", ["cp"], ["ap"], name="avgpool",
                         kernel_shape=[3, 3]),
        helper.make_node("Conv", ["ap", "wc"], ["y"], name="conv_c",
                         kernel_shape=[1, 1]),
    ], [vi("x", F, ["N", 4, "H", "W"])], [vi("y", F, 4), vi("mp", F, 4)],
        [const("p1", np.array([0, 0, 1, 0, 0, 0, 1, 0], np.int64)),
         const("p2", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)),
         const("zero", np.array(0.0, np.float32)),
         const("wa", wa), const("wb", wb), const("wc", wc), const("ba", ba)])
    runs = [{"x": randn(1, 4, 6, 7)}, {"x": randn(2, 4, 9, 4)},
            {"x": randn(3, 4, 2, 5)}]

    def ref(x):
        a = np.maximum(ref_conv2d(x, wa, ba, (1, 1), (1, 1, 1, 1), (1, 1)), 0)
        b = ref_conv2d(x, wb, zb, (1, 1), (0, 0, 0, 0), (1, 1))
        c = np.concatenate([a, b], axis=1).astype(np.float64)
        n, ch, h, w = c.shape
        mp = c[:, :, :h // 2 * 2, :w // 2 * 2].reshape(
            n, ch, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        cp = np.pad(c, ((0, 0), (0, 0), (1, 1), (1, 1)))
        ap = sum(cp[:, :, i:i + h, j:j + w]
                 for i in range(3) for j in range(3)) / 9.0
        y = ref_conv2d(ap.astype(np.float32), wc, zc, (1, 1), (0, 0, 0, 0),
                       (1, 1))
        return {"y": y, "mp": mp.astype(np.float32)}
    return m, runs, ref


@case
def squeeze_axes_input():
    """Squeeze with `axes` a run-time graph input ([2], negative entries
    allowed) on x [a, b, c, d]; the other dims are unknown."""
    m = model([helper.make_node("Squeeze", ["x", "axes"], ["y"], name="sq")],
              [vi("x", F, ["a", "b", "c", "d"]), vi("axes", I64, [2])],
              [vi("y", F, 2)])
    runs = [{"x": randn(3, 1, 4, 1), "axes": np.array([1, 3], np.int64)},
            {"x": randn(1, 5, 1, 2), "axes": np.array([-2, 0], np.int64)},
            {"x": randn(1, 1, 1, 1), "axes": np.array([-1, 1], np.int64)}]

    def ref(x, axes):
        return {"y": np.squeeze(x, axis=tuple(int(a) for a in axes))}
    return m, runs, ref


@case
def unsqueeze_axes_input():
    """Unsqueeze with `axes` a run-time graph input ([2], negative entries
    allowed) on x [a, b]: result rank 4, positions chosen at run time."""
    m = model([helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="usq")],
              [vi("x", F, ["a", "b"]), vi("axes", I64, [2])],
              [vi("y", F, 4)])
    runs = [{"x": randn(3, 4), "axes": np.array([0, 3], np.int64)},
            {"x": randn(2, 5), "axes": np.array([-1, 1], np.int64)},
            {"x": randn(1, 1), "axes": np.array([2, 1], np.int64)}]

    def ref(x, axes):
        return {"y": np.expand_dims(x, axis=tuple(int(a) for a in axes))}
    return m, runs, ref


@case
def squeeze_unsqueeze_axes_const():
    """Squeeze/Unsqueeze with constant `axes` inputs (negative) on
    x [a, 1, b] whose other dims are unknown; then a Shape of the result."""
    m = model([
        helper.make_node("Squeeze", ["x", "sq_axes"], ["s"], name="sq"),
        helper.make_node("Unsqueeze", ["s", "usq_axes"], ["y"], name="usq"),
        helper.make_node("Shape", ["y"], ["shape"], name="shape"),
    ], [vi("x", F, ["a", 1, "b"])], [vi("y", F, 4), vi("shape", I64, 1)],
        [const("sq_axes", np.array([-2], np.int64)),
         const("usq_axes", np.array([-1, 0], np.int64))])
    runs = [{"x": randn(3, 1, 4)}, {"x": randn(1, 1, 7)}, {"x": randn(5, 1, 1)}]

    def ref(x):
        y = np.expand_dims(np.squeeze(x, axis=1), axis=(0, 3))
        return {"y": y, "shape": np.array(y.shape, np.int64)}
    return m, runs, ref


@case
def constant_of_shape_default():
    """ConstantOfShape without a `value` attribute (float 0): the shape is a
    run-time graph input, and also Shape(x) of a dynamic x."""
    m = model([
        helper.make_node("ConstantOfShape", ["shape"], ["z"], name="cos_in"),
        helper.make_node("Shape", ["x"], ["xs"], name="shape"),
        helper.make_node("ConstantOfShape", ["xs"], ["zx"], name="cos_x"),
        helper.make_node("Add", ["zx", "x"], ["y"], name="add"),
    ], [vi("shape", I64, [3]), vi("x", F, ["a", "b"])],
        [vi("z", F, 3), vi("zx", F, 2), vi("y", F, 2)])
    runs = [{"shape": np.array([2, 3, 4], np.int64), "x": randn(3, 5)},
            {"shape": np.array([1, 7, 1], np.int64), "x": randn(1, 1)},
            {"shape": np.array([5, 1, 2], np.int64), "x": randn(4, 2)},
            {"shape": np.array([2, 0, 3], np.int64), "x": randn(1, 3)}]

    def ref(shape, x):
        return {"z": np.zeros(tuple(int(s) for s in shape), np.float32),
                "zx": np.zeros(x.shape, np.float32), "y": x.copy()}
    return m, runs, ref


@case
def reshape_runtime_zero_minus1():
    """Reshape whose shape tensor is computed at run time and contains 0 and
    -1: Concat([0], [-1], Shape(x)[3:]) on x [a, b, c, d] -> [a, b*c, d];
    and a shape given as a graph input ([0, -1, k] style values)."""
    m = model([
        helper.make_node("Shape", ["x"], ["xs"], name="shape"),
        helper.make_node("Slice", ["xs", "s3", "s4"], ["last"], name="last"),
        helper.make_node("Concat", ["zero", "minus1", "last"], ["shp"],
                         name="cat", axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["y"], name="reshape"),
        helper.make_node("Reshape", ["x", "shape_in"], ["y2"], name="reshape_in"),
    ], [vi("x", F, ["a", "b", "c", "d"]), vi("shape_in", I64, [3])],
        [vi("y", F, 3), vi("y2", F, 3)],
        [const("s3", np.array([3], np.int64)), const("s4", np.array([4], np.int64)),
         const("zero", np.array([0], np.int64)),
         const("minus1", np.array([-1], np.int64))], opset=14)
    runs = [{"x": randn(2, 3, 4, 5), "shape_in": np.array([0, -1, 5], np.int64)},
            {"x": randn(1, 1, 6, 2), "shape_in": np.array([-1, 0, 3], np.int64)},
            {"x": randn(3, 2, 1, 1), "shape_in": np.array([0, 0, -1], np.int64)}]

    def ref(x, shape_in):
        return {"y": ref_reshape(x, [0, -1, x.shape[3]]),
                "y2": ref_reshape(x, shape_in)}
    return m, runs, ref


@case
def expand_broadcast_unknown():
    """Expand x [a, b] to Shape(t) of t [c, d]: both sides unknown, one of
    each pair is 1 at run time (either side)."""
    m = model([
        helper.make_node("Shape", ["t"], ["ts"], name="shape"),
        helper.make_node("Expand", ["x", "ts"], ["y"], name="expand"),
    ], [vi("x", F, ["a", "b"]), vi("t", F, ["c", "d"])], [vi("y", F, 2)])
    runs = [{"x": randn(1, 4), "t": randn(3, 1)},
            {"x": randn(5, 1), "t": randn(1, 6)},
            {"x": randn(2, 3), "t": randn(2, 3)},
            {"x": randn(1, 1), "t": randn(1, 1)}]

    def ref(x, t):
        return {"y": x * np.ones(t.shape, np.float32)}
    return m, runs, ref


@case
def expand_shape_input():
    """Expand with the target shape a run-time graph input ([3]) against x
    [a, b]: rank grows and either side may be 1."""
    m = model([helper.make_node("Expand", ["x", "shape"], ["y"], name="expand")],
              [vi("x", F, ["a", "b"]), vi("shape", I64, [3])], [vi("y", F, 3)])
    runs = [{"x": randn(1, 4), "shape": np.array([2, 3, 1], np.int64)},
            {"x": randn(3, 1), "shape": np.array([1, 1, 5], np.int64)},
            {"x": randn(2, 2), "shape": np.array([1, 2, 2], np.int64)}]

    def ref(x, shape):
        return {"y": x * np.ones(tuple(int(s) for s in shape), np.float32)}
    return m, runs, ref


@case
def where_broadcast_unknown():
    """Where(cond [a, b], x [c, d], y [e]): three unknown shapes broadcast
    against each other, with 1s on different sides at run time."""
    m = model([helper.make_node("Where", ["cond", "x", "y"], ["z"], name="where")],
              [vi("cond", BOOL, ["a", "b"]), vi("x", F, ["c", "d"]),
               vi("y", F, ["e"])], [vi("z", F, 2)])

    def mk(cs, xs, ys):
        return {"cond": rng_for(*cs).random(cs) > 0.5, "x": randn(*xs), "y": randn(*ys)}
    runs = [mk((1, 4), (3, 1), (1,)), mk((3, 1), (1, 1), (5,)),
            mk((2, 3), (2, 3), (3,)), mk((4, 1), (1, 6), (1,))]

    def ref(cond, x, y):
        return {"z": np.where(cond, x, y)}
    return m, runs, ref


@case
def add_broadcast_unknown():
    """Add x [a, b] + y [c, d]: per dim, 1 on either side at run time (the
    elementwise broadcasting Where and Expand rely on)."""
    m = model([helper.make_node("Add", ["x", "y"], ["z"], name="add")],
              [vi("x", F, ["a", "b"]), vi("y", F, ["c", "d"])], [vi("z", F, 2)])
    runs = [{"x": randn(1, 4), "y": randn(3, 1)}, {"x": randn(3, 4), "y": randn(3, 4)},
            {"x": randn(5, 1), "y": randn(1, 1)}]

    def ref(x, y):
        return {"z": x + y}
    return m, runs, ref


@case
def broadcast_pinned_dims():
    """Add/Expand/Where of x [a, b] with y [c, d] where Concats with
    constants pin a = 2, b = 3 at compile time: y's dims must stay dynamic
    (1 or equal at run time), not be equated with x's and made static."""
    m = model([
        helper.make_node("Concat", ["x", "k13"], ["p0"], name="pin_b", axis=0),
        helper.make_node("Concat", ["x", "k21"], ["p1"], name="pin_a", axis=1),
        helper.make_node("Add", ["x", "y"], ["sum"], name="add"),
        helper.make_node("Shape", ["x"], ["xs"], name="shape"),
        helper.make_node("Expand", ["y", "xs"], ["ey"], name="expand"),
        helper.make_node("Where", ["cond", "y", "x"], ["w"], name="where"),
    ], [vi("x", F, ["a", "b"]), vi("y", F, ["c", "d"]), vi("cond", BOOL, ["e", "f"])],
        [vi("p0", F, 2), vi("p1", F, 2), vi("sum", F, 2), vi("ey", F, 2), vi("w", F, 2)],
        [const("k13", np.ones((1, 3), np.float32)), const("k21", np.ones((2, 1), np.float32))])

    def mk(ys, cs):
        return {"x": randn(2, 3), "y": randn(*ys), "cond": rng_for(*cs).random(cs) > 0.5}
    runs = [mk((1, 3), (2, 1)), mk((2, 1), (1, 3)), mk((1, 1), (1, 1)), mk((2, 3), (2, 3))]

    def ref(x, y, cond):
        return {"p0": np.concatenate([x, np.ones((1, 3), np.float32)], axis=0),
                "p1": np.concatenate([x, np.ones((2, 1), np.float32)], axis=1),
                "sum": x + y, "ey": y * np.ones(x.shape, np.float32),
                "w": np.where(cond, y, x)}
    return m, runs, ref


def _slice_model(starts, ends, axes, steps):
    return model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"],
                                   name="slice")],
                 [vi("x", F, ["a", "b", "c"])], [vi("y", F, 3)],
                 [const("st", np.array(starts, np.int64)),
                  const("en", np.array(ends, np.int64)),
                  const("ax", np.array(axes, np.int64)),
                  const("sp", np.array(steps, np.int64))])


SLICE_RUNS = [(4, 5, 6), (1, 2, 3), (7, 1, 9)]


def _slice_case(starts, ends, axes, steps):
    m = _slice_model(starts, ends, axes, steps)
    runs = [{"x": randn(*s)} for s in SLICE_RUNS]

    def ref(x):
        return {"y": ref_slice(x, starts, ends, axes, steps)}
    return m, runs, ref


@case
def slice_neg_start_int64max_end():
    """Slice starts [-3, -2, 1], ends INT64_MAX, on unknown dims (a start
    before the beginning is clamped)."""
    return _slice_case([-3, -2, 1], [INT64_MAX] * 3, [0, 1, 2], [1, 1, 2])


@case
def slice_negative_steps():
    """Slice with negative steps: starts -1 / INT64_MAX / -2, ends INT64_MIN
    / -4 / 0 (reverse to the front, a bounded reverse, reverse stopping
    before 0), steps -1, -2, -3."""
    return _slice_case([-1, INT64_MAX, -2], [INT64_MIN, -4, 0], [0, 1, 2],
                       [-1, -2, -3])


@case
def slice_runtime_bounds():
    """Slice whose starts/ends/steps are run-time graph inputs (negative
    starts, INT64_MAX / INT64_MIN ends, negative steps) on x [a, b]."""
    m = model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"],
                                name="slice")],
              [vi("x", F, ["a", "b"]), vi("st", I64, [2]), vi("en", I64, [2]),
               vi("sp", I64, [2])], [vi("y", F, 2)],
              [const("ax", np.array([0, 1], np.int64))])
    a = np.array
    runs = [{"x": randn(5, 7), "st": a([-2, 1], np.int64),
             "en": a([INT64_MAX, INT64_MAX], np.int64), "sp": a([1, 2], np.int64)},
            {"x": randn(6, 4), "st": a([-1, INT64_MAX], np.int64),
             "en": a([INT64_MIN, -4], np.int64), "sp": a([-2, -1], np.int64)},
            {"x": randn(1, 3), "st": a([-9, -1], np.int64),
             "en": a([INT64_MAX, 0], np.int64), "sp": a([1, -1], np.int64)},
            # An empty result: start after end on a positive step.
            {"x": randn(3, 4), "st": a([2, -1], np.int64),
             "en": a([1, INT64_MIN], np.int64), "sp": a([1, -1], np.int64)}]

    def ref(x, st, en, sp):
        return {"y": ref_slice(x, st, en, [0, 1], sp)}
    return m, runs, ref


@case
def gather_negative_indices():
    """Gather with negative indices: constant [-1, 0, -2] on axis 0 and a
    run-time [2, 2] index tensor (mixed signs) on axis 1 of x [a, b]."""
    m = model([
        helper.make_node("Gather", ["x", "ci"], ["y0"], name="g0", axis=0),
        helper.make_node("Gather", ["x", "idx"], ["y1"], name="g1", axis=1),
        helper.make_node("Gather", ["x", "scalar"], ["y2"], name="g2", axis=-1),
    ], [vi("x", F, ["a", "b"]), vi("idx", I64, ["i", "j"])],
        [vi("y0", F, 2), vi("y1", F, 3), vi("y2", F, 1)],
        [const("ci", np.array([-1, 0, -2], np.int64)),
         const("scalar", np.array(-1, np.int64))])
    runs = [{"x": randn(3, 5), "idx": np.array([[-1, 0], [2, -5]], np.int64)},
            {"x": randn(2, 1), "idx": np.array([[0, -1, 0]], np.int64)},
            {"x": randn(4, 3), "idx": np.array([[-3], [-2], [1]], np.int64)}]

    def ref(x, idx):
        return {"y0": np.take(x, [-1 + x.shape[0], 0, -2 + x.shape[0]], axis=0),
                "y1": np.take(x, np.where(idx < 0, idx + x.shape[1], idx), axis=1),
                "y2": x[:, x.shape[1] - 1]}
    return m, runs, ref


@case
def matmul_1d_operands():
    """MatMul with 1-D operands: v [k] @ B [b, k, n], A [b, m, k] @ v [k],
    and v [k] @ v [k] (a scalar), all dims unknown; plus A @ C [c, k, n]
    whose batch dims broadcast (b or c is 1 at run time)."""
    m = model([
        helper.make_node("MatMul", ["v", "B"], ["vB"], name="mm_left"),
        helper.make_node("MatMul", ["A", "v"], ["Av"], name="mm_right"),
        helper.make_node("MatMul", ["v", "v"], ["vv"], name="mm_dot"),
        helper.make_node("MatMul", ["A", "C"], ["AC"], name="mm_batch"),
    ], [vi("v", F, ["k"]), vi("B", F, ["b", "k", "n"]), vi("A", F, ["b", "m", "k"]),
        vi("C", F, ["c", "k", "n"])],
        [vi("vB", F, 2), vi("Av", F, 2), vi("vv", F, 0), vi("AC", F, 3)])
    runs = [{"v": randn(4), "B": randn(2, 4, 3), "A": randn(2, 5, 4), "C": randn(1, 4, 3)},
            {"v": randn(1), "B": randn(1, 1, 1), "A": randn(1, 1, 1), "C": randn(3, 1, 1)},
            {"v": randn(7), "B": randn(3, 7, 1), "A": randn(3, 2, 7), "C": randn(3, 7, 1)}]

    def ref(v, B, A, C):
        v64, B64, A64 = v.astype(np.float64), B.astype(np.float64), A.astype(np.float64)
        return {"vB": np.matmul(v64, B64).astype(np.float32),
                "Av": np.matmul(A64, v64).astype(np.float32),
                "vv": np.array(np.dot(v64, v64), np.float32),
                "AC": np.matmul(A64, C.astype(np.float64)).astype(np.float32)}
    return m, runs, ref


@case
def range_runtime_limit_reshape():
    """Range(0, n, 1) with a run-time limit n (a graph input) reshaped to
    [-1, 4]; Range(0, 4 * Shape(x)[0], 2) reshaped to Concat(Shape(x)[0],
    [-1]) and added to x [a, 2]; a float Range with a run-time limit."""
    m = model([
        helper.make_node("Range", ["zero", "n", "one"], ["r"], name="range_n"),
        helper.make_node("Reshape", ["r", "shp"], ["y"], name="reshape_n"),
        helper.make_node("Shape", ["x"], ["xs"], name="shape"),
        helper.make_node("Gather", ["xs", "gi"], ["d0"], name="d0", axis=0),
        helper.make_node("Mul", ["d0", "four"], ["lim"], name="lim"),
        helper.make_node("Range", ["zero", "lim", "two"], ["r2"], name="range_x"),
        helper.make_node("Unsqueeze", ["d0", "ax0"], ["d0v"], name="d0v"),
        helper.make_node("Concat", ["d0v", "minus1"], ["shp2"], name="cat", axis=0),
        helper.make_node("Reshape", ["r2", "shp2"], ["r2r"], name="reshape_x"),
        helper.make_node("Cast", ["r2r"], ["r2f"], name="cast", to=F),
        helper.make_node("Add", ["r2f", "x"], ["r2x"], name="addx"),
        helper.make_node("Range", ["fz", "fl", "fd"], ["rf"], name="range_f"),
    ], [vi("n", I64, []), vi("x", F, ["a", 2]), vi("fl", F, [])],
        [vi("y", I64, 2), vi("r2x", F, 2), vi("rf", F, 1)],
        [const("zero", np.array(0, np.int64)), const("one", np.array(1, np.int64)),
         const("two", np.array(2, np.int64)), const("four", np.array(4, np.int64)),
         const("gi", np.array(0, np.int64)), const("ax0", np.array([0], np.int64)),
         const("shp", np.array([-1, 4], np.int64)),
         const("minus1", np.array([-1], np.int64)),
         const("fz", np.array(0.5, np.float32)), const("fd", np.array(0.25, np.float32))])
    runs = [{"n": np.array(12, np.int64), "x": randn(3, 2), "fl": np.array(2.0, np.float32)},
            {"n": np.array(4, np.int64), "x": randn(1, 2), "fl": np.array(0.6, np.float32)},
            {"n": np.array(20, np.int64), "x": randn(6, 2), "fl": np.array(3.1, np.float32)},
            # Empty ranges: limit == start, and a float limit below start.
            {"n": np.array(0, np.int64), "x": randn(2, 2), "fl": np.array(0.1, np.float32)}]

    def ref(n, x, fl):
        r2 = np.arange(0, x.shape[0] * 4, 2, dtype=np.int64).reshape(x.shape[0], -1)
        nf = max(int(np.ceil((float(fl) - 0.5) / 0.25)), 0)
        return {"y": np.arange(0, int(n), 1, dtype=np.int64).reshape(-1, 4),
                "r2x": r2.astype(np.float32) + x,
                "rf": (0.5 + np.arange(nf) * 0.25).astype(np.float32)}
    return m, runs, ref


# --------------------------------------------------------------------------
# Run-time contracts (docs/runtime-abi.md "Run-time checks"): uint8 zero
# points, values that would crash, contract violations that must be
# rejected with a message naming the op and node, valid edge cases.
# --------------------------------------------------------------------------

def u8(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).integers(0, 256, shape).astype(np.uint8)


@case
def matmul_integer_uint8_zero_points():
    """MatMulInteger with uint8 A [M, 3] (M unknown), a uint8 B [3, 2]
    initializer with values 0-255, zero points 130 and 140 (constants), and
    the same product with the zero points as run-time graph inputs."""
    bw = np.array([[0, 255, 17], [200, 129, 128]], np.uint8).T.copy()
    m = model([
        helper.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"], name="mmi"),
        helper.make_node("MatMulInteger", ["a", "b", "azp_in", "bzp_in"], ["y2"],
                         name="mmi_in"),
    ], [vi("a", U8, ["M", 3]), vi("azp_in", U8, []), vi("bzp_in", U8, [])],
        [vi("y", I32, 2), vi("y2", I32, 2)],
        [const("b", bw), const("azp", np.array(130, np.uint8)),
         const("bzp", np.array(140, np.uint8))])
    runs = [{"a": u8(4, 3), "azp_in": np.array(130, np.uint8), "bzp_in": np.array(140, np.uint8)},
            {"a": u8(1, 3, seed=3), "azp_in": np.array(255, np.uint8),
             "bzp_in": np.array(128, np.uint8)}]

    def ref(a, azp_in, bzp_in):
        ai, bi = a.astype(np.int32), bw.astype(np.int32)
        return {"y": (ai - 130) @ (bi - 140),
                "y2": (ai - int(azp_in)) @ (bi - int(bzp_in))}
    return m, runs, ref


@case
def conv_integer_uint8_zero_points():
    """ConvInteger with uint8 x [N, 1, H, W], a uint8 w [2, 1, 2, 2]
    initializer, zero points 200 (x) and 129 (w)."""
    w = np.array([[[[0, 255], [128, 7]]], [[[129, 130], [250, 1]]]], np.uint8)
    m = model([helper.make_node("ConvInteger", ["x", "w", "xzp", "wzp"], ["y"],
                                name="convi")],
              [vi("x", U8, ["N", 1, "H", "W"])], [vi("y", I32, 4)],
              [const("w", w), const("xzp", np.array(200, np.uint8)),
               const("wzp", np.array(129, np.uint8))], opset=10)
    runs = [{"x": u8(1, 1, 3, 4)}, {"x": u8(2, 1, 2, 2, seed=5)}]

    def ref(x):
        xi, wi = x.astype(np.int64) - 200, w.astype(np.int64) - 129
        n, _, h, wd = x.shape
        y = np.zeros((n, 2, h - 1, wd - 1), np.int64)
        for i in range(2):
            for j in range(2):
                y += np.einsum("nhw,m->nmhw", xi[:, 0, i:i + h - 1, j:j + wd - 1],
                               wi[:, 0, i, j])
        return {"y": y.astype(np.int32)}
    return m, runs, ref


@case
def qlinear_matmul_uint8_zero_points():
    """QLinearMatMul with uint8 A [M, 2], B [2, 2], zero points 128, 131 and
    an output zero point 129 (scales powers of two, so exact)."""
    bw = np.array([[255, 0], [131, 200]], np.uint8)
    m = model([helper.make_node(
        "QLinearMatMul", ["a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"], ["y"],
        name="qmm")],
        [vi("a", U8, ["M", 2])], [vi("y", U8, 2)],
        [const("as", np.array(0.5, np.float32)), const("azp", np.array(128, np.uint8)),
         const("b", bw), const("bs", np.array(0.25, np.float32)),
         const("bzp", np.array(131, np.uint8)), const("ys", np.array(64.0, np.float32)),
         const("yzp", np.array(129, np.uint8))])
    runs = [{"a": u8(3, 2)}, {"a": np.array([[255, 0], [0, 255]], np.uint8)}]

    def ref(a):
        acc = (a.astype(np.int64) - 128) @ (bw.astype(np.int64) - 131)
        y = np.rint(acc * (0.5 * 0.25 / 64.0)) + 129
        return {"y": np.clip(y, 0, 255).astype(np.uint8)}
    return m, runs, ref


@case
def dequantize_uint8_zero_point():
    """DequantizeLinear of uint8 x [N] with zero point 200 and scale 0.5;
    DynamicQuantizeLinear's uint8 zero point fed back into it."""
    m = model([helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["y"], name="dq")],
              [vi("x", U8, ["N"])], [vi("y", F, 1)],
              [const("s", np.array(0.5, np.float32)), const("zp", np.array(200, np.uint8))])
    runs = [{"x": np.array([0, 127, 128, 200, 255], np.uint8)}, {"x": u8(7)}]

    def ref(x):
        return {"y": ((x.astype(np.float32) - 200) * 0.5).astype(np.float32)}
    return m, runs, ref


@case
def range_delta_zero():
    """Range with start, limit and delta graph inputs (int64 and float): a
    run-time delta of 0 is rejected (ONNX: the count divides by delta)."""
    m = model([
        helper.make_node("Range", ["s", "l", "d"], ["r"], name="range_i"),
        helper.make_node("Range", ["fs", "fl", "fd"], ["rf"], name="range_f"),
    ], [vi("s", I64, []), vi("l", I64, []), vi("d", I64, []),
        vi("fs", F, []), vi("fl", F, []), vi("fd", F, [])],
        [vi("r", I64, 1), vi("rf", F, 1)])

    def mk(s, l, d, fd=0.5):
        return {"s": np.array(s, np.int64), "l": np.array(l, np.int64),
                "d": np.array(d, np.int64), "fs": np.array(1.0, np.float32),
                "fl": np.array(3.0, np.float32), "fd": np.array(fd, np.float32)}
    runs = [mk(0, 10, 3), mk(10, 0, -4), mk(5, 5, 1),
            Fails(mk(0, 10, 0), "Range node 'range_i': delta is 0"),
            Fails(mk(0, 10, 2, fd=0.0), "Range node 'range_f': delta is 0")]

    def ref(s, l, d, fs, fl, fd):
        return {"r": np.arange(int(s), int(l), int(d), dtype=np.int64),
                "rf": np.arange(1.0, 3.0, float(fd), dtype=np.float32)}
    return m, runs, ref


@case
def constant_of_shape_overflow():
    """ConstantOfShape with a run-time shape: [2^32, 2^32] overflows the
    element count (with and without --memory-limit); a negative dim is
    rejected; [2, 3] works."""
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["z"], name="cos",
                                value=helper.make_tensor("v", F, [1], [1.5]))],
              [vi("shape", I64, [2])], [vi("z", F, 2)])
    big = {"shape": np.array([2 ** 32, 2 ** 32], np.int64)}
    runs = [{"shape": np.array([2, 3], np.int64)},
            Fails(big, "byte size overflows int64"),
            Fails(big, "byte size overflows int64", extra_args=["--memory-limit", "1000000"]),
            Fails({"shape": np.array([2 ** 20, 2 ** 20], np.int64)}, "memory limit exceeded",
                  code=3, extra_args=["--memory-limit", "1000000"]),
            Fails({"shape": np.array([-1, 3], np.int64)},
                  "ConstantOfShape node 'cos': shape[0] is -1")]

    def ref(shape):
        return {"z": np.full(tuple(int(v) for v in shape), 1.5, np.float32)}
    return m, runs, ref


@case
def reshape_count_mismatch():
    """Reshape of x [N, 4] to a run-time shape: [3, 5] with N = 3 (12
    against 15 elements), two -1s, and -2 are rejected; [2, -1] and [0, 4]
    work."""
    m = model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
              [vi("x", F, ["N", 4]), vi("shape", I64, [2])], [vi("y", F, 2)])
    x = randn(3, 4)
    a = lambda *v: np.array(v, np.int64)
    runs = [{"x": x, "shape": a(2, -1)}, {"x": x, "shape": a(0, 4)},
            {"x": x, "shape": a(12, 1)},
            Fails({"x": x, "shape": a(3, 5)},
                  "Reshape node 'reshape': cannot reshape 12 elements into 15"),
            Fails({"x": x, "shape": a(-1, -1)}, "Reshape node 'reshape': more than one -1"),
            Fails({"x": x, "shape": a(5, -1)}, "Reshape node 'reshape': cannot reshape 12 elements"),
            Fails({"x": x, "shape": a(-2, 6)}, "Reshape node 'reshape': shape[0] is -2")]

    def ref(x, shape):
        return {"y": ref_reshape(x, shape)}
    return m, runs, ref


@case
def gather_index_out_of_range():
    """Gather on axis 0 of a [5, 2] table with a run-time index: 7 and -6
    are rejected, -5..4 work; also GatherElements and GatherND."""
    m = model([
        helper.make_node("Gather", ["t", "idx"], ["y"], name="gather", axis=0),
        helper.make_node("GatherElements", ["t", "ge"], ["y2"], name="gather_el", axis=0),
        helper.make_node("GatherND", ["t", "gnd"], ["y3"], name="gather_nd"),
    ], [vi("t", F, ["a", 2]), vi("idx", I64, ["k"]), vi("ge", I64, ["p", 2]),
        vi("gnd", I64, ["q", 2])], [vi("y", F, 2), vi("y2", F, 2), vi("y3", F, 1)])
    t = randn(5, 2)
    a = lambda *v: np.array(v, np.int64)
    ok = {"t": t, "idx": a(0, -5, 4), "ge": a([4, -1], [0, 1]), "gnd": a([4, 1], [-5, -2])}
    runs = [ok,
            Fails(dict(ok, idx=a(1, 7)),
                  "Gather node 'gather': index 7 is out of range [-5, 5)"),
            Fails(dict(ok, idx=a(-6)),
                  "Gather node 'gather': index -6 is out of range [-5, 5)"),
            Fails(dict(ok, ge=a([5, 0])),
                  "GatherElements node 'gather_el': index 5 is out of range [-5, 5)"),
            Fails(dict(ok, gnd=a([1, 2])),
                  "GatherND node 'gather_nd': index 2 is out of range [-2, 2)")]

    def ref(t, idx, ge, gnd):
        return {"y": np.take(t, idx, axis=0),
                "y2": np.take_along_axis(t, np.where(ge < 0, ge + 5, ge), axis=0),
                "y3": np.array([t[i, j] for i, j in gnd], np.float32)}
    return m, runs, ref


@case
def scatter_index_out_of_range():
    """ScatterElements and ScatterND into x [a, 3] with run-time indices:
    an out-of-range index is rejected."""
    m = model([
        helper.make_node("ScatterElements", ["x", "si", "su"], ["y"], name="scatter_el",
                         axis=1),
        helper.make_node("ScatterND", ["x", "ni", "nu"], ["y2"], name="scatter_nd"),
    ], [vi("x", F, ["a", 3]), vi("si", I64, [1, 2]), vi("su", F, [1, 2]),
        vi("ni", I64, [1, 1]), vi("nu", F, [1, 3])], [vi("y", F, 2), vi("y2", F, 2)])
    x = randn(4, 3)
    a = lambda *v: np.array(v, np.int64)
    ok = {"x": x, "si": a([2, -3]), "su": np.array([[9, 8]], np.float32),
          "ni": a([-1]), "nu": np.array([[1, 2, 3]], np.float32)}
    runs = [ok,
            Fails(dict(ok, si=a([3, 0])),
                  "ScatterElements node 'scatter_el': index 3 is out of range [-3, 3)"),
            Fails(dict(ok, ni=a([4])),
                  "ScatterND node 'scatter_nd': index 4 is out of range [-4, 4)")]

    def ref(x, si, su, ni, nu):
        y = x.copy()
        for j, v in zip(si[0], su[0]):
            y[0, j % 3] = v
        y2 = x.copy()
        y2[ni[0, 0] % x.shape[0]] = nu[0]
        return {"y": y, "y2": y2}
    return m, runs, ref


@case
def add_broadcast_mismatch():
    """Add of x [A] and y [B], both unknown: A = 3 with B = 2 is rejected
    (the dims neither match nor are 1); equal sizes and 1s work."""
    m = model([helper.make_node("Add", ["x", "y"], ["z"], name="add")],
              [vi("x", F, ["A"]), vi("y", F, ["B"])], [vi("z", F, 1)])
    runs = [{"x": randn(3), "y": randn(3)}, {"x": randn(1), "y": randn(4)},
            {"x": randn(5), "y": randn(1)},
            Fails({"x": randn(3), "y": randn(2)},
                  "Add node 'add': operand 1 dim 0 is 2, cannot broadcast to 3")]

    def ref(x, y):
        return {"z": x + y}
    return m, runs, ref


@case
def matmul_inner_dim_mismatch():
    """MatMul of A [M, K1] and B [K2, N] with K1, K2 unknown: K1 != K2 at
    run time is rejected (it would read past A or B)."""
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
              [vi("a", F, ["M", "K1"]), vi("b", F, ["K2", "N"])], [vi("y", F, 2)])
    runs = [{"a": randn(2, 3), "b": randn(3, 4)},
            Fails({"a": randn(2, 3), "b": randn(5, 4)},
                  "MatMul node 'mm': A dim 1 is 3 but B dim 0 is 5")]

    def ref(a, b):
        return {"y": (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)}
    return m, runs, ref


@case
def int_div_mod_by_zero():
    """Integer Div and Mod by run-time divisors: a 0 is rejected and the
    message names the op whose divisor it is (each op has its own divisor,
    so the op order chosen by the scheduler does not matter); float
    division by 0 stays IEEE."""
    m = model([
        helper.make_node("Div", ["x", "y"], ["q"], name="div"),
        helper.make_node("Mod", ["x", "z"], ["r"], name="mod"),
        helper.make_node("Div", ["fx", "fy"], ["fq"], name="fdiv"),
    ], [vi("x", I64, ["n"]), vi("y", I64, ["n"]), vi("z", I64, ["n"]),
        vi("fx", F, [2]), vi("fy", F, [2])],
        [vi("q", I64, 1), vi("r", I64, 1), vi("fq", F, 1)])
    a = lambda *v: np.array(v, np.int64)
    f = {"fx": np.array([1, -1], np.float32), "fy": np.array([2, 4], np.float32)}
    runs = [dict(f, x=a(7, -7, 9), y=a(2, 2, -4), z=a(3, 2, -4)),
            Fails(dict(f, x=a(7, 1), y=a(2, 0), z=a(2, 3)),
                  "Div node 'div': integer division by zero"),
            Fails(dict(f, x=a(7, 1), y=a(2, 3), z=a(0, 3)),
                  "Mod node 'mod': integer division by zero")]

    def ref(x, y, z, fx, fy):
        q = np.trunc(x / y).astype(np.int64)
        return {"q": q, "r": np.mod(x, z), "fq": fx / fy}
    return m, runs, ref


@case
def slice_step_zero():
    """Slice with run-time steps: a step of 0 is rejected."""
    m = model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"],
                                name="slice")],
              [vi("x", F, ["a"]), vi("sp", I64, [1])], [vi("y", F, 1)],
              [const("st", np.array([0], np.int64)), const("en", np.array([10], np.int64)),
               const("ax", np.array([0], np.int64))])
    runs = [{"x": randn(6), "sp": np.array([2], np.int64)},
            Fails({"x": randn(6), "sp": np.array([0], np.int64)},
                  "Slice node 'slice': steps[0] is 0")]

    def ref(x, sp):
        return {"y": ref_slice(x, [0], [10], [0], sp)}
    return m, runs, ref


@case
def einsum_ellipsis_broadcast():
    """Einsum "...ij,...jk->...ik" where the ellipsis dims of the operands
    are unknown and broadcast (1 on either side at run time)."""
    m = model([helper.make_node("Einsum", ["x", "y"], ["z"], name="einsum",
                                equation="...ij,...jk->...ik")],
              [vi("x", F, ["p", "m", "k"]), vi("y", F, ["q", "k", "n"])],
              [vi("z", F, 3)], opset=12)
    runs = [{"x": randn(1, 2, 3), "y": randn(4, 3, 5)},
            {"x": randn(3, 2, 3), "y": randn(1, 3, 2)},
            {"x": randn(2, 1, 4), "y": randn(2, 4, 1)}]

    def ref(x, y):
        return {"z": np.matmul(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)}
    return m, runs, ref


def ref_topk(x, k):
    """Largest k along axis 1, sorted; ties keep the lower index."""
    idx = np.argsort(-x, axis=1, kind="stable")[:, :k].astype(np.int64)
    return np.take_along_axis(x, idx, axis=1), idx


@case
def topk_k_out_of_range():
    """TopK on axis 1 of x [a, b] with a run-time K and with a constant K
    = 3: K above the axis size or negative is rejected, never clamped."""
    m = model([
        helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk", axis=1),
        helper.make_node("TopK", ["x", "k3"], ["v3", "i3"], name="topk_c", axis=1),
    ], [vi("x", F, ["a", "b"]), vi("k", I64, [1])],
        [vi("v", F, 2), vi("i", I64, 2), vi("v3", F, 2), vi("i3", I64, 2)],
        [const("k3", np.array([3], np.int64))])
    a = lambda *v: np.array(v, np.int64)
    x = randn(3, 5)
    runs = [{"x": x, "k": a(2)}, {"x": randn(2, 4), "k": a(4)}, {"x": x, "k": a(0)},
            Fails({"x": x, "k": a(6)},
                  "TopK node 'topk': k is 6, out of range [0, 5] for axis 1"),
            Fails({"x": x, "k": a(-1)},
                  "TopK node 'topk': k is -1, out of range [0, 5] for axis 1"),
            Fails({"x": randn(3, 2), "k": a(1)},
                  "TopK node 'topk_c': k is 3, out of range [0, 2] for axis 1")]

    def ref(x, k):
        v, i = ref_topk(x, int(k[0]))
        v3, i3 = ref_topk(x, 3)
        return {"v": v, "i": i, "v3": v3, "i3": i3}
    return m, runs, ref


@case
def split_sizes_mismatch():
    """Split on axis 1 of x [a, b] with run-time sizes and of y [c, d]
    with constant sizes [2, 3]: sizes that do not sum to the axis size, or
    a negative size, are rejected, never clamped."""
    m = model([
        helper.make_node("Split", ["x", "sp"], ["s0", "s1", "s2"], name="split", axis=1),
        helper.make_node("Split", ["y", "sc"], ["t0", "t1"], name="split_c", axis=1),
    ], [vi("x", F, ["a", "b"]), vi("sp", I64, [3]), vi("y", F, ["c", "d"])],
        [vi(n, F, 2) for n in ("s0", "s1", "s2", "t0", "t1")],
        [const("sc", np.array([2, 3], np.int64))])
    a = lambda *v: np.array(v, np.int64)
    x, y = randn(2, 5), randn(3, 5)
    runs = [{"x": x, "sp": a(1, 2, 2), "y": y}, {"x": randn(3, 4), "sp": a(0, 3, 1), "y": y},
            Fails({"x": x, "sp": a(2, 2, 2), "y": y},
                  "Split node 'split': split[2] is 2 at offset 4: the sizes must be >= 0 "
                  "and sum to 5 (axis 1)"),
            Fails({"x": x, "sp": a(1, 1, 1), "y": y},
                  "Split node 'split': split sizes sum to 3, not 5 (axis 1)"),
            Fails({"x": x, "sp": a(3, -1, 3), "y": y},
                  "Split node 'split': split[1] is -1 at offset 3"),
            Fails({"x": x, "sp": a(1, 2, 2), "y": randn(3, 4)},
                  "Split node 'split_c': split[1] is 3 at offset 2"),
            Fails({"x": x, "sp": a(1, 2, 2), "y": randn(3, 6)},
                  "Split node 'split_c': split sizes sum to 5, not 6 (axis 1)")]

    def ref(x, sp, y):
        c = np.cumsum(sp)[:-1]
        s0, s1, s2 = np.split(x, c, axis=1)
        t0, t1 = np.split(y, [2], axis=1)
        return {"s0": s0, "s1": s1, "s2": s2, "t0": t0, "t1": t1}
    return m, runs, ref


@case
def concat_empty_operand():
    """Reshape(x, Concat(Shape(x), e)) with e an empty int64 tensor (an
    exporter idiom), Concat of x [a, 3] with empty [0, 3] tensors, Split
    into [3, 0, 0] and the empty parts concatenated and summed."""
    m = model([
        helper.make_node("Shape", ["x"], ["xs"], name="shape"),
        helper.make_node("Concat", ["xs", "e"], ["shp"], name="cat_shape", axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["y"], name="reshape"),
        helper.make_node("Concat", ["z0", "x", "z0"], ["y2"], name="cat_rows", axis=0),
        helper.make_node("Split", ["x", "sp"], ["s0", "s1", "s2"], name="split", axis=1),
        helper.make_node("Concat", ["s1", "s0", "s2"], ["y3"], name="cat_split", axis=1),
        helper.make_node("Sum", ["s1", "s1"], ["y4"], name="sum_empty"),
    ], [vi("x", F, ["a", 3])],
        [vi("y", F, 2), vi("y2", F, 2), vi("s1", F, 2), vi("y3", F, 2), vi("y4", F, 2)],
        [const("e", np.zeros((0,), np.int64)), const("z0", np.zeros((0, 3), np.float32)),
         const("sp", np.array([3, 0, 0], np.int64))])
    runs = [{"x": randn(2, 3)}, {"x": randn(1, 3)}]

    def ref(x):
        empty = np.zeros((x.shape[0], 0), np.float32)
        return {"y": x.copy(), "y2": x.copy(), "s1": empty, "y3": x.copy(), "y4": empty}
    return m, runs, ref


@case
def dropout_training_ratio_zero():
    """Dropout with training_mode = true and a constant ratio 0 is the
    identity (mask all true)."""
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], name="drop")],
              [vi("x", F, ["a", "b"])], [vi("y", F, 2), vi("mask", BOOL, 2)],
              [const("r", np.array(0.0, np.float32)), const("t", np.array(True))])
    runs = [{"x": randn(2, 3)}, {"x": randn(1, 5)}]

    def ref(x):
        return {"y": x.copy(), "mask": np.ones(x.shape, bool)}
    return m, runs, ref


@case
def unsorted_nodes():
    """Nodes listed out of topological order (ONNX Runtime runs such graphs,
    ONNX's checker rejects them): y = relu(x * 2 + b) - x with the node list
    reversed and shuffled; the compiler sorts it."""
    nodes = [
        helper.make_node("Sub", ["r", "x"], ["y"], name="sub"),
        helper.make_node("Relu", ["s"], ["r"], name="relu"),
        helper.make_node("Mul", ["x", "two"], ["m"], name="mul"),
        helper.make_node("Add", ["m", "b"], ["s"], name="add"),
        helper.make_node("Shape", ["x"], ["shp"], name="shape"),
    ]
    m = model(nodes, [vi("x", F, ["a", 3])], [vi("y", F, 2), vi("shp", I64, [2])],
              [const("two", np.array(2.0, np.float32)),
               const("b", np.array([0.5, -1.0, 0.25], np.float32))], check=False)
    try:
        onnx.checker.check_model(m)
        raise AssertionError("the checker accepted an unsorted graph")
    except onnx.checker.ValidationError:
        pass
    runs = [{"x": randn(2, 3)}, {"x": randn(5, 3)}]

    def ref(x):
        b = np.array([0.5, -1.0, 0.25], np.float32)
        return {"y": np.maximum(x * 2 + b, 0) - x,
                "shp": np.array(x.shape, np.int64)}
    return m, runs, ref


@case
def cyclic_nodes():
    """A node list with a cycle (add reads mul's output, mul reads add's):
    disc-compile exits 2 naming both nodes."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "m"], ["a"], name="add"),
        helper.make_node("Mul", ["a", "r"], ["m"], name="mul"),
        helper.make_node("Neg", ["m"], ["y"], name="neg"),
    ]
    m = model(nodes, [vi("x", F, ["a"])], [vi("y", F, 1)], check=False)
    return m, CompileFails("has a cycle", "'add' (Add)", "'mul' (Mul)",
                           "'neg' (Neg)"), None


@case
def range_overflow():
    """Range with run-time int64, int32 and float operands: int64 limit -
    start overflowing (-2^63 + 5 to 2^62) and the count 2^63 (0 to
    INT64_MIN, delta -1) are rejected naming the node; an int32 range spanning
    [-2^31, 2^31 - 1) (its difference does not fit in int32, but its count
    does) is computed exactly; a float count of 1e30 is rejected."""
    m = model([
        helper.make_node("Range", ["s", "l", "d"], ["r"], name="range_i64"),
        helper.make_node("Range", ["s32", "l32", "d32"], ["r32"], name="range_i32"),
        helper.make_node("Range", ["fs", "fl", "fd"], ["rf"], name="range_f"),
    ], [vi("s", I64, []), vi("l", I64, []), vi("d", I64, []),
        vi("s32", I32, []), vi("l32", I32, []), vi("d32", I32, []),
        vi("fs", F, []), vi("fl", F, []), vi("fd", F, [])],
        [vi("r", I64, 1), vi("r32", I32, 1), vi("rf", F, 1)])

    def mk(s, l, d, fl=3.0):
        return {"s": np.array(s, np.int64), "l": np.array(l, np.int64),
                "d": np.array(d, np.int64),
                "s32": np.array(-2 ** 31, np.int32),
                "l32": np.array(2 ** 31 - 1, np.int32),
                "d32": np.array(2 ** 20, np.int32),
                "fs": np.array(1.0, np.float32), "fl": np.array(fl, np.float32),
                "fd": np.array(0.5, np.float32)}
    runs = [mk(0, 10, 3), mk(INT64_MAX - 4, INT64_MAX, 2),
            Fails(mk(INT64_MIN + 5, 2 ** 62, 1),
                  "Range node 'range_i64': limit - start (4611686018427387904 - "
                  "-9223372036854775803) overflows int64"),
            Fails(mk(0, INT64_MIN, -1),
                  "Range node 'range_i64': the element count"),
            Fails(mk(0, 10, 3, fl=1e30), "Range node 'range_f': the element count")]

    def ref(s, l, d, s32, l32, d32, fs, fl, fd):
        r32 = np.arange(int(s32), int(l32), int(d32), dtype=np.int64)
        return {"r": np.arange(int(s), int(l), int(d), dtype=np.int64),
                "r32": r32.astype(np.int32),
                "rf": np.arange(float(fs), float(fl), float(fd), dtype=np.float32)}
    return m, runs, ref


@case
def range_overflow_constant():
    """Range with constant int64 operands whose limit - start overflows
    (-2^63 + 1 to 2^63 - 1): disc-compile exits 2 naming the node."""
    m = model([helper.make_node("Range", ["s", "l", "d"], ["r"], name="big_range")],
              [vi("x", F, [1])], [vi("r", I64, 1)],
              [const("s", np.array(INT64_MIN + 1, np.int64)),
               const("l", np.array(INT64_MAX, np.int64)),
               const("d", np.array(1, np.int64))])
    return m, CompileFails("Range", "big_range", "overflows int64"), None


@case
def if_branch_shapes():
    """If on a run-time bool [1]: the then branch gives y = Concat(x, x)
    [2N, 3] and z = x * 2, the else branch y = x[0:1] [1, 3] and z = -x;
    both read x [N, 3] from the outer graph. y's first dim differs between
    the branches (a fresh dim), z keeps N."""
    B = TensorProto.BOOL
    then_g = helper.make_graph([
        helper.make_node("Concat", ["x", "x"], ["ty"], name="t_cat", axis=0),
        helper.make_node("Mul", ["x", "two"], ["tz"], name="t_mul"),
    ], "then", [], [vi("ty", F, 2), vi("tz", F, 2)])
    else_g = helper.make_graph([
        helper.make_node("Slice", ["x", "s0", "s1", "ax"], ["ey"], name="e_slice"),
        helper.make_node("Neg", ["x"], ["ez"], name="e_neg"),
    ], "else", [], [vi("ey", F, 2), vi("ez", F, 2)])
    m = model([helper.make_node("If", ["c"], ["y", "z"], name="pick",
                                then_branch=then_g, else_branch=else_g)],
              [vi("x", F, ["N", 3]), vi("c", BOOL, [1])],
              [vi("y", F, 2), vi("z", F, ["N", 3])],
              [const("two", np.array(2.0, np.float32)), const("s0", np.array([0])),
               const("s1", np.array([1])), const("ax", np.array([0]))])
    runs = [{"x": randn(2, 3), "c": np.array([True])},
            {"x": randn(4, 3), "c": np.array([False])},
            {"x": randn(1, 3), "c": np.array([True])}]

    def ref(x, c):
        if c[0]:
            return {"y": np.concatenate([x, x]), "z": x * 2}
        return {"y": x[0:1], "z": -x}
    return m, runs, ref


@case
def loop_scan_trip_count():
    """Loop with the trip count n a graph input and the body's condition
    i < 4 (at most 5 iterations): acc = acc * 0.5 + x (x read from the
    outer graph), g = Concat(g, x) (grows each iteration), scan outputs acc
    ([iterations, N, 3]) and ReduceSum(acc, axis 0) ([iterations, 3])."""
    body = helper.make_graph([
        helper.make_node("Less", ["i", "four"], ["cond_out"], name="b_less"),
        helper.make_node("Mul", ["acc_in", "half"], ["h"], name="b_mul"),
        helper.make_node("Add", ["h", "x"], ["acc_out"], name="b_add"),
        helper.make_node("Concat", ["g_in", "x"], ["g_out"], name="b_cat", axis=0),
        helper.make_node("ReduceSum", ["acc_out", "axes0"], ["rs"], name="b_sum",
                         keepdims=0),
        helper.make_node("Identity", ["acc_out"], ["sc"], name="b_scan"),
    ], "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F, 2),
                vi("g_in", F, 2)],
        [vi("cond_out", BOOL, []), vi("acc_out", F, 2), vi("g_out", F, 2),
         vi("sc", F, 3), vi("rs", F, 2)],
        initializer=[const("four", np.array(4, np.int64)),
                     const("half", np.array(0.5, np.float32)),
                     const("axes0", np.array([0], np.int64))])
    m = model([helper.make_node("Loop", ["n", "", "x", "x"],
                                ["acc", "g", "scan_acc", "scan_sum"],
                                name="loop", body=body)],
              [vi("n", I64, []), vi("x", F, ["N", 3])],
              [vi("acc", F, 2), vi("g", F, 2), vi("scan_acc", F, 3),
               vi("scan_sum", F, 2)])
    runs = [{"n": np.array(3, np.int64), "x": randn(2, 3)},
            {"n": np.array(8, np.int64), "x": randn(4, 3)},
            {"n": np.array(1, np.int64), "x": randn(1, 3)}]

    def ref(n, x):
        acc, g, sa, ss = x, x, [], []
        for i in range(int(n)):
            acc = acc * np.float32(0.5) + x
            g = np.concatenate([g, x])
            sa.append(acc)
            ss.append(acc.sum(0))
            if not i < 4:
                break
        return {"acc": acc, "g": g, "scan_acc": np.stack(sa),
                "scan_sum": np.stack(ss)}
    return m, runs, ref


# --------------------------------------------------------------------------
# Driver.
# --------------------------------------------------------------------------

def log(msg):
    print(msg, flush=True)


def sh(cmd, timeout=600):
    log("+ " + " ".join(shlex.quote(c) for c in cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    out = p.stdout.decode(errors="replace")
    for line in out.rstrip().splitlines()[-30:]:
        log("  | " + line)
    return p.returncode, out


def compare(name, got, want):
    """Returns None if equal within tolerance, else a message."""
    if got.shape != want.shape:
        return f"{name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind == "f":
        if got.dtype.kind != "f":
            return f"{name}: dtype {got.dtype}, expected {want.dtype}"
        if not np.allclose(got, want, rtol=RTOL, atol=ATOL):
            err = np.max(np.abs(got.astype(np.float64) - want))
            return f"{name}: values differ (max abs err {err:.3g})"
        return None
    if got.dtype != want.dtype:
        return f"{name}: dtype {got.dtype}, expected {want.dtype}"
    if not np.array_equal(got, want):
        return f"{name}: values differ (got {got.ravel()[:8]}, want {want.ravel()[:8]})"
    return None


def fmt_run(inputs):
    parts = []
    for k, v in inputs.items():
        if v.dtype.kind in "iu" and v.ndim <= 1 and v.size <= 4 and k not in ("idx",):
            parts.append(f"{k}={v.tolist()}")
        else:
            parts.append(f"{k}[{'x'.join(map(str, v.shape))}]")
    return ", ".join(parts)


def run_case(name, args):
    m, runs, ref = CASES[name]()
    work = os.path.join(args.work_dir, name)
    os.makedirs(work, exist_ok=True)
    onnx_path = os.path.join(work, name + ".onnx")
    onnx.save(m, onnx_path)
    so = os.path.join(work, name + args.tag + ".so")
    if os.path.exists(so):
        os.remove(so)
    rc, out = sh([os.path.join(args.bin_dir, "disc-compile"), onnx_path, "-o", so]
                 + args.compile_arg)
    if isinstance(runs, CompileFails):
        if rc != runs.code:
            return [f"{name}: disc-compile exit {rc}, expected {runs.code}"]
        missing = [msg for msg in runs.messages if msg not in (out or "")]
        if missing:
            return [f"{name}: disc-compile did not print {missing}"]
        log(f"  ok: {name}: disc-compile rejected it (exit {rc})")
        return []
    if rc != 0:
        return [f"{name}: disc-compile failed (exit {rc})"]
    out_names = [o.name for o in m.graph.output]
    failures = []
    for i, inputs in enumerate(runs):
        expect_fail = inputs if isinstance(inputs, Fails) else None
        if expect_fail:
            inputs = expect_fail.inputs
        rdir = os.path.join(work, f"run{i}")
        odir = os.path.join(rdir, "out")
        os.makedirs(odir, exist_ok=True)
        for f in os.listdir(odir):
            os.remove(os.path.join(odir, f))
        cmd = [os.path.join(args.bin_dir, "disc-run"), so, "--output-dir", odir]
        for k, v in inputs.items():
            p = os.path.join(rdir, k + ".npy")
            np.save(p, v)
            cmd += ["--input", f"{k}={p}"]
        what = f"{name} run {i} ({fmt_run(inputs)})"
        if expect_fail:
            rc, out = sh(cmd + expect_fail.extra_args)
            if rc != expect_fail.code:
                failures.append(f"{what}: exit {rc}, expected {expect_fail.code}")
            elif expect_fail.message not in (out or ""):
                failures.append(f"{what}: message {expect_fail.message!r} not printed")
            elif os.listdir(odir):
                failures.append(f"{what}: outputs written by a failed run")
            else:
                log(f"  ok: {what}: rejected with {expect_fail.message!r}")
            continue
        rc, _ = sh(cmd)
        if rc != 0:
            failures.append(f"{what}: disc-run failed (exit {rc})")
            continue
        want = ref(**inputs)
        for o in out_names:
            path = os.path.join(odir, o + ".npy")
            if not os.path.exists(path):
                failures.append(f"{what}: output {o} missing")
                continue
            msg = compare(o, np.load(path), np.asarray(want[o]))
            if msg:
                failures.append(f"{what}: {msg}")
            else:
                log(f"  ok: {what}: {o} {list(np.asarray(want[o]).shape)}")
    return failures


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cases", nargs="*", help="case names (default: all)")
    p.add_argument("--bin-dir", help="directory with disc-compile, disc-run")
    p.add_argument("--work-dir", help="where models, inputs and outputs go")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--compile-arg", action="append", default=[],
                   help="extra disc-compile argument (repeatable), e.g. "
                        "--compile-arg=--target=cuda-emulate")
    p.add_argument("--tag", default="",
                   help="suffix of the compiled model's file name")
    args = p.parse_args(argv)
    if args.list:
        for n, fn in CASES.items():
            log(f"{n:32} {fn.__doc__.split(chr(10))[0]}")
        return 0
    if not args.bin_dir or not args.work_dir:
        p.error("--bin-dir and --work-dir are required")
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {unknown}; see --list")
    args.work_dir = os.path.abspath(args.work_dir)
    failures = []
    names = args.cases or list(CASES)
    for n in names:
        log(f"=== {n}: {' '.join(CASES[n].__doc__.split())}")
        failures += run_case(n, args)
    log("")
    for f in failures:
        log("FAIL: " + f)
    failed_cases = sorted({f.split(":")[0].split(" ")[0] for f in failures})
    log(f"{len(names) - len(failed_cases)} of {len(names)} cases passed"
        + (f"; failed: {', '.join(failed_cases)}" if failed_cases else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Checks DFT, STFT, MelWeightMatrix, Det, MaxUnpool, integer MaxPool and
the ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum) against
NumPy references on cases the ONNX node tests do not cover (odd lengths,
dft_length padding and truncation, complex and inverse transforms, windows,
singular and pivoting matrices, unpooling with pads, unsigned and 64-bit
integer pooling, optimizer steps with T > 0, ...).

Every case builds a small ONNX model, compiles it with disc-compile (once
with the declared shapes, once with --force-dynamic), runs it with disc-run
on .npy inputs and compares each output with the reference (integers
exactly, floats with rtol 1e-3 / atol 1e-4 as the node suite allows for
float32 transforms, see RTOL/ATOL).

    check_signal_ops.py --bin-dir build/bin [--work-dir DIR] [-k REGEX]

Exit status: 0 when every case matches, 1 otherwise.
"""

import itertools
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

import checklib

RTOL = 1e-3
ATOL = 1e-4

TRAINING = "ai.onnx.preview.training"

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.uint16): TensorProto.UINT16,
    np.dtype(np.uint64): TensorProto.UINT64,
    np.dtype(np.bool_): TensorProto.BOOL,
}

# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------


def ref_dft(x, axis=1, n=None, inverse=False, onesided=False):
    """ONNX DFT-17: x [.., 1 or 2]; result [.., M, .., 2] of x's type."""
    c = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
    c = c.astype(np.complex128)
    y = (np.fft.ifft if inverse else np.fft.fft)(c, n=n, axis=axis)
    if onesided:
        m = y.shape[axis] // 2 + 1
        y = np.take(y, np.arange(m), axis=axis)
    return np.stack([y.real, y.imag], -1).astype(x.dtype)


def ref_stft(sig, step, window=None, length=None, onesided=True):
    length = len(window) if length is None else length
    frames = (sig.shape[1] - length) // step + 1
    fr = np.stack([sig[:, i * step:i * step + length] for i in
                   range(frames)], 1)  # [B, F, L, c]
    if window is not None:
        fr = fr * window.reshape(1, 1, -1, 1)
    return ref_dft(fr, axis=2, onesided=onesided)


def ref_mel(num_mel_bins, dft_length, sample_rate, lower, upper):
    """onnx/backend/test/case/node/melweightmatrix.py."""
    num_spectrogram_bins = dft_length // 2 + 1
    frequency_bins = np.arange(0, num_mel_bins + 2)
    low_mel = 2595 * np.log10(1 + lower / 700)
    high_mel = 2595 * np.log10(1 + upper / 700)
    mel_step = (high_mel - low_mel) / frequency_bins.shape[0]
    frequency_bins = frequency_bins * mel_step + low_mel
    frequency_bins = 700 * (np.power(10, (frequency_bins / 2595)) - 1)
    frequency_bins = ((dft_length + 1) * frequency_bins) // sample_rate
    frequency_bins = frequency_bins.astype(int)
    output = np.zeros((num_spectrogram_bins, num_mel_bins))
    for i in range(num_mel_bins):
        lo, ce, hi = frequency_bins[i:i + 3]
        if ce == lo:
            output[ce, i] = 1
        else:
            for j in range(lo, ce + 1):
                output[j, i] = float(j - lo) / float(ce - lo)
        if hi > ce:
            for j in range(ce, hi):
                output[j, i] = float(hi - j) / float(hi - ce)
    return output.astype(np.float32)


def ref_maxpool(x, kernel, strides, pads):
    """Values and row-major flat indices (first max) of an N-d MaxPool."""
    k = len(kernel)
    sp = x.shape[2:]
    outs = [(sp[i] + pads[i] + pads[k + i] - kernel[i]) // strides[i] + 1
            for i in range(k)]
    y = np.zeros(x.shape[:2] + tuple(outs), x.dtype)
    idx = np.zeros(y.shape, np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(v) for v in outs]):
            best, bi = None, 0
            for w in itertools.product(*[range(v) for v in kernel]):
                pos = [o[i] * strides[i] - pads[i] + w[i] for i in range(k)]
                if any(p < 0 or p >= sp[i] for i, p in enumerate(pos)):
                    continue
                v = x[(n, c) + tuple(pos)]
                if best is None or v > best:
                    best = v
                    bi = np.ravel_multi_index((n, c) + tuple(pos), x.shape)
            y[(n, c) + o] = best
            idx[(n, c) + o] = bi
    return y, idx


def ref_maxunpool(x, ind, kernel, strides, pads, output_shape=None):
    """The ONNX reference implementation (onnx/reference/ops)."""
    k = len(kernel)
    inferred = list(x.shape[:2]) + [
        (x.shape[i + 2] - 1) * strides[i] - (pads[i] + pads[k + i]) +
        kernel[i] for i in range(k)]
    y = np.zeros(int(np.prod(inferred)), x.dtype)
    y[ind.reshape(-1)] = x.reshape(-1)
    y = y.reshape(inferred)
    if output_shape is None:
        return y
    res = np.zeros(tuple(output_shape), x.dtype)
    res[tuple(slice(0, i) for i in inferred)] = y
    return res


def ref_adagrad(r, t, x, g, h, norm=0.0, eps=1e-6, decay=0.0):
    r_ = r / (1 + t * decay)
    gr = norm * x + g
    h_new = h + gr * gr
    return x - r_ * gr / (np.sqrt(h_new) + eps), h_new


def ref_adam(r, t, x, g, v, h, norm=0.0, post=0.0, alpha=0.9, beta=0.999,
             eps=1e-6):
    gr = norm * x + g
    v_new = alpha * v + (1 - alpha) * gr
    h_new = beta * h + (1 - beta) * gr * gr
    r_ = r * np.sqrt(1 - beta**t) / (1 - alpha**t) if t > 0 else r
    x_new = x - r_ * (v_new / (np.sqrt(h_new) + eps))
    return (1 - post) * x_new, v_new, h_new


def ref_momentum(r, t, x, g, v, norm, alpha, beta, nesterov):
    gr = norm * x + g
    b = beta if t > 0 else 1
    v_new = alpha * v + b * gr
    if nesterov:
        return x - r * (gr + alpha * v_new), v_new
    return x - r * v_new, v_new


# ---------------------------------------------------------------------------
# Cases: (name, nodes, opsets, inputs [(name, array)], outputs, expected)
# ---------------------------------------------------------------------------


def f32(a):
    return np.asarray(a, np.float32)


def cases():
    rng = np.random.default_rng(11)
    out = []

    def add(name, nodes, inputs, outputs, expected, opset=17, domain=""):
        out.append((name, nodes, [(domain, opset)], inputs, outputs,
                    expected))

    def node(op, ins, outs, **attrs):
        return helper.make_node(op, ins, outs, **attrs)

    # DFT.
    x = f32(rng.standard_normal((2, 7, 1)))
    add("dft_odd_length", [node("DFT", ["x"], ["y"], axis=1)], [("x", x)],
        ["y"], [ref_dft(x, 1)])
    x = f32(rng.standard_normal((3, 8, 5, 1)))
    add("dft_length_pad", [node("DFT", ["x", "n"], ["y"], axis=2)],
        [("x", x), ("n", np.array(12, np.int64))], ["y"],
        [ref_dft(x, 2, n=12)])
    add("dft_length_truncate", [node("DFT", ["x", "n"], ["y"], axis=1)],
        [("x", x), ("n", np.array(5, np.int64))], ["y"],
        [ref_dft(x, 1, n=5)])
    x = f32(rng.standard_normal((2, 9, 2)))
    add("dft_complex_inverse",
        [node("DFT", ["x"], ["y"], axis=1, inverse=1)], [("x", x)], ["y"],
        [ref_dft(x, 1, inverse=True)])
    x = f32(rng.standard_normal((2, 4, 3, 2)))
    add("dft_complex_pad_axis1",
        [node("DFT", ["x", "n"], ["y"], axis=1)],
        [("x", x), ("n", np.array([6], np.int32))], ["y"],
        [ref_dft(x, 1, n=6)])
    for n in (9, 10):
        x = f32(rng.standard_normal((2, n, 1)))
        add(f"dft_onesided_{n}", [node("DFT", ["x"], ["y"], onesided=1)],
            [("x", x)], ["y"], [ref_dft(x, 1, onesided=True)])
    x = f32(rng.standard_normal((4, 256, 1)))
    add("dft_256", [node("DFT", ["x"], ["y"])], [("x", x)], ["y"],
        [ref_dft(x, 1)])
    x = rng.standard_normal((2, 3, 10, 2))
    add("dft_f64_complex_axis2", [node("DFT", ["x"], ["y"], axis=2)],
        [("x", x)], ["y"], [ref_dft(x, 2)])
    x = f32(rng.standard_normal((2, 6, 1)))
    add("dft_negative_axis", [node("DFT", ["x"], ["y"], axis=-2)],
        [("x", x)], ["y"], [ref_dft(x, 1)])

    # STFT.
    sig = f32(rng.standard_normal((2, 50, 1)))
    add("stft_step3_len10",
        [node("STFT", ["s", "step", "", "len"], ["y"])],
        [("s", sig), ("step", np.array(3, np.int64)),
         ("len", np.array(10, np.int64))], ["y"],
        [ref_stft(sig, 3, length=10)])
    sig = f32(rng.standard_normal((1, 64, 1)))
    win = f32(0.5 - 0.5 * np.cos(2 * np.pi * np.arange(12) / 12))
    add("stft_window_twosided",
        [node("STFT", ["s", "step", "w"], ["y"], onesided=0)],
        [("s", sig), ("step", np.array(5, np.int64)), ("w", win)], ["y"],
        [ref_stft(sig, 5, window=win, onesided=False)])
    sig = f32(rng.standard_normal((1, 40, 2)))
    win = f32(rng.random(8))
    add("stft_complex_window_len",
        [node("STFT", ["s", "step", "w", "len"], ["y"], onesided=0)],
        [("s", sig), ("step", np.array(4, np.int64)), ("w", win),
         ("len", np.array(8, np.int64))], ["y"],
        [ref_stft(sig, 4, window=win, onesided=False)])

    # MelWeightMatrix.
    for (nm, dl, sr, lo, hi, it) in [(10, 64, 16000, 20.0, 8000.0, np.int64),
                                     (5, 31, 8000, 100.0, 3000.0, np.int32)]:
        add(f"mel_{nm}_{dl}",
            [node("MelWeightMatrix", ["m", "d", "r", "lo", "hi"], ["y"])],
            [("m", np.array(nm, it)), ("d", np.array(dl, it)),
             ("r", np.array(sr, it)), ("lo", np.array(lo, np.float32)),
             ("hi", np.array(hi, np.float32))], ["y"],
            [ref_mel(it(nm), it(dl), it(sr), np.float32(lo),
                     np.float32(hi))])

    # Det.
    mats = {
        "det_5x5": f32(rng.standard_normal((5, 5))),
        "det_singular": f32(np.array([[1, 2, 3, 4], [2, 4, 6, 8],
                                      [0, 1, 1, 0], [3, 1, 0, 2]])),
        "det_batch_2x3": f32(rng.standard_normal((2, 3, 3, 3))),
        "det_pivot": f32(np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0]])),
        "det_pivot_2x2": f32(np.array([[0, 2], [3, 1]])),
        "det_1x1": f32(np.array([[[-2.5]], [[4.0]]])),
        "det_zeros": np.zeros((3, 3), np.float32),
        "det_8x8_batch_f64": rng.standard_normal((3, 8, 8)),
    }
    for name, m in mats.items():
        add(name, [node("Det", ["x"], ["y"])], [("x", m)], ["y"],
            [np.linalg.det(m.astype(np.float64)).astype(m.dtype)], 11)

    # MaxPool -> MaxUnpool with pads.
    x = f32(rng.standard_normal((1, 2, 7, 7)))
    k, s, p = [3, 3], [2, 2], [1, 1, 1, 1]
    _, ind = ref_maxpool(x, k, s, p)
    yv, _ = ref_maxpool(x, k, s, p)
    add("maxpool_maxunpool_pads",
        [node("MaxPool", ["x"], ["v", "i"], kernel_shape=k, strides=s,
              pads=p),
         node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=k, strides=s,
              pads=p)], [("x", x)], ["y"],
        [ref_maxunpool(yv, ind, k, s, p)], 11)
    xv = f32(rng.standard_normal((1, 1, 2, 3)))
    xi = np.array([[[[0, 3, 5], [13, 14, 19]]]], np.int64)
    add("maxunpool_output_shape",
        [node("MaxUnpool", ["x", "i", "shape"], ["y"], kernel_shape=[2, 2],
              strides=[2, 2])],
        [("x", xv), ("i", xi), ("shape", np.array([1, 1, 5, 7], np.int64))],
        ["y"], [ref_maxunpool(xv, xi, [2, 2], [2, 2], [0, 0, 0, 0],
                              [1, 1, 5, 7])], 11)
    x1 = f32(rng.standard_normal((2, 3, 9)))
    v1, i1 = ref_maxpool(x1, [2], [2], [1, 0])
    add("maxunpool_1d_pads",
        [node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2], strides=[2],
              pads=[1, 0])], [("x", v1), ("i", i1)], ["y"],
        [ref_maxunpool(v1, i1, [2], [2], [1, 0])], 9)

    # Integer MaxPool (values and Indices).
    ints = {
        "uint8": rng.integers(0, 256, (1, 2, 6, 6)).astype(np.uint8),
        "int8": rng.integers(-128, 128, (1, 2, 6, 6)).astype(np.int8),
        "uint16": rng.integers(0, 65536, (1, 1, 5, 5)).astype(np.uint16),
        "int32": rng.integers(-2**31, 2**31, (1, 1, 5, 5)).astype(np.int32),
        "int64": (rng.integers(-2**62, 2**62, (1, 1, 5, 5)) * 2 +
                  1).astype(np.int64),
        "uint64": rng.integers(0, 2**63, (1, 1, 5, 5)).astype(np.uint64) *
        np.uint64(2) + np.uint64(1),
    }
    for t, x in ints.items():
        k, s, p = [3, 3], [2, 2], [1, 1, 1, 1]
        y, idx = ref_maxpool(x, k, s, p)
        add(f"maxpool_{t}",
            [node("MaxPool", ["x"], ["y", "i"], kernel_shape=k, strides=s,
                  pads=p)], [("x", x)], ["y", "i"], [y, idx], 12)

    # Optimizers (ai.onnx.preview.training, opset 1).
    r = np.array(0.05, np.float32)
    t = np.array(5, np.int64)
    xs = [f32(rng.standard_normal((3, 4))), f32(rng.standard_normal(5))]
    gs = [f32(rng.standard_normal(a.shape)) for a in xs]
    vs = [f32(rng.standard_normal(a.shape)) for a in xs]
    hs = [f32(rng.random(a.shape)) for a in xs]
    res = [ref_adam(r, 5, xs[i], gs[i], vs[i], hs[i], norm=0.01, post=0.1)
           for i in range(2)]
    add("adam_t5_post",
        [node("Adam", ["r", "t", "x1", "x2", "g1", "g2", "v1", "v2", "h1",
                       "h2"],
              ["x1n", "x2n", "v1n", "v2n", "h1n", "h2n"], domain=TRAINING,
              norm_coefficient=0.01, norm_coefficient_post=0.1)],
        [("r", r), ("t", t), ("x1", xs[0]), ("x2", xs[1]), ("g1", gs[0]),
         ("g2", gs[1]), ("v1", vs[0]), ("v2", vs[1]), ("h1", hs[0]),
         ("h2", hs[1])], ["x1n", "x2n", "v1n", "v2n", "h1n", "h2n"],
        [res[0][0], res[1][0], res[0][1], res[1][1], res[0][2], res[1][2]],
        1, TRAINING)
    for mode in ("standard", "nesterov"):
        xn, vn = ref_momentum(r, 3, xs[0], gs[0], vs[0], 0.02, 0.9, 0.7,
                              mode == "nesterov")
        add(f"momentum_{mode}_t3",
            [node("Momentum", ["r", "t", "x", "g", "v"], ["xn", "vn"],
                  domain=TRAINING, norm_coefficient=0.02, alpha=0.9,
                  beta=0.7, mode=mode)],
            [("r", r), ("t", np.array(3, np.int64)), ("x", xs[0]),
             ("g", gs[0]), ("v", vs[0])], ["xn", "vn"], [xn, vn], 1,
            TRAINING)
    xn, hn = ref_adagrad(r, 4, xs[1], gs[1], hs[1], 0.01, 1e-5, 0.1)
    add("adagrad_t4_decay",
        [node("Adagrad", ["r", "t", "x", "g", "h"], ["xn", "hn"],
              domain=TRAINING, norm_coefficient=0.01, epsilon=1e-5,
              decay_factor=0.1)],
        [("r", r), ("t", np.array(4, np.int64)), ("x", xs[1]),
         ("g", gs[1]), ("h", hs[1])], ["xn", "hn"],
        [f32(xn), f32(hn)], 1, TRAINING)
    return out


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def build_model(nodes, opsets, inputs, outputs, expected):
    vis = [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype], a.shape)
           for n, a in inputs]
    vos = [helper.make_tensor_value_info(
        o, NP_TO_ONNX[np.asarray(w).dtype], [None] * np.asarray(w).ndim)
           for o, w in zip(outputs, expected)]
    graph = helper.make_graph(nodes, "g", vis, vos)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    return model


def run_case(bin_dir, work, case, dynamic):
    name, nodes, opsets, inputs, outputs, expected = case
    d = os.path.join(work, name + ("_dyn" if dynamic else ""))
    model = build_model(nodes, opsets, inputs, outputs, expected)
    so, err = checklib.compile_model(bin_dir, model, d, dynamic)
    if err:
        return err
    return checklib.run_model(bin_dir, so, d, inputs, outputs, expected,
                              rtol=RTOL, atol=ATOL)


if __name__ == "__main__":
    sys.exit(checklib.main(__doc__.split("\n")[0], cases(), run_case))

"""The disc Python module (docs/python.md) against PyTorch and NumPy:
compile and run ResNet-18 and a Transformer at two shapes each, an MLP
training step under a memory limit, bad input, signature, zero-copy
outputs, training state and the `python3 -m disc` alias.

    PYTHONPATH=build/python /usr/bin/python3 -m pytest test/python -q
"""

import os
import platform
import subprocess
import sys

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

import disc
import disc_models  # examples/models (conftest.py puts it on sys.path)

RTOL, ATOL = 1e-3, 1e-4  # as the e2e tests (test/e2e/CMakeLists.txt)


def torch_reference(model, x, grad=False):
    with torch.set_grad_enabled(grad):
        return model(torch.from_numpy(x)).detach().numpy()


# --------------------------------------------------------------------------
# Models against PyTorch.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 3, 64, 64), (2, 3, 96, 80)])
def test_resnet18_matches_pytorch(resnet18, shape):
    model, exe = resnet18
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(
        np.float32)
    sess = disc.Session(exe)
    out = sess.run({"input": x})
    assert list(out) == ["output"]
    ref = torch_reference(model, x)
    assert out["output"].shape == ref.shape == (shape[0], 1000)
    np.testing.assert_allclose(out["output"], ref, rtol=RTOL, atol=ATOL)
    # The measured peak is the predicted one (docs/memory.md).
    stats = sess.stats
    assert stats["peak_bytes"] > 0
    assert stats["peak_bytes"] == exe.predict_peak_bytes({"input": shape})
    assert stats["evictions"] == 0


@pytest.mark.parametrize("shape", [(1, 16), (2, 33)])
def test_transformer_matches_pytorch(transformer, shape):
    model, exe = transformer
    tokens = np.random.default_rng(shape[1]).integers(
        0, 1000, size=shape, dtype=np.int64)
    out = disc.Session(exe).run([tokens])  # positional form
    ref = torch_reference(model, tokens, grad=True)  # see disc_models
    assert out["logits"].shape == ref.shape == shape + (1000,)
    np.testing.assert_allclose(out["logits"], ref, rtol=RTOL, atol=ATOL)


def test_signature(resnet18, transformer):
    exe = resnet18[1]
    assert [(i.name, i.dtype, i.shape) for i in exe.inputs] == [
        ("input", np.dtype(np.float32), ("N", 3, "H", "W"))]
    assert [(o.name, o.dtype, o.shape) for o in exe.outputs] == [
        ("output", np.dtype(np.float32), ("N", 1000))]
    assert exe.symbols["N"] == (1, 4)
    assert exe.target == "cpu"
    assert exe.states == []
    tok = transformer[1].inputs[0]
    assert (tok.name, tok.dtype) == ("tokens", np.dtype(np.int64))
    assert transformer[1].symbols["seq"] == (1, 128)
    # Shapes by name or in input order; the peak grows with the shape.
    small = exe.predict_peak_bytes([(1, 3, 64, 64)])
    assert small == exe.predict_peak_bytes({"input": (1, 3, 64, 64)})
    assert exe.predict_peak_bytes({"input": (2, 3, 96, 80)}) > small


def test_outputs_own_runtime_buffer(resnet18):
    exe = resnet18[1]
    x = np.ones((1, 3, 64, 64), np.float32)
    out = disc.Session(exe).run({"input": x})["output"]
    # No copy: the array's base is the capsule holding the runtime tensor.
    assert type(out.base).__name__ == "PyCapsule"
    assert out.flags.c_contiguous and out.flags.writeable
    # A non-contiguous input is converted; the result is the same.
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not xt.flags.c_contiguous
    again = disc.Session(exe).run({"input": xt})["output"]
    np.testing.assert_array_equal(out, again)
    # A read-only array is passed as it is (the runtime only reads inputs).
    ro = np.frombuffer(x.tobytes(), np.float32).reshape(x.shape)
    assert not ro.flags.writeable
    np.testing.assert_array_equal(
        disc.Session(exe).run({"input": ro})["output"], out)


# --------------------------------------------------------------------------
# Memory limit.
# --------------------------------------------------------------------------

def test_memory_limit(mlp_train_step):
    model, exe = mlp_train_step
    spec = disc_models.MODELS["mlp_train_step"]
    inputs = spec["make_inputs"]((4, 512), np.random.default_rng(7))
    shapes = {n: a.shape for n, a in inputs.items()}
    peak = exe.predict_peak_bytes(shapes)
    minimum = exe.predict_minimum_peak_bytes(shapes)
    assert 0 < minimum < peak  # the activations are candidates

    unlimited = disc.Session(exe)
    expected = unlimited.run(inputs)
    assert unlimited.stats["peak_bytes"] == peak
    ref = spec["reference"](model, [torch.from_numpy(inputs[n])
                                    for n in spec["inputs"]])
    for name, r in zip(spec["outputs"], ref):
        np.testing.assert_allclose(expected[name], r.numpy(), rtol=RTOL,
                                   atol=ATOL, err_msg=name)

    # A limit that holds: between the minimum and the unlimited peak the
    # run evicts and recomputes activations, stays within the limit and
    # gives the same bits.
    limit = (minimum + peak) // 2
    sess = disc.Session(exe, memory_limit=limit)
    assert sess.memory_limit == limit
    out = sess.run(inputs)
    stats = sess.stats
    assert stats["evictions"] > 0 and stats["regenerations"] > 0
    assert stats["peak_bytes"] <= limit
    assert stats["minimum_peak_bytes"] == minimum
    for name in spec["outputs"]:
        np.testing.assert_array_equal(out[name], expected[name],
                                      err_msg=name)

    # Below the minimum: status 3 before any op runs, both numbers given.
    sess = disc.Session(exe, memory_limit=minimum - 1)
    with pytest.raises(disc.Error) as info:
        sess.run(inputs)
    err = info.value
    assert err.status == disc.STATUS_MEMORY == 3
    assert err.code == "resource exhausted"
    assert str(minimum) in err.message and str(minimum - 1) in err.message


def test_trace_and_memory_plot(mlp_train_step, tmp_path):
    """Session.run(trace=..., memory_plot=...) under a limit that evicts:
    the Chrome trace's live-bytes counter peaks at stats['peak_bytes'], it
    has one evict event per eviction, and the SVG is XML with one marker
    per eviction (as disc-run --trace/--memory-plot, docs/memory.md)."""
    import json
    import xml.etree.ElementTree as ET
    _, exe = mlp_train_step
    spec = disc_models.MODELS["mlp_train_step"]
    inputs = spec["make_inputs"]((4, 512), np.random.default_rng(7))
    shapes = {n: a.shape for n, a in inputs.items()}
    limit = (exe.predict_minimum_peak_bytes(shapes) +
             exe.predict_peak_bytes(shapes)) // 2
    with pytest.raises(disc.Error) as info:
        disc.Session(exe).run(inputs, trace=str(tmp_path / "no.json"))
    assert info.value.status == 2 and "record_trace" in info.value.message
    sess = disc.Session(exe, memory_limit=limit, record_trace=True)
    trace, plot = tmp_path / "t.json", tmp_path / "m.svg"
    sess.run(inputs, trace=str(trace), memory_plot=str(plot))
    stats = sess.stats
    assert stats["evictions"] > 0
    events = json.loads(trace.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and all("dur" in e and "ts" in e for e in slices)
    live = [e["args"]["live"] for e in events
            if e["ph"] == "C" and e["name"] == "live bytes"]
    assert live and max(live) == stats["peak_bytes"]
    evicts = [e for e in events if e["ph"] == "i" and e["name"] == "evict"]
    assert len(evicts) == stats["evictions"]
    root = ET.parse(plot).getroot()
    assert root.tag.endswith("svg")


# --------------------------------------------------------------------------
# Errors.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("value,words", [
    (np.zeros((1, 3, 64, 64), np.float64), ["input", "float64", "float32"]),
    (np.zeros((1, 4, 64, 64), np.float32), ["input", "4", "3"]),
    (np.zeros((3, 64, 64), np.float32), ["input", "rank"]),
    (np.zeros((5, 3, 64, 64), np.float32), ["input", "N", "4"]),
])
def test_bad_input(resnet18, value, words):
    sess = disc.Session(resnet18[1])
    with pytest.raises(disc.Error) as info:
        sess.run({"input": value})
    err = info.value
    assert err.status == disc.STATUS_BAD_INPUT
    assert isinstance(err, RuntimeError)
    for w in words:
        assert w in err.message, err.message
    assert str(err) == err.message


def test_bad_input_names(resnet18):
    sess = disc.Session(resnet18[1])
    x = np.zeros((1, 3, 64, 64), np.float32)
    for inputs, word in [({}, "input"), ({"input": x, "extra": x}, "extra"),
                         ([x, x], "2")]:
        with pytest.raises(disc.Error) as info:
            sess.run(inputs)
        assert info.value.status == 2 and word in info.value.message
    with pytest.raises(TypeError):
        sess.run(x)  # not a dict or a list
    with pytest.raises(disc.Error) as info:
        resnet18[1].predict_peak_bytes({"input": (1, 3, 64)})
    assert info.value.status == 2 and "input" in info.value.message


def test_compile_errors(tmp_path):
    with pytest.raises(disc.Error) as info:
        disc.compile(tmp_path / "missing.onnx")
    assert info.value.status == 2 and "missing.onnx" in info.value.message
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(disc.Error) as info:
        disc.compile(bad)
    assert info.value.status == 2 and "bad.onnx" in info.value.message
    with pytest.raises(TypeError):
        disc.compile(bad, no_such_option=1)
    with pytest.raises(disc.Error) as info:
        disc.compile(bad, library_calls="mkl")
    assert info.value.status == 2 and "mkl" in info.value.message
    # A name that would break the training pass's option text.
    with pytest.raises(disc.Error) as info:
        disc.compile(bad, train=True, loss="a b")
    assert info.value.status == 2 and "'a b'" in info.value.message
    with pytest.raises(disc.Error) as info:
        disc.compile(bad, dims={"N": (1, 2.5)})
    assert info.value.status == 2 and "dims['N']" in info.value.message
    with pytest.raises(disc.Error) as info:
        disc.Executable.load(str(bad))
    assert info.value.status == 2


# --------------------------------------------------------------------------
# Training state and the CLI alias on a small model.
# --------------------------------------------------------------------------

def make_linear(path, w, b):
    """x [batch, 3] -> y = x @ W + b [batch, 2]; loss = mean((y - t)^2)."""
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["y"]),
        helper.make_node("Sub", ["y", "t"], ["d"]),
        helper.make_node("Mul", ["d", "d"], ["d2"]),
        helper.make_node("ReduceMean", ["d2"], ["loss"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, ["batch", 2])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def test_training_state_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 2)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    make_linear(tmp_path / "linear.onnx", w, b)
    lr = 0.1
    exe = disc.compile(tmp_path / "linear.onnx", output=tmp_path / "step.so",
                       train=True, loss="loss", optimizer="sgd", lr=lr)
    assert os.path.exists(tmp_path / "step.so")
    assert exe.loss == "loss"
    assert sorted(s.name for s in exe.states) == ["W", "b"]
    sess = disc.Session(exe)
    assert sorted(sess.state_names) == ["W", "b"]
    np.testing.assert_array_equal(sess.get_state("W"), w)

    x = rng.standard_normal((4, 3)).astype(np.float32)
    t = rng.standard_normal((4, 2)).astype(np.float32)
    out = sess.run({"x": x, "t": t})
    # NumPy: one SGD step on the mean squared error.
    y = x @ w + b
    grad_y = 2 * (y - t) / y.size
    np.testing.assert_allclose(out["loss"], np.mean((y - t) ** 2), rtol=1e-5)
    np.testing.assert_allclose(out["y"], y, rtol=1e-5, atol=1e-6)
    w1, b1 = w - lr * x.T @ grad_y, b - lr * grad_y.sum(0)
    np.testing.assert_allclose(sess.get_state("W"), w1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sess.get_state("b"), b1, rtol=1e-5, atol=1e-6)

    # save -> overwrite -> load restores the step's parameters.
    sess.save_state(str(tmp_path / "ckpt"))
    sess.set_state("W", np.zeros((3, 2), np.float32))
    np.testing.assert_array_equal(sess.get_state("W"), 0)
    sess.load_state(str(tmp_path / "ckpt"))
    np.testing.assert_allclose(sess.get_state("W"), w1, rtol=1e-5, atol=1e-6)
    with pytest.raises(disc.Error) as info:
        sess.set_state("W", np.zeros((2, 3), np.float32))
    assert info.value.status == 2 and "W" in info.value.message
    with pytest.raises(disc.Error) as info:
        sess.get_state("nope")
    assert info.value.status == 2 and "nope" in info.value.message
    with pytest.raises(disc.Error) as info:
        sess.load_state(str(tmp_path / "no-such-dir"))
    assert info.value.status == 2


def test_cli_alias(tmp_path):
    rng = np.random.default_rng(5)
    make_linear(tmp_path / "linear.onnx",
                rng.standard_normal((3, 2)).astype(np.float32),
                rng.standard_normal(2).astype(np.float32))
    so = str(tmp_path / "linear.so")
    env = dict(os.environ)
    res = subprocess.run([sys.executable, "-m", "disc", "compile",
                          str(tmp_path / "linear.onnx"), "-o", so],
                         env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-m", "disc", "run", so,
                          "--input", "x=2x3:random", "--input",
                          "t=2x2:random"],
                         env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "loss" in res.stdout
    # Their exit codes are the CLIs'.
    res = subprocess.run([sys.executable, "-m", "disc", "run", so, "--input",
                          "x=2x4:random", "--input", "t=2x2:random"],
                         env=env, capture_output=True, text=True)
    assert res.returncode == 2, res.stdout + res.stderr
    res = subprocess.run([sys.executable, "-m", "disc", "frobnicate"],
                         env=env, capture_output=True, text=True)
    assert res.returncode == 2 and "usage" in res.stderr


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64", "i686"),
                    reason="subnormals are flushed on x86 only (MXCSR)")
def test_flush_subnormals(tmp_path):
    """x * y of two normal floats whose product is below 2^-126: written as
    0 by default (flush_subnormals=True), NumPy's subnormal with False."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N"])
    graph = helper.make_graph([helper.make_node("Mul", ["x", "y"], ["z"])],
                              "mul", [x, y], [z])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(tmp_path / "mul.onnx"))
    exe = disc.compile(tmp_path / "mul.onnx", output=tmp_path / "mul.so")
    a = np.array([1e-20, 3e-30, 2.0, 1e-39], np.float32)
    b = np.array([1e-20, 1e-10, 0.5, 1.0], np.float32)
    expected = a * b  # NumPy: IEEE gradual underflow
    assert expected[0] > 0 and expected[0] < np.finfo(np.float32).tiny
    flushed = disc.Session(exe).run([a, b])["z"]
    np.testing.assert_array_equal(flushed, [0, 0, 1, 0])
    kept = disc.Session(exe, flush_subnormals=False).run([a, b])["z"]
    np.testing.assert_array_equal(kept, expected)

"""Fixtures of the disc Python module tests (ctest python-disc): the demo
models of examples/models (exported once per test session with their
export helpers) compiled once each, in this process, by disc.compile."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "models"))

import disc  # noqa: E402  (PYTHONPATH: build/python or an install prefix)
import disc_models  # noqa: E402


def _export(name, out_dir):
    """(PyTorch model, ONNX path) of demo model `name`."""
    model = disc_models.MODELS[name]["build"]()
    path = os.path.join(out_dir, name + ".onnx")
    disc_models.export_onnx(name, model, path)
    return model, path


@pytest.fixture(scope="session")
def work_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def resnet18(work_dir):
    """ResNet-18 (random init, seed 0), dynamic N, H, W; N at most 4."""
    model, path = _export("resnet18", work_dir)
    exe = disc.compile(path, dims={"N": (1, 4)})
    return model, exe


@pytest.fixture(scope="session")
def transformer(work_dir):
    """2-layer Transformer encoder, dynamic batch and seq (seq 1..128, 64
    likely)."""
    model, path = _export("transformer", work_dir)
    exe = disc.compile(path, dims={"seq": (1, 128, 64)})
    return model, exe


@pytest.fixture(scope="session")
def mlp_train_step(work_dir):
    """Forward, backward and SGD step of a 6-layer tanh MLP in one graph
    (examples/models/mlp_train_step.py): every hidden activation lives until
    the backward pass reads it, so a memory limit makes the runtime evict
    and recompute them."""
    model, path = _export("mlp_train_step", work_dir)
    return model, disc.compile(path)

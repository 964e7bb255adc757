#!/usr/bin/env python3
"""Writes the small ONNX models that fuzz_compiled_models runs.

Usage: /usr/bin/python3 test/fuzz/make_models.py OUT_DIR
       /usr/bin/python3 test/fuzz/make_models.py --contract OUT_DIR

`--contract` writes instead the reproducers of the open run-time contract
violations of docs/reliability.md (a model plus .npy inputs each).

Every model has named dynamic dims (dim_param) and is valid for every shape
its signature admits (dims shared by name are equal at run time), so any
failure other than a clean input rejection is a bug. Models whose contract
can fail at run time (a Gather index, a Reshape target taken from an input)
are not in this set: their checks are the lowering's run-time contracts.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def inp(name, dtype, dims):
    return helper.make_tensor_value_info(name, dtype, dims)


def model(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def models():
    rng = np.random.default_rng(0)
    yield model("add_relu", [
        helper.make_node("Add", ["x", "y"], ["s"]),
        helper.make_node("Relu", ["s"], ["out"])],
        [inp("x", F, ["N", "C"]), inp("y", F, ["N", "C"])],
        [inp("out", F, ["N", "C"])])
    yield model("broadcast_mul", [
        helper.make_node("Mul", ["x", "row"], ["out"])],
        [inp("x", F, ["N", "C"]), inp("row", F, [1, "C"])],
        [inp("out", F, ["N", "C"])])
    yield model("matmul_bias", [
        helper.make_node("MatMul", ["a", "w"], ["m"]),
        helper.make_node("Add", ["m", "bias"], ["out"])],
        [inp("a", F, ["M", 8])], [inp("out", F, ["M", 4])],
        [const("w", rng.standard_normal((8, 4)).astype(np.float32)),
         const("bias", np.ones(4, np.float32))])
    yield model("matmul_dyn", [
        helper.make_node("MatMul", ["a", "b"], ["out"])],
        [inp("a", F, ["M", "K"]), inp("b", F, ["K", "P"])],
        [inp("out", F, ["M", "P"])])
    yield model("softmax_sum", [
        helper.make_node("Softmax", ["x"], ["sm"], axis=-1),
        helper.make_node("ReduceSum", ["sm"], ["out"], keepdims=1)],
        [inp("x", F, ["B", "T"])], [inp("out", F, [1, 1])])
    yield model("conv_relu", [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["out"])],
        [inp("x", F, ["N", 2, "H", "W"])], [inp("out", F, ["N", 3, "H", "W"])],
        [const("w", rng.standard_normal((3, 2, 3, 3)).astype(np.float32))])
    yield model("transpose_concat", [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Concat", ["t", "t"], ["out"], axis=0)],
        [inp("x", F, ["A", "B"])], [inp("out", F, ["2B", "A"])])
    yield model("slice_flatten", [
        helper.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
        helper.make_node("Reshape", ["s", "shape"], ["out"])],
        [inp("x", F, ["B", "S", 4])], [inp("out", F, ["B", "R"])],
        [const("st", np.array([1], np.int64)), const("en", np.array([-1], np.int64)),
         const("ax", np.array([1], np.int64)), const("shape", np.array([0, -1], np.int64))])
    yield model("where_cast", [
        helper.make_node("Where", ["c", "x", "zero"], ["w"]),
        helper.make_node("Cast", ["w"], ["out"], to=TensorProto.INT32)],
        [inp("c", B, ["N"]), inp("x", F, ["N"])], [inp("out", TensorProto.INT32, ["N"])],
        [const("zero", np.zeros((), np.float32))])
    yield model("layernorm", [
        helper.make_node("ReduceMean", ["x"], ["mu"], axes=[-1]),
        helper.make_node("Sub", ["x", "mu"], ["d"]),
        helper.make_node("Mul", ["d", "d"], ["d2"]),
        helper.make_node("ReduceMean", ["d2"], ["var"], axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["d", "sd"], ["out"])],
        [inp("x", F, ["B", "D"])], [inp("out", F, ["B", "D"])],
        [const("eps", np.array(1e-5, np.float32))])
    yield model("int_ops", [
        helper.make_node("Add", ["i", "j"], ["s"]),
        helper.make_node("Max", ["s", "j"], ["m"]),
        helper.make_node("ReduceSum", ["m"], ["out"], keepdims=0)],
        [inp("i", I64, ["N"]), inp("j", I64, ["N"])], [inp("out", I64, [])])


def contract_cases():
    """(model, {input name: array}) whose run-time contract fails."""
    yield model("gather_oob", [
        helper.make_node("Gather", ["table", "idx"], ["out"], axis=0)],
        [inp("idx", I64, ["K"])], [inp("out", F, ["K", 2])],
        [const("table", np.arange(10, dtype=np.float32).reshape(5, 2))]), {
            "idx": np.array([7], np.int64)}
    yield model("reshape_mismatch", [
        helper.make_node("Reshape", ["x", "s"], ["out"])],
        [inp("x", F, ["N", 4]), inp("s", I64, [2])],
        [inp("out", F, ["A", "B"])]), {
            "x": np.ones((3, 4), np.float32), "s": np.array([3, 5], np.int64)}
    yield model("add_unknown", [helper.make_node("Add", ["x", "y"], ["out"])],
                [inp("x", F, ["A"]), inp("y", F, ["B"])],
                [inp("out", F, ["C"])]), {
                    "x": np.ones(3, np.float32), "y": np.ones(2, np.float32)}


if __name__ == "__main__":
    contract = sys.argv[1] == "--contract"
    out = sys.argv[-1]
    os.makedirs(out, exist_ok=True)
    if contract:
        for m, inputs in contract_cases():
            onnx.save(m, os.path.join(out, m.graph.name + ".onnx"))
            for name, arr in inputs.items():
                np.save(os.path.join(out, f"{m.graph.name}.{name}.npy"), arr)
    else:
        for m in models():
            onnx.save(m, os.path.join(out, m.graph.name + ".onnx"))

#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets under test/fuzz/corpus/.

Run from the repository root: /usr/bin/python3 test/fuzz/make_seeds.py.
Seeds are valid inputs that the mutator starts from: .npy images (format
1.0-3.0, several dtypes, scalar and empty), serialized TensorProtos (raw_data
and every typed field), shape strings, a signature JSON, input-binding byte
strings, and small models of the ONNX backend test data.
"""
import io
import os
import random

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ONNX_NODE_DATA = "/usr/share/libonnx-testdata/data/node"


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy(arr, version=None):
    b = io.BytesIO()
    if version:
        np.lib.format.write_array(b, arr, version=version)
    else:
        np.save(b, arr)
    return b.getvalue()


def tensor_io():
    t = "tensor_io"
    write(t, "npy_f32_2x3", npy(np.arange(6, dtype=np.float32).reshape(2, 3)))
    write(t, "npy_i64_scalar", npy(np.array(7, dtype=np.int64)))
    write(t, "npy_bool_4", npy(np.array([1, 0, 1, 1], dtype=bool)))
    write(t, "npy_f16_empty", npy(np.zeros((0, 3), dtype=np.float16)))
    write(t, "npy_u8_v2", npy(np.arange(5, dtype=np.uint8), (2, 0)))
    write(t, "npy_f64_v3", npy(np.ones((1, 2, 1), dtype=np.float64), (3, 0)))
    pbs = {
        "pb_raw_f32": numpy_helper.from_array(
            np.arange(6, dtype=np.float32).reshape(3, 2), "x"),
        "pb_raw_i32": numpy_helper.from_array(np.arange(4, dtype=np.int32), "i"),
        "pb_float_data": helper.make_tensor("f", TensorProto.FLOAT, [2, 2],
                                            [1.0, 2.0, 3.0, 4.0]),
        "pb_int64_data": helper.make_tensor("l", TensorProto.INT64, [3],
                                            [1, -2, 3]),
        "pb_double_data": helper.make_tensor("d", TensorProto.DOUBLE, [1], [0.5]),
        "pb_uint64_data": helper.make_tensor("u", TensorProto.UINT64, [2], [1, 2]),
        "pb_bool_int32": helper.make_tensor("b", TensorProto.BOOL, [2], [1, 0]),
        "pb_f16_int32": helper.make_tensor(
            "h", TensorProto.FLOAT16, [2], np.array([1, 2], dtype=np.float16)),
    }
    for name, proto in pbs.items():
        write(t, name, proto.SerializeToString())
    write(t, "shape_text", b"2x3x224x224")
    write(t, "shape_scalar", b"scalar")


def input_binding():
    t = "input_binding"
    sig = (b'{"abi_version": 1, "model": "add", "inputs": [{"name": "a", '
           b'"dtype": "float32", "shape": ["batch", 4]}], "outputs": [{"name":'
           b' "sum", "dtype": "float32", "shape": ["batch", 4]}], "symbols": '
           b'[{"name": "batch", "min": 1, "max": 64}]}')
    write(t, "signature", b"\x00" + sig)
    rng = random.Random(1)
    for i, mode in enumerate([64, 65, 66, 67, 200, 201]):
        write(t, f"run_{i}",
              bytes([mode]) + bytes(rng.randrange(256) for _ in range(200)))


def onnx_importer():
    for name in ["test_add", "test_matmul_2d", "test_reshape_negative_dim",
                 "test_gather_0", "test_concat_1d_axis_0", "test_slice",
                 "test_softmax_axis_1", "test_conv_with_strides_padding",
                 "test_reduce_sum_keepdims_example", "test_transpose_default",
                 "test_where_example", "test_expand_dim_changed",
                 "test_cast_FLOAT_to_INT32", "test_constantofshape_int_zeros",
                 "test_if", "test_loop11", "test_einsum_batch_matmul",
                 "test_split_equal_parts_1d", "test_top_k"]:
        path = os.path.join(ONNX_NODE_DATA, name, "model.onnx")
        if os.path.exists(path):
            with open(path, "rb") as f:
                write("onnx_importer", name + ".onnx", f.read())


if __name__ == "__main__":
    tensor_io()
    input_binding()
    onnx_importer()

#!/usr/bin/env python3
"""Builds the small ONNX models used by the frontend lit tests.

Usage: make_model.py NAME OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, elem, shape):
    """A value info; an int `shape` means that rank with unknown dims."""
    if isinstance(shape, int):
        v = helper.make_tensor_value_info(name, elem, [])
        for _ in range(shape):
            v.type.tensor_type.shape.dim.add()
        return v
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def const_i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def add_broadcast():
    return model([helper.make_node("Add", ["x", "y"], ["z"], name="add0")],
                 [vi("x", F, ["batch", 4]), vi("y", F, [4])],
                 [vi("z", F, ["batch", 4])])


def unnamed_dims():
    # Neither dim_value nor dim_param: dims become <input>_d<i>.
    x = helper.make_tensor_value_info("x", F, None)
    x.type.tensor_type.shape.dim.add()
    x.type.tensor_type.shape.dim.add().dim_value = 3
    return model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                 [x], [vi("y", F, 2)])


def conv_relu():
    w = numpy_helper.from_array(
        np.random.RandomState(0).rand(8, 3, 3, 3).astype(np.float32), "w")
    bias = numpy_helper.from_array(np.arange(8, dtype=np.float32), "b")
    return model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["y"], name="relu"),
    ], [vi("x", F, ["N", 3, 32, "W"])], [vi("y", F, 4)], [w, bias])


def reshape_chain():
    # x: [batch, seq, 128] -> reshape to [batch, seq, 4, 32] via Shape ops.
    return model([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["d0"], name="g0", axis=0),
        helper.make_node("Gather", ["s", "i1"], ["d1"], name="g1", axis=0),
        helper.make_node("Unsqueeze", ["d0", "ax"], ["u0"], name="u0"),
        helper.make_node("Unsqueeze", ["d1", "ax"], ["u1"], name="u1"),
        helper.make_node("Concat", ["u0", "u1", "tail"], ["shp"], name="cat",
                         axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["y"], name="reshape"),
    ], [vi("x", F, ["batch", "seq", 128])], [vi("y", F, 4)], [
        numpy_helper.from_array(np.array(0, dtype=np.int64), "i0"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "i1"),
        const_i64("ax", [0]),
        const_i64("tail", [4, 32]),
    ])


def matmul_1d():
    w = numpy_helper.from_array(np.ones((16, 8), dtype=np.float32), "w")
    v = numpy_helper.from_array(np.ones((8,), dtype=np.float32), "v")
    return model([
        helper.make_node("MatMul", ["x", "w"], ["y"], name="mm_vec_mat"),
        helper.make_node("MatMul", ["b", "v"], ["z"], name="mm_batch_vec"),
    ], [vi("x", F, [16]), vi("b", F, ["B", "M", 8])],
        [vi("y", F, 1), vi("z", F, 2)], [w, v])


def matmul_batch():
    return model([helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                 [vi("a", F, ["B", "M", 64]), vi("b", F, [1, 64, "N"])],
                 [vi("y", F, 3)])


def softmax():
    return model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=-1)],
                 [vi("x", F, ["batch", 10])], [vi("y", F, 2)])


def softmax_1024():
    """Softmax over rows of 1024 (a CUDA row kernel, docs/cuda.md)."""
    return model([helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                   axis=-1)],
                 [vi("x", F, ["batch", 1024])], [vi("y", F, 2)])


def softmax_rows():
    """Softmax over rows of a dynamic length (disc-stitch-rows chooses at
    run time, docs/performance.md)."""
    return model([helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                   axis=-1)],
                 [vi("x", F, ["batch", "cols"])], [vi("y", F, 2)])


def softmax_v11():
    return model([helper.make_node("Softmax", ["x"], ["y"], name="sm")],
                 [vi("x", F, ["batch", 3, 10])], [vi("y", F, 3)], opset=11)


def unsupported():
    return model([
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("TfIdfVectorizer", ["a"], ["b"], name="tf"),
        helper.make_node("Loop2", ["x"], ["c"], name="", domain="custom.dom"),
        helper.make_node("StringNormalizer", ["x"], ["d"], name="sn"),
    ], [vi("x", F, ["n"])],
        [vi("b", I64, 2), vi("c", F, 1), vi("d", F, 1)])


def uint8_input():
    return model([
        helper.make_node("Cast", ["x"], ["y"], name="cast", to=F),
        helper.make_node("Identity", ["x"], ["z"], name="id"),
    ], [vi("x", TensorProto.UINT8, [2, "n"])],
        [vi("y", F, 2), vi("z", TensorProto.UINT8, 2)])


def bad_attr():
    # 'axis' given as a float where an int is expected.
    n = helper.make_node("Softmax", ["x"], ["y"], name="sm_bad")
    n.attribute.append(helper.make_attribute("axis", 1.5))
    return model([n], [vi("x", F, [2, 3])], [vi("y", F, 2)])


def string_input():
    return model([helper.make_node("Identity", ["x"], ["y"], name="id")],
                 [vi("x", TensorProto.STRING, [2])],
                 [vi("y", TensorProto.STRING, 1)])


def ops_mix():
    # A grab bag of ops for the import smoke test.
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "bt"], ["ln"],
                         name="ln", axis=-1, epsilon=1e-5),
        helper.make_node("Transpose", ["ln"], ["t"], name="tr", perm=[0, 2, 1]),
        helper.make_node("ReduceSum", ["t", "axes1"], ["rs"], name="rsum",
                         keepdims=0),
        helper.make_node("Flatten", ["x"], ["fl"], name="flat", axis=1),
        helper.make_node("Split", ["x", "split"], ["s0", "s1"], name="split",
                         axis=2),
        helper.make_node("Slice", ["x", "st", "en", "sax"], ["sl"], name="slice"),
        helper.make_node("Where", ["cond", "s0", "s1"], ["wh"], name="where"),
        helper.make_node("Clip", ["wh", "lo", "hi"], ["cl"], name="clip"),
        helper.make_node("Pad", ["x", "pads"], ["pd"], name="pad",
                         mode="constant"),
        helper.make_node("Expand", ["g", "eshape"], ["ex"], name="expand"),
        helper.make_node("Tile", ["g", "reps"], ["ti"], name="tile"),
        helper.make_node("ConstantOfShape", ["eshape"], ["cos"], name="cos",
                         value=helper.make_tensor("v", I64, [1], [7])),
        helper.make_node("Range", ["r0", "r1", "r2"], ["rg"], name="range"),
        helper.make_node("Erf", ["x"], ["erf"], name="erf"),
        helper.make_node("Mod", ["ia", "ib"], ["md"], name="mod"),
        helper.make_node("ArgMax", ["x"], ["am"], name="argmax", axis=2,
                         keepdims=0),
        helper.make_node("HardSwish", ["x"], ["hs"], name="hswish"),
        helper.make_node("Size", ["x"], ["sz"], name="size"),
    ]
    inits = [
        numpy_helper.from_array(np.ones(6, np.float32), "g"),
        numpy_helper.from_array(np.zeros(6, np.float32), "bt"),
        const_i64("axes1", [1]), const_i64("split", [3, 3]),
        const_i64("st", [1]), const_i64("en", [-1]), const_i64("sax", [1]),
        numpy_helper.from_array(np.array(0, np.float32), "lo"),
        numpy_helper.from_array(np.array(6, np.float32), "hi"),
        const_i64("pads", [0, 1, 0, 0, 2, 0]),
        const_i64("eshape", [3, 6]), const_i64("reps", [2]),
        numpy_helper.from_array(np.array(0, np.int64), "r0"),
        numpy_helper.from_array(np.array(10, np.int64), "r1"),
        numpy_helper.from_array(np.array(3, np.int64), "r2"),
    ]
    return model(nodes, [
        vi("x", F, ["b", "s", 6]), vi("cond", TensorProto.BOOL, [1, 1, 3]),
        vi("ia", I64, ["n"]), vi("ib", I64, ["n"])
    ], [vi(o, t, r) for o, t, r in [
        ("rs", F, 2), ("fl", F, 2), ("sl", F, 3), ("cl", F, 3), ("pd", F, 3),
        ("ex", F, 2), ("ti", F, 1), ("cos", I64, 2), ("rg", I64, 1),
        ("erf", F, 3), ("md", I64, 1), ("am", I64, 2), ("hs", F, 3),
        ("sz", I64, 0)]], inits, opset=17)


def conv_same_dynamic():
    w = numpy_helper.from_array(np.ones((2, 3, 3, 3), np.float32), "w")
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_same",
                                   auto_pad="SAME_UPPER", strides=[2, 1])],
                 [vi("x", F, ["n", 3, "h", "w"])], [vi("y", F, 4)], [w])


def reshape_shape_input():
    # The shape input only feeds Reshape: --force-dynamic keeps its length.
    return model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
                 [vi("x", F, [2, 3, 4]), vi("s", I64, [2])], [vi("y", F, 2)])


def gru_dynamic():
    rs = np.random.RandomState(0)
    w = numpy_helper.from_array(rs.rand(1, 9, 2).astype(np.float32), "W")
    r = numpy_helper.from_array(rs.rand(1, 9, 3).astype(np.float32), "R")
    return model([helper.make_node("GRU", ["x", "W", "R"], ["y", "yh"],
                                   name="gru", hidden_size=3,
                                   linear_before_reset=1)],
                 [vi("x", F, ["seq", "batch", 2])],
                 [vi("y", F, 4), vi("yh", F, 3)], [w, r], opset=14)


def lstm_bidirectional():
    rs = np.random.RandomState(0)
    w = numpy_helper.from_array(rs.rand(2, 8, 2).astype(np.float32), "W")
    r = numpy_helper.from_array(rs.rand(2, 8, 2).astype(np.float32), "R")
    return model([helper.make_node("LSTM", ["x", "W", "R"], ["", "yh", "yc"],
                                   name="lstm", hidden_size=2,
                                   direction="bidirectional", layout=1)],
                 [vi("x", F, ["batch", "seq", 2])],
                 [vi("yh", F, 3), vi("yc", F, 3)], [w, r], opset=14)


def rnn_reverse_seq_lens():
    w = numpy_helper.from_array(np.ones((1, 3, 2), np.float32), "W")
    r = numpy_helper.from_array(np.ones((1, 3, 3), np.float32), "R")
    return model([helper.make_node("RNN", ["x", "W", "R", "", "lens"],
                                   ["", "yh"], name="rnn", hidden_size=3,
                                   direction="reverse")],
                 [vi("x", F, ["seq", 2, 2]), vi("lens", TensorProto.INT32, [2])],
                 [vi("yh", F, 3)], [w, r], opset=14)


def broadcast_mismatch():
    return model([helper.make_node("Add", ["x", "z"], ["y"], name="bad_add")],
                 [vi("x", F, [2, 3]), vi("z", F, [4])], [vi("y", F, 2)])


def conv_stride_dilation():
    # Two 3x3 convs on [N, 3, H, W], stride 2, pads 1, dilations 1 and 2.
    w = numpy_helper.from_array(
        np.random.RandomState(1).rand(4, 3, 3, 3).astype(np.float32), "w")
    return model([
        helper.make_node("Conv", ["x", "w"], ["y1"], name="conv_d1",
                         strides=[2, 2], pads=[1, 1, 1, 1], dilations=[1, 1]),
        helper.make_node("Conv", ["x", "w"], ["y2"], name="conv_d2",
                         strides=[2, 2], pads=[1, 1, 1, 1], dilations=[2, 2]),
    ], [vi("x", F, ["N", 3, "H", "W"])], [vi("y1", F, 4), vi("y2", F, 4)], [w])


def broadcast_runtime_one():
    # Concat(x [a, b], k [1, 3]) on axis 0 pins b = 3; y [c, d] broadcasts
    # against x, so c and d may be 1 (or equal) at run time.
    k = numpy_helper.from_array(np.ones((1, 3), np.float32), "k")
    return model([
        helper.make_node("Concat", ["x", "k"], ["p"], name="pin", axis=0),
        helper.make_node("Add", ["x", "y"], ["z"], name="add"),
    ], [vi("x", F, ["a", "b"]), vi("y", F, ["c", "d"])],
        [vi("p", F, 2), vi("z", F, 2)], [k])
def resize_ops():
    # Resize with constant scales (symbolic sizes), Resize with run-time
    # sizes, Upsample-9 nearest.
    scales = numpy_helper.from_array(
        np.array([1.0, 1.0, 2.0, 0.5], dtype=np.float32), "scales")
    return model([
        helper.make_node("Resize", ["x", "", "scales"], ["a"], name="lin",
                         mode="linear"),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["b"],
                         name="near", mode="nearest",
                         coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor"),
    ], [vi("x", F, ["N", 3, "H", "W"]), vi("sizes", I64, [4])],
        [vi("a", F, 4), vi("b", F, 4)], [scales])


def gather_scatter_ops():
    return model([
        helper.make_node("GatherElements", ["x", "i"], ["a"], name="ge",
                         axis=1),
        helper.make_node("GatherND", ["x", "j"], ["b"], name="gnd"),
        helper.make_node("ScatterElements", ["x", "i", "u"], ["c"],
                         name="se", axis=-1, reduction="add"),
        helper.make_node("ScatterND", ["x", "j", "v"], ["d"], name="snd",
                         reduction="mul"),
        helper.make_node("TopK", ["x", "k"], ["e", "f"], name="topk",
                         largest=0),
    ], [vi("x", F, ["n", "m"]), vi("i", I64, ["n", "p"]),
        vi("j", I64, ["q", 1]), vi("u", F, ["n", "p"]), vi("v", F, ["q", "m"]),
        vi("k", I64, [1])],
        [vi("a", F, 2), vi("b", F, 2), vi("c", F, 2), vi("d", F, 2),
         vi("e", F, 2), vi("f", I64, 2)], opset=16)


def grid_sample():
    return model([
        helper.make_node("GridSample", ["x", "g"], ["y"], name="gs",
                         mode="bicubic", padding_mode="reflection",
                         align_corners=1),
    ], [vi("x", F, ["N", "C", "H", "W"]), vi("g", F, ["N", "h", "w", 2])],
        [vi("y", F, 4)], opset=16)
def conv_transpose():
    # U-Net style upsampling: [N, 8, H, W] -> [N, 4, 2H, 2W].
    w = numpy_helper.from_array(np.ones((8, 4, 3, 3), np.float32), "w")
    bias = numpy_helper.from_array(np.arange(4, dtype=np.float32), "b")
    return model([helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"],
                                   name="up", strides=[2, 2],
                                   pads=[1, 1, 1, 1], output_padding=[1, 1])],
                 [vi("x", F, ["N", 8, "H", "W"])], [vi("y", F, 4)], [w, bias])


def scan_quant():
    # CumSum with a constant axis, BitShift, Einsum and QuantizeLinear.
    U8 = TensorProto.UINT8
    return model([
        helper.make_node("CumSum", ["x", "axis"], ["cs"], name="cumsum",
                         exclusive=1),
        helper.make_node("Einsum", ["x", "x"], ["ein"], name="einsum",
                         equation="bij,bkj->bik"),
        helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"],
                         name="quant"),
        helper.make_node("BitShift", ["q", "q"], ["sh"], name="shift",
                         direction="RIGHT"),
    ], [vi("x", F, ["b", 4, 8])],
        [vi("cs", F, 3), vi("ein", F, 3), vi("sh", U8, 3)], [
        numpy_helper.from_array(np.array(-1, dtype=np.int64), "axis"),
        numpy_helper.from_array(np.array(0.5, dtype=np.float32), "scale"),
        numpy_helper.from_array(np.array(3, dtype=np.uint8), "zp"),
    ], opset=13)


def bitshift_bad_direction():
    U8 = TensorProto.UINT8
    return model([helper.make_node("BitShift", ["x", "y"], ["z"], name="shl",
                                   direction="UP")],
                 [vi("x", U8, [3]), vi("y", U8, [3])], [vi("z", U8, 1)],
                 opset=11)


def if_branches():
    # If on a run-time bool: both branches read the outer x; output y has
    # x's dims in both branches, z is [2N, 4] in one and [N, 4] in the other.
    B = TensorProto.BOOL
    then_g = helper.make_graph([
        helper.make_node("Relu", ["x"], ["ty"], name="t_relu"),
        helper.make_node("Concat", ["x", "x"], ["tz"], name="t_cat", axis=0),
    ], "then", [], [vi("ty", F, 2), vi("tz", F, 2)])
    else_g = helper.make_graph([
        helper.make_node("Neg", ["x"], ["ey"], name="e_neg"),
        helper.make_node("Identity", ["x"], ["ez"], name="e_id"),
    ], "else", [], [vi("ey", F, 2), vi("ez", F, 2)])
    return model([helper.make_node("If", ["c"], ["y", "z"], name="pick",
                                   then_branch=then_g, else_branch=else_g)],
                 [vi("x", F, ["N", 4]), vi("c", B, [])],
                 [vi("y", F, 2), vi("z", F, 2)])


def if_shape_cond():
    # If on Equal(Shape(x)[0], 2) with x [2, 4]: a shape condition that
    # disc-shape-simplify proves true, keeping the then branch only.
    B = TensorProto.BOOL
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["ty"], name="t_relu")],
        "then", [], [vi("ty", F, 2)])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["ey"], name="e_neg")],
        "else", [], [vi("ey", F, 2)])
    return model([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["s0"], name="dim0", axis=0),
        helper.make_node("Equal", ["s0", "two"], ["c"], name="eq"),
        helper.make_node("If", ["c"], ["y"], name="pick",
                         then_branch=then_g, else_branch=else_g),
    ], [vi("x", F, [2, 4])], [vi("y", F, 2)],
        [const_i64("zero", 0), const_i64("two", 2)])


def loop_trip():
    # Loop with a run-time trip count n: acc += x (x read from the outer
    # scope, shape invariant) and g = Concat(g, x) (grows every iteration).
    B = TensorProto.BOOL
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="b_cond"),
        helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="b_add"),
        helper.make_node("Concat", ["g_in", "x"], ["g_out"], name="b_cat",
                         axis=0),
    ], "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, 2),
                vi("g_in", F, 2)],
        [vi("cond_out", B, []), vi("acc_out", F, 2), vi("g_out", F, 2)])
    return model([helper.make_node("Loop", ["n", "", "x", "x"], ["acc", "g"],
                                   name="loop", body=body)],
                 [vi("n", I64, []), vi("x", F, ["N", 4])],
                 [vi("acc", F, 2), vi("g", F, 2)])


def if_rank_fold():
    # PyTorch's F.pad(x, (0, 64)) export (pads built from constants through
    # ConstantOfShape, Concat, a [n, 2] Reshape, a reversing Slice, a
    # Transpose, a Reshape back and a Cast), then an If whose branches
    # differ in rank on Not(Size(Shape(z)) == 2) (true: z has rank 3).
    B = TensorProto.BOOL
    then_g = helper.make_graph(
        [helper.make_node("Squeeze", ["z", "two_axis"], ["ty"], name="t_sq")],
        "then", [], [vi("ty", F, 2)])
    else_g = helper.make_graph(
        [helper.make_node("Identity", ["z"], ["ey"], name="e_id")],
        "else", [], [vi("ey", F, 3)])
    return model([
        helper.make_node("ConstantOfShape", ["two"], ["zeros"], name="cos",
                         value=numpy_helper.from_array(
                             np.array([0], dtype=np.int64))),
        helper.make_node("Concat", ["pad_end", "zeros"], ["cat"], name="cat",
                         axis=0),
        helper.make_node("Reshape", ["cat", "shape_n2"], ["p2"], name="r2"),
        helper.make_node("Slice", ["p2", "minus1", "neg_big", "zero1",
                                   "minus1"], ["rev"], name="rev"),
        helper.make_node("Transpose", ["rev"], ["tr"], name="tr", perm=[1, 0]),
        helper.make_node("Reshape", ["tr", "minus1"], ["flat"], name="r1"),
        helper.make_node("Cast", ["flat"], ["pads"], name="cast",
                         to=TensorProto.INT64),
        helper.make_node("Pad", ["x", "pads"], ["y"], name="pad",
                         mode="reflect"),
        helper.make_node("Unsqueeze", ["y", "two_axis"], ["z"], name="unsq"),
        helper.make_node("Shape", ["z"], ["s"], name="shape"),
        helper.make_node("Size", ["s"], ["rank"], name="size"),
        helper.make_node("Equal", ["rank", "two_s"], ["eq"], name="eq"),
        helper.make_node("Not", ["eq"], ["ne"], name="not"),
        helper.make_node("Cast", ["ne"], ["c"], name="to_bool", to=B),
        helper.make_node("If", ["c"], ["out"], name="pick",
                         then_branch=then_g, else_branch=else_g),
    ], [vi("x", F, [1, "T"])], [vi("out", F, 2)],
        [const_i64("two", [2]), const_i64("pad_end", [0, 64]),
         const_i64("shape_n2", [-1, 2]), const_i64("minus1", [-1]),
         const_i64("neg_big", [-9223372036854775807]),
         const_i64("zero1", [0]), const_i64("two_axis", [2]),
         const_i64("two_s", 2)])


def window_pad():
    """Swin-style window padding (torchvision's shifted_window_attention as
    torch.onnx exports it): the pads of H and W up to a multiple of 7 come
    from the static H and W through Mod, F.pad's [n, 2] reshape, reverse and
    transpose. H's pad is (-H) mod 7 (a negative dividend: floor modulo),
    W's (7 - W mod 7) mod 7."""
    return model([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i1"], ["h"], name="gh", axis=0),
        helper.make_node("Gather", ["s", "i2"], ["w"], name="gw", axis=0),
        helper.make_node("Sub", ["zero", "h"], ["neg_h"], name="neg_h"),
        helper.make_node("Mod", ["neg_h", "win"], ["pad_b"], name="mod_h"),
        helper.make_node("Mod", ["w", "win"], ["w_rem"], name="mod_w"),
        helper.make_node("Sub", ["win", "w_rem"], ["w_left"], name="sub_w"),
        helper.make_node("Mod", ["w_left", "win"], ["pad_r"], name="mod_w2"),
        helper.make_node("Unsqueeze", ["pad_b", "ax"], ["ub"], name="ub"),
        helper.make_node("Unsqueeze", ["pad_r", "ax"], ["ur"], name="ur"),
        helper.make_node("Concat", ["z1", "z1", "z1", "ur", "z1", "ub", "z2"],
                         ["torch_pads"], name="cat", axis=0),
        helper.make_node("Reshape", ["torch_pads", "shape_n2"], ["pairs"],
                         name="pairs"),
        helper.make_node("Slice", ["pairs", "minus1", "neg_big", "zero1",
                                   "minus1"], ["rev"], name="reverse"),
        helper.make_node("Transpose", ["rev"], ["tr"], name="tr", perm=[1, 0]),
        helper.make_node("Reshape", ["tr", "minus1"], ["pads"], name="flat"),
        helper.make_node("Pad", ["x", "pads"], ["y"], name="pad"),
    ], [vi("x", F, ["N", 10, 12, 4])], [vi("y", F, 4)],
        [numpy_helper.from_array(np.array(1, dtype=np.int64), "i1"),
         numpy_helper.from_array(np.array(2, dtype=np.int64), "i2"),
         numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
         numpy_helper.from_array(np.array(7, dtype=np.int64), "win"),
         const_i64("ax", [0]), const_i64("z1", [0]), const_i64("z2", [0, 0]),
         const_i64("shape_n2", [-1, 2]), const_i64("minus1", [-1]),
         const_i64("neg_big", [-9223372036854775807]),
         const_i64("zero1", [0])])


def mod_known():
    """Mod of known shape values: floor modulo (fmod 0, the divisor's sign)
    and truncated (fmod 1, the dividend's sign) of -H, -W; int32 against a
    negative divisor; a zero divisor (left to the run time)."""
    I32 = TensorProto.INT32
    return model([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Slice", ["s", "one", "three"], ["hw"], name="hw"),
        helper.make_node("Neg", ["hw"], ["neg"], name="neg"),
        helper.make_node("Mod", ["neg", "seven"], ["floor"], name="mod_floor"),
        helper.make_node("Mod", ["neg", "seven"], ["trunc"], name="mod_trunc",
                         fmod=1),
        helper.make_node("Concat", ["floor", "trunc"], ["y"], name="cat",
                         axis=0),
        helper.make_node("Cast", ["hw"], ["hw32"], name="to_i32", to=I32),
        helper.make_node("Mod", ["hw32", "minus7"], ["y32"], name="mod_i32"),
        helper.make_node("Mod", ["hw", "zero"], ["yz"], name="mod_zero"),
    ], [vi("x", F, ["N", 10, 12, 4])],
        [vi("y", I64, [4]), vi("y32", I32, [2]), vi("yz", I64, [2])],
        [const_i64("one", [1]), const_i64("three", [3]),
         const_i64("seven", [7]), const_i64("zero", [0]),
         numpy_helper.from_array(np.array([-7], dtype=np.int32), "minus7")])


MODELS = {k: v for k, v in globals().items()
          if callable(v) and k not in ("vi", "model", "const_i64")}

if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2]
    m = MODELS[name]()
    with open(out, "wb") as f:
        f.write(m.SerializeToString())

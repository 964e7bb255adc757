#!/usr/bin/python3
"""Checks NonZero, Compress, Unique, NonMaxSuppression and RoiAlign against
NumPy references on cases the ONNX node tests do not cover (empty results,
run-time max_output_boxes_per_class, several batches/classes, adaptive
RoiAlign sampling, ...).

Every case builds a one-node ONNX model, compiles it with disc-compile (once
with the declared shapes, once with --force-dynamic), runs it with disc-run
on .npy inputs and compares each output with the reference (integers
exactly, floats with rtol 1e-4 / atol 1e-5).

    check_data_dependent.py --bin-dir build/bin [--work-dir DIR] [-k REGEX]

Exit status: 0 when every case matches, 1 otherwise.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

import checklib

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.bool_): TensorProto.BOOL,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.uint8): TensorProto.UINT8,
}

# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------


def ref_nonzero(x):
    return np.array(np.nonzero(np.atleast_1d(x)), dtype=np.int64)


def ref_compress(x, cond, axis=None):
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    n = x.shape[axis]
    c = np.zeros(n, dtype=bool)
    m = min(n, len(cond))
    c[:m] = cond[:m]
    return np.compress(c, x, axis=axis)


def ref_unique(x, axis=None, sorted_=1):
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True,
                                 return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        idx, cnt = idx[order], cnt[order]
        inv = rank[inv]
        y = np.take(x.reshape(-1) if axis is None else x, idx,
                    axis=0 if axis is None else axis)
    return [y, idx.astype(np.int64), inv.astype(np.int64),
            cnt.astype(np.int64)]


def _iou_suppress(b1, b2, cpb, thr):
    if cpb == 0:
        x1min, x1max = sorted((b1[1], b1[3]))
        x2min, x2max = sorted((b2[1], b2[3]))
        y1min, y1max = sorted((b1[0], b1[2]))
        y2min, y2max = sorted((b2[0], b2[2]))
    else:
        x1min, x1max = b1[0] - b1[2] / 2, b1[0] + b1[2] / 2
        x2min, x2max = b2[0] - b2[2] / 2, b2[0] + b2[2] / 2
        y1min, y1max = b1[1] - b1[3] / 2, b1[1] + b1[3] / 2
        y2min, y2max = b2[1] - b2[3] / 2, b2[1] + b2[3] / 2
    ixmin, ixmax = max(x1min, x2min), min(x1max, x2max)
    if ixmax <= ixmin:
        return False
    iymin, iymax = max(y1min, y2min), min(y1max, y2max)
    if iymax <= iymin:
        return False
    inter = (ixmax - ixmin) * (iymax - iymin)
    a1 = (x1max - x1min) * (y1max - y1min)
    a2 = (x2max - x2min) * (y2max - y2min)
    union = a1 + a2 - inter
    if inter <= 0 or a1 <= 0 or a2 <= 0 or union <= 0:
        return False
    return inter / union > thr


def ref_nms(boxes, scores, max_out=None, iou=None, score_thr=None, cpb=0):
    if max_out is None:
        return np.zeros((0, 3), dtype=np.int64)
    max_out = max(int(np.asarray(max_out).reshape(-1)[0]), 0)
    iou = 0.0 if iou is None else np.asarray(iou).reshape(-1)[0]
    out = []
    B, C, N = scores.shape
    for b in range(B):
        for c in range(C):
            s = scores[b, c]
            cand = [i for i in range(N)
                    if score_thr is None
                    or s[i] > np.asarray(score_thr).reshape(-1)[0]]
            # Descending score, ties: lower index first.
            cand.sort(key=lambda i: (-s[i], i))
            sel = []
            for i in cand:
                if len(sel) >= max_out:
                    break
                if not any(_iou_suppress(boxes[b, i], boxes[b, j], cpb, iou)
                           for j in sel):
                    sel.append(i)
                    out.append((b, c, i))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def ref_roialign(X, rois, bidx, mode="avg", oh=1, ow=1, sr=0, scale=1.0,
                 half_pixel=True):
    """The ONNX reference (onnx/reference/ops/op_roi_align.py) loops."""
    R = rois.shape[0]
    _, C, H, W = X.shape
    Y = np.zeros((R, C, oh, ow), dtype=np.float64)
    off = 0.5 if half_pixel else 0.0
    for n in range(R):
        sw, sh, ew, eh = [float(v) * scale - off for v in rois[n]]
        rw, rh = ew - sw, eh - sh
        if not half_pixel:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / oh, rw / ow
        gh = sr if sr > 0 else int(np.ceil(rh / oh))
        gw = sr if sr > 0 else int(np.ceil(rw / ow))
        count = max(gh * gw, 1)
        img = X[int(bidx[n])].astype(np.float64)
        for ph in range(oh):
            for pw in range(ow):
                vals = []
                for iy in range(gh):
                    y0 = sh + ph * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        x0 = sw + pw * bw + (ix + 0.5) * bw / gw
                        y, x = y0, x0
                        if y < -1.0 or y > H or x < -1.0 or x > W:
                            vals.append(np.zeros(C))
                            continue
                        y, x = max(y, 0), max(x, 0)
                        yl, xl = int(y), int(x)
                        if yl >= H - 1:
                            yh = yl = H - 1
                            y = yl
                        else:
                            yh = yl + 1
                        if xl >= W - 1:
                            xh = xl = W - 1
                            x = xl
                        else:
                            xh = xl + 1
                        ly, lx = y - yl, x - xl
                        hy, hx = 1 - ly, 1 - lx
                        t = [hy * hx * img[:, yl, xl], hy * lx * img[:, yl, xh],
                             ly * hx * img[:, yh, xl], ly * lx * img[:, yh, xh]]
                        vals.append(sum(t) if mode == "avg"
                                    else np.max(np.stack(t), axis=0))
                if mode == "avg":
                    Y[n, :, ph, pw] = (np.sum(vals, axis=0) / count
                                       if vals else 0.0)
                else:
                    Y[n, :, ph, pw] = (np.max(np.stack(vals), axis=0)
                                       if vals else 0.0)
    return Y.astype(X.dtype)


# ---------------------------------------------------------------------------
# Cases: (name, op, attrs, opset, inputs [(name, array or None)], outputs,
#         expected list)
# ---------------------------------------------------------------------------


def cases():
    rng = np.random.default_rng(7)
    out = []

    def add(name, op, inputs, outputs, expected, opset, **attrs):
        out.append((name, op, attrs, opset, inputs, outputs, expected))

    # NonZero.
    x = np.zeros((2, 3, 4), np.float32)
    add("nonzero_3d_empty", "NonZero", [("x", x)], ["y"], [ref_nonzero(x)], 13)
    x = rng.integers(-1, 2, (3, 5, 2)).astype(np.int32)
    add("nonzero_3d_int", "NonZero", [("x", x)], ["y"], [ref_nonzero(x)], 13)
    x = rng.random(7) > 0.5
    add("nonzero_bool_1d", "NonZero", [("x", x)], ["y"], [ref_nonzero(x)], 9)
    x = np.array(2.5, np.float32)
    add("nonzero_scalar", "NonZero", [("x", x)], ["y"], [ref_nonzero(x)], 13)
    x = np.zeros((2, 0, 3), np.float32)
    add("nonzero_zero_dim", "NonZero", [("x", x)], ["y"], [ref_nonzero(x)], 13)

    # Compress.
    x = rng.random((3, 4, 2)).astype(np.float32)
    c = np.zeros(3, bool)
    add("compress_all_false", "Compress", [("x", x), ("c", c)], ["y"],
        [ref_compress(x, c, 1)], 11, axis=1)
    c = np.array([True, False, True])
    add("compress_short_flat", "Compress", [("x", x), ("c", c)], ["y"],
        [ref_compress(x, c)], 11)
    c = np.array([False, True])
    add("compress_neg_axis", "Compress", [("x", x), ("c", c)], ["y"],
        [ref_compress(x, c, -1)], 11, axis=-1)
    xi = rng.integers(0, 100, (5, 3)).astype(np.int64)
    c = np.array([True, True, False, False, True])
    add("compress_int_axis0", "Compress", [("x", xi), ("c", c)], ["y"],
        [ref_compress(xi, c, 0)], 9, axis=0)

    # NonMaxSuppression.
    def rand_boxes(B, N):
        y0 = rng.random((B, N)) * 10
        x0 = rng.random((B, N)) * 10
        h = rng.random((B, N)) * 4 + 0.5
        w = rng.random((B, N)) * 4 + 0.5
        bx = np.stack([y0, x0, y0 + h, x0 + w], -1).astype(np.float32)
        flip = rng.random((B, N)) > 0.5  # corners given flipped
        bx[flip] = bx[flip][:, [2, 3, 0, 1]]
        return bx

    boxes = rand_boxes(2, 20)
    scores = rng.random((2, 3, 20)).astype(np.float32)
    mo = np.array([3], np.int64)
    iou = np.array([0.3], np.float32)
    st = np.array([0.2], np.float32)
    add("nms_batches_classes", "NonMaxSuppression",
        [("boxes", boxes), ("scores", scores), ("max_out", mo), ("iou", iou),
         ("score_thr", st)], ["sel"],
        [ref_nms(boxes, scores, mo, iou, st)], 11)
    mo = np.array([100], np.int64)
    add("nms_no_score_thr", "NonMaxSuppression",
        [("boxes", boxes), ("scores", scores), ("max_out", mo), ("iou", iou)],
        ["sel"], [ref_nms(boxes, scores, mo, iou)], 10)
    tied = np.round(scores * 4) / 4  # many equal scores
    add("nms_ties", "NonMaxSuppression",
        [("boxes", boxes), ("scores", tied), ("max_out", mo), ("iou", iou),
         ("score_thr", np.array([0.0], np.float32))], ["sel"],
        [ref_nms(boxes, tied, mo, iou, np.array([0.0], np.float32))], 11)
    cb = np.concatenate([rng.random((1, 15, 2)) * 10,
                         rng.random((1, 15, 2)) * 4 + 0.5], -1).astype(
                             np.float32)
    cs = rng.random((1, 2, 15)).astype(np.float32)
    add("nms_center_point", "NonMaxSuppression",
        [("boxes", cb), ("scores", cs), ("max_out", np.array([4], np.int64)),
         ("iou", np.array([0.1], np.float32))], ["sel"],
        [ref_nms(cb, cs, [4], [0.1], cpb=1)], 11, center_point_box=1)
    add("nms_max_zero", "NonMaxSuppression",
        [("boxes", boxes), ("scores", scores),
         ("max_out", np.array([0], np.int64))], ["sel"],
        [ref_nms(boxes, scores, [0])], 11)
    add("nms_no_max", "NonMaxSuppression",
        [("boxes", boxes), ("scores", scores)], ["sel"],
        [ref_nms(boxes, scores)], 11)

    # Unique.
    x = rng.integers(0, 6, 15).astype(np.int64)
    outs = ["y", "indices", "inverse", "counts"]
    add("unique_int_sorted", "Unique", [("x", x)], outs, ref_unique(x), 11)
    add("unique_int_unsorted", "Unique", [("x", x)], outs,
        ref_unique(x, sorted_=0), 11, sorted=0)
    x = rng.integers(0, 2, (3, 7)).astype(np.float32)
    add("unique_axis1_unsorted", "Unique", [("x", x)], outs,
        ref_unique(x, axis=1, sorted_=0), 11, axis=1, sorted=0)
    x = rng.integers(0, 2, (2, 3, 6)).astype(np.int32)
    r = ref_unique(x, axis=2)
    add("unique_3d_axis2_y_counts", "Unique", [("x", x)],
        ["y", "", "", "counts"], [r[0], None, None, r[3]], 11, axis=-1)
    x = rng.integers(120, 140, 12).astype(np.uint8)
    add("unique_uint8_unsorted", "Unique", [("x", x)], outs,
        ref_unique(x, sorted_=0), 11, sorted=0)
    x = rng.random((4, 3)) > 0.5
    add("unique_bool_axis0", "Unique", [("x", x)], outs,
        ref_unique(x, axis=0), 11, axis=0)
    x = np.full((2, 2), 3.0, np.float32)
    add("unique_all_equal", "Unique", [("x", x)], outs, ref_unique(x), 11)

    # RoiAlign.
    X = rng.random((2, 3, 6, 7)).astype(np.float32)
    rois = np.array([[0, 0, 6, 5], [1.5, 2.2, 12, 9], [-3, -2, 2, 3],
                     [10, 9, 14, 13], [3, 3, 3.2, 3.1]], np.float32)
    bidx = np.array([0, 1, 1, 0, 1], np.int64)
    ins = [("X", X), ("rois", rois), ("batch_indices", bidx)]
    # A reversed roi (negative size: an empty adaptive grid with half_pixel)
    # next to a large one.
    rois2 = np.array([[5, 5, 1, 2], [0, 0, 7, 6]], np.float32)
    bidx2 = np.array([1, 0], np.int32)
    for mode in ("avg", "max"):
        add(f"roialign_{mode}_empty_grid", "RoiAlign",
            [("X", X), ("rois", rois2), ("batch_indices", bidx2)], ["y"],
            [ref_roialign(X, rois2, bidx2, mode, 2, 2, 0, 1.0, True)], 16,
            mode=mode, output_height=2, output_width=2)
    for mode in ("avg", "max"):
        add(f"roialign_{mode}_sr2_scale", "RoiAlign", ins, ["y"],
            [ref_roialign(X, rois, bidx, mode, 3, 2, 2, 0.5, True)], 16,
            mode=mode, output_height=3, output_width=2, sampling_ratio=2,
            spatial_scale=0.5)
        add(f"roialign_{mode}_adaptive", "RoiAlign", ins, ["y"],
            [ref_roialign(X, rois, bidx, mode, 2, 3, 0, 1.0, True)], 16,
            mode=mode, output_height=2, output_width=3)
        add(f"roialign_{mode}_adaptive_opset10", "RoiAlign", ins, ["y"],
            [ref_roialign(X, rois, bidx, mode, 2, 2, 0, 1.0, False)], 10,
            mode=mode, output_height=2, output_width=2)
    return out


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def build_model(op, attrs, opset, inputs, outputs, expected):
    vis = [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype], a.shape)
           for n, a in inputs]
    node = helper.make_node(op, [n for n, _ in inputs], outputs, **attrs)
    # Output dims unknown (data-dependent); element type and rank from the
    # reference.
    vos = [helper.make_tensor_value_info(
        o, NP_TO_ONNX[np.asarray(w).dtype], [None] * np.asarray(w).ndim)
           for o, w in zip(outputs, expected) if o]
    graph = helper.make_graph([node], "g", vis, vos)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def run_case(bin_dir, work, case, dynamic):
    name, op, attrs, opset, inputs, outputs, expected = case
    d = os.path.join(work, name + ("_dyn" if dynamic else ""))
    model = build_model(op, attrs, opset, inputs, outputs, expected)
    so, err = checklib.compile_model(bin_dir, model, d, dynamic)
    if err:
        return err
    return checklib.run_model(bin_dir, so, d, inputs, outputs, expected,
                              rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    sys.exit(checklib.main(__doc__.split("\n")[0], cases(), run_case))

#!/usr/bin/python3
"""Resize (nearest and linear) with scales and with sizes on unknown H/W
(ctest e2e-resize-dynamic).

Builds small ONNX models whose input is [N, C, H, W] with H and W as
dim_params, compiles each once with disc-compile, runs it with disc-run at
several H/W and compares with a NumPy reference (rtol 1e-3, atol 1e-4).
The reference is `interpolate_nd` from onnx's backend test case module
(onnx/backend/test/case/node/resize.py) when it can be imported, else the
independent implementation below. Exit 0 ok, 1 mismatch or failure.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPES = [(5, 7), (8, 4), (3, 3)]


def _coord(x, scale, in_len, mode):
    out_w = scale * in_len
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "align_corners":
        return 0.0 if out_w == 1 else x * (in_len - 1) / (out_w - 1)
    if mode == "asymmetric":
        return x / scale
    raise ValueError(mode)


def _resize_1d(data, axis, out_len, scale, kind, ctm, nearest_mode):
    """Independent reference along one axis (edge-clamped taps)."""
    in_len = data.shape[axis]
    moved = np.moveaxis(data, axis, -1).astype(np.float64)
    res = np.zeros(moved.shape[:-1] + (out_len,))
    for y in range(out_len):
        x = _coord(y, scale, in_len, ctm)
        fl = np.floor(x)
        if kind == "nearest":
            if x == fl:
                i = x
            elif nearest_mode == "round_prefer_floor":
                i = fl if x - fl <= 0.5 else fl + 1
            elif nearest_mode == "round_prefer_ceil":
                i = fl if x - fl < 0.5 else fl + 1
            elif nearest_mode == "floor":
                i = fl
            else:
                i = fl + 1
            i = int(min(max(i, 0), in_len - 1))
            res[..., y] = moved[..., i]
        else:
            i0 = x - 1 if x == fl else fl
            r = x - i0
            a = int(min(max(i0, 0), in_len - 1))
            c = int(min(max(i0 + 1, 0), in_len - 1))
            res[..., y] = (1 - r) * moved[..., a] + r * moved[..., c]
    return np.moveaxis(res, -1, axis)


def reference(x, kind, ctm, nearest_mode, scales=None, sizes=None):
    try:
        from onnx.backend.test.case.node import resize as ref

        if kind == "nearest":
            coeffs = lambda r: ref.nearest_coeffs(r, mode=nearest_mode)
        else:
            coeffs = ref.linear_coeffs
        return ref.interpolate_nd(
            x, coeffs, output_size=sizes, scale_factors=scales,
            coordinate_transformation_mode=ctm).astype(np.float32)
    except ImportError:
        pass
    if sizes is not None:
        scales = np.array(sizes) / np.array(x.shape)
    else:
        sizes = (scales * np.array(x.shape)).astype(int)
    out = x
    for axis in range(x.ndim):
        out = _resize_1d(out, axis, int(sizes[axis]), float(scales[axis]),
                         kind, ctm, nearest_mode)
    return out.astype(np.float32)


def make_model(kind, ctm, nearest_mode, scales=None, runtime_scales=False):
    """Resize on X[N, C, H, W]: constant scales, run-time scales, or
    run-time sizes (scales is None)."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                      ["N", "C", "H", "W"])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                      ["N", "C", "OH", "OW"])
    inputs, inits = [x], []
    if scales is None:
        inputs.append(helper.make_tensor_value_info("sizes", TensorProto.INT64,
                                                    [4]))
        node_in = ["X", "", "", "sizes"]
    elif runtime_scales:
        inputs.append(helper.make_tensor_value_info("scales",
                                                    TensorProto.FLOAT, [4]))
        node_in = ["X", "", "scales"]
    else:
        inits.append(numpy_helper.from_array(
            np.array(scales, dtype=np.float32), "scales"))
        node_in = ["X", "", "scales"]
    node = helper.make_node("Resize", node_in, ["Y"], mode=kind,
                            coordinate_transformation_mode=ctm,
                            nearest_mode=nearest_mode)
    graph = helper.make_graph([node], "resize", inputs, [y], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model


CASES = [
    # name, mode, coordinate transformation, nearest mode, scales,
    # run-time scales (scales None: run-time sizes, out = (2H - 1, W + 2))
    ("nearest_scales", "nearest", "half_pixel", "round_prefer_floor",
     [1.0, 1.0, 2.0, 1.5], False),
    ("nearest_scales_asym_floor", "nearest", "asymmetric", "floor",
     [1.0, 1.0, 0.5, 3.0], False),
    ("nearest_sizes", "nearest", "half_pixel", "round_prefer_ceil", None,
     False),
    ("linear_scales", "linear", "half_pixel", "round_prefer_floor",
     [1.0, 1.0, 2.0, 0.6], False),
    ("linear_runtime_scales", "linear", "asymmetric", "round_prefer_floor",
     [1.0, 1.0, 1.5, 2.0], True),
    ("linear_sizes_align_corners", "linear", "align_corners",
     "round_prefer_floor", None, False),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work-dir", required=True)
    a = p.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    failures = 0
    for name, kind, ctm, nmode, scales, rt in CASES:
        d = os.path.join(a.work_dir, name)
        os.makedirs(d, exist_ok=True)
        onnx.save(make_model(kind, ctm, nmode, scales, rt),
                  os.path.join(d, "model.onnx"))
        so = os.path.join(d, "model.so")
        r = subprocess.run([os.path.join(a.bin_dir, "disc-compile"),
                            os.path.join(d, "model.onnx"), "-o", so],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            print("FAIL %s: disc-compile exit %d\n%s" %
                  (name, r.returncode, r.stderr))
            failures += 1
            continue
        for h, w in SHAPES:
            x = rng.standard_normal((2, 3, h, w)).astype(np.float32)
            args = [os.path.join(a.bin_dir, "disc-run"), so]
            np.save(os.path.join(d, "x.npy"), x)
            args += ["--input", "X=" + os.path.join(d, "x.npy")]
            if scales is None:
                sizes = np.array([2, 3, 2 * h - 1, w + 2], dtype=np.int64)
                np.save(os.path.join(d, "sizes.npy"), sizes)
                args += ["--input", "sizes=" + os.path.join(d, "sizes.npy")]
                ref = reference(x, kind, ctm, nmode, sizes=sizes)
            else:
                sc = np.array(scales, dtype=np.float32)
                if rt:
                    np.save(os.path.join(d, "scales.npy"), sc)
                    args += ["--input",
                             "scales=" + os.path.join(d, "scales.npy")]
                ref = reference(x, kind, ctm, nmode, scales=sc)
            np.save(os.path.join(d, "ref.npy"), ref)
            args += ["--compare", "#0=" + os.path.join(d, "ref.npy"),
                     "--rtol", "1e-3", "--atol", "1e-4"]
            r = subprocess.run(args, capture_output=True, text=True,
                               timeout=600)
            status = "ok" if r.returncode == 0 else "FAIL"
            print("%s %s H=%d W=%d -> %s" % (status, name, h, w,
                                             list(ref.shape)))
            if r.returncode != 0:
                print(r.stdout + r.stderr)
                failures += 1
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

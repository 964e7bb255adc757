#!/usr/bin/env python3
"""The roofline of CUDA models (test/cuda/roofline.py) against an
independent count.

1. A small model built here, z = MatMul(Exp(x) + x, W) with x [n, 64] and
   W [64, 32]: one fused elementwise kernel (reads x, writes the sum: 2
   FLOPs per element), one cuBLAS call (2*n*64*32 FLOPs; reads the sum
   and W, writes z); W is the session's device copy (uploaded once), so
   no copy runs in every run. Bytes from the NumPy arrays of those shapes,
   at n = 5 and n = 1000; the roofline time from the H200 peaks.
2. With --transformer MODEL.onnx (the e2e export): compiled for CUDA and
   evaluated at tokens 2x77; every MatMul/Gemm whose shapes ONNX shape
   inference gives must have 2*M*N*K FLOPs plus one per output element for
   each post-op (0 to 3), and its operands' and result's bytes; the
   embedding Gather kernel reads the tokens (int64) and the table and
   writes [2, 77, 128] f32; no kernel has an unknown cost.

Exit 0 when all hold, 1 otherwise, 77 (skipped) without ptxas.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roofline  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def compile_cuda(bin_dir, onnx_path, so_path):
    cmd = [os.path.join(bin_dir, "disc-compile"), "--target=cuda",
           "--gpu-arch=sm_90", onnx_path, "-o", so_path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        raise SystemExit("disc-compile failed: %s" % " ".join(cmd))


def small_model(path):
    w = np.linspace(-1, 1, 64 * 32, dtype=np.float32).reshape(64, 32)
    graph = helper.make_graph(
        [helper.make_node("Exp", ["x"], ["e"], name="exp"),
         helper.make_node("Add", ["e", "x"], ["s"], name="add"),
         helper.make_node("MatMul", ["s", "w"], ["z"], name="mm")],
        "roofline_small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 64])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["n", 32])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return w


def check_small(bin_dir, work):
    onnx_path = os.path.join(work, "roofline_small.onnx")
    so_path = os.path.join(work, "roofline_small.so")
    w = small_model(onnx_path)
    compile_cuda(bin_dir, onnx_path, so_path)
    sig = roofline.load_signature(model=so_path)
    for n in (5, 1000):
        x = np.empty((n, 64), np.float32)
        s = np.empty((n, 64), np.float32)
        z = np.empty((n, 32), np.float32)
        res = roofline.roofline(sig, roofline.bind_dims(sig, {"x": [n, 64]}))
        rows = [r for r in res["kernels"] if r["runs"] == "always"]
        gen = [r for r in rows if not r["library"] and not r["copy"]]
        lib = [r for r in rows if r["library"]]
        copies = [r for r in rows if r["copy"]]
        check(not copies,
              "n=%d: no per-run copy (W is a session constant): %s" %
              (n, [c["name"] for c in copies]))
        check(len(gen) == 1 and len(lib) == 1,
              "n=%d: one kernel and one library call (%d, %d)" %
              (n, len(gen), len(lib)))
        if len(gen) != 1 or len(lib) != 1:
            continue
        k, m = gen[0], lib[0]
        want = x.nbytes + s.nbytes
        check(k["bytes"] == want,
              "n=%d: Exp+Add kernel bytes %s == %d" % (n, k["bytes"], want))
        check(k["flops"] == 2 * x.size,
              "n=%d: Exp+Add kernel FLOPs %s == %d" %
              (n, k["flops"], 2 * x.size))
        want = s.nbytes + w.nbytes + z.nbytes
        check(m["bytes"] == want,
              "n=%d: MatMul bytes %s == %d" % (n, m["bytes"], want))
        want = 2 * n * 64 * 32
        check(m["flops"] == want,
              "n=%d: MatMul FLOPs %s == %d" % (n, m["flops"], want))
        us = (max(k["bytes"] / 4.8e12, k["flops"] / 67e12) +
              max(m["bytes"] / 4.8e12, m["flops"] / 67e12)) * 1e6
        check(abs(res["total"]["us"] - us) < 1e-9,
              "n=%d: roofline %.6f µs == %.6f µs" %
              (n, res["total"]["us"], us))


def onnx_shapes(path, dims):
    """Shapes of every value of the model at concrete input dims."""
    model = onnx.load(path)
    for d, v in zip(model.graph.input[0].type.tensor_type.shape.dim, dims):
        d.ClearField("dim_param")
        d.dim_value = v
    model = shape_inference.infer_shapes(model, data_prop=True)
    shapes = {}
    for vi in (list(model.graph.value_info) + list(model.graph.input) +
               list(model.graph.output)):
        dims_ = vi.type.tensor_type.shape.dim
        if dims_ and all(d.HasField("dim_value") for d in dims_):
            shapes[vi.name] = [d.dim_value for d in dims_]
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)
    return model, shapes


def check_transformer(bin_dir, work, path):
    so_path = os.path.join(work, "transformer.so")
    compile_cuda(bin_dir, path, so_path)
    sig = roofline.load_signature(model=so_path)
    res = roofline.roofline(sig, roofline.bind_dims(sig, {"tokens": [2, 77]}))
    unknown = [r["name"] for r in res["kernels"] if r["us"] is None]
    # The cuBLAS calls' constant operands are the session's device copies
    # (uploaded once): no host-to-device copy in every run.
    copied = sum(r["bytes"] for r in res["kernels"]
                 if r["copy"] == "host-to-device" and r["runs"] == "always")
    check(copied == 0,
          "transformer: %d bytes copied to the device per run == 0 (the "
          "weights are session constants)" % copied)
    check(not unknown, "transformer 2x77: no unknown cost (%s)" % unknown)
    model, shapes = onnx_shapes(path, [2, 77])
    nodes = {n.name: n for n in model.graph.node}
    checked = 0
    for r in res["kernels"]:
        node = nodes.get(r["node"])
        if not r["library"] or node is None or r["us"] is None:
            continue
        ins = [shapes.get(i) for i in node.input]
        out = shapes.get(node.output[0])
        if out is None or any(s is None for s in ins[:2]):
            continue
        a = ins[0]
        if node.op_type == "Gemm":
            trans_a = any(at.name == "transA" and at.i
                          for at in node.attribute)
            k = a[0] if trans_a else a[1]
        else:
            k = a[-1]
        elems = int(np.prod(out))
        base = 2 * elems * k
        extra = r["flops"] - base
        check(extra in (0, elems, 2 * elems, 3 * elems),
              "%s: FLOPs %d == 2*M*N*K %d + post-ops" %
              (r["node"], r["flops"], base))
        # Operands: A, B, Y; a bias vector and a residual of Y's shape for
        # post-ops.
        a_b_y = 4 * (int(np.prod(a)) + int(np.prod(ins[1])) + elems)
        n_out = out[-1]
        ok = any(r["bytes"] == a_b_y + 4 * n_out * bias + 4 * elems * resid
                 for bias in (0, 1) for resid in (0, 1))
        check(ok, "%s: bytes %d == A + B + Y (%d) + bias/residual" %
              (r["node"], r["bytes"], a_b_y))
        checked += 1
    check(checked >= 8, "transformer: %d MatMul/Gemm calls checked" % checked)
    gather = [r for r in res["kernels"]
              if r["node"] == "/embed/Gather" and r["runs"] == "always"]
    want = 2 * 77 * 8 + 1000 * 128 * 4 + 2 * 77 * 128 * 4
    check(gather and gather[0]["bytes"] == want and gather[0]["flops"] == 0,
          "/embed/Gather: %s bytes == %d (tokens + table + output), 0 FLOPs" %
          (gather[0]["bytes"] if gather else None, want))
    print("transformer 2x77: roofline %.3f µs (%d kernels, %d library "
          "calls)" %
          (res["total"]["us"], res["total"]["kernels"],
           res["total"]["library_calls"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--transformer", help="the e2e export's transformer.onnx")
    args = ap.parse_args()
    cuda = os.environ.get("CUDA_PATH", "/usr/local/cuda")
    if not (shutil.which("ptxas") or
            os.path.exists(os.path.join(cuda, "bin", "ptxas"))):
        print("skipped: no ptxas (CUDA toolkit)")
        return 77
    os.makedirs(args.work_dir, exist_ok=True)
    check_small(args.bin_dir, args.work_dir)
    if args.transformer:
        check_transformer(args.bin_dir, args.work_dir, args.transformer)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Latency of a row Softmax with and without row kernels
(docs/performance.md, *Row kernels*), ONNX Runtime in the same run.

For each case (rows, row length) the script writes an ONNX model of one
Softmax over the last axis of a `[1, R, S]` input with dynamic R and S (so
the default build chooses between the row loop and the separate nests at
run time, as for a sequence length), compiles it twice, with the default
options and with `--stitch-rows=false`, and times, interleaved over
--rounds, `disc-run --repeat` of both and the model in ONNX Runtime
(benchmarks/ort_run.js), every process pinned to the same cores with the
same threads. Both DISC outputs are compared with NumPy's softmax (float64)
of the same input (rtol 1e-5, atol 1e-7); the script exits 1 when one
differs.

    /usr/bin/python3 benchmarks/row_kernels.py --bin-dir build/bin \\
        --work-dir /tmp/disc-rows --ort-dir /tmp/disc-bench-ort [--threads 2]
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_ort import (add_peer_args, pinned, pinned_disc_run,  # noqa: E402
                         sh)

# (rows, row length): attention scores of 8 or 12 heads, LLM-like rows.
CASES = [(616, 77), (2364, 197), (4608, 384), (768, 1024), (768, 2048)]


def export(path):
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["input"], ["output"], axis=-1)],
        "softmax",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                       [1, "R", "S"])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                       [1, "R", "S"])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def disc_run(args, so, input_path, out_dir):
    return pinned_disc_run(args, so, ["--input", "input=" + input_path],
                           out_dir)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_peer_args(ap, repeat=50)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    env = dict(os.environ,
               NODE_PATH=os.path.join(args.ort_dir, "node_modules"))
    onnx_path = os.path.join(args.work_dir, "softmax.onnx")
    export(onnx_path)
    builds = {"rows": [], "separate": ["--stitch-rows=false"]}
    sos = {}
    for label, flags in builds.items():
        sos[label] = os.path.join(args.work_dir, f"softmax.{label}.so")
        sh([os.path.join(args.bin_dir, "disc-compile"), onnx_path, "-o",
            sos[label]] + flags)
    failures = 0
    print(f"threads {args.threads}, median of {args.repeat * args.rounds} "
          "runs (us)")
    print("| rows x row length | DISC default | DISC separate nests | ORT | "
          "default/separate | default/ORT |")
    print("|---|---|---|---|---|---|")
    for rows, cols in CASES:
        x = np.random.default_rng(0).standard_normal((1, rows, cols)) * 4
        x = x.astype(np.float32)
        input_path = os.path.join(args.work_dir, f"x_{rows}x{cols}.npy")
        np.save(input_path, x)
        e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
        ref = e / e.sum(axis=-1, keepdims=True)
        times = {"rows": [], "separate": [], "ort": []}
        for _ in range(args.rounds):
            for label, so in sos.items():
                d = os.path.join(args.work_dir, label)
                os.makedirs(d, exist_ok=True)
                times[label] += disc_run(args, so, input_path, d)
                out = np.load(os.path.join(d, "output.npy"))
                if not np.allclose(out, ref, rtol=1e-5, atol=1e-7):
                    print(f"{rows}x{cols} ({label}): output differs from "
                          f"NumPy (max abs {np.abs(out - ref).max():.3g})",
                          file=sys.stderr)
                    failures += 1
            out = sh(pinned(args, ["node", os.path.join(HERE, "ort_run.js"),
                                   onnx_path, f"input:float32:1x{rows}x{cols}",
                                   str(args.repeat), str(args.threads)],
                            args.threads), env=env)
            times["ort"] += json.loads(out.strip().splitlines()[-1])[
                "latencies_ms"]
        med = {k: 1000 * statistics.median(v) for k, v in times.items()}
        print(f"| {rows} x {cols} | {med['rows']:.0f} | {med['separate']:.0f}"
              f" | {med['ort']:.0f} | {med['rows'] / med['separate']:.2f} "
              f"| {med['rows'] / med['ort']:.2f} |")
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

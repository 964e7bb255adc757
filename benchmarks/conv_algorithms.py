#!/usr/bin/env python3
"""Latency of single 3x3 Convs (+ Relu) with and without Winograd
(docs/performance.md, *Winograd convolutions*), ONNX Runtime in the same
run.

For each case (batch, input channels, output channels, output height and
width) the script writes an ONNX model of one 3x3 Conv, stride 1, pad 1,
random constant weights and bias (seed 0), then Relu; compiles it with the
default options; and times, interleaved over --rounds, `disc-run --repeat`
as built (Winograd where `winogradPays` takes the Conv) and with
DISC_CONV_WINOGRAD=0 (oneDNN's direct kernels), and the model in ONNX
Runtime (benchmarks/ort_run.js), every process pinned to the same cores
with the same threads. The input is NCHW, so both DISC columns include
the reorders of the input and output around the primitive. The two DISC
outputs are compared with each other (rtol 1e-4, atol 1e-5 of the
output's magnitude); the script exits 1 when they differ.

    /usr/bin/python3 benchmarks/conv_algorithms.py --bin-dir build/bin \\
        --work-dir /tmp/disc-conv --ort-dir /tmp/disc-bench-ort
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

# (batch, in channels, out channels, height, width); the last four are
# outside the rule (too many pixels, too few channels).
CASES = [
    (1, 64, 64, 56, 56),
    (1, 128, 128, 28, 28),
    (1, 96, 96, 35, 35),
    (1, 16, 64, 55, 55),
    (1, 32, 128, 27, 27),
    (2, 128, 128, 20, 24),
    (2, 64, 256, 9, 11),
    (1, 64, 64, 224, 224),
    (1, 8, 64, 56, 56),
    (1, 16, 32, 56, 56),
    (1, 32, 32, 56, 56),
]


def case_name(c):
    return "conv_n%d_c%d_k%d_%dx%d" % c


def export(path, c):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    n, cin, cout, h, w = c
    rng = np.random.default_rng(0)
    weight = (rng.standard_normal((cout, cin, 3, 3)) /
              np.sqrt(9 * cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["input", "weight", "bias"], ["conv"],
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["conv"], ["output"])],
        "conv",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                       [n, cin, h, w])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                       [n, cout, h, w])],
        [numpy_helper.from_array(weight, "weight"),
         numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def disc_run(args, so, shape, winograd, out_dir):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    if winograd:
        env.pop("DISC_CONV_WINOGRAD", None)
    else:
        env["DISC_CONV_WINOGRAD"] = "0"
    return pinned_disc_run(
        args, so, ["--input", "input=" + shape + ":random", "--seed", "0"],
        out_dir, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_peer_args(ap, repeat=10)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    env = dict(os.environ,
               NODE_PATH=os.path.join(args.ort_dir, "node_modules"))
    failures = 0
    print(f"threads {args.threads}, median of {args.repeat * args.rounds} "
          "runs (ms)")
    print("| Conv: batch, channels in -> out, output | DISC Winograd | "
          "DISC direct | ORT | Winograd/direct | Winograd/ORT |")
    print("|---|---|---|---|---|---|")
    for c in CASES:
        name = case_name(c)
        onnx_path = os.path.join(args.work_dir, name + ".onnx")
        so = os.path.join(args.work_dir, name + ".so")
        export(onnx_path, c)
        sh([os.path.join(args.bin_dir, "disc-compile"), onnx_path, "-o", so])
        shape = "x".join(str(d) for d in (c[0], c[1], c[3], c[4]))
        times = {"wino": [], "direct": [], "ort": []}
        outs = {}
        for _ in range(args.rounds):
            for label in ("wino", "direct"):
                d = os.path.join(args.work_dir, name + "." + label)
                os.makedirs(d, exist_ok=True)
                times[label] += disc_run(args, so, shape, label == "wino", d)
                outs[label] = np.load(os.path.join(d, "output.npy"))
            out = sh(pinned(args, ["node", os.path.join(HERE, "ort_run.js"),
                                   onnx_path, f"input:float32:{shape}",
                                   str(args.repeat), str(args.threads)],
                            args.threads), env=env)
            times["ort"] += json.loads(out.strip().splitlines()[-1])[
                "latencies_ms"]
        scale = float(np.abs(outs["direct"]).max())
        if not np.allclose(outs["wino"], outs["direct"], rtol=1e-4,
                           atol=1e-5 * scale):
            print(f"{name}: Winograd and direct outputs differ "
                  f"(max abs {np.abs(outs['wino'] - outs['direct']).max():.3g}"
                  f", scale {scale:.3g})", file=sys.stderr)
            failures += 1
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"| {c[0]}, {c[1]} -> {c[2]}, {c[3]}x{c[4]} "
              f"| {med['wino']:.3f} | {med['direct']:.3f} | {med['ort']:.3f} "
              f"| {med['wino'] / med['direct']:.2f} "
              f"| {med['wino'] / med['ort']:.2f} |")
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

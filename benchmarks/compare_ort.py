#!/usr/bin/python3
"""Latency of DISC against ONNX Runtime on a few models, one table.

Cases: ResNet-18 at 1x3x224x224, the demo Transformer encoder at 1x384
tokens, and one nn.Linear(768, 3072) on a [1, 197, 768] tensor (a MatMul by a
large constant weight, a ViT-B/16 MLP layer). Each model is compiled twice,
with `--library-calls=onednn` (oneDNN MatMul/Gemm/Conv) and
`--library-calls=none` (generated loops only). DISC runs through `disc-run
--repeat`, ONNX Runtime through its Node.js package `onnxruntime-node`
(installed by `npm install --ignore-scripts` into --ort-dir when missing).
Cases are interleaved (DISC, ORT, DISC, ...) for --rounds rounds; each
number is the median over all timed runs (warm-up runs left out). Threads:
`disc-run --threads` (oneDNN's OpenMP threads; DISC's generated loops run
on one thread), intraOpNumThreads for ORT. With several --threads values,
one table per value and the speed-up of each DISC mode over its run with
the first value.

    /usr/bin/python3 benchmarks/compare_ort.py --bin-dir build/bin \\
        --work-dir /tmp/disc-bench --threads 1 2

Exit status 0, or 1 when a command fails.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODELS_DIR = os.path.join(REPO, "examples", "models")
PYTHON = "/usr/bin/python3"


def sh(cmd, env=None, timeout=1800):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, timeout=timeout, text=True)
    if p.returncode != 0:
        sys.stderr.write("command failed: " + " ".join(cmd) + "\n" + p.stdout)
        raise SystemExit(1)
    return p.stdout


def export_linear(path):
    """nn.Linear(768, 3072), seed 0, input x [batch, seq, 768] (dynamic)."""
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(768, 3072).eval()
    x = torch.randn(1, 197, 768)
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "batch", 1: "seq"},
                                    "y": {0: "batch", 1: "seq"}})


CASES = [
    # name, model, ORT input spec, disc-run input
    ("resnet18 1x3x224x224", "resnet18", "input:float32:1x3x224x224",
     "#0=1x3x224x224:random"),
    ("transformer 1x384", "transformer", "tokens:int64:1x384", None),
    ("linear 1x197x768 @ 768x3072", "linear", "x:float32:1x197x768",
     "#0=1x197x768:random"),
]


def prepare(args):
    os.makedirs(args.work_dir, exist_ok=True)
    w = args.work_dir
    for name, script in (("resnet18", "export_resnet18.py"),
                         ("transformer", "export_transformer.py")):
        if not os.path.exists(os.path.join(w, name + ".onnx")):
            shapes = ["1x3x224x224"] if name == "resnet18" else ["1x384"]
            sh([PYTHON, os.path.join(MODELS_DIR, script), "--out-dir", w,
                "--shapes"] + shapes)
    if not os.path.exists(os.path.join(w, "linear.onnx")):
        export_linear(os.path.join(w, "linear.onnx"))
    for model in ("resnet18", "transformer", "linear"):
        for mode in args.modes:
            so = os.path.join(w, f"{model}.{mode}.so")
            if not os.path.exists(so):
                sh([os.path.join(args.bin_dir, "disc-compile"),
                    os.path.join(w, model + ".onnx"), "-o", so,
                    "--library-calls=" + mode])
    ort_dir = args.ort_dir
    if not os.path.isdir(os.path.join(ort_dir, "node_modules", "onnxruntime-node")):
        os.makedirs(ort_dir, exist_ok=True)
        sh(["npm", "install", "--ignore-scripts", "--prefix", ort_dir,
            "onnxruntime-node"])


def disc_times(args, model, mode, disc_input, threads):
    w = args.work_dir
    report = os.path.join(w, f"{model}.{mode}.report.json")
    if disc_input is None:  # the exported token file
        disc_input = "#0=" + os.path.join(w, "transformer", "inputs", "1x384",
                                          "tokens.npy")
    run = os.path.join(args.bin_dir, "disc-run")
    # OMP_NUM_THREADS too, for a disc-run without --threads (older builds).
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    flags = ["--threads", str(threads)] if "--threads" in sh([run, "--help"]) else []
    sh([run, os.path.join(w, f"{model}.{mode}.so"), "--input", disc_input,
        "--repeat", str(args.repeat + 1), "--report", report] + flags, env=env)
    with open(report) as f:
        return json.load(f)["latencies_ms"][1:]  # first run: warm-up


def ort_times(args, model, spec, threads):
    env = dict(os.environ, NODE_PATH=os.path.join(args.ort_dir, "node_modules"))
    out = sh(["node", os.path.join(HERE, "ort_run.js"),
              os.path.join(args.work_dir, model + ".onnx"), spec,
              str(args.repeat), str(threads)], env=env)
    return json.loads(out.strip().splitlines()[-1])["latencies_ms"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"))
    p.add_argument("--work-dir", default="/tmp/disc-bench")
    p.add_argument("--ort-dir", default="/tmp/disc-bench-ort",
                   help="where onnxruntime-node is (or gets) installed")
    p.add_argument("--threads", type=int, nargs="+", default=[1],
                   help="thread counts (one table each)")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per round")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--modes", nargs="+", default=["onednn", "none"],
                   choices=["onednn", "none"])
    p.add_argument("--cases", nargs="+", help="only cases whose name starts so")
    args = p.parse_args()
    prepare(args)
    cases = [c for c in CASES
             if not args.cases or any(c[0].startswith(x) for x in args.cases)]
    times = {}
    for _ in range(args.rounds):
        for name, model, spec, disc_input in cases:
            for t in args.threads:
                for mode in args.modes:
                    times.setdefault((name, mode, t), []).extend(
                        disc_times(args, model, mode, disc_input, t))
                times.setdefault((name, "ort", t), []).extend(
                    ort_times(args, model, spec, t))
    base = args.threads[0]
    for t in args.threads:
        cols = [f"DISC {m} (ms)" for m in args.modes] + ["ORT (ms)"] + \
               [f"{m}/ORT" for m in args.modes]
        if t != base:
            cols += [f"{m} speed-up vs {base} thread(s)" for m in args.modes]
        print(f"threads {t}, median of {args.repeat * args.rounds} runs")
        print("| case | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        for name, _, _, _ in cases:
            med = {k: statistics.median(times[(name, k, t)])
                   for k in args.modes + ["ort"]}
            row = [f"{med[m]:.1f}" for m in args.modes] + \
                  [f"{med['ort']:.1f}"] + \
                  [f"{med[m] / med['ort']:.2f}" for m in args.modes]
            if t != base:
                row += [f"{statistics.median(times[(name, m, base)]) / med[m]:.2f}"
                        for m in args.modes]
            print(f"| {name} | " + " | ".join(row) + " |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

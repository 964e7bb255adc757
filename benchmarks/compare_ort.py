#!/usr/bin/python3
"""Latency of DISC against ONNX Runtime on a few models, one table.

Cases: the e2e models (ResNet-18, the Transformer encoder, the GPT decoder,
U-Net, MobileNetV2) at their e2e shapes, the Transformer also at 1x384
tokens, and one nn.Linear(768, 3072) on a [1, 197, 768] tensor (a MatMul by
a large constant weight, a ViT-B/16 MLP layer); `--cases` picks some. Each
model is compiled twice,
with `--library-calls=onednn` (oneDNN MatMul/Gemm/Conv) and
`--library-calls=none` (generated loops only). DISC runs through `disc-run
--repeat`, ONNX Runtime through its Node.js package `onnxruntime-node`
(installed by `npm install --ignore-scripts` into --ort-dir when missing).
Cases are interleaved (DISC, ORT, DISC, ...) for --rounds rounds; each
number is the median over all timed runs (warm-up runs left out), and each
table ends with the geometric mean of the DISC/ORT ratios. Threads:
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


# The e2e models (examples/models/disc_models.py) at their e2e shapes, the
# transformer also at 384 tokens, and one nn.Linear(768, 3072).
# model: (ONNX input name, int64 token range or None for float32, shapes)
MODELS = {
    "resnet18": ("input", None, ["1x3x224x224", "2x3x160x192"]),
    "transformer": ("tokens", 1000, ["1x16", "2x77", "1x384"]),
    "gpt_decoder": ("tokens", 100, ["1x16", "2x77", "3x1"]),
    "unet": ("input", None, ["1x3x64x64", "2x3x48x80", "1x3x96x128"]),
    "mobilenet_v2": ("input", None,
                     ["1x3x96x96", "2x3x128x160", "1x3x224x224"]),
    "linear": ("x", None, ["1x197x768"]),
}
# name, model, shape
CASES = [(f"{m} {s}", m, s) for m, (_, _, shapes) in MODELS.items()
         for s in shapes]


def ort_spec(model, shape):
    name, token_range, _ = MODELS[model]
    if token_range is None:
        return f"{name}:float32:{shape}"
    return f"{name}:int64:{shape}:{token_range}"


def disc_input(args, model, shape):
    name, token_range, _ = MODELS[model]
    if token_range is None:
        return f"#0={shape}:random"
    # The exported token file (export_<model>.py --shapes).
    return "#0=" + os.path.join(args.work_dir, model, "inputs", shape,
                                name + ".npy")


def prepare(args, models):
    os.makedirs(args.work_dir, exist_ok=True)
    w = args.work_dir
    for name in models:
        if name == "linear":
            if not os.path.exists(os.path.join(w, "linear.onnx")):
                export_linear(os.path.join(w, "linear.onnx"))
            continue
        if not os.path.exists(os.path.join(w, name + ".onnx")):
            _, token_range, shapes = MODELS[name]
            # Token models need the exported inputs; image models only the
            # model (disc-run makes random inputs).
            extra = ["--shapes"] + shapes if token_range else ["--no-refs"]
            sh([PYTHON, os.path.join(MODELS_DIR, f"export_{name}.py"),
                "--out-dir", w] + extra)
    for model in models:
        for label in labels(args):
            mode = label.removeprefix("base-")
            so = os.path.join(w, f"{model}.{label}.so")
            if not os.path.exists(so):
                sh([os.path.join(bin_dir(args, label), "disc-compile"),
                    os.path.join(w, model + ".onnx"), "-o", so,
                    "--library-calls=" + mode])
    ort_dir = args.ort_dir
    if not os.path.isdir(os.path.join(ort_dir, "node_modules", "onnxruntime-node")):
        os.makedirs(ort_dir, exist_ok=True)
        sh(["npm", "install", "--ignore-scripts", "--prefix", ort_dir,
            "onnxruntime-node"])


def labels(args):
    """The DISC columns: each mode, then each mode built by --base-bin-dir."""
    base = [f"base-{m}" for m in args.modes] if args.base_bin_dir else []
    return args.modes + base


def bin_dir(args, label):
    return args.base_bin_dir if label.startswith("base-") else args.bin_dir


def disc_times(args, model, mode, shape, threads):
    w = args.work_dir
    report = os.path.join(w, f"{model}.{mode}.report.json")
    run = os.path.join(bin_dir(args, mode), "disc-run")
    # OMP_NUM_THREADS too, for a disc-run without --threads (older builds).
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    flags = ["--threads", str(threads)] if "--threads" in sh([run, "--help"]) else []
    sh([run, os.path.join(w, f"{model}.{mode}.so"), "--input",
        disc_input(args, model, shape), "--repeat", str(args.repeat + 1),
        "--report", report] + flags, env=env)
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
    p.add_argument("--base-bin-dir",
                   help="a second build (e.g. the main branch) run in the "
                        "same rounds, interleaved: its columns are base-MODE")
    args = p.parse_args()
    cases = [c for c in CASES
             if not args.cases or any(c[0].startswith(x) for x in args.cases)]
    prepare(args, sorted({c[1] for c in cases}))
    times = {}
    for _ in range(args.rounds):
        for name, model, shape in cases:
            for t in args.threads:
                for mode in labels(args):
                    times.setdefault((name, mode, t), []).extend(
                        disc_times(args, model, mode, shape, t))
                times.setdefault((name, "ort", t), []).extend(
                    ort_times(args, model, ort_spec(model, shape), t))
    base = args.threads[0]
    for t in args.threads:
        cols = [f"DISC {m} (ms)" for m in labels(args)] + ["ORT (ms)"] + \
               [f"{m}/ORT" for m in labels(args)]
        if t != base:
            cols += [f"{m} speed-up vs {base} thread(s)" for m in labels(args)]
        print(f"threads {t}, median of {args.repeat * args.rounds} runs")
        print("| case | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        ratios = {m: [] for m in labels(args)}
        for name, _, _ in cases:
            med = {k: statistics.median(times[(name, k, t)])
                   for k in labels(args) + ["ort"]}
            row = [f"{med[m]:.1f}" for m in labels(args)] + \
                  [f"{med['ort']:.1f}"] + \
                  [f"{med[m] / med['ort']:.2f}" for m in labels(args)]
            for m in labels(args):
                ratios[m].append(med[m] / med["ort"])
            if t != base:
                row += [f"{statistics.median(times[(name, m, base)]) / med[m]:.2f}"
                        for m in labels(args)]
            print(f"| {name} | " + " | ".join(row) + " |")
        print("geometric mean of DISC/ORT: " + ", ".join(
            f"{m} {statistics.geometric_mean(ratios[m]):.2f}"
            for m in labels(args)))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

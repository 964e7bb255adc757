#!/usr/bin/python3
"""Latency of DISC against ONNX Runtime and PyTorch on a few models, one table.

Cases: the e2e models (ResNet-18, the Transformer encoder, the GPT decoder,
U-Net, MobileNetV2) at their e2e shapes, the Transformer also at 1x384
tokens, and one nn.Linear(768, 3072) on a [1, 197, 768] tensor (a MatMul by
a large constant weight, a ViT-B/16 MLP layer). `--set extended` takes
instead the extended set of benchmarks/extended_models.py (torchvision
models no test contains: MobileNetV3, an LRASPP segmenter, EfficientNet-B0,
SqueezeNet, Inception-v3, ViT-B/16, an NHWC tf2onnx-style network),
`--set e2e extended` both; `--cases` picks some. Each
model is compiled twice,
with `--library-calls=onednn` (oneDNN MatMul/Gemm/Conv) and
`--library-calls=none` (generated loops only). DISC runs through `disc-run
--repeat`, ONNX Runtime through its Node.js package `onnxruntime-node`
(installed by `npm install --ignore-scripts` into --ort-dir when missing),
PyTorch (Debian's python3-torch, eager, `torch.no_grad()`) through
benchmarks/torch_run.py on the same model rebuilt from its seed.
Every DISC run reads the input the export wrote (examples/models
`--shapes`) and compares its output with PyTorch's reference output for it
(rtol 1e-3, atol 1e-4 or 5e-5 of the output's largest magnitude when that
is larger); the table's last column says whether it matched,
and the exit status is 1 when a case did not.
Cases are interleaved (DISC, ORT, PyTorch, DISC, ...) for --rounds rounds; each
number is the median over all timed runs (warm-up runs left out; the
`first` columns give the median over rounds of each process's first run,
i.e. a shape new to the session), and each
table ends with the geometric mean of the DISC/ORT ratios. Threads:
`disc-run --threads` (oneDNN's OpenMP threads; DISC's generated loops run
on one thread), intraOpNumThreads for ORT, torch.set_num_threads for
PyTorch; every process runs pinned to the same `threads` cores
(`taskset -c`: the last ones the benchmark may use, or --cores). With several
--threads values,
one table per value and the speed-up of each DISC mode over its run with
the first value.

    /usr/bin/python3 benchmarks/compare_ort.py --bin-dir build/bin \\
        --work-dir /tmp/disc-bench --threads 1 2

Exit status 0, or 1 when a command fails or an output does not match.
"""
import argparse
import json
import os
import shutil
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


def export_linear(work_dir, shapes):
    """nn.Linear(768, 3072), seed 0, input x [batch, seq, 768] (dynamic);
    writes linear.onnx and, per shape, the input and PyTorch's output in the
    layout of the e2e exports (linear/inputs/SHAPE/x.npy, refs/SHAPE/y.npy)."""
    import numpy as np
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(768, 3072).eval()
    x = torch.randn(1, 197, 768)
    torch.onnx.export(model, (x,), os.path.join(work_dir, "linear.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "batch", 1: "seq"},
                                    "y": {0: "batch", 1: "seq"}})
    rng = np.random.default_rng(0)
    for shape in shapes:
        x = rng.standard_normal([int(d) for d in shape.split("x")])
        x = x.astype(np.float32)
        with torch.no_grad():
            y = model(torch.from_numpy(x)).numpy()
        for kind, name, arr in (("inputs", "x", x), ("refs", "y", y)):
            d = os.path.join(work_dir, "linear", kind, shape)
            os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, name + ".npy"), arr)


# The e2e models (examples/models/disc_models.py) at their e2e shapes, the
# transformer also at 384 tokens, and one nn.Linear(768, 3072).
# model: (ONNX input name, int64 token range or None for float32, shapes,
# ONNX output name)
MODELS = {
    "resnet18": ("input", None, ["1x3x224x224", "2x3x160x192"], "output"),
    "transformer": ("tokens", 1000, ["1x16", "2x77", "1x384"], "logits"),
    "gpt_decoder": ("tokens", 100, ["1x16", "2x77", "3x1"], "logits"),
    "unet": ("input", None, ["1x3x64x64", "2x3x48x80", "1x3x96x128"],
             "output"),
    "mobilenet_v2": ("input", None,
                     ["1x3x96x96", "2x3x128x160", "1x3x224x224"], "output"),
    "linear": ("x", None, ["1x197x768"], "y"),
}
E2E = list(MODELS)
# The extended set (benchmarks/extended_models.py): models no test
# contains, exported here.
sys.path.insert(0, HERE)
import extended_models  # noqa: E402

EXTENDED = list(extended_models.MODELS)
for _m, (_shapes, _) in extended_models.MODELS.items():
    MODELS[_m] = ("input", None, _shapes, "output")
# set: [(name, model, shape)]
CASES = {kind: [(f"{m} {s}", m, s) for m in models for s in MODELS[m][2]]
         for kind, models in (("e2e", E2E), ("extended", EXTENDED))}


def ort_spec(model, shape):
    name, token_range, _, _ = MODELS[model]
    if token_range is None:
        return f"{name}:float32:{shape}"
    return f"{name}:int64:{shape}:{token_range}"


def case_file(args, model, shape, kind):
    """The input (kind "inputs") or PyTorch's output ("refs") of a case, as
    export_<model>.py --shapes (or export_linear) wrote it."""
    name, _, _, output = MODELS[model]
    return os.path.join(args.work_dir, model, kind, shape,
                        (name if kind == "inputs" else output) + ".npy")


def prepare(args, models):
    os.makedirs(args.work_dir, exist_ok=True)
    w = args.work_dir
    for name in models:
        shapes = MODELS[name][2]
        if all(os.path.exists(case_file(args, name, s, "refs"))
               for s in shapes) and os.path.exists(os.path.join(w, name + ".onnx")):
            continue
        if name == "linear":
            export_linear(w, shapes)
            continue
        if name in extended_models.MODELS:
            sh([PYTHON, os.path.join(HERE, "extended_models.py"),
                "--out-dir", w, "--model", name, "--shapes"] + shapes)
            continue
        # The model, and PyTorch's input and output at each shape.
        sh([PYTHON, os.path.join(MODELS_DIR, f"export_{name}.py"),
            "--out-dir", w, "--shapes"] + shapes)
    for model in models:
        for label in labels(args):
            mode = label.removeprefix("base-")
            so = os.path.join(w, f"{model}.{label}.so")
            compiler = os.path.join(bin_dir(args, label), "disc-compile")
            # Compiled again when the compiler is newer than the model.
            if (not os.path.exists(so)
                    or os.path.getmtime(so) < os.path.getmtime(compiler)):
                sh([compiler,
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


def case_atol(args, model, shape):
    """1e-4, or 5e-5 of the largest magnitude of PyTorch's output when that
    is larger: the float32 rounding of deep random-weight models reaches a
    few 1e-4 there (Inception-v3 at 299x299, outputs up to 12.3: PyTorch's
    own float32 output is 2.8e-4 from its float64 one; EfficientNet and the
    LRASPP segmenter, outputs up to 120)."""
    import numpy as np
    ref = np.load(case_file(args, model, shape, "refs"))
    return max(1e-4, 5e-5 * float(np.abs(ref).max()))


def pinned(args, cmd, threads):
    """`cmd` under `taskset -c` on `threads` cores: --cores, or the last
    `threads` of the cores this process may run on (same for every peer)."""
    if args.cores:
        cores = []
        for part in args.cores.split(","):
            lo, _, hi = part.partition("-")
            cores += [str(c) for c in range(int(lo), int(hi or lo) + 1)]
        cores = cores[:threads]
    else:
        cores = [str(c) for c in sorted(os.sched_getaffinity(0))[-threads:]]
    if len(cores) < threads:
        raise SystemExit(f"compare_ort: {threads} threads need {threads} "
                         f"cores, --cores/affinity gives {len(cores)}")
    if not shutil.which("taskset"):
        raise SystemExit("compare_ort: taskset (util-linux) is needed to "
                         "pin the timed processes")
    return ["taskset", "-c", ",".join(cores)] + cmd


def add_peer_args(ap, repeat):
    """The options of the single-model benchmarks that time DISC builds and
    ONNX Runtime side by side (row_kernels.py, conv_algorithms.py)."""
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--ort-dir", required=True,
                    help="where onnxruntime-node is installed "
                    "(benchmarks/compare_ort.py installs it)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=repeat)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cores", default=None,
                    help="cores to pin to (default: the last THREADS)")


def pinned_disc_run(args, so, run_args, out_dir, env=None):
    """Latencies (ms) of `disc-run SO RUN_ARGS --repeat REPEAT+1`, pinned
    to --threads cores, without the first run (a new shape's one-time
    work); outputs go to `out_dir`. Exits with disc-run's output when it
    fails."""
    report = os.path.join(out_dir, "report.json")
    p = subprocess.run(
        pinned(args, [os.path.join(args.bin_dir, "disc-run"), so] + run_args +
               ["--threads", str(args.threads),
                "--repeat", str(args.repeat + 1),
                "--output-dir", out_dir, "--report", report],
               args.threads),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
        timeout=600)
    if p.returncode != 0:
        sys.exit(f"disc-run failed on {so}:\n{p.stdout}")
    with open(report) as f:
        return json.load(f)["latencies_ms"][1:]


def disc_times(args, model, mode, shape, threads, mismatches):
    """Latencies of `disc-run --repeat`; a case whose output differs from
    PyTorch's is added to `mismatches`."""
    w = args.work_dir
    report = os.path.join(w, f"{model}.{mode}.report.json")
    run = os.path.join(bin_dir(args, mode), "disc-run")
    # OMP_NUM_THREADS too, for a disc-run without --threads (older builds).
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    flags = ["--threads", str(threads)] if "--threads" in sh([run, "--help"]) else []
    p = subprocess.run(
        pinned(args, [run, os.path.join(w, f"{model}.{mode}.so"),
         "--input", "#0=" + case_file(args, model, shape, "inputs"),
         "--compare", "#0=" + case_file(args, model, shape, "refs"),
         "--rtol", "1e-3", "--atol", str(case_atol(args, model, shape)),
         "--repeat", str(args.repeat + 1),
         "--report", report] + flags, threads),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
        timeout=1800)
    if p.returncode == 1:  # ran, output differs from PyTorch's
        mismatches.add((f"{model} {shape}", mode))
    elif p.returncode != 0:
        sys.stderr.write(f"disc-run failed on {model} {shape}:\n{p.stdout}")
        raise SystemExit(1)
    with open(report) as f:
        lat = json.load(f)["latencies_ms"]
    return lat[1:], lat[0]  # the first run: a warm-up, reported apart


def ort_times(args, model, spec, threads):
    env = dict(os.environ, NODE_PATH=os.path.join(args.ort_dir, "node_modules"))
    out = sh(pinned(args, ["node", os.path.join(HERE, "ort_run.js"),
                           os.path.join(args.work_dir, model + ".onnx"), spec,
                           str(args.repeat), str(threads)], threads), env=env)
    rec = json.loads(out.strip().splitlines()[-1])
    return rec["latencies_ms"], rec.get("first_ms")


def torch_times(args, model, shape, threads):
    out = sh(pinned(args, [PYTHON, os.path.join(HERE, "torch_run.py"), model,
                           case_file(args, model, shape, "inputs"),
                           str(args.repeat), str(threads)], threads))
    rec = json.loads(out.strip().splitlines()[-1])
    return rec["latencies_ms"], rec.get("first_ms")


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
    p.add_argument("--set", nargs="+", default=["e2e"], dest="sets",
                   choices=["e2e", "extended"],
                   help="case sets: the e2e models, the extended set "
                        "(benchmarks/extended_models.py), or both")
    p.add_argument("--cases", nargs="+", help="only cases whose name starts so")
    p.add_argument("--base-bin-dir",
                   help="a second build (e.g. the main branch) run in the "
                        "same rounds, interleaved: its columns are base-MODE")
    p.add_argument("--cores", default="",
                   help="cores to pin every timed process to, e.g. 2,3 or "
                        "2-3 (default: the last THREADS cores this process "
                        "may use)")
    p.add_argument("--no-torch", action="store_true",
                   help="leave PyTorch's timing out (outputs are still "
                        "compared with its stored references)")
    args = p.parse_args()
    peers = ["ort"] + ([] if args.no_torch else ["torch"])
    cases = [c for kind in args.sets for c in CASES[kind]
             if not args.cases or any(c[0].startswith(x) for x in args.cases)]
    prepare(args, sorted({c[1] for c in cases}))
    times = {}
    firsts = {}  # the first run of each process: a new shape to a session

    def record(key, result):
        lat, first = result
        times.setdefault(key, []).extend(lat)
        if first is not None:
            firsts.setdefault(key, []).append(first)

    mismatches = set()
    for _ in range(args.rounds):
        for name, model, shape in cases:
            for t in args.threads:
                for mode in labels(args):
                    record((name, mode, t),
                           disc_times(args, model, mode, shape, t, mismatches))
                record((name, "ort", t),
                       ort_times(args, model, ort_spec(model, shape), t))
                if "torch" in peers:
                    record((name, "torch", t),
                           torch_times(args, model, shape, t))
    base = args.threads[0]
    for t in args.threads:
        title = {"ort": "ORT", "torch": "PyTorch"}
        cols = [f"DISC {m} (ms)" for m in labels(args)] + \
               [f"{title[q]} (ms)" for q in peers] + \
               [f"{m}/{title[q]}" for q in peers for m in labels(args)]
        if t != base:
            cols += [f"{m} speed-up vs {base} thread(s)" for m in labels(args)]
        cols += [f"first {c}" for c in labels(args) + ["ort"]]
        cols += ["matches PyTorch"]
        print(f"threads {t}, median of {args.repeat * args.rounds} runs "
              f"(steady); first: median over {args.rounds} processes of "
              f"their first run (ms)")
        print("| case | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        ratios = {(m, q): [] for m in labels(args) for q in peers}
        for name, _, _ in cases:
            med = {k: statistics.median(times[(name, k, t)])
                   for k in labels(args) + peers}
            row = [f"{med[k]:.1f}" for k in labels(args) + peers]
            for q in peers:
                for m in labels(args):
                    row.append(f"{med[m] / med[q]:.2f}")
                    ratios[(m, q)].append(med[m] / med[q])
            if t != base:
                row += [f"{statistics.median(times[(name, m, base)]) / med[m]:.2f}"
                        for m in labels(args)]
            row += [f"{statistics.median(firsts[(name, k, t)]):.1f}"
                    if firsts.get((name, k, t)) else "-"
                    for k in labels(args) + ["ort"]]
            bad = [m for m in labels(args) if (name, m) in mismatches]
            row.append("no: " + ", ".join(bad) if bad else "yes")
            print(f"| {name} | " + " | ".join(row) + " |")
        for q in peers:
            print(f"geometric mean of DISC/{title[q]}: " + ", ".join(
                f"{m} {statistics.geometric_mean(ratios[(m, q)]):.2f}"
                for m in labels(args)))
        print()
    if mismatches:
        print("outputs differing from PyTorch (rtol 1e-3): " +
              ", ".join(f"{n} ({m})" for n, m in sorted(mismatches)))
        return 1
    print(f"every DISC output matched PyTorch (rtol 1e-3): "
          f"{len(cases) * len(labels(args))} case(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

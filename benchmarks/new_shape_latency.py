#!/usr/bin/python3
"""Latency of the first runs at a new input shape against steady state, per
model (docs/performance.md, *New shapes*).

One session per model (the Python module, one library-call thread); for
each of the model's e2e shapes in turn (examples/models/disc_models.py, the
reference inputs test/e2e exports), --runs runs in a row, each timed by the
session (`stats["latency_ms"]`). A shape's steady latency is the median of
its runs after the fifth; the table gives the first and second run at every
shape but the session's first (a shape change in a warm session, what a
server sees) as a ratio to that shape's steady latency. The whole sequence
of shapes is repeated --rounds times in the same session (the shapes are
then new again only to the eviction plan, not to the heap) and the ratios
are the medians over rounds. Exit 1 when a second run exceeds --max-ratio
times its steady latency.

The control column separates the shape change from the core's own
warm-up: after a shape's runs, the session busy-waits (other work, no
model) as long as that shape's first run took, then runs the same shape
twice; the column is that second run's ratio to steady. A core that slows
down for a few runs after any other work shows it at the same shape too.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/new_shape_latency.py \\
        --work-dir build/test/e2e/models [--runs 12] [--rounds 3] [MODEL ...]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "test", "e2e"))
from run_model import disc_models, ensure_exported  # noqa: E402

DEFAULT = ["resnet18", "transformer", "gpt_decoder", "mobilenet_v2", "unet",
           "gpt_train_step", "mlp_train_step", "llama_decoder",
           "resmlp_train_step"]


def load_inputs(work, case):
    return {k: np.load(os.path.join(work, v))
            for k, v in case["inputs"].items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work-dir", required=True,
                    help="where the e2e models are (exported when missing)")
    ap.add_argument("--so-suffix", default=".so",
                    help="the compiled model next to MODEL.onnx: MODEL"
                    "<suffix> (compiled with the default options when "
                    "missing)")
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=1.2)
    ap.add_argument("models", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    import disc

    failures = 0
    print("| model | shape | steady (ms) | 1st run / steady | 2nd run / steady "
          "| 3rd run / steady | control: 2nd run / steady |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for model in args.models:
        shapes = disc_models.MODELS[model]["default_shapes"]
        man = ensure_exported(model, args.work_dir, shapes, 3600)
        if man is None:
            print(f"{model}: export failed", file=sys.stderr)
            failures += 1
            continue
        so = os.path.join(args.work_dir, model + args.so_suffix)
        if not os.path.exists(so):
            disc.compile(os.path.join(args.work_dir, man["onnx"]), so)
        sess = disc.Session(disc.Executable.load(so), threads=1)
        cases = [(c["name"], load_inputs(args.work_dir, c))
                 for c in man["cases"]]
        ratios = {name: [] for name, _ in cases}
        steady = {name: [] for name, _ in cases}
        control = {name: [] for name, _ in cases}
        for rnd in range(args.rounds):
            for i, (name, inputs) in enumerate(cases):
                lat = []
                for _ in range(args.runs):
                    sess.run(inputs)
                    lat.append(sess.stats["latency_ms"])
                s = statistics.median(lat[5:])
                steady[name].append(s)
                if rnd > 0 or i > 0:
                    ratios[name].append([x / s for x in lat[:3]])
                    # Control: as long as the first run took, other work
                    # (a busy loop) and then the same shape again.
                    end = time.perf_counter() + lat[0] / 1e3
                    while time.perf_counter() < end:
                        pass
                    again = []
                    for _ in range(2):
                        sess.run(inputs)
                        again.append(sess.stats["latency_ms"])
                    control[name].append(again[1] / s)
        for name, _ in cases:
            if not ratios[name]:
                continue
            med = [statistics.median(r[k] for r in ratios[name])
                   for k in range(3)]
            bad = med[1] > args.max_ratio
            failures += bad
            ctl = statistics.median(control[name])
            print(f"| {model} | {name} | {statistics.median(steady[name]):.2f} "
                  f"| {med[0]:.2f}x | {med[1]:.2f}x{' (over)' if bad else ''} "
                  f"| {med[2]:.2f}x | {ctl:.2f}x |")
        sys.stdout.flush()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Latency of rematerialization with no memory limit: remat on (the default
build, evict/regenerate points compiled in) against `--remat=off`, on the
e2e models (docs/memory.md, "Rematerialization", item "no limit, no cost").

    benchmarks/remat_overhead.py --bin-dir build/bin --work-dir build/remat_overhead \\
        [--rounds 7] [--repeat 5] [--threads 1] [--compile-arg=--library-calls=none]
        [MODEL[:SHAPE] ...]

Exports the demo models as test/e2e does (cached), compiles each twice (the
same flags, remat on and off; cached by mtime), then runs both builds with
the reference inputs and no limit, interleaved: --rounds rounds, each one
disc-run of each build with --repeat runs (its latency is the median of
those). A build's latency is the median over the rounds. Checks that the
remat-on runs evicted nothing and that both builds give bit-identical
outputs and the same measured peak. Prints a Markdown table; exit 1 when a
check fails. Timing on a shared machine is noisy: compare the ratio against
the spread of the rounds (min-max shown).
"""
import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "test", "e2e"))
from run_model import disc_models, ensure_exported  # noqa: E402

DEFAULT = ["resnet18", "transformer", "gpt_decoder", "mobilenet_v2", "unet",
           "gpt_train_step"]


def compile_model(compile_bin, onnx, so, flags):
    fresh = (os.path.exists(so) and
             os.path.getmtime(so) > os.path.getmtime(onnx) and
             os.path.getmtime(so) > os.path.getmtime(compile_bin))
    if fresh:
        return True
    r = subprocess.run([compile_bin, onnx, "-o", so, *flags],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1,
                    help="disc-run --threads (1: least noise on a shared "
                    "machine)")
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="extra disc-compile flag for both builds")
    ap.add_argument("--json", help="also write the rows as JSON")
    ap.add_argument("models", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    compile_bin = os.path.join(args.bin_dir, "disc-compile")
    run_bin = os.path.join(args.bin_dir, "disc-run")
    rows, failures = [], 0
    for spec in args.models:
        model, _, shape = spec.partition(":")
        shape = shape or disc_models.MODELS[model]["default_shapes"][-1]
        man = ensure_exported(model, args.work_dir, [shape], 3600)
        if man is None:
            print(f"{model}: export failed", file=sys.stderr)
            failures += 1
            continue
        onnx = os.path.join(args.work_dir, man["onnx"])
        case = next(c for c in man["cases"] if c["name"] == shape)
        base = ["--repeat", str(args.repeat), "--threads", str(args.threads)]
        for k, v in case["inputs"].items():
            base += ["--input", f"{k}={os.path.join(args.work_dir, v)}"]
        builds = {}
        for tag, flags in (("on", []), ("off", ["--remat=off"])):
            so = os.path.join(args.work_dir, f"{model}.remat_{tag}.so")
            if not compile_model(compile_bin, onnx, so,
                                 args.compile_arg + flags):
                failures += 1
                break
            builds[tag] = dict(so=so, lat=[], rep=None)
        if len(builds) != 2:
            continue
        ok = True
        for _ in range(args.rounds):
            for tag, b in builds.items():
                out = os.path.join(args.work_dir, f"{model}.remat_{tag}.out")
                rep = out + ".json"
                p = subprocess.run([run_bin, b["so"], *base, "--output-dir",
                                    out, "--report", rep],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    print(f"{model} ({tag}): {p.stderr}", file=sys.stderr)
                    ok = False
                    break
                b["rep"] = json.load(open(rep))
                b["lat"].append(b["rep"]["latency_ms"])
            if not ok:
                break
        if not ok:
            failures += 1
            continue
        on, off = builds["on"], builds["off"]
        out_on = os.path.join(args.work_dir, f"{model}.remat_on.out")
        out_off = os.path.join(args.work_dir, f"{model}.remat_off.out")
        same = all(filecmp.cmp(os.path.join(out_off, f),
                               os.path.join(out_on, f), shallow=False)
                   for f in os.listdir(out_off))
        check = (same and on["rep"]["evictions"] == 0 and
                 on["rep"]["peak_bytes"] == off["rep"]["peak_bytes"])
        failures += not check
        m_on, m_off = (statistics.median(on["lat"]),
                       statistics.median(off["lat"]))
        rows.append(dict(model=model, shape=shape,
                         candidates=on["rep"].get("remat_candidates", 0),
                         on_ms=m_on, off_ms=m_off, ratio=m_on / m_off,
                         on_range=[min(on["lat"]), max(on["lat"])],
                         off_range=[min(off["lat"]), max(off["lat"])],
                         peak=on["rep"]["peak_bytes"], identical=same,
                         ok=check))
    print("| model | shape | candidates | remat on (ms) | --remat=off (ms) | "
          "on / off | peak bytes (both) | identical | check |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['shape']} | {r['candidates']} | "
              f"{r['on_ms']:.2f} ({r['on_range'][0]:.2f}-"
              f"{r['on_range'][1]:.2f}) | {r['off_ms']:.2f} "
              f"({r['off_range'][0]:.2f}-{r['off_range'][1]:.2f}) | "
              f"{r['ratio']:.2f}x | {r['peak']:,} | "
              f"{'yes' if r['identical'] else 'NO'} | "
              f"{'ok' if r['ok'] else 'FAIL'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

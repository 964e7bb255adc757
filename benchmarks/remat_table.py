#!/usr/bin/python3
"""Per-model table of rematerialization under a memory limit (docs/memory.md,
"Rematerialization"): for each model at one shape, the limit (100%, 80%, 60%,
50% of the predicted unconstrained peak, and the minimum reachable peak with
every candidate evicted) against the measured peak, evictions,
regenerations and slowdown, under both policies.

    benchmarks/remat_table.py --bin-dir build/bin --work-dir build/test/e2e/models \
        [--repeat 5] [--build default|loops] [MODEL[:SHAPE] ...]

Exports the demo models as test/e2e does (cached), compiles each with remat
on, for the default build (oneDNN library calls, --build default) or with
--library-calls=none (generated loops only, --build loops, the default of
this script), and runs disc-run with reference inputs. Runs of the
different limits are interleaved, --repeat times; each disc-run process
runs the model --runs times and its latency is the median of the runs
after the first (the first at a shape pays for page faults and the
eviction plan); the table's latencies are the medians over the processes.
Checks every run: the measured peak is at most the limit and the output is
bit-identical to the run without a limit; a limit below the minimum must
exit 3. Exit 1 when a check fails. Prints a Markdown table.
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

DEFAULT = ["unet:1x3x96x128", "transformer:2x77", "gpt_decoder:2x77",
           "resnet18:2x3x160x192", "mobilenet_v2:2x3x128x160"]
LIMITS = ["none", "100%", "80%", "60%", "50%", "min"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5,
                    help="runs per disc-run process (--repeat of disc-run);"
                    " the latency is the median of those after the first")
    ap.add_argument("--json", help="also write the rows as JSON")
    ap.add_argument("--build", choices=["default", "loops"], default="loops",
                    help="default: oneDNN library calls; loops: "
                    "--library-calls=none")
    ap.add_argument("models", nargs="*", default=DEFAULT)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    compile_bin = os.path.join(args.bin_dir, "disc-compile")
    run_bin = os.path.join(args.bin_dir, "disc-run")
    rows, failures = [], 0
    for spec in args.models:
        model, _, shape = spec.partition(":")
        if model in disc_models.MODELS:
            shape = shape or disc_models.MODELS[model]["default_shapes"][-1]
            man = ensure_exported(model, args.work_dir, [shape], 3600)
            if man is None:
                print(f"{model}: export failed", file=sys.stderr)
                failures += 1
                continue
            onnx = os.path.join(args.work_dir, man["onnx"])
            case = next(c for c in man["cases"] if c["name"] == shape)
            inputs = [f"{k}={os.path.join(args.work_dir, v)}"
                      for k, v in case["inputs"].items()]
        else:
            # An ONNX file with NAME=DIMS:random inputs: PATH:NAME=DIMS,...
            onnx = model
            inputs = [f"{kv}:random" for kv in shape.split(",")]
            model = os.path.splitext(os.path.basename(onnx))[0]
        so = os.path.join(args.work_dir, f"{model}.remat.{args.build}.so")
        fresh = (os.path.exists(so) and
                 os.path.getmtime(so) > os.path.getmtime(onnx) and
                 os.path.getmtime(so) > os.path.getmtime(compile_bin))
        r = subprocess.CompletedProcess([], 0) if fresh else subprocess.run(
            [compile_bin, onnx, "-o", so] +
            (["--library-calls=none"] if args.build == "loops" else []),
            capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr, file=sys.stderr)
            failures += 1
            continue
        base = ["--seed", "3"]
        for i in inputs:
            base += ["--input", i]
        # Unlimited run: reference output and the two peaks.
        ref_dir = os.path.join(args.work_dir, f"{model}.remat.ref")
        rep_path = ref_dir + ".json"
        subprocess.run([run_bin, so, *base, "--output-dir", ref_dir,
                        "--report", rep_path], capture_output=True)
        rep = json.load(open(rep_path))
        peak, minimum = rep["predicted_peak_bytes"], rep["minimum_peak_bytes"]
        cands = rep["remat_candidates"]
        configs = []
        for lim in LIMITS:
            for policy in (["largest"] if lim == "none"
                           else ["largest", "dtr"]):
                if lim == "none":
                    limit = 0
                elif lim == "min":
                    limit = minimum
                else:
                    limit = int(peak * float(lim[:-1]) / 100)
                configs.append(dict(label=lim, policy=policy, limit=limit,
                                    lat=[], rep=None, rc=None, same=None))
        for _ in range(args.repeat):
            for c in configs:
                out = os.path.join(args.work_dir,
                                   f"{model}.remat.{c['label']}.{c['policy']}")
                extra = (["--memory-limit", str(c["limit"])]
                         if c["limit"] else [])
                p = subprocess.run([run_bin, so, *base, *extra,
                                    "--repeat", str(args.runs),
                                    "--remat-policy", c["policy"],
                                    "--output-dir", out, "--report",
                                    out + ".json"], capture_output=True,
                                   text=True)
                c["rc"] = p.returncode
                c["stderr"] = p.stderr.strip()
                if p.returncode == 0:
                    c["rep"] = json.load(open(out + ".json"))
                    lat = c["rep"].get("latencies_ms") or []
                    c["lat"].append(statistics.median(lat[1:]) if len(lat) > 1
                                    else c["rep"]["latency_ms"])
                    c["same"] = all(
                        filecmp.cmp(os.path.join(ref_dir, f),
                                    os.path.join(out, f), shallow=False)
                        for f in os.listdir(ref_dir))
        base_lat = statistics.median(configs[0]["lat"])
        for c in configs:
            row = dict(model=model, shape=shape, peak=peak, minimum=minimum,
                       candidates=cands, label=c["label"], policy=c["policy"],
                       limit=c["limit"], rc=c["rc"])
            if c["rc"] == 0:
                rep = c["rep"]
                row.update(measured=rep["peak_bytes"],
                           evictions=rep["evictions"],
                           regenerations=rep["regenerations"],
                           recompute_ms=rep["recompute_ms"],
                           latency_ms=statistics.median(c["lat"]),
                           slowdown=statistics.median(c["lat"]) / base_lat,
                           identical=c["same"])
                ok = c["same"] and (not c["limit"] or
                                    rep["peak_bytes"] <= c["limit"])
            else:
                ok = c["rc"] == 3 and c["limit"] < minimum
                row["error"] = c["stderr"]
            row["ok"] = ok
            failures += not ok
            rows.append(row)
    print("| model | build | shape | candidates | limit | policy | "
          "limit bytes | measured peak | evictions | regenerations | "
          "slowdown | identical | check |")
    print("|---|---|---|---:|---|---|---:|---:|---:|---:|---:|---|---|")
    for r in rows:
        lim = "none" if r["label"] == "none" else (
            "min" if r["label"] == "min" else r["label"])
        if r["rc"] == 0:
            cells = [f"{r['measured']:,}", str(r["evictions"]),
                     str(r["regenerations"]), f"{r['slowdown']:.2f}x",
                     "yes" if r["identical"] else "NO"]
        else:
            cells = [f"exit {r['rc']} (min {r['minimum']:,})", "-", "-", "-",
                     "-"]
        print("| " + " | ".join([r["model"], args.build, r["shape"],
                                 str(r["candidates"]),
                                 lim, r["policy"],
                                 f"{r['limit']:,}" if r["limit"] else "-"]
                                + cells + ["ok" if r["ok"] else "FAIL"])
              + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

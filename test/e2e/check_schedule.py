#!/usr/bin/python3
"""Measured peak memory of disc-memory-schedule against program order.

Exports a model (cached, see run_model.py), compiles it twice with
disc-compile (--schedule=memory, the default, and --schedule=none), runs
both at every shape with disc-run --compare against the PyTorch references
and --report, and prints the measured peak_bytes (and predicted_peak_bytes)
of each. Fails when an output mismatches, when the scheduled model's peak is
above program order's at any shape, or when it is not at least
--min-reduction lower at every shape.

    check_schedule.py --bin-dir build/bin --work-dir /tmp/w inception --min-reduction 0.25
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_model  # noqa: E402
from run_model import disc_models, ensure_exported, log, run  # noqa: E402


def measure(args, man, so, case, tag):
    report = os.path.join(args.work_dir, f"{args.model}.{tag}.{case['name']}.report.json")
    if os.path.exists(report):
        os.remove(report)
    cmd = [os.path.join(args.bin_dir, "disc-run"), so]
    for name, rel in case["inputs"].items():
        cmd += ["--input", f"{name}={os.path.join(args.work_dir, rel)}"]
    for name, rel in case["refs"].items():
        cmd += ["--compare", f"{name}={os.path.join(args.work_dir, rel)}"]
    cmd += ["--rtol", repr(args.rtol), "--atol", repr(args.atol), "--report", report]
    rc, _, _ = run(cmd, args.timeout)
    try:
        with open(report) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        rep = {}
    ok = rc == 0 and rep.get("passed") is True
    return ok, rep.get("peak_bytes"), rep.get("predicted_peak_bytes")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", choices=sorted(run_model.EXPORT_SCRIPTS))
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--shapes", nargs="+")
    p.add_argument("--min-reduction", type=float, default=0.0,
                   help="required peak reduction at every shape (0.25 = 25%%)")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--timeout", type=float, default=1200.0)
    args = p.parse_args(argv)
    shapes = args.shapes or disc_models.MODELS[args.model]["default_shapes"]
    os.makedirs(args.work_dir, exist_ok=True)
    man = ensure_exported(args.model, args.work_dir, shapes, args.timeout)
    if man is None:
        log(f"{args.model}: export failed")
        return 2
    onnx_path = os.path.join(args.work_dir, man["onnx"])
    sos = {}
    for sched in ("memory", "none"):
        so = os.path.join(args.work_dir, f"{args.model}.{sched}.so")
        if os.path.exists(so):
            os.remove(so)
        rc, _, _ = run([os.path.join(args.bin_dir, "disc-compile"), onnx_path,
                        "-o", so, f"--schedule={sched}"], args.timeout)
        if rc != 0:
            log(f"{args.model}: compile with --schedule={sched} failed ({rc})")
            return 1
        sos[sched] = so
    cases = {c["name"]: c for c in man["cases"]}
    failures = []
    rows = []
    for shape in shapes:
        case = cases[shape]
        res = {s: measure(args, man, sos[s], case, s) for s in sos}
        for s, (ok, _, _) in res.items():
            if not ok:
                failures.append(f"{shape}: --schedule={s} run failed or mismatched")
        mem, none = res["memory"][1], res["none"][1]
        if not isinstance(mem, int) or not isinstance(none, int) or none <= 0:
            failures.append(f"{shape}: no peak_bytes")
            continue
        red = 1 - mem / none
        rows.append((shape, none, res["none"][2], mem, res["memory"][2], red))
        if mem > none:
            failures.append(f"{shape}: scheduled peak {mem} > program order {none}")
        elif red < args.min_reduction:
            failures.append(f"{shape}: reduction {red:.1%} < {args.min_reduction:.0%}")
    log(f"\n{args.model}: measured peak_bytes (predicted in parentheses)")
    log("| shape | --schedule=none | --schedule=memory | reduction |")
    log("|---|---|---|---|")
    for shape, none, pnone, mem, pmem, red in rows:
        log(f"| {shape} | {none} ({pnone}) | {mem} ({pmem}) | {red:.1%} |")
    for f in failures:
        log("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

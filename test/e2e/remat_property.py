#!/usr/bin/env python3
"""Property test of rematerialization under a memory limit (docs/memory.md).

Compiles test/e2e/Inputs/remat_skips.mlir (skip connections) and
remat_nested.mlir (nested regeneration: a recompute reads another candidate)
once each, then for random input shapes and random limits between the
minimum reachable peak and the unconstrained peak runs disc-run under each
policy and checks:
  * the run succeeds and its measured peak_bytes is <= the limit;
  * its output is bit-identical to the run without a limit;
and for a random limit below the minimum: exit 3 before any op runs, with
both numbers in the message.

For the CUDA target without a GPU: `--compile-arg=--target=cuda-emulate`
runs the mapped kernels on the CPU (recompute checked bit for bit);
`--compile-arg=--target=cuda --fake-driver LIB` runs the host code on a
substitute driver with kernels skipped, so the outputs are not compared
but the limit, the evictions and (with `--run-arg=--evict-by
--run-arg=offload --expect-offloads`) the offloads to host memory are.
"""
import argparse
import json
import os
import random
import subprocess
import sys


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check(args, so, graph, disc_run, rng):
    """Random shapes x limits on one compiled graph: (failures, number of
    runs that evicted something)."""
    failures = 0
    evicting_runs = 0
    env = dict(os.environ)
    if args.fake_driver:
        env.update(DISC_CUDA_DRIVER=args.fake_driver, FAKE_CUDA_SKIP_KERNELS="1")

    def disc(shape, extra, tag):
        out = os.path.join(args.work_dir, graph + "_" + tag)
        report = out + ".json"
        cmd = [disc_run, so, "--input", "#0=%dx%d:random" % shape,
               "--seed", "5", "--output-dir", out, "--report", report] + extra
        p = run(cmd + args.run_arg, env=env)
        rep = json.load(open(report)) if os.path.exists(report) else {}
        data = None
        path = os.path.join(out, "output.npy")
        if p.returncode == 0 and os.path.exists(path):
            data = open(path, "rb").read()
        return p, rep, data

    for t in range(args.trials):
        shape = (rng.randint(1, 400), rng.randint(1, 300))
        base, rep, ref = disc(shape, [], "t%d_ref" % t)
        if base.returncode != 0:
            print("FAIL %s: unlimited run: %s" % (shape, base.stderr))
            failures += 1
            continue
        peak = rep["predicted_peak_bytes"]
        minimum = rep["minimum_peak_bytes"]
        if rep["peak_bytes"] != peak or rep["evictions"] != 0:
            print("FAIL %s: unlimited run peak %d (predicted %d), %d evictions"
                  % (shape, rep["peak_bytes"], peak, rep["evictions"]))
            failures += 1
        if not minimum < peak:
            print("FAIL %s: minimum %d not below peak %d" % (shape, minimum,
                                                             peak))
            failures += 1
            continue
        for policy in ("largest", "dtr"):
            limit = rng.randint(minimum, peak - 1)
            p, rep, out = disc(shape, ["--memory-limit", str(limit),
                                       "--remat-policy", policy],
                               "t%d_%s" % (t, policy))
            same = out == ref or bool(args.fake_driver)  # kernels skipped
            offloads = rep.get("offloads", 0)
            ok = (p.returncode == 0 and rep["peak_bytes"] <= limit and same
                  and (not args.expect_offloads or
                       offloads == rep.get("evictions")))
            evicting_runs += rep.get("evictions", 0) > 0
            print("%s %dx%d %s limit=%d (min %d, peak %d): measured=%s "
                  "evictions=%s regenerations=%s offloads=%s identical=%s"
                  % ("ok  " if ok else "FAIL", shape[0], shape[1], policy,
                     limit, minimum, peak, rep.get("peak_bytes"),
                     rep.get("evictions"), rep.get("regenerations"), offloads,
                     "not compared (kernels skipped)" if args.fake_driver
                     else out == ref))
            if not ok:
                print(p.stderr)
                failures += 1
        low = rng.randint(1, minimum - 1)
        p, rep, out = disc(shape, ["--memory-limit", str(low)], "t%d_low" % t)
        ok = (p.returncode == 3 and str(low) in p.stderr and
              str(minimum) in p.stderr and "nothing ran" in p.stderr)
        print("%s %dx%d limit=%d below the minimum %d: exit %d"
              % ("ok  " if ok else "FAIL", shape[0], shape[1], low, minimum,
                 p.returncode))
        if not ok:
            print(p.stderr)
            failures += 1
    return failures, evicting_runs


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--trials", type=int, default=4,
                    help="random shapes per input graph")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="extra disc-compile argument (repeatable)")
    ap.add_argument("--run-arg", action="append", default=[],
                    help="extra disc-run argument for every run (repeatable)")
    ap.add_argument("--fake-driver",
                    help="substitute libcuda; kernels are skipped")
    ap.add_argument("--expect-offloads", action="store_true",
                    help="every eviction must be an offload to host memory")
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    disc_run = os.path.join(args.bin_dir, "disc-run")
    rng = random.Random(args.seed)
    failures = 0
    evicting_runs = 0
    for graph in ("remat_skips", "remat_nested"):
        src = os.path.join(here, "Inputs", graph + ".mlir")
        so = os.path.join(args.work_dir, graph + ".so")
        # Without fusion: disc-fusion would merge the elementwise middle of
        # these graphs into the final loop nest, where the long-gap values
        # are read, and leave no gap (the training step exercises remat on
        # a fused graph: benchmarks/remat_table.py).
        r = run([os.path.join(args.bin_dir, "disc-compile"), src,
                 "--fusion=false", "-o", so] + args.compile_arg)
        if r.returncode != 0:
            print(r.stderr)
            return 1
        print(graph)
        f, e = check(args, so, graph, disc_run, rng)
        failures += f
        evicting_runs += e

    if evicting_runs == 0:
        print("FAIL: no run evicted anything")
        failures += 1
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

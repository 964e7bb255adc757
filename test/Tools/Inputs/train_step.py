#!/usr/bin/python3
"""NumPy reference of the training step test/unittests/runtime/fixtures/
train_step.mlir (disc-run-train.test):

    loss = sum(x * w); w <- w - 0.1 * colsum(x); m <- m + 1

with w starting at [1, 2, 3] and m ("opt/m:0", saved as opt_m_0.npy) at 0.

  train_step.py input X.npy
      writes the input x = [[1, 2, 3], [4, 5, 6]] (float32).
  train_step.py check REPORT.json PARAMS_DIR --steps N [--start K]
      checks disc-run's report (the loss of every step, the last loss) and
      the saved state against N NumPy steps after K earlier ones.
Exit status 0 when everything matches, 1 otherwise (the mismatch printed).
"""
import argparse
import json
import os
import sys

import numpy as np

X = np.array([[1, 2, 3], [4, 5, 6]], np.float32)


def reference(start, steps):
    """The losses of steps start+1 .. start+steps, and w and m after them."""
    w = np.array([1, 2, 3], np.float32)
    m = np.zeros(3, np.float32)
    losses = []
    for step in range(start + steps):
        loss = np.float32((X * w).sum())
        w = (w - np.float32(0.1) * X.sum(0)).astype(np.float32)
        m = m + np.float32(1)
        if step >= start:
            losses.append(float(loss))
    return losses, w, m


def close(got, want):
    return np.allclose(got, want, rtol=1e-5, atol=1e-5)


def check(args):
    losses, w, m = reference(args.start, args.steps)
    with open(args.report) as f:
        report = json.load(f)
    errors = []
    if not close(report.get("loss"), losses[-1]):
        errors.append("loss %s, NumPy %s" % (report.get("loss"), losses[-1]))
    if args.steps > 1:
        got = [s["loss"] for s in report.get("steps", [])]
        if len(got) != args.steps or not close(got, losses):
            errors.append("step losses %s, NumPy %s" % (got, losses))
        for s in report.get("steps", []):
            if s["peak_bytes"] <= 0 or s["evictions"] != 0:
                errors.append("step %s: peak_bytes %s evictions %s" %
                              (s["step"], s["peak_bytes"], s["evictions"]))
    names = [o["name"] for o in report["outputs"]]
    if names != ["loss", "y"]:
        errors.append("outputs %s, expected loss and y" % names)
    files = sorted(os.listdir(args.params))
    if files != ["opt_m_0.npy", "w.npy"]:
        errors.append("state files %s" % files)
    else:
        for name, want in (("w.npy", w), ("opt_m_0.npy", m)):
            got = np.load(os.path.join(args.params, name))
            if got.dtype != np.float32 or not close(got, want):
                errors.append("%s: %r, NumPy %r" % (name, got, want))
    for e in errors:
        print("train_step.py: mismatch: " + e)
    if not errors:
        print("train_step.py: %d steps match NumPy" % args.steps)
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("input")
    p.add_argument("path")
    p = sub.add_parser("check")
    p.add_argument("report")
    p.add_argument("params")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--start", type=int, default=0)
    args = ap.parse_args()
    if args.cmd == "input":
        np.save(args.path, X)
        return 0
    return check(args)


if __name__ == "__main__":
    sys.exit(main())

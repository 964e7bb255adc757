"""Shared driver of the test/onnx/check_*.py scripts.

Each script builds small ONNX models with onnx.helper, compiles them with
disc-compile (with the declared shapes, and with --force-dynamic where it
asks for it), runs them with disc-run and compares every output with a
NumPy reference: the same shape and dtype, then numpy.allclose for floats
and exact equality otherwise.
"""

import argparse
import os
import re
import subprocess
import tempfile

import numpy as np
import onnx


def compile_model(bin_dir, model, d, dynamic=False):
    """Saves `model` to d/m.onnx and compiles it to d/m.so.

    Returns (path of the .so, None) or (None, the failure message).
    """
    os.makedirs(d, exist_ok=True)
    mpath = os.path.join(d, "m.onnx")
    onnx.save(model, mpath)
    so = os.path.join(d, "m.so")
    cmd = [os.path.join(bin_dir, "disc-compile"), mpath, "-o", so]
    if dynamic:
        cmd.append("--force-dynamic")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, f"disc-compile failed (exit {p.returncode}):\n" \
                     f"{p.stderr[-2000:]}"
    return so, None


def run_model(bin_dir, so, d, inputs, outputs, expected, rtol, atol,
              tag="run"):
    """Runs `so` on `inputs` ([(name, array or serialized proto bytes)])
    and compares
    the outputs named in `outputs` with `expected` (same order; an empty
    name or a None reference is not compared).

    Returns None when every output matches, else the failure message.
    """
    rd = os.path.join(d, tag)
    os.makedirs(rd, exist_ok=True)
    out_dir = os.path.join(rd, "out")
    cmd = [os.path.join(bin_dir, "disc-run"), so, "--output-dir", out_dir]
    for n, a in inputs:
        if isinstance(a, bytes):  # A serialized ONNX proto.
            f = os.path.join(rd, n + ".pb")
            with open(f, "wb") as fh:
                fh.write(a)
        else:
            f = os.path.join(rd, n + ".npy")
            # asarray keeps a 0-d array 0-d (ascontiguousarray makes it 1-d).
            np.save(f, np.asarray(a, order="C"))
        cmd += ["--input", f"{n}={f}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return f"disc-run failed (exit {p.returncode}):\n{p.stderr[-2000:]}"
    for o, want in zip(outputs, expected):
        if not o or want is None:
            continue
        got = np.load(os.path.join(out_dir, o + ".npy"))
        want = np.asarray(want)
        if got.shape != want.shape:
            return f"output {o}: shape {got.shape}, expected {want.shape}"
        if got.dtype != want.dtype:
            return f"output {o}: dtype {got.dtype}, expected {want.dtype}"
        if want.dtype.kind == "f":
            ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.array_equal(got, want)
        if not ok:
            err = np.max(np.abs(got.astype(np.float64) - want)) \
                if got.size else 0
            return (f"output {o} mismatch (max abs err {err:g}):\n got {got}"
                    f"\nwant {want}")
    return None


def main(description, cases, run_case, modes=(False, True)):
    """Runs `run_case(bin_dir, work, case, dynamic)` (None or a failure
    message) for every case (a tuple whose first item is its name) in each
    mode of `modes` (dynamic = False, True); prints one line per run and
    returns the exit status: 0 when every run passed, 1 otherwise.
    Options: --bin-dir, --work-dir (default: a temporary directory,
    removed), -k REGEX (only the cases whose name matches)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir")
    ap.add_argument("-k", help="only cases whose name matches this regex")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="disc-check-") as tmp:
        work = args.work_dir or tmp
        failures = total = 0
        for case in cases:
            if args.k and not re.search(args.k, case[0]):
                continue
            for dynamic in modes:
                total += 1
                label = f"{case[0]} ({'dynamic' if dynamic else 'static'})"
                msg = run_case(args.bin_dir, work, case, dynamic)
                if msg:
                    failures += 1
                    print(f"FAIL {label}: {msg}")
                else:
                    print(f"ok   {label}")
        print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


def runs_case(rtol, atol):
    """A `run_case` for cases (name, model, runs): the model is compiled
    once, then run for each (tag, inputs, outputs, expected) of `runs`."""
    def run_case(bin_dir, work, case, dynamic):
        name, model, runs = case
        d = os.path.join(work, name + ("_dyn" if dynamic else ""))
        so, err = compile_model(bin_dir, model, d, dynamic)
        if err:
            return err
        for tag, inputs, outputs, expected in runs:
            err = run_model(bin_dir, so, d, inputs, outputs, expected, rtol,
                            atol, tag)
            if err:
                return f"{tag}: {err}"
        return None
    return run_case

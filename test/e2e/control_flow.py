#!/usr/bin/python3
"""ONNX If and Loop exported from scripted PyTorch modules, against PyTorch.

Each model is a `torch.jit.script`ed module (so that torch.onnx.export emits
`If`/`Loop` nodes rather than tracing one path), exported with dynamic axes,
compiled ONCE with disc-compile and run with disc-run at two or three input
shapes and both branch choices / several trip counts. Every output is
compared with PyTorch's (rtol 1e-3, atol 1e-4); shapes must match exactly;
the measured peak must be at most the memory model's upper bound.

  branchy      If on an input value picks one of two sub-networks (Linear +
               tanh, or Linear-ReLU-Linear * 2) on x [batch, 8].
  looper       Loop whose trip count is an input: h = tanh(Linear(h) + x)
               n times on x [batch, 8] (n = 0 returns the zeros).
  lstm_state   LSTM with its state as input and output; If on
               Shape(h0)[1] == 0 (an empty state) starts from zeros
               (compiled with --dim hb=0:64 so that both branches stay).
  vad_like     a voice-activity detector's structure: an If on the value
               of the sample-rate input `sr` picks one of two front ends
               (16000 or 8000), then an LSTM whose state h0/c0 is an input
               and h/c an output, and a sigmoid head; both rates at
               several batch sizes and lengths.

    /usr/bin/python3 test/e2e/control_flow.py --bin-dir build/bin \\
        --work-dir build/test/e2e/control_flow [MODEL ...]

Exit codes: 0 every run matched, 1 a mismatch or a failed command (named),
2 bad usage.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import warnings

import numpy as np
import onnx
import torch

import peak_check

RTOL = 1e-3
ATOL = 1e-4


class Branchy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(),
                                     torch.nn.Linear(4, 16))

    def forward(self, x, flag):
        if bool(flag.sum() > 0):
            y = torch.tanh(self.a(x))
        else:
            y = self.b(x) * 2.0
        return y


class Looper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x, n):
        h = torch.zeros_like(x)
        for _ in range(int(n)):
            h = torch.tanh(self.lin(h) + x)
        return h


class LstmState(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True)

    def forward(self, x, h0, c0):
        if h0.size(1) == 0:
            out, (h, c) = self.lstm(x)
        else:
            out, (h, c) = self.lstm(x, (h0, c0))
        return out, h, c


class VadLike(torch.nn.Module):
    """A voice-activity detector's structure: the sample rate (an input
    value) picks one of two front ends, then an LSTM whose state is an
    input and an output, and a sigmoid head."""

    def __init__(self):
        super().__init__()
        self.front16 = torch.nn.Sequential(torch.nn.Linear(8, 16),
                                           torch.nn.ReLU())
        self.front8 = torch.nn.Sequential(torch.nn.Linear(8, 32),
                                          torch.nn.Tanh(),
                                          torch.nn.Linear(32, 16))
        self.lstm = torch.nn.LSTM(16, 12, batch_first=True)
        self.head = torch.nn.Linear(12, 1)

    def forward(self, x, sr, h0, c0):
        if bool(sr.sum() == 16000):
            f = self.front16(x)
        else:
            f = self.front8(x)
        out, (h, c) = self.lstm(f, (h0, c0))
        return torch.sigmoid(self.head(out)), h, c


def rnd(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def branchy():
    runs = [{"x": rnd(1, 3, 8), "flag": np.array([1], np.int64)},
            {"x": rnd(2, 3, 8), "flag": np.array([-2], np.int64)},
            {"x": rnd(3, 7, 8), "flag": np.array([5], np.int64)},
            {"x": rnd(4, 1, 8), "flag": np.array([0], np.int64)}]
    example = (torch.randn(3, 8), torch.tensor([1]))
    return (Branchy(), example, ["x", "flag"], ["y"],
            {"x": {0: "batch"}, "y": {0: "batch"}}, runs, [])


def looper():
    runs = [{"x": rnd(5, 2, 8), "n": np.array(3, np.int64)},
            {"x": rnd(6, 5, 8), "n": np.array(0, np.int64)},
            {"x": rnd(7, 4, 8), "n": np.array(7, np.int64)}]
    example = (torch.randn(3, 8), torch.tensor(3))
    return (Looper(), example, ["x", "n"], ["h"],
            {"x": {0: "batch"}, "h": {0: "batch"}}, runs, [])


def lstm_state():
    runs = [{"x": rnd(8, 2, 5, 8), "h0": rnd(9, 1, 2, 16), "c0": rnd(10, 1, 2, 16)},
            {"x": rnd(11, 3, 2, 8), "h0": np.zeros((1, 0, 16), np.float32),
             "c0": np.zeros((1, 0, 16), np.float32)},
            {"x": rnd(12, 1, 7, 8), "h0": rnd(13, 1, 1, 16), "c0": rnd(14, 1, 1, 16)}]
    example = (torch.randn(2, 5, 8), torch.randn(1, 2, 16), torch.randn(1, 2, 16))
    return (LstmState(), example, ["x", "h0", "c0"], ["y", "h", "c"],
            {"x": {0: "batch", 1: "seq"}, "h0": {1: "hb"}, "c0": {1: "hb"},
             "y": {0: "batch", 1: "seq"}, "h": {1: "b2"}, "c": {1: "b2"}}, runs,
            # An empty state is a valid input only with a range from 0 (named
            # dims default to [1, inf), which would fold the If away).
            ["--dim", "hb=0:64"])


def vad_like():
    def state(seed, b):
        return rnd(seed, 1, b, 12), rnd(seed + 1, 1, b, 12)
    runs = []
    for i, (b, t, sr) in enumerate([(1, 6, 16000), (2, 3, 8000),
                                    (3, 9, 16000), (1, 1, 8000)]):
        h0, c0 = state(20 + 2 * i, b)
        runs.append({"x": rnd(40 + i, b, t, 8), "sr": np.array([sr], np.int64),
                     "h0": h0, "c0": c0})
    example = (torch.randn(2, 5, 8), torch.tensor([16000]),
               torch.randn(1, 2, 12), torch.randn(1, 2, 12))
    return (VadLike(), example, ["x", "sr", "h0", "c0"], ["p", "h", "c"],
            {"x": {0: "batch", 1: "seq"}, "h0": {1: "batch"},
             "c0": {1: "batch"}, "p": {0: "batch", 1: "seq"},
             "h": {1: "batch"}, "c": {1: "batch"}}, runs, [])


MODELS = {"branchy": branchy, "looper": looper, "lstm_state": lstm_state,
          "vad_like": vad_like}


def log(msg):
    print(msg, flush=True)


def sh(cmd, timeout=600):
    log("+ " + " ".join(shlex.quote(c) for c in cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    out = p.stdout.decode(errors="replace")
    for line in out.rstrip().splitlines()[-20:]:
        log("  | " + line)
    return p.returncode, out


def check_limits(name, cmd, report):
    """A memory limit at the upper bound holds; one below it is refused
    before the run (exit 3, the message naming the bound): with only a
    bound and nothing to evict, the runtime cannot promise a lower one."""
    with open(report) as f:
        bound = json.load(f)["predicted_peak_bytes"]
    failures = []
    rc, _ = sh(cmd + ["--memory-limit", str(bound)])
    if rc != 0:
        failures.append(f"{name}: a memory limit at the bound ({bound}) "
                        f"failed (exit {rc})")
    rc, out = sh(cmd + ["--memory-limit", str(bound - 1)])
    if rc != 3 or "upper bound" not in out:
        failures.append(f"{name}: a memory limit below the bound gave exit "
                        f"{rc}, expected 3 naming the upper bound")
    if not failures:
        log(f"  ok: {name}: limit {bound} holds, {bound - 1} refused (exit 3)")
    return failures


def run_model(name, args):
    torch.manual_seed(0)
    module, example, in_names, out_names, axes, runs, cargs = MODELS[name]()
    module.eval()
    scripted = torch.jit.script(module)
    work = os.path.join(args.work_dir, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, name + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(scripted, example, path, input_names=in_names,
                          output_names=out_names, dynamic_axes=axes,
                          opset_version=15)
    ops = {n.op_type for n in onnx.load(path).graph.node}
    if not ops & {"If", "Loop"}:
        return [f"{name}: the export has no If/Loop node ({sorted(ops)})"]
    so = os.path.join(work, name + ".so")
    rc, _ = sh([os.path.join(args.bin_dir, "disc-compile"), path, "-o", so] + cargs)
    if rc != 0:
        return [f"{name}: disc-compile failed (exit {rc})"]
    failures = []
    for i, inputs in enumerate(runs):
        with torch.no_grad():
            want = scripted(*[torch.from_numpy(inputs[k]) for k in in_names])
        if not isinstance(want, tuple):
            want = (want,)
        rdir = os.path.join(work, f"run{i}")
        odir = os.path.join(rdir, "out")
        os.makedirs(odir, exist_ok=True)
        for f in os.listdir(odir):
            os.remove(os.path.join(odir, f))
        cmd = [os.path.join(args.bin_dir, "disc-run"), so, "--output-dir", odir]
        for k, v in inputs.items():
            p = os.path.join(rdir, k + ".npy")
            np.save(p, v)
            cmd += ["--input", f"{k}={p}"]
        shapes = ", ".join(f"{k}{list(v.shape)}" + (f"={v.tolist()}" if v.size == 1 else "")
                           for k, v in inputs.items())
        report = os.path.join(rdir, "report.json")
        rc, _ = sh(cmd + ["--report", report])
        if rc != 0:
            failures.append(f"{name} run {i} ({shapes}): disc-run exit {rc}")
            continue
        # Every model has an If or a Loop: the prediction is an upper bound.
        bad, text = peak_check.check(report, f"{name} run {i} ({shapes})", True)
        failures += bad
        if text:
            log(f"  ok: {name} run {i} ({shapes}): {text}")
        if i == 0 and not bad:
            failures += check_limits(name, cmd, report)
        for o, w in zip(out_names, want):
            w = w.detach().numpy()
            got = np.load(os.path.join(odir, o + ".npy"))
            if got.shape != w.shape:
                failures.append(f"{name} run {i} ({shapes}): {o} shape "
                                f"{list(got.shape)}, PyTorch {list(w.shape)}")
            elif not np.allclose(got, w, rtol=RTOL, atol=ATOL):
                err = float(np.max(np.abs(got - w))) if w.size else 0.0
                failures.append(f"{name} run {i} ({shapes}): {o} differs "
                                f"(max abs error {err:.3g})")
            else:
                log(f"  ok: {name} run {i} ({shapes}): {o} {list(w.shape)}")
    return failures


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", help=f"default: all of {list(MODELS)}")
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work-dir", required=True)
    args = p.parse_args(argv)
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {unknown}")
    args.work_dir = os.path.abspath(args.work_dir)
    failures = []
    for m in args.models or list(MODELS):
        failures += run_model(m, args)
    for f in failures:
        log("FAIL: " + f)
    log("all runs matched PyTorch" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Property test of rematerialization on random graphs (docs/memory.md).

Generates random ONNX graphs (seeded, reproducible): float32, dynamic batch
N, MLP-like ([N, D] or [N, T, D]) or CNN-like ([N, C, H, W], H and W
sometimes dynamic), made of MatMul / Gemm / Conv (3x3 pad 1 and 1x1, with
bias) whose weights are initializers or graph inputs, bias adds,
Add/Mul/Sub with constants, Relu/Tanh/Sigmoid, residual adds, and a
mirrored "backward" half that reads every forward activation again many
ops later (long skips: the rematerialization candidates). 8 to 40 ops.

Each graph is compiled once per build: the default one (library calls for
MatMul/Gemm/Conv) and `--library-calls=none` (loops). For a few random
input shapes in the --dim ranges, disc-run runs it without a limit (the
reference outputs, the predicted peak and the reported minimum), then with
random limits between the minimum and the peak (the minimum itself
included), each of which must:
  * exit 0 (exit 3 here is a limit broken after the run started);
  * measure peak_bytes <= the limit;
  * write outputs bit-identical to the unlimited run;
and with one random limit below the minimum, which must exit 3 before
anything runs ("nothing ran").

Every failure is kept under --fail-dir (the ONNX file, the commands, the
output) and listed with its command lines; exit 1 on any failure. The
ctest slice runs a few graphs; the campaign of the acceptance test is
`--graphs 50` (docs/memory.md, "Rematerialization").
"""
import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DIM_RANGES = {"N": (1, 8), "T": (1, 64), "H": (3, 32), "W": (3, 32)}
WIDTHS = (4, 8, 16, 24, 32, 48, 64, 96, 128)
CHANNELS = (2, 3, 4, 8, 12, 16, 32)
ACTS = ("Relu", "Tanh", "Sigmoid", None)


class Builder:
    """Accumulates the nodes, initializers and inputs of one graph."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.inits = []
        self.inputs = []  # (name, static shape) of the weight inputs
        self.count = 0

    def fresh(self, prefix):
        self.count += 1
        return "%s%d" % (prefix, self.count)

    def op(self, kind, ins, **attrs):
        out = self.fresh(kind.lower())
        self.nodes.append(helper.make_node(kind, ins, [out], name=out, **attrs))
        return out

    def const(self, shape, scale=1.0, as_input=False):
        """A float tensor: an initializer, or a graph input with a static
        shape (disc-run fills it with random values)."""
        name = self.fresh("w")
        if as_input:
            self.inputs.append((name, list(shape)))
        else:
            data = self.rng_np().uniform(-scale, scale, shape)
            self.inits.append(numpy_helper.from_array(
                data.astype(np.float32), name))
        return name

    def rng_np(self):
        return np.random.RandomState(self.rng.randint(0, 2**31 - 1))


def act(b, h):
    kind = b.rng.choice(ACTS)
    return b.op(kind, [h]) if kind else h


def elementwise(b, h, width, rank_shape):
    """Maybe an Add/Mul/Sub of h with a constant broadcast on the last axis
    (MLP) or per channel (CNN)."""
    if b.rng.random() < 0.35:
        kind = b.rng.choice(("Add", "Mul", "Sub"))
        c = b.const(rank_shape(width), 1.0)
        h = b.op(kind, [h, c] if b.rng.random() < 0.5 else [c, h])
    return h


def mlp_linear(b, h, din, dout, rank):
    """MatMul (+ bias) or, on rank 2, Gemm; weights an initializer or an
    input."""
    as_input = b.rng.random() < 0.4
    scale = 1.0 / np.sqrt(din)
    if rank == 2 and b.rng.random() < 0.4:
        trans = b.rng.random() < 0.5
        w = b.const([dout, din] if trans else [din, dout], scale, as_input)
        ins = [h, w]
        if b.rng.random() < 0.8:
            ins.append(b.const([dout], 0.5))
        return b.op("Gemm", ins, transB=int(trans))
    w = b.const([din, dout], scale, as_input)
    h = b.op("MatMul", [h, w])
    if b.rng.random() < 0.7:
        h = b.op("Add", [h, b.const([dout], 0.5)])
    return h


def conv(b, h, cin, cout):
    """Conv 3x3 pad 1 or 1x1 with bias; weights an initializer or an
    input."""
    as_input = b.rng.random() < 0.4
    k = b.rng.choice((1, 3))
    w = b.const([cout, cin, k, k], 1.0 / np.sqrt(cin * k * k), as_input)
    bias = b.const([cout], 0.5, as_input and b.rng.random() < 0.5)
    return b.op("Conv", [h, w, bias], kernel_shape=[k, k],
                pads=[k // 2] * 4)


def make_graph(rng, index):
    """One random graph: (model, family, dims, weight inputs)."""
    while True:
        b = Builder(rng)
        cnn = rng.random() < 0.4
        if cnn:
            dyn_hw = rng.random() < 0.5
            hw = (["H", "W"] if dyn_hw else
                  [rng.choice((4, 6, 8, 12)), rng.choice((4, 6, 8, 12))])
            widths = [rng.choice(CHANNELS)]
            x_shape = ["N", widths[0]] + hw
            out_shape = lambda c: ["N", c] + hw  # noqa: E731
            const_shape = lambda c: [c, 1, 1]  # noqa: E731
            linear = lambda h, i, o: conv(b, h, i, o)  # noqa: E731
            dims = ["N"] + (hw if dyn_hw else [])
            widths_pool = CHANNELS
        else:
            rank = rng.choice((2, 3))
            widths = [rng.choice(WIDTHS)]
            lead = ["N", "T"][:rank - 1]
            x_shape = lead + [widths[0]]
            out_shape = lambda d: lead + [d]  # noqa: E731
            const_shape = lambda d: [d]  # noqa: E731
            linear = (lambda h, i, o:  # noqa: E731
                      mlp_linear(b, h, i, o, rank))
            dims = list(lead)
            widths_pool = WIDTHS
        layers = rng.randint(2, 6)
        h = "x"
        saved = []  # (activation, width) read again by the backward half
        for _ in range(layers):
            din = widths[-1]
            dout = din if rng.random() < 0.3 else rng.choice(widths_pool)
            h_in = h
            h = linear(h, din, dout)
            h = act(b, h)
            h = elementwise(b, h, dout, const_shape)
            if dout == din and rng.random() < 0.5:
                h = b.op("Add", [h, h_in])  # residual
            widths.append(dout)
            saved.append((h, dout))
        outputs = []
        if rng.random() < 0.3:
            outputs.append((h, out_shape(widths[-1])))
        g = h
        if rng.random() < 0.5:
            g = b.op("Mul", [g, g])
        for i in reversed(range(layers)):
            a, width = saved[i]
            # The long skip: the forward activation read again here.
            g = b.op(rng.choice(("Mul", "Add", "Sub")), [g, a])
            if rng.random() < 0.4:
                g = b.op(rng.choice(("Tanh", "Sigmoid")), [g])
            if rng.random() < 0.3:
                # a second read, like the derivative of an activation
                g = b.op("Mul", [g, b.op("Sigmoid", [a])])
            g = linear(g, width, widths[i])
            g = act(b, g)
        if rng.random() < 0.3:
            g = b.op("Add", [g, "x"])
        outputs.append((g, out_shape(widths[0])))
        if 8 <= len(b.nodes) <= 40:
            break
    name = "g%d" % index
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
               for n, s in b.inputs]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
            for n, s in outputs]
    graph = helper.make_graph(b.nodes, name, inputs, outs, b.inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    family = "cnn" if cnn else "mlp%dd" % len(x_shape)
    return model, family, x_shape, dims, b.inputs


def run(cmd, seconds=900):
    """Runs cmd; while the binaries or their libraries are being replaced
    by a rebuild (missing, or a library not loadable), waits and retries."""
    deadline = time.time() + seconds
    while True:
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
            if (p.returncode != 127 and
                    "error while loading shared libraries" not in p.stderr):
                return p
        except OSError:  # missing, not yet executable, being written
            pass
        if time.time() > deadline:
            raise SystemExit("%s: not runnable for %d s" % (cmd[0], seconds))
        time.sleep(10)


def read_outputs(out_dir):
    if not os.path.isdir(out_dir):
        return None
    return {f: open(os.path.join(out_dir, f), "rb").read()
            for f in sorted(os.listdir(out_dir))}


class Campaign:
    def __init__(self, args):
        self.args = args
        self.disc_run = os.path.join(args.bin_dir, "disc-run")
        self.disc_compile = os.path.join(args.bin_dir, "disc-compile")
        self.runs = 0
        self.graphs = 0
        self.compiled = 0
        self.candidates = []  # per compiled graph
        self.evictions = 0
        self.evicting_runs = 0
        self.regenerations = 0
        self.limited_runs = 0
        self.below_runs = 0
        self.reducible = 0  # shapes with minimum < peak
        self.shapes = 0
        self.mispredicted = []
        self.failures = []
        self.kinds = {}
        # per build: candidates, limited runs, evictions, evicting runs
        self.per_build = {b: dict(candidates=0, limited_runs=0, evictions=0,
                                  evicting_runs=0, failures=0)
                          for b, _ in BUILDS}

    def fail(self, kind, graph_path, cmds, detail):
        """Keeps a failing case: the ONNX file and the commands rewritten to
        compile and run it in its own directory (repro.sh)."""
        n = len(self.failures)
        d = os.path.join(self.args.fail_dir, "fail-%d" % n)
        os.makedirs(d, exist_ok=True)
        shutil.copy(graph_path, os.path.join(d, "graph.onnx"))
        work = os.path.join(self.args.work_dir, "")
        so = cmds[0][cmds[0].index("-o") + 1]
        moved = {graph_path: os.path.join(d, "graph.onnx"),
                 so: os.path.join(d, "model.so")}
        cmds = [[moved[a] if a in moved else
                 a.replace(work, os.path.join(d, "")) for a in c]
                for c in cmds]
        with open(os.path.join(d, "repro.sh"), "w") as f:
            f.write("#!/bin/sh\n# %s\nset -x\n" % kind)
            for c in cmds:
                f.write(" ".join(shlex.quote(a) for a in c) + "\n")
        with open(os.path.join(d, "output.txt"), "w") as f:
            f.write(detail)
        self.failures.append({"kind": kind, "dir": d, "detail": detail,
                              "commands": [" ".join(shlex.quote(a) for a in c)
                                           for c in cmds]})
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        print("FAIL %s (%s)\n%s" % (kind, d, detail.strip()))

    def disc(self, so, inputs, seed, extra, tag):
        out = os.path.join(self.args.work_dir, tag)
        shutil.rmtree(out, ignore_errors=True)
        report = out + ".json"
        if os.path.exists(report):
            os.remove(report)
        cmd = [self.disc_run, so]
        for name, dims in inputs:
            cmd += ["--input", "%s=%s:random" % (name, "x".join(map(str,
                                                                    dims)))]
        cmd += ["--seed", str(seed), "--output-dir", out, "--report", report]
        cmd += extra + self.args.run_arg
        p = run(cmd)
        self.runs += 1
        rep = {}
        if os.path.exists(report):
            try:
                rep = json.load(open(report))
            except ValueError:
                pass
        outs = read_outputs(out) if p.returncode == 0 else None
        return cmd, p, rep, outs

    def graph(self, rng, index):
        args = self.args
        model, family, x_shape, dims, weight_inputs = make_graph(rng, index)
        path = os.path.join(args.work_dir, "g%d.onnx" % index)
        onnx.save(model, path)
        self.graphs += 1
        print("g%d: %s, %d ops, x=%s, %d weight inputs" % (
            index, family, len(model.graph.node), x_shape,
            len(weight_inputs)))
        dim_args = ["--dim=%s=%d:%d" % (d, DIM_RANGES[d][0], DIM_RANGES[d][1])
                    for d in dims]
        shapes = []
        for _ in range(args.shapes):
            shapes.append({d: rng.randint(*DIM_RANGES[d]) for d in dims})
        for build, build_args in BUILDS:
            if args.builds and build not in args.builds:
                continue
            so = os.path.join(args.work_dir, "g%d_%s.so" % (index, build))
            ccmd = ([self.disc_compile, path, "-o", so] + build_args +
                    dim_args + args.compile_arg)
            c = run(ccmd)
            if c.returncode != 0:
                self.fail("compile", path, [ccmd], c.stderr)
                continue
            self.compiled += 1
            first = True
            for s, binding in enumerate(shapes):
                inputs = [("x", [binding.get(d, d) for d in x_shape])]
                inputs += weight_inputs
                seed = rng.randint(1, 10**6)
                tag = "g%d_%s_s%d" % (index, build, s)
                cmd, p, rep, ref = self.disc(so, inputs, seed, [],
                                             tag + "_ref")
                self.shapes += 1
                if p.returncode != 0 or "minimum_peak_bytes" not in rep:
                    self.fail("unlimited run exit %d" % p.returncode, path,
                              [ccmd, cmd], p.stdout + p.stderr)
                    continue
                if first:
                    self.candidates.append(rep.get("remat_candidates", 0))
                    self.per_build[build]["candidates"] += self.candidates[-1]
                    first = False
                peak = rep["predicted_peak_bytes"]
                minimum = rep["minimum_peak_bytes"]
                if rep["peak_bytes"] != peak:
                    self.mispredicted.append(
                        "%s %s: measured %d, predicted %d" % (
                            tag, binding, rep["peak_bytes"], peak))
                if rep.get("evictions", 0) != 0 or minimum > peak:
                    self.fail("unlimited run", path, [ccmd, cmd],
                              "minimum %d peak %d evictions %d\n" % (
                                  minimum, peak, rep.get("evictions", 0)))
                    continue
                self.reducible += minimum < peak
                limits = [minimum] + [rng.randint(minimum, peak)
                                      for _ in range(args.limits - 1)]
                for k, limit in enumerate(limits):
                    policy = rng.choice(("largest", "dtr"))
                    lcmd, lp, lrep, outs = self.disc(
                        so, inputs, seed,
                        ["--memory-limit", str(limit), "--remat-policy",
                         policy], "%s_l%d" % (tag, k))
                    self.limited_runs += 1
                    ev = lrep.get("evictions", 0) or 0
                    self.evictions += ev
                    self.evicting_runs += ev > 0
                    pb = self.per_build[build]
                    pb["limited_runs"] += 1
                    pb["evictions"] += ev
                    pb["evicting_runs"] += ev > 0
                    self.regenerations += lrep.get("regenerations", 0) or 0
                    line = ("%s %s limit=%d (min %d, peak %d) %s: exit %d "
                            "measured=%s evictions=%s" % (
                                tag, binding, limit, minimum, peak, policy,
                                lp.returncode, lrep.get("peak_bytes"), ev))
                    kind = None
                    if lp.returncode == 3 and "nothing ran" in lp.stderr:
                        kind = "refused a limit >= the minimum"
                    elif lp.returncode == 3:
                        kind = "failed after it started"
                    elif lp.returncode != 0:
                        kind = "exit %d" % lp.returncode
                    elif lrep.get("peak_bytes", limit + 1) > limit:
                        kind = "over the limit"
                    elif outs != ref:
                        kind = "outputs differ"
                    pb["failures"] += kind is not None
                    if kind:
                        self.fail(kind, path, [ccmd, cmd, lcmd],
                                  line + "\n" + lp.stdout + lp.stderr)
                    elif args.verbose:
                        print("ok   " + line)
                if minimum > 1:
                    low = rng.randint(1, minimum - 1)
                    bcmd, bp, _, _ = self.disc(
                        so, inputs, seed, ["--memory-limit", str(low)],
                        tag + "_low")
                    self.below_runs += 1
                    if not (bp.returncode == 3 and "nothing ran" in bp.stderr
                            and str(low) in bp.stderr
                            and str(minimum) in bp.stderr):
                        self.fail("limit below the minimum", path,
                                  [ccmd, cmd, bcmd],
                                  "limit %d minimum %d: exit %d\n%s" % (
                                      low, minimum, bp.returncode,
                                      bp.stderr))

    def summary(self):
        return {
            "seed": self.args.seed, "graphs": self.graphs,
            "compiled": self.compiled, "runs": self.runs,
            "limited_runs": self.limited_runs,
            "below_minimum_runs": self.below_runs,
            "shapes": self.shapes, "shapes_minimum_below_peak": self.reducible,
            "candidates": sum(self.candidates),
            "graphs_with_candidates": sum(1 for c in self.candidates if c),
            "evictions": self.evictions, "evicting_runs": self.evicting_runs,
            "regenerations": self.regenerations,
            "mispredicted_unlimited_runs": len(self.mispredicted),
            "per_build": self.per_build,
            "failures": len(self.failures), "failure_kinds": self.kinds,
            "failure_list": self.failures,
        }


BUILDS = (("default", []), ("loops", ["--library-calls=none"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--fail-dir",
                    help="where failing cases are kept (default: "
                    "WORK_DIR/failures)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--graphs", type=int, default=3,
                    help="random graphs (each compiled once per build)")
    ap.add_argument("--first", type=int, default=0,
                    help="index of the first graph (`--first K --graphs 1` "
                    "reproduces graph K of a seed)")
    ap.add_argument("--runs", type=int, default=0,
                    help="keep generating graphs until this many disc-run "
                    "runs (overrides --graphs)")
    ap.add_argument("--shapes", type=int, default=2,
                    help="random input shapes per graph and build")
    ap.add_argument("--limits", type=int, default=2,
                    help="limits between the minimum and the peak per "
                    "shape (the first is the minimum itself)")
    ap.add_argument("--builds", action="append",
                    choices=[b for b, _ in BUILDS],
                    help="only these builds (repeatable; default: all)")
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="extra disc-compile argument (repeatable)")
    ap.add_argument("--run-arg", action="append", default=[],
                    help="extra disc-run argument for every run (repeatable)")
    ap.add_argument("--json", help="write the summary to this file")
    ap.add_argument("--strict-prediction", action="store_true",
                    help="an unlimited run whose measured peak differs from "
                    "the prediction is a failure")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.fail_dir = args.fail_dir or os.path.join(args.work_dir, "failures")
    os.makedirs(args.work_dir, exist_ok=True)
    shutil.rmtree(args.fail_dir, ignore_errors=True)
    c = Campaign(args)
    start = time.time()
    index = args.first
    while ((c.runs < args.runs) if args.runs else
           (index < args.first + args.graphs)):
        # Each graph from its own seed: `--seed S --graphs 1` plus the
        # index reproduces one graph.
        c.graph(random.Random("%d/%d" % (args.seed, index)), index)
        index += 1
    s = c.summary()
    s["seconds"] = round(time.time() - start, 1)
    for m in c.mispredicted:
        print("mispredicted: " + m)
    print("%d graphs (%d compiled), %d runs (%d with a limit between the "
          "minimum and the peak, %d below the minimum), %d shapes (%d with "
          "minimum < peak), %d candidates (%d graphs with any), %d "
          "evictions in %d runs, %d regenerations, %d unlimited runs "
          "mispredicted, %.0f s" % (
              s["graphs"], s["compiled"], s["runs"], s["limited_runs"],
              s["below_minimum_runs"], s["shapes"],
              s["shapes_minimum_below_peak"], s["candidates"],
              s["graphs_with_candidates"], s["evictions"],
              s["evicting_runs"], s["regenerations"],
              s["mispredicted_unlimited_runs"], s["seconds"]))
    for b, pb in c.per_build.items():
        print("%s build: %d candidates, %d limited runs, %d evictions in %d "
              "runs, %d failed" % (b, pb["candidates"], pb["limited_runs"],
                                   pb["evictions"], pb["evicting_runs"],
                                   pb["failures"]))
    failures = len(c.failures)
    if c.evicting_runs == 0:
        print("FAIL: no run evicted anything")
        failures += 1
    if args.strict_prediction and c.mispredicted:
        failures += len(c.mispredicted)
    for f in c.failures:
        print("failure %s: %s\n  %s" % (f["kind"], f["dir"],
                                        "\n  ".join(f["commands"])))
    print("%d failures %s" % (failures, json.dumps(c.kinds)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(s, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""A dynamically quantized convnet, against ONNX Runtime (or NumPy).

The model is a float32 PyTorch convnet exported to ONNX (dynamic batch, H
and W) and rewritten the way ONNX Runtime's dynamic quantizer rewrites one:
every Conv becomes

    DynamicQuantizeLinear(x) -> x_q (uint8), x_scale, x_zero_point
    ConvInteger(x_q, w_q, x_zero_point, w_zero_point) -> int32
    Cast(float) * (x_scale * w_scale) + bias

followed by the exported Relu, and the Linear head (a Gemm) becomes
DynamicQuantizeLinear + MatMulInteger + Cast + Mul + Add. Weights are
quantized per tensor: uint8 with a zero point (asymmetric) on odd layers,
int8 with zero point 0 (symmetric) on even ones, so both weight types run.

    conv1  3 -> 32, 3x3, stride 2     conv4  64 -> 128, 3x3, stride 2
    conv2 32 -> 64, 3x3, stride 2     conv5 128 -> 128, 3x3, stride 1
    conv3 64 -> 64, 3x3, stride 1     conv6 128 -> 256, 3x3, stride 2
    GlobalAveragePool, Flatten, Linear 256 -> 10 (MatMulInteger)

Each of the two models below is compiled ONCE with disc-compile and run
with disc-run at three input shapes (1x3x64x64, 2x3x96x128, 3x3x80x48) and
on a 1x3x32x40 input of halves between -126.5 and 128.5, which makes the
first layer's scale exactly 1 and every rounding of its quantization a tie
(round half to even gives zero point 126, half away from zero 127).

  qconvnet       the model; output: the logits.
  qconvnet_taps  the same model that also returns, for every quantized
                 layer i (the head is 7), the quantized activation q<i>, its
                 scale s<i> and zero point zp<i>, and the int32 accumulator
                 acc<i> (the ConvInteger / MatMulInteger output).

Tolerances. The quantization is specified to the bit (round half to even of
x / scale, saturated, the integer products exact), so the six convolution
layers' q, s, zp and acc must equal the reference's. The head's input is
the average pool, whose float sum runs in another order in each
implementation: its scale may differ by a few ulps (rtol 1e-6), its
quantized values by 1, and then its accumulators. The logits: rtol 1e-4 /
atol 1e-5 when the head's quantized input is equal (what is left is float
rounding), plus one head step (x_scale * w_scale * max|w_q - w_zp|: what one
head input off by 1 moves a logit) for the plain model, whose head input is
not seen.

The reference is ONNX Runtime (onnxruntime-node, in --ort-dir; the run goes
through test/e2e/ort_outputs.js) when it is installed, else a NumPy
implementation of the ONNX reference semantics of the ops
(--reference picks one).

    /usr/bin/python3 test/e2e/quantized_convnet.py --bin-dir build/bin \\
        --work-dir build/test/e2e/quantized_convnet [--ort-dir /tmp/ort]

--bench SHAPE times the plain model at SHAPE instead (one thread each,
`disc-run --threads 1` and ORT's intraOpNumThreads 1, the same input; run it
under `taskset -c N`): median latencies and their ratio.

Exit codes: 0 every run matched, 1 a mismatch or a failed command (named),
2 bad usage.
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import peak_check

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

LOGITS_RTOL = 1e-4
LOGITS_ATOL = 1e-5
SHAPES = ["1x3x64x64", "2x3x96x128", "3x3x80x48"]
TIES_SHAPE = "1x3x32x40"  # the run whose input makes every rounding a tie

# (in channels, out channels, stride) of the six 3x3 convolutions.
LAYERS = [(3, 32, 2), (32, 64, 2), (64, 64, 1), (64, 128, 2), (128, 128, 1),
          (128, 256, 2)]
CLASSES = 10
HEAD = len(LAYERS) + 1  # the index of the MatMulInteger layer


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        mods = []
        for cin, cout, stride in LAYERS:
            mods += [torch.nn.Conv2d(cin, cout, 3, stride, 1), torch.nn.ReLU()]
        self.features = torch.nn.Sequential(*mods)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(LAYERS[-1][1], CLASSES)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def log(msg):
    print(msg, flush=True)


def sh(cmd, timeout=900, env=None):
    log("+ " + " ".join(shlex.quote(c) for c in cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout, env=env)
    except OSError as e:  # a missing binary
        log(f"  | {e}")
        return 127, ""
    except subprocess.TimeoutExpired:
        log(f"  | timed out after {timeout} s")
        return 124, ""
    out = p.stdout.decode(errors="replace")
    for line in out.rstrip().splitlines()[-20:]:
        log("  | " + line)
    return p.returncode, out


# --------------------------------------------------------------------------
# The model: export, then rewrite as ONNX Runtime's dynamic quantizer does.
# --------------------------------------------------------------------------

def quantize_weight(w, signed):
    """Per-tensor weight quantization: int8 symmetric (zero point 0) or
    uint8 asymmetric over [min(w, 0), max(w, 0)]."""
    if signed:
        scale = np.float32(np.abs(w).max() / 127.0)
        q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        return q, scale, np.array(0, np.int8)
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    q = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, np.array(zp, np.uint8)


def quantize_graph(model, taps):
    """Replaces each Conv and Gemm of the float export by its dynamically
    quantized form. With `taps`, every quantized activation, its scale and
    zero point, and every int32 accumulator are graph outputs too
    (q<i>, s<i>, zp<i>, acc<i>; layer i = 1.. in graph order, the head last)."""
    g = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes, new_inits, extra_outputs = [], [], []
    layer = 0
    for n in g.node:
        if n.op_type not in ("Conv", "Gemm"):
            nodes.append(n)
            continue
        layer += 1
        i = layer
        x, wname = n.input[0], n.input[1]
        w = inits.pop(wname)
        b = inits.pop(n.input[2])
        if n.op_type == "Gemm":
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            assert attrs.get("transB", 0) == 1 and attrs.get("transA", 0) == 0
            w = np.ascontiguousarray(w.T)  # MatMulInteger's B is [K, N]
        wq, ws, wzp = quantize_weight(w, signed=(i % 2 == 0))
        new_inits += [numpy_helper.from_array(wq, f"w{i}_q"),
                      numpy_helper.from_array(np.array(ws, np.float32), f"w{i}_scale"),
                      numpy_helper.from_array(wzp, f"w{i}_zp")]
        q, s, zp, acc = f"q{i}", f"s{i}", f"zp{i}", f"acc{i}"
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [q, s, zp],
                                      name=f"layer{i}_quant"))
        nodes.append(helper.make_node("Mul", [s, f"w{i}_scale"], [f"scale{i}"],
                                      name=f"layer{i}_scale"))
        if n.op_type == "Conv":
            conv = helper.make_node("ConvInteger", [q, f"w{i}_q", zp, f"w{i}_zp"],
                                    [acc], name=f"layer{i}_conv")
            conv.attribute.extend(n.attribute)
            nodes.append(conv)
            new_inits.append(numpy_helper.from_array(
                b.reshape(-1, 1, 1).astype(np.float32), f"b{i}"))
        else:
            nodes.append(helper.make_node("MatMulInteger",
                                          [q, f"w{i}_q", zp, f"w{i}_zp"], [acc],
                                          name=f"layer{i}_matmul"))
            new_inits.append(numpy_helper.from_array(b.astype(np.float32), f"b{i}"))
        nodes.append(helper.make_node("Cast", [acc], [f"accf{i}"],
                                      to=TensorProto.FLOAT, name=f"layer{i}_cast"))
        nodes.append(helper.make_node("Mul", [f"accf{i}", f"scale{i}"], [f"y{i}"],
                                      name=f"layer{i}_rescale"))
        nodes.append(helper.make_node("Add", [f"y{i}", f"b{i}"], [n.output[0]],
                                      name=f"layer{i}_bias"))
        rank = 4 if n.op_type == "Conv" else 2
        extra_outputs += [
            helper.make_tensor_value_info(q, TensorProto.UINT8, [None] * rank),
            helper.make_tensor_value_info(s, TensorProto.FLOAT, []),
            helper.make_tensor_value_info(zp, TensorProto.UINT8, []),
            helper.make_tensor_value_info(acc, TensorProto.INT32, [None] * rank)]
    rest = [numpy_helper.from_array(v, k) for k, v in inits.items()]
    outputs = list(g.output) + (extra_outputs if taps else [])
    graph = helper.make_graph(nodes, "quantized_convnet", list(g.input), outputs,
                              rest + new_inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="quantized_convnet")
    onnx.checker.check_model(m)
    return m


def export(work):
    """Writes qconvnet.onnx and qconvnet_taps.onnx; returns the float
    module's parameters as NumPy arrays (for the NumPy reference)."""
    torch.manual_seed(0)
    net = ConvNet().eval()
    path = os.path.join(work, "convnet_fp32.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (torch.randn(1, 3, 64, 64),), path,
                          input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "N", 2: "H", 3: "W"},
                                        "logits": {0: "N"}},
                          opset_version=13)
    fp32 = onnx.load(path)
    ops = [n.op_type for n in fp32.graph.node]
    if ops.count("Conv") != len(LAYERS) or "Gemm" not in ops:
        raise SystemExit(f"unexpected export: {ops}")
    for taps, name in ((False, "qconvnet.onnx"), (True, "qconvnet_taps.onnx")):
        onnx.save(quantize_graph(onnx.load(path), taps), os.path.join(work, name))


# --------------------------------------------------------------------------
# The NumPy reference (the ONNX reference semantics of the ops).
# --------------------------------------------------------------------------

def dynamic_quantize(x):
    x = x.astype(np.float32)
    hi = np.float32(max(np.float32(0), x.max()))
    lo = np.float32(min(np.float32(0), x.min()))
    scale = np.float32((hi - lo) / np.float32(255))
    zp = np.clip(np.rint(np.float32(0) - lo / scale), 0, 255)
    q = np.clip(np.rint(x / scale) + zp, 0, 255)
    return q.astype(np.uint8), scale, np.uint8(zp)


def numpy_reference(model_path, x):
    """Every output of qconvnet_taps.onnx, evaluated node by node. Integer
    convolutions and matmuls run in float64 on integer values below 2^53,
    hence exactly."""
    m = onnx.load(model_path)
    env = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    env["input"] = x
    for n in m.graph.node:
        a = [env[i] if i else None for i in n.input]
        attrs = {t.name: helper.get_attribute_value(t) for t in n.attribute}
        op = n.op_type
        if op == "DynamicQuantizeLinear":
            out = dynamic_quantize(a[0])
        elif op == "ConvInteger":
            xi = torch.from_numpy(a[0].astype(np.float64) - float(a[2]))
            wi = torch.from_numpy(a[1].astype(np.float64) - float(a[3]))
            p = attrs.get("pads", [0, 0, 0, 0])
            assert p[:2] == p[2:]
            y = torch.nn.functional.conv2d(xi, wi, stride=attrs.get("strides", 1),
                                           padding=p[:2],
                                           dilation=attrs.get("dilations", 1),
                                           groups=attrs.get("group", 1))
            out = (y.numpy().astype(np.int32),)
        elif op == "MatMulInteger":
            y = (a[0].astype(np.float64) - float(a[2])) @ \
                (a[1].astype(np.float64) - a[3].astype(np.float64))
            out = (y.astype(np.int32),)
        elif op == "Cast":
            out = (a[0].astype(np.float32),)
        elif op == "Mul":
            out = (np.multiply(a[0], a[1], dtype=np.float32),)
        elif op == "Add":
            out = (np.add(a[0], a[1], dtype=np.float32),)
        elif op == "Relu":
            out = (np.maximum(a[0], np.float32(0)),)
        elif op == "GlobalAveragePool":
            out = (a[0].mean(axis=(2, 3), keepdims=True, dtype=np.float32),)
        elif op == "Flatten":
            out = (a[0].reshape(a[0].shape[0], -1),)
        else:
            raise SystemExit(f"NumPy reference: no rule for {op}")
        for name, v in zip(n.output, out):
            env[name] = np.asarray(v)
    return {o.name: env[o.name] for o in m.graph.output}


# --------------------------------------------------------------------------
# ONNX Runtime.
# --------------------------------------------------------------------------

def ort_available(ort_dir):
    return shutil.which("node") is not None and os.path.isdir(
        os.path.join(ort_dir, "node_modules", "onnxruntime-node"))


def ort_outputs(args, model_path, x, rdir):
    odir = os.path.join(rdir, "ort")
    os.makedirs(odir, exist_ok=True)
    raw = os.path.join(rdir, "input.raw")
    np.ascontiguousarray(x, dtype="<f4").tofile(raw)
    spec = {"model": model_path, "threads": 1, "out_dir": odir,
            "inputs": {"input": {"file": raw, "dtype": "float32",
                                 "dims": list(x.shape)}}}
    spec_path = os.path.join(rdir, "ort_spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    env = dict(os.environ, NODE_PATH=os.path.join(args.ort_dir, "node_modules"))
    rc, _ = sh(["node", os.path.join(HERE, "ort_outputs.js"), spec_path], env=env)
    if rc != 0:
        return None
    with open(os.path.join(odir, "outputs.json")) as f:
        meta = json.load(f)
    return {k: np.fromfile(os.path.join(odir, k + ".bin"), dtype=v["dtype"])
            .reshape(v["dims"]) for k, v in meta.items()}


# --------------------------------------------------------------------------
# The check.
# --------------------------------------------------------------------------

def make_input(shape, seed):
    dims = [int(d) for d in shape.split("x")]
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


def ties_input(shape):
    """Halves in [-126.5, 128.5] (both present): the first layer's scale is
    exactly 1, its zero point rint(126.5) = 126 and every x / scale a tie,
    so rounding half away from zero (or up) would show in q1 and zp1."""
    dims = [int(d) for d in shape.split("x")]
    x = np.random.default_rng(7).integers(-127, 129, dims).astype(np.float32) + 0.5
    x.flat[0], x.flat[1] = -126.5, 128.5
    return x


def head_step(model_path):
    """w_scale * max|w_q - w_zero_point| of the head: the change of a logit
    per unit of one quantized head input (times that input's scale)."""
    inits = {t.name: numpy_helper.to_array(t)
             for t in onnx.load(model_path).graph.initializer}
    h = HEAD
    wq = inits[f"w{h}_q"].astype(np.int64) - int(inits[f"w{h}_zp"])
    return float(inits[f"w{h}_scale"]) * float(np.abs(wq).max())


def compare(tag, got, want, head_atol):
    """Failures (strings) for one run. The convolution layers' quantized
    activations, scales, zero points and accumulators must be equal. The
    head's input is the average pool, whose float sum runs in another order
    in each implementation: its scale may differ by a few ulps (rtol 1e-6)
    and its quantized values by 1, and then its accumulators differ too;
    the logits are held to rtol 1e-4 / atol 1e-5, plus `head_atol` (the
    most one quantized head input off by 1 moves a logit) where the head's
    quantized input is not known to be equal."""
    failures, notes = [], []
    h = str(HEAD)
    head_equal = "q" + h in want and "q" + h in got and \
        got["q" + h].shape == want["q" + h].shape and \
        np.array_equal(got["q" + h], want["q" + h])
    for k, w in sorted(want.items(), key=lambda kv: kv[0] == "logits"):
        g = got.get(k)
        if g is None:
            failures.append(f"{tag}: DISC wrote no output {k}")
            continue
        if list(g.shape) != list(w.shape):
            failures.append(f"{tag}: {k} shape {list(g.shape)}, reference {list(w.shape)}")
            continue
        if k == "logits":
            atol = LOGITS_ATOL + (0.0 if head_equal else head_atol)
            err = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
            if not np.allclose(g, w, rtol=LOGITS_RTOL, atol=atol):
                failures.append(f"{tag}: logits differ (max abs error {err:.3g}, "
                                f"atol {atol:.3g})")
            else:
                log(f"  ok: {tag}: logits {list(w.shape)}, max abs error {err:.3g}")
            continue
        diff = int(np.count_nonzero(g != w))
        if not diff:
            continue
        delta = np.abs(g.astype(np.float64) - w.astype(np.float64))
        msg = (f"{k} {list(w.shape)} differs in {diff} of {w.size} values "
               f"(largest difference {delta.max():.3g})")
        if k[1:] == h or k[3:] == h:  # the head: q, s, zp or acc
            tolerated = {"s": np.allclose(g, w, rtol=1e-6, atol=0),
                         "q": delta.max() <= 1, "zp": False,
                         "acc": not head_equal}[k.rstrip("0123456789")]
            if tolerated:
                notes.append(msg)
                continue
        failures.append(f"{tag}: {msg}")
    ints = [k for k in want if k != "logits"]
    if ints and not any(f.startswith(tag + ": ") and "logits" not in f
                        for f in failures):
        log(f"  ok: {tag}: q, s, zp and acc of all {len(ints) // 4} layers equal"
            + (f", but for the head's (its input is the average pool; "
               f"tolerated): {'; '.join(notes)}" if notes else ""))
    return failures


def run_disc(args, so, x, rdir):
    odir = os.path.join(rdir, "disc")
    shutil.rmtree(odir, ignore_errors=True)
    os.makedirs(odir)
    xin = os.path.join(rdir, "input.npy")
    np.save(xin, x)
    report = os.path.join(rdir, "report.json")
    rc, _ = sh([os.path.join(args.bin_dir, "disc-run"), so, "--input",
                f"input={xin}", "--output-dir", odir, "--report", report])
    if rc != 0:
        return None, rc
    return {f[:-4]: np.load(os.path.join(odir, f))
            for f in os.listdir(odir) if f.endswith(".npy")}, 0


def check(args, work, reference):
    taps = os.path.join(work, "qconvnet_taps.onnx")
    failures = []
    step = head_step(taps)
    sos = {}
    for name in ("qconvnet", "qconvnet_taps"):
        so = os.path.join(work, name + ".so")
        rc, _ = sh([os.path.join(args.bin_dir, "disc-compile"),
                    os.path.join(work, name + ".onnx"), "-o", so])
        if rc != 0:
            return [f"disc-compile {name}.onnx failed (exit {rc})"]
        sos[name] = so
    runs = [(s, make_input(s, seed=i)) for i, s in enumerate(args.shapes)]
    runs.append((TIES_SHAPE + " ties", ties_input(TIES_SHAPE)))
    for i, (shape, x) in enumerate(runs):
        rdir = os.path.join(work, f"run{i}")
        os.makedirs(rdir, exist_ok=True)
        if reference == "ort":
            want = ort_outputs(args, taps, x, rdir)
            if want is None:
                failures.append(f"{shape}: ONNX Runtime failed")
                continue
        else:
            want = numpy_reference(taps, x)
        for name, so in sos.items():
            got, rc = run_disc(args, so, x, os.path.join(rdir, name))
            tag = f"{name} {shape} vs {reference}"
            if got is None:
                failures.append(f"{tag}: disc-run exit {rc}")
                continue
            w = want if name == "qconvnet_taps" else {"logits": want["logits"]}
            failures += compare(tag, got, w, step * float(want[f"s{HEAD}"]))
            # No control flow, no data-dependent size: the exact peak.
            bad, text = peak_check.check(
                os.path.join(rdir, name, "report.json"), tag, False)
            failures += bad
            if text:
                print(f"  ok: {tag}: {text}", flush=True)
    return failures


def bench(args, work):
    """Median latencies of the plain model at args.bench, one thread each."""
    so = os.path.join(work, "qconvnet.so")
    model = os.path.join(work, "qconvnet.onnx")
    rc, _ = sh([os.path.join(args.bin_dir, "disc-compile"), model, "-o", so])
    if rc != 0:
        return [f"disc-compile qconvnet.onnx failed (exit {rc})"]
    dims = [int(d) for d in args.bench.split("x")]
    # The input benchmarks/ort_run.js feeds: sin(0.37 i).
    x = np.sin(np.arange(int(np.prod(dims)), dtype=np.float64) * 0.37)
    xin = os.path.join(work, f"bench_{args.bench}.npy")
    np.save(xin, x.astype(np.float32).reshape(dims))
    env = dict(os.environ, NODE_PATH=os.path.join(args.ort_dir, "node_modules"),
               OMP_NUM_THREADS="1")
    disc, ort = [], []
    for _ in range(args.rounds):
        report = os.path.join(work, "bench_report.json")
        rc, _ = sh([os.path.join(args.bin_dir, "disc-run"), so, "--input",
                    f"input={xin}", "--threads", "1", "--repeat",
                    str(args.repeat + 1), "--report", report], env=env)
        if rc != 0:
            return [f"disc-run (bench) exit {rc}"]
        with open(report) as f:
            disc += json.load(f)["latencies_ms"][1:]  # first run: warm-up
        rc, out = sh(["node", os.path.join(REPO, "benchmarks", "ort_run.js"), model,
                      f"input:float32:{args.bench}", str(args.repeat), "1"], env=env)
        if rc != 0:
            return ["ONNX Runtime (bench) failed"]
        ort += json.loads(out.strip().splitlines()[-1])["latencies_ms"]
    d, o = statistics.median(disc), statistics.median(ort)
    log(f"| shape | DISC (ms) | ORT (ms) | DISC/ORT |\n|---|---|---|---|\n"
        f"| {args.bench} | {d:.2f} | {o:.2f} | {d / o:.2f} |")
    log(f"(median of {len(disc)} runs each, one thread)")
    return []


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--ort-dir", default="/tmp/ort",
                   help="where onnxruntime-node is installed (node_modules/)")
    p.add_argument("--reference", choices=["auto", "ort", "numpy"], default="auto",
                   help="auto: ONNX Runtime when installed, else NumPy")
    p.add_argument("--shapes", nargs="+", default=SHAPES, help="NxCxHxW")
    p.add_argument("--bench", metavar="SHAPE",
                   help="time the model at SHAPE against ONNX Runtime instead")
    p.add_argument("--repeat", type=int, default=10, help="--bench: timed runs per round")
    p.add_argument("--rounds", type=int, default=3, help="--bench: rounds")
    args = p.parse_args(argv)
    for s in args.shapes + ([args.bench] if args.bench else []):
        d = s.split("x")
        if len(d) != 4 or not all(v.isdigit() and int(v) > 0 for v in d) or d[1] != "3":
            p.error(f"bad shape {s} (want NxCxHxW with C = 3)")
    args.work_dir = os.path.abspath(args.work_dir)
    args.ort_dir = os.path.abspath(args.ort_dir)
    have_ort = ort_available(args.ort_dir)
    reference = args.reference
    if reference == "auto":
        reference = "ort" if have_ort else "numpy"
    if (reference == "ort" or args.bench) and not have_ort:
        p.error(f"no onnxruntime-node in {args.ort_dir}")
    os.makedirs(args.work_dir, exist_ok=True)
    export(args.work_dir)
    if args.bench:
        failures = bench(args, args.work_dir)
    else:
        log(f"reference: {'ONNX Runtime' if reference == 'ort' else 'NumPy'}")
        failures = check(args, args.work_dir, reference)
    for f in failures:
        log("FAIL: " + f)
    if not args.bench:
        log("all runs matched" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

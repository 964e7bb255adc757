#!/usr/bin/python3
"""Real-world ONNX models from PyTorch: NMS detection head and float16 nets.

Each model is exported from PyTorch with dynamic axes, compiled ONCE with
disc-compile and run with disc-run at two to four input shapes; every output
is compared, shapes exactly. The measured peak must equal the memory model's
prediction (the float16 models) or be at most its upper bound (nms_head:
an If, NMS's loop and data-dependent counts; docs/memory.md).

  nms_head      Conv backbone on images [n, 3, h, w] (n, h, w dynamic) ->
                per-location boxes and class scores; locations whose best
                score is above 0.8 go through torchvision.ops.batched_nms
                (IoU 0.5; exported as NonMaxSuppression inside an If on the
                empty case). Outputs: kept boxes [k, 4], scores [k], labels
                [k], batch index [k] and location [k] (index into the n*h*w
                feature-map cells), k data-dependent.
                Reference: the same PyTorch module (boxes and scores rtol
                1e-3, atol 1e-4; integer outputs exactly). Three runs on
                seeded random images [1, 3, 32, 32], [2, 3, 40, 56],
                [3, 3, 24, 64] whose result is stable under float rounding:
                no score within 1e-4 of the threshold, candidate scores at
                least 1e-6 apart, no IoU of two candidates of the same image
                and class within 1e-3 of 0.5, NMS dropping some candidates
                and keeping others (each run takes the first of 50 seeds
                that passes). A last run on black images [2, 3, 16, 24] has
                no candidate (empty outputs).
  fp16_mlp      Linear-GELU-Linear-ReLU + residual, LayerNormalization,
                Linear, Softmax on x [batch, seq, 32] (batch, seq dynamic).
  fp16_convnet  Conv(+BatchNorm, folded)-ReLU-MaxPool-Conv-ReLU-
                GlobalAveragePool-Gemm on x [n, 3, h, w] (n, h, w dynamic).
                The runs at [1, 3, 512, 512] and [1, 3, 1024, 1024] pool
                over 128*128 and 256*256 values: summed in float16 they
                would stop growing, and 65,536 does not fit in float16
                (disc-widen-narrow-floats computes them in float32).

The float16 models are exported in float32 and converted with onnx's API
(initializers, Constant nodes, Cast targets, graph inputs, outputs and
value_info to FLOAT16); their weights are rounded to float16 before the
export, so that the conversion is exact and the float32 PyTorch module has
the very weights of the float16 graph, and it runs on the float16 input
widened to float32. References:
  * ONNX Runtime (onnxruntime-node, run with `node` from --ort-dir) on the
    float16 graph: rtol 1e-2, atol 1e-2 * max|reference|.
  * PyTorch float32: the same tolerance. float16 rounds to 11 significant
    bits (unit roundoff 2^-11 = 4.9e-4); a value here goes through up to
    four dot products or sums of length <= 144 and a normalization,
    whose error grows like sqrt(length) * 2^-11 ~ 6e-3 relative to the
    largest terms summed: 1e-2, relative to each value and to the scale of
    the output (cancellation makes small values absolute-error bound).
Without node or onnxruntime-node in --ort-dir (a fresh clone), the float16
models are compared with PyTorch only, and the script says so.

    /usr/bin/python3 test/e2e/real_world.py --bin-dir build/bin \\
        --work-dir build/test/e2e/real_world [--ort-dir /tmp/ort] [MODEL ...]

Runs marked as expected failures (a known DISC bug, printed with the
mismatch) do not fail the script unless they match: then the mark must go.

Exit codes: 0 every run matched (or failed as expected), 1 a mismatch or a
failed command (named), 2 bad usage.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torchvision

import peak_check

NMS_RTOL = 1e-3
NMS_ATOL = 1e-4
FP16_RTOL = 1e-2
FP16_ATOL_SCALE = 1e-2  # atol = FP16_ATOL_SCALE * max|reference|


# --------------------------------------------------------------------------
# nms_head


class NmsHead(torch.nn.Module):
    """A one-level anchor-free detector head with per-image, per-class NMS."""

    def __init__(self, classes=3, stride=4, score_thr=0.8, iou_thr=0.5):
        super().__init__()
        self.backbone = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, 2, 1), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, 2, 1), torch.nn.ReLU())
        self.box = torch.nn.Conv2d(16, 4, 1)
        self.cls = torch.nn.Conv2d(16, classes, 1)
        self.classes = classes
        self.stride = stride
        self.score_thr = score_thr
        self.iou_thr = iou_thr

    def dense(self, images):
        """Boxes [n*h*w, 4] (x1, y1, x2, y2), best score and its class."""
        f = self.backbone(images)
        n, _, h, w = f.shape
        d = self.box(f).permute(0, 2, 3, 1).reshape(n, h * w, 4)
        s = torch.sigmoid(4.0 * self.cls(f)).permute(0, 2, 3, 1)
        s = s.reshape(n, h * w, self.classes)
        ys = (torch.arange(h, dtype=torch.float32) + 0.5) * self.stride
        xs = (torch.arange(w, dtype=torch.float32) + 0.5) * self.stride
        cy = ys[:, None].expand(h, w).reshape(1, h * w)
        cx = xs[None, :].expand(h, w).reshape(1, h * w)
        x = cx + d[..., 0] * self.stride
        y = cy + d[..., 1] * self.stride
        bw = torch.exp(d[..., 2]) * 4 * self.stride
        bh = torch.exp(d[..., 3]) * 4 * self.stride
        boxes = torch.stack([x - bw / 2, y - bh / 2, x + bw / 2, y + bh / 2], -1)
        scores, labels = s.max(-1)
        batch = torch.arange(n)[:, None].expand(n, h * w)
        return (boxes.reshape(-1, 4), scores.reshape(-1), labels.reshape(-1),
                batch.reshape(-1))

    def forward(self, images):
        boxes, scores, labels, batch = self.dense(images)
        cand = torch.nonzero(scores > self.score_thr).squeeze(1)
        boxes, scores, labels, batch = boxes[cand], scores[cand], labels[cand], batch[cand]
        keep = torchvision.ops.batched_nms(boxes, scores, batch * self.classes + labels,
                                           self.iou_thr)
        return boxes[keep], scores[keep], labels[keep], batch[keep], cand[keep]


def nms_conditioning(module, images):
    """Why `images` is a poor test input (None if it is a good one): a score
    near the threshold, two candidates with nearly equal scores, or an IoU
    near the NMS threshold within one (image, class); or NMS dropping
    nothing or everything."""
    with torch.no_grad():
        boxes, scores, labels, batch = module.dense(torch.from_numpy(images))
        kept = module(torch.from_numpy(images))[0].shape[0]
    near = float((scores - module.score_thr).abs().min())
    if near < 1e-4:
        return f"a score {near:.2g} from the threshold"
    m = scores > module.score_thr
    boxes, scores, group = boxes[m], scores[m], (batch * module.classes + labels)[m]
    if scores.numel() < 2 or kept in (0, scores.numel()):
        return f"{scores.numel()} candidates, {kept} kept"
    gap = float(torch.diff(torch.sort(scores).values).min())
    if gap < 1e-6:
        return f"two candidate scores {gap:.2g} apart"
    iou = torchvision.ops.box_iou(boxes, boxes)
    same = (group[:, None] == group[None, :]) & ~torch.eye(len(group), dtype=torch.bool)
    near = float((iou[same] - module.iou_thr).abs().min()) if bool(same.any()) else 1.0
    if near < 1e-3:
        return f"an IoU {near:.2g} from the NMS threshold"
    return None


def nms_head(args):
    torch.manual_seed(0)
    module = NmsHead().eval()
    out_names = ["boxes", "scores", "labels", "batch_index", "location"]
    axes = {"images": {0: "n", 2: "h", 3: "w"}}
    axes.update({o: {0: "k"} for o in out_names})
    runs = []
    for shape, seed in [((1, 3, 32, 32), 100), ((2, 3, 40, 56), 200),
                        ((3, 3, 24, 64), 300)]:
        for s in range(seed, seed + 50):
            images = np.random.default_rng(s).standard_normal(shape).astype(np.float32)
            why = nms_conditioning(module, images)
            if why is None:
                break
            log(f"  nms_head {list(shape)}: seed {s} skipped ({why})")
        else:
            raise RuntimeError(f"no well-conditioned input of shape {list(shape)}")
        runs.append({"images": images})
    # Black images: no location above the score threshold (the If's empty
    # branch, k = 0).
    empty = np.zeros((2, 3, 16, 24), np.float32)
    with torch.no_grad():
        if bool((module.dense(torch.from_numpy(empty))[1] > module.score_thr).any()):
            raise RuntimeError("the black images have a candidate")
    runs.append({"images": empty})
    return {"module": module, "example": (torch.from_numpy(runs[1]["images"]),),
            "inputs": ["images"], "outputs": out_names, "axes": axes,
            "opset": 13, "runs": runs, "fp16": False}


# --------------------------------------------------------------------------
# float16 models


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 64)
        self.norm = torch.nn.LayerNorm(64)
        self.fc3 = torch.nn.Linear(64, 10)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc1(x))
        h = self.norm(h + torch.relu(self.fc2(h)))
        return torch.softmax(self.fc3(h), -1), h


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, 1, 1), torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, 2, 1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
            torch.nn.Linear(32, 10))

    def forward(self, x):
        return self.net(x)


def rnd16(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float16)


def round_params_to_fp16(module):
    """Random affine/statistics where PyTorch initializes constants, then
    every parameter and buffer rounded to float16 (kept in float32)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (torch.nn.LayerNorm, torch.nn.BatchNorm2d)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.2)
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0.0, 0.5)
                m.running_var.uniform_(0.5, 2.0)
        for t in list(module.parameters()) + list(module.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())


def fp16_mlp(args):
    torch.manual_seed(0)
    module = Mlp().eval()
    round_params_to_fp16(module)
    runs = [{"x": rnd16(1, 2, 5, 32)}, {"x": rnd16(2, 3, 17, 32)},
            {"x": rnd16(3, 1, 1, 32)}]
    return {"module": module, "example": (torch.randn(2, 5, 32),),
            "inputs": ["x"], "outputs": ["probs", "hidden"],
            "axes": {"x": {0: "batch", 1: "seq"}, "probs": {0: "batch", 1: "seq"},
                     "hidden": {0: "batch", 1: "seq"}},
            "opset": 17, "runs": runs, "fp16": True}


def fp16_convnet(args):
    torch.manual_seed(0)
    module = ConvNet().eval()
    round_params_to_fp16(module)
    # The export folds BatchNorm into the Conv weights; fold it here, before
    # the rounding, so that the folded weights are float16 too.
    net = module.net
    net[0] = torch.nn.utils.fusion.fuse_conv_bn_eval(net[0], net[1])
    net[1] = torch.nn.Identity()
    round_params_to_fp16(module)
    runs = [{"x": rnd16(4, 1, 3, 16, 16)}, {"x": rnd16(5, 2, 3, 20, 24)},
            {"x": rnd16(6, 3, 3, 33, 17)}, {"x": rnd16(7, 1, 3, 512, 512)},
            {"x": rnd16(8, 1, 3, 1024, 1024)}]
    return {"module": module, "example": (torch.randn(2, 3, 16, 16),),
            "inputs": ["x"], "outputs": ["logits"],
            "axes": {"x": {0: "n", 2: "h", 3: "w"}, "logits": {0: "n"}},
            "opset": 17, "runs": runs, "fp16": True}


def tensor_to_fp16(t, exact=False):
    if t.data_type == onnx.TensorProto.FLOAT:
        a = numpy_helper.to_array(t)
        h = a.astype(np.float16)
        if exact and not np.array_equal(h.astype(np.float32), a):
            raise ValueError(f"initializer '{t.name}' is not exactly representable "
                             "in float16")
        t.CopyFrom(numpy_helper.from_array(h, t.name))


def graph_to_fp16(g):
    """Every FLOAT tensor and type of `g` (and its subgraphs) to FLOAT16.
    The initializers (the weights) must be exact; Constant nodes from the
    export (GELU's sqrt(2), ...) are rounded."""
    for t in g.initializer:
        tensor_to_fp16(t, exact=True)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        tt = vi.type.tensor_type
        if tt.elem_type == onnx.TensorProto.FLOAT:
            tt.elem_type = onnx.TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                tensor_to_fp16(a.t)
            elif a.type == onnx.AttributeProto.GRAPH:
                graph_to_fp16(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sub in a.graphs:
                    graph_to_fp16(sub)
            elif (n.op_type == "Cast" and a.name == "to"
                  and a.i == onnx.TensorProto.FLOAT):
                a.i = onnx.TensorProto.FLOAT16


MODELS = {"nms_head": nms_head, "fp16_mlp": fp16_mlp, "fp16_convnet": fp16_convnet}


# --------------------------------------------------------------------------
# ONNX Runtime (Node.js)

ORT_JS = r"""
// node ort_infer.js ORT_DIR SPEC.json: runs SPEC.model on the raw input
// files of SPEC.inputs in onnxruntime-node, writes each output to
// SPEC.out_dir/NAME.bin and their names, types and dims to outputs.json.
const fs = require('fs');
const path = require('path');
const [ortDir, specFile] = process.argv.slice(2);
const ort = require(path.join(ortDir, 'node_modules', 'onnxruntime-node'));
const ARRAYS = {float16: Uint16Array, float32: Float32Array, float64: Float64Array,
                int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array};
async function main() {
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const session = await ort.InferenceSession.create(spec.model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const inp of spec.inputs) {
    const buf = fs.readFileSync(inp.file);
    const bytes = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    feeds[inp.name] = new ort.Tensor(inp.dtype, new ARRAYS[inp.dtype](bytes), inp.dims);
  }
  const results = await session.run(feeds);
  const outs = [];
  for (const name of session.outputNames) {
    const t = results[name];
    const file = path.join(spec.out_dir, name + '.bin');
    fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    outs.push({name: name, dtype: t.type, dims: t.dims, file: file});
  }
  fs.writeFileSync(path.join(spec.out_dir, 'outputs.json'), JSON.stringify(outs));
}
main().catch((e) => { console.error(String(e)); process.exit(1); });
"""


def find_ort(ort_dir):
    """The node binary if `node` and onnxruntime-node in ort_dir exist."""
    node = shutil.which("node")
    pkg = os.path.join(ort_dir, "node_modules", "onnxruntime-node")
    if node is None:
        return None, "no `node` on PATH"
    if not os.path.isdir(pkg):
        return None, f"no {pkg}"
    return node, None


def run_ort(node, ort_dir, model, inputs, rdir):
    """Outputs {name: array} of ONNX Runtime on `inputs`, or an error."""
    odir = os.path.join(rdir, "ort")
    os.makedirs(odir, exist_ok=True)
    spec = {"model": model, "out_dir": odir, "inputs": []}
    for k, v in inputs.items():
        f = os.path.join(odir, k + ".in.bin")
        np.ascontiguousarray(v).tofile(f)
        spec["inputs"].append({"name": k, "dtype": v.dtype.name,
                               "dims": list(v.shape), "file": f})
    with open(os.path.join(odir, "spec.json"), "w") as f:
        json.dump(spec, f)
    js = os.path.join(odir, "ort_infer.js")
    with open(js, "w") as f:
        f.write(ORT_JS)
    rc, out = sh([node, js, ort_dir, os.path.join(odir, "spec.json")], quiet=True)
    if rc != 0:
        return None, f"ONNX Runtime failed (exit {rc}): {out.strip()[-300:]}"
    with open(os.path.join(odir, "outputs.json")) as f:
        outs = json.load(f)
    return {o["name"]: np.fromfile(o["file"], np.dtype(o["dtype"])).reshape(o["dims"])
            for o in outs}, None


# --------------------------------------------------------------------------


def log(msg):
    print(msg, flush=True)


def sh(cmd, timeout=600, quiet=False):
    log("+ " + " ".join(shlex.quote(c) for c in cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    out = p.stdout.decode(errors="replace")
    if not quiet or p.returncode != 0:
        for line in out.rstrip().splitlines()[-20:]:
            log("  | " + line)
    return p.returncode, out


def compare(got, want, rtol, atol):
    """(ok, description) of got against want: shape, dtype kind, values."""
    if got.shape != want.shape:
        return False, f"shape {list(got.shape)}, reference {list(want.shape)}"
    if want.dtype.kind in "iub":
        if got.dtype != want.dtype:
            return False, f"dtype {got.dtype}, reference {want.dtype}"
        bad = int(np.count_nonzero(got != want))
        return bad == 0, (f"{list(want.shape)} {want.dtype} exact" if bad == 0 else
                          f"{bad} of {want.size} elements differ")
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    if want.size == 0:
        return True, f"{list(want.shape)} (empty)"
    err = np.abs(g - w)
    big = np.abs(w) > atol
    rel = float(np.max(err[big] / np.abs(w[big]))) if big.any() else 0.0
    ok = bool(np.all(err <= atol + rtol * np.abs(w))) and bool(np.isfinite(g).all())
    return ok, (f"{list(want.shape)} max abs err {float(err.max()):.3g}, "
                f"max rel err {rel:.3g} (|ref| > atol {atol:.3g})")


def run_model(name, args, ort, expected):
    t0 = time.time()
    case = MODELS[name](args)
    module, in_names, out_names = case["module"], case["inputs"], case["outputs"]
    work = os.path.join(args.work_dir, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, name + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, case["example"], path, input_names=in_names,
                          output_names=out_names, dynamic_axes=case["axes"],
                          opset_version=case["opset"])
    model = onnx.load(path)
    if case["fp16"]:
        graph_to_fp16(model.graph)
        onnx.checker.check_model(model)
        path = os.path.join(work, name + ".fp16.onnx")
        onnx.save(model, path)
    ops = set()

    def collect(g):
        for n in g.node:
            ops.add(n.op_type)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    collect(a.g)
    collect(model.graph)
    if name == "nms_head" and "NonMaxSuppression" not in ops:
        return [f"{name}: the export has no NonMaxSuppression node ({sorted(ops)})"]
    log(f"{name}: {path} ({', '.join(sorted(ops))})")
    so = os.path.join(work, name + ".so")
    rc, _ = sh([os.path.join(args.bin_dir, "disc-compile"), path, "-o", so])
    if rc != 0:
        return [f"{name}: disc-compile failed (exit {rc})"]
    if case["fp16"] and ort[0] is None:
        log(f"  {name}: ONNX Runtime not found ({ort[1]}): compared with "
            "PyTorch float32 only")
    failures = []
    for i, inputs in enumerate(case["runs"]):
        shapes = ", ".join(f"{k}{list(v.shape)}" for k, v in inputs.items())
        what = f"{name} run {i} ({shapes})"
        xfail = case.get("xfail", {}).get(i)
        mismatches = []
        with torch.no_grad():
            want = module(*[torch.from_numpy(inputs[k].astype(np.float32)
                                             if inputs[k].dtype == np.float16
                                             else inputs[k]) for k in in_names])
        if not isinstance(want, tuple):
            want = (want,)
        refs = [("PyTorch" + (" float32" if case["fp16"] else ""),
                 {o: w.numpy() for o, w in zip(out_names, want)})]
        rdir = os.path.join(work, f"run{i}")
        odir = os.path.join(rdir, "out")
        os.makedirs(odir, exist_ok=True)
        for f in os.listdir(odir):
            os.remove(os.path.join(odir, f))
        if case["fp16"] and ort[0] is not None:
            got, err = run_ort(ort[0], args.ort_dir, path, inputs, rdir)
            if err:
                failures.append(f"{what}: {err}")
            else:
                refs.append(("ONNX Runtime float16", got))
        cmd = [os.path.join(args.bin_dir, "disc-run"), so, "--output-dir", odir]
        for k, v in inputs.items():
            p = os.path.join(rdir, k + ".npy")
            np.save(p, v)
            cmd += ["--input", f"{k}={p}"]
        report = os.path.join(rdir, "report.json")
        rc, _ = sh(cmd + ["--report", report])
        if rc != 0:
            failures.append(f"{what}: disc-run exit {rc}")
            continue
        # NMS (an If, a loop, data-dependent counts): an upper bound; the
        # fp16 models: exact.
        bad, text = peak_check.check(report, what, not case["fp16"])
        failures += bad
        if text:
            log(f"  ok: {what}: {text}")
        for o in out_names:
            got = np.load(os.path.join(odir, o + ".npy"))
            if case["fp16"] and got.dtype != np.float16:
                failures.append(f"{what}: {o} is {got.dtype}, not float16")
                continue
            for ref_name, ref in refs:
                w = ref[o]
                if case["fp16"]:
                    rtol = FP16_RTOL
                    atol = FP16_ATOL_SCALE * float(np.abs(w).max()) if w.size else 0.0
                else:
                    rtol, atol = NMS_RTOL, NMS_ATOL
                ok, desc = compare(got, w, rtol, atol)
                if ok:
                    log(f"  ok: {what}: {o} vs {ref_name}: {desc}")
                else:
                    mismatches.append(f"{what}: {o} vs {ref_name}: {desc}")
        if name == "nms_head":
            log(f"  {what}: {want[0].shape[0]} boxes kept")
        if xfail is None:
            failures += mismatches
        elif mismatches:
            expected.append(f"{name} run {i}")
            for m in mismatches:
                log(f"  XFAIL: {m}")
            log(f"  expected failure, a known bug: {xfail}")
        else:
            failures.append(f"{what}: matched, but is marked as an expected "
                            f"failure ({xfail}): drop the mark")
    log(f"{name}: {time.time() - t0:.1f} s")
    return failures


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", help=f"default: all of {list(MODELS)}")
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("--ort-dir", default="/tmp/ort",
                   help="folder with node_modules/onnxruntime-node, the "
                   "second reference of the float16 models (skipped if "
                   "absent; default %(default)s)")
    args = p.parse_args(argv)
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {unknown}")
    args.work_dir = os.path.abspath(args.work_dir)
    args.ort_dir = os.path.abspath(args.ort_dir)
    ort = find_ort(args.ort_dir)
    failures = []
    expected = []
    for m in args.models or list(MODELS):
        failures += run_model(m, args, ort, expected)
    for f in failures:
        log("FAIL: " + f)
    if failures:
        log(f"{len(failures)} failure(s)")
    else:
        log("all runs matched" + (f", except {len(expected)} expected failure(s) "
                                  f"({', '.join(expected)})" if expected else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""End-to-end check of `disc-compile --train` (docs/training.md) against
PyTorch autograd and torch.optim (in float64).

For a model of examples/models/train_models.py (exported as forward + loss):
compiles one training step once with dynamic shapes, then

  * one step from the initial parameters at each of the model's 3 shapes
    (`disc-run --save-params`): the loss and every parameter after the
    update match PyTorch's (rtol 1e-3, atol 1e-5), and so does the update
    itself (new - old, within 2e-3 of its largest element, or --update-tol);
  * 3 chained steps at the 3 shapes, the state carried from one disc-run to
    the next by `--save-params` / `--load-params`: the same after each step
    (with --resync, each PyTorch step starts from the parameters disc-run
    saved, for a model whose steps amplify float rounding: ResNet-18's
    BatchNorm over a dozen values per channel at its last stage);
  * every run's measured peak equals the predicted one (disc-run --report).

    train_step.py --bin-dir build/bin --work-dir /tmp/train mlp
    train_step.py ... --optimizer adamw --lr 0.01 mlp
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "models"))
import disc_models  # noqa: E402
import train_models  # noqa: E402


def state_file(name):
    """The file of state `name` in a parameter folder (docs/training.md)."""
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in name) + ".npy"


def torch_optimizer(torch, model, args):
    if args.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=args.lr,
                               weight_decay=args.weight_decay)
    if args.optimizer == "momentum":
        return torch.optim.SGD(model.parameters(), lr=args.lr,
                               momentum=args.momentum,
                               weight_decay=args.weight_decay)
    return torch.optim.AdamW(model.parameters(), lr=args.lr,
                             weight_decay=args.weight_decay)


def compare(what, params_dir, model, before, args):
    """Checks every parameter in `params_dir` against the torch model's, and
    the update against the torch update from `before`. Returns the failures."""
    failures = []
    worst = 0.0
    for name, p in model.named_parameters():
        path = os.path.join(params_dir, state_file(name))
        if not os.path.exists(path):
            failures.append(f"{what}: no state file for parameter '{name}'")
            continue
        got = np.load(path)
        ref = p.detach().numpy()
        if got.shape != ref.shape:
            failures.append(f"{what}: '{name}' has shape {got.shape}, "
                            f"expected {ref.shape}")
            continue
        if not np.allclose(got, ref, rtol=1e-3, atol=1e-5):
            failures.append(f"{what}: '{name}' differs from PyTorch by "
                            f"{np.abs(got - ref).max():.3g}")
        step_ref = ref - before[name]
        step_got = got - before[name]
        scale = np.abs(step_ref).max()
        err = np.abs(step_got - step_ref).max() / max(scale, 1e-12)
        worst = max(worst, err)
        if scale > 0 and err > args.update_tol:
            failures.append(f"{what}: the update of '{name}' differs from "
                            f"PyTorch's by {err:.3g} of its largest element")
    print(f"{what}: worst relative update error {worst:.3g}")
    return failures


def run_step(args, so, inputs, load, save, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    cmd = [os.path.join(args.bin_dir, "disc-run"), so,
           "--output-dir", out_dir, "--save-params", save,
           "--report", os.path.join(out_dir, "report.json")]
    if load:
        cmd += ["--load-params", load]
    for name, value in inputs.items():
        path = os.path.join(out_dir, name + ".in.npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"disc-run failed ({r.returncode}): {' '.join(cmd)}\n"
                 f"{r.stdout}{r.stderr}")
    with open(os.path.join(out_dir, "report.json")) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--optimizer", default="sgd",
                    choices=["sgd", "momentum", "adamw"])
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--update-tol", type=float, default=2e-3)
    ap.add_argument("--compile-arg", action="append", default=[])
    ap.add_argument("--resync", action="store_true",
                    help="chained steps: start each PyTorch step from the "
                         "parameters disc-run saved after the previous one "
                         "(sgd only), for models whose steps amplify "
                         "float rounding")
    ap.add_argument("model", choices=sorted(train_models.MODELS))
    args = ap.parse_args()

    import torch

    spec = train_models.MODELS[args.model]
    os.makedirs(args.work_dir, exist_ok=True)
    onnx_path = os.path.join(args.work_dir, args.model + ".train.onnx")
    if not os.path.exists(onnx_path):
        train_models.export(args.model, onnx_path)
    tag = f"{args.model}.{args.optimizer}"
    so = os.path.join(args.work_dir, tag + ".so")
    cmd = [os.path.join(args.bin_dir, "disc-compile"), onnx_path, "-o", so,
           "--train", "--loss", "loss", "--optimizer", args.optimizer,
           "--lr", repr(args.lr), "--momentum", repr(args.momentum),
           "--weight-decay", repr(args.weight_decay)] + args.compile_arg
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"disc-compile failed ({r.returncode}): {' '.join(cmd)}\n"
                 f"{r.stdout}{r.stderr}")

    shapes = [disc_models.parse_shape(s) for s in spec["shapes"]]
    inputs = [spec["make_inputs"](s, np.random.default_rng(100 + i))
              for i, s in enumerate(shapes)]
    failures = []

    # The reference runs in float64: PyTorch's own float32 step is not
    # always within the tolerance of the float64 one (ResNet-18 at
    # 3x3x48x64: 31% off in its largest update, where disc-run's float32
    # step is 3.5e-4 off).
    def build():
        return spec["build"]().double()

    def as_torch(value):
        t = torch.from_numpy(value)
        return t.double() if t.is_floating_point() else t

    def torch_step(model, opt, feed):
        opt.zero_grad()
        loss = train_models.loss_of(
            model(*[as_torch(feed[n]) for n in spec["inputs"]]))
        loss.backward()
        opt.step()
        return float(loss)

    def check_peak(what, rep):
        # The step's measured peak is the memory model's prediction (the
        # state updates written in place count no buffer in either).
        pred = rep.get("predicted_peak_bytes")
        if pred is not None and pred != rep["peak_bytes"]:
            failures.append(f"{what}: peak {rep['peak_bytes']} bytes != "
                            f"predicted {pred}")

    def check_loss(what, report_dir, ref):
        got = float(np.load(os.path.join(report_dir, "loss.npy")))
        if not np.isclose(got, ref, rtol=1e-3, atol=1e-5):
            failures.append(f"{what}: loss {got} != PyTorch's {ref}")
        print(f"{what}: loss {got:.6f} (PyTorch {ref:.6f})")

    # One step from the initial parameters at each shape.
    for i, (shape, feed) in enumerate(zip(shapes, inputs)):
        model = build()
        before = {n: p.detach().numpy().copy()
                  for n, p in model.named_parameters()}
        opt = torch_optimizer(torch, model, args)
        ref = torch_step(model, opt, feed)
        what = f"{tag} one step at {disc_models.shape_str(shape)}"
        out = os.path.join(args.work_dir, f"{tag}.single{i}")
        check_peak(what, run_step(args, so, feed, None, out + ".params", out))
        check_loss(what, out, ref)
        failures += compare(what, out + ".params", model, before, args)

    # 3 chained steps, one per shape, through --save-params/--load-params.
    model = build()
    opt = torch_optimizer(torch, model, args)
    load = None
    if args.resync and args.optimizer != "sgd":
        sys.exit("--resync needs --optimizer sgd (no optimizer state)")
    for i, (shape, feed) in enumerate(zip(shapes, inputs)):
        if args.resync and load:
            with torch.no_grad():
                for name, p in model.named_parameters():
                    p.copy_(as_torch(
                        np.load(os.path.join(load, state_file(name)))))
        before = {n: p.detach().numpy().copy()
                  for n, p in model.named_parameters()}
        ref = torch_step(model, opt, feed)
        what = f"{tag} chained step {i + 1} at {disc_models.shape_str(shape)}"
        out = os.path.join(args.work_dir, f"{tag}.chain{i}")
        check_peak(what, run_step(args, so, feed, load, out + ".params", out))
        check_loss(what, out, ref)
        failures += compare(what, out + ".params", model, before, args)
        load = out + ".params"

    for f in failures:
        print("FAIL:", f)
    print(f"{tag}: {'FAIL' if failures else 'PASS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Compile-time benchmark: runs `disc-compile --timing` on ResNet-18 and on
an OCR-like recognizer of about 1,000 ONNX nodes, and prints a table of the
phases (median wall seconds of --repeat runs) and of the compile's maximum
resident set size.

The OCR-like model stands for the recognizers DISC users compile (opset 11,
dynamic batch and width): a convolutional backbone (Conv, BatchNorm kept in
the graph by exporting in training mode's op set, ReLU, MaxPool) that turns
a [N, 3, 32, W] image into a [N, W/4, C] sequence, then Transformer encoder
layers whose LayerNorm, GELU and attention are decomposed into elementary
ONNX ops by the opset-11 exporter, and a linear classifier. Random init,
seed 0 (no weights are downloaded).

    /usr/bin/python3 benchmarks/compile_time.py --bin-dir build/bin \\
        --work-dir /tmp/disc-compile-bench [--repeat 3]

`--torchvision NAME...` compiles torchvision models instead (`largest`: one
of each family and the segmenters, TORCHVISION_LARGEST), exported on first
use into --work-dir, and prints one row per model.

`--extended` adds the models of the extended benchmark set
(benchmarks/extended_models.py: torchvision classifiers and a segmenter, a
ViT, an NHWC network), exported on first use into --work-dir.

The memory analysis on large graphs (docs/memory.md, *Analysis cost*):
`--swin` adds torchvision's Swin-T (random weights, eval mode, dynamic
batch; about 6,600 ONNX nodes), `--train-layers L` a `gpt_train_step`
(examples/models/gpt_train_step.py) with L decoder layers (forward,
hand-written backward and SGD update; 51 layers give 13,216 ONNX nodes,
10,027 of them not Constant), and `--only-large` leaves ResNet-18 and the
OCR-like model out.
The table then has the rows of the memory schedule, the memory model and
the remat candidates as `--timing` names them (DiscMemorySchedule,
DiscAttachMemoryModel, DiscAttachRemat). Every table ends with the pass
groups (rows starting with "="): the memory schedule plus the memory
model, and LLVM's O3 plus code generation (wall seconds), then the CPU
seconds (user + system) and the maximum resident set size of the compile.

    /usr/bin/python3 benchmarks/compile_time.py --bin-dir build/bin \\
        --only-large --swin --train-layers 51 --repeat 1 --extra=--emit=linalg
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "models"))


def export_ocr_like(path, layers=12):
    """Writes the OCR-like recognizer to `path`; returns its node count."""
    import onnx
    import torch

    torch.manual_seed(0)

    class Encoder(torch.nn.Module):
        def __init__(self, d=128, h=4, ffn=256):
            super().__init__()
            self.h = h
            self.qkv = torch.nn.Linear(d, 3 * d)
            self.proj = torch.nn.Linear(d, d)
            self.ln1 = torch.nn.LayerNorm(d)
            self.ln2 = torch.nn.LayerNorm(d)
            self.fc1 = torch.nn.Linear(d, ffn)
            self.fc2 = torch.nn.Linear(ffn, d)

        def forward(self, x):
            n, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            q = q.reshape(n, t, self.h, d // self.h).transpose(1, 2)
            k = k.reshape(n, t, self.h, d // self.h).transpose(1, 2)
            v = v.reshape(n, t, self.h, d // self.h).transpose(1, 2)
            a = torch.softmax(q @ k.transpose(-1, -2) / (d // self.h) ** 0.5, -1)
            y = (a @ v).transpose(1, 2).reshape(n, t, d)
            x = x + self.proj(y)
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

    class OcrLike(torch.nn.Module):
        def __init__(self, d=128, classes=96):
            super().__init__()

            def block(cin, cout, pool):
                mods = [torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                        torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]
                if pool:
                    mods.append(torch.nn.MaxPool2d(pool))
                return mods

            self.backbone = torch.nn.Sequential(
                *block(3, 32, 2), *block(32, 64, 2), *block(64, 96, (2, 1)),
                *block(96, 128, (2, 1)), *block(128, d, (2, 1)))
            self.layers = torch.nn.ModuleList(Encoder(d) for _ in range(layers))
            self.head = torch.nn.Linear(d, classes)

        def forward(self, x):
            f = self.backbone(x)  # [N, d, 1, W/4]
            s = f.squeeze(2).transpose(1, 2)
            for layer in self.layers:
                s = layer(s)
            return torch.log_softmax(self.head(s), -1)

    model = OcrLike().eval()
    x = torch.randn(1, 3, 32, 128)
    with torch.no_grad():
        torch.onnx.export(
            model, x, path, input_names=["image"], output_names=["logits"],
            dynamic_axes={"image": {0: "batch", 3: "width"},
                          "logits": {0: "batch", 1: "steps"}},
            opset_version=11, do_constant_folding=True,
            training=torch.onnx.TrainingMode.PRESERVE)
    return len(onnx.load(path).graph.node)


def export_swin_t(path):
    """Writes torchvision's Swin-T (random init, seed 0, eval mode, input
    [N, 3, 224, 224] with dynamic N, opset 14) to `path`; returns its node
    count."""
    import onnx
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.swin_t().eval()
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        torch.onnx.export(
            model, x, path, input_names=["input"], output_names=["logits"],
            dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
            opset_version=14)
    return len(onnx.load(path).graph.node)


# One model of each torchvision 0.14 family, the largest graph of the
# family whose weights fit one ONNX protobuf (< 2 GB: not vit_h_14 nor
# regnet_y_128gf), and the segmenters.
TORCHVISION_LARGEST = [
    "alexnet", "convnext_large", "densenet201", "efficientnet_b7",
    "efficientnet_v2_l", "googlenet", "inception_v3", "maxvit_t",
    "mnasnet1_3", "mobilenet_v2", "mobilenet_v3_large", "regnet_y_32gf",
    "resnet152", "resnext101_64x4d", "shufflenet_v2_x2_0", "squeezenet1_1",
    "swin_b", "swin_v2_b", "vgg19_bn", "vit_l_16", "wide_resnet101_2",
    "deeplabv3_resnet101", "deeplabv3_mobilenet_v3_large", "fcn_resnet101",
    "lraspp_mobilenet_v3_large",
]
# Models whose forward assumes the training size (position embeddings,
# attention windows): dynamic batch only. The others also take dynamic H, W.
FIXED_SIZE = ("vit_", "swin_", "maxvit_")


def export_torchvision(name, path):
    """Writes torchvision's `name` (random init, seed 0, eval mode; opset
    17; input [N, 3, H, W] at 224x224, 299x299 for Inception-v3, with
    dynamic N, and H, W unless the model is in FIXED_SIZE or does not
    export so; a segmenter's 'out') to `path` unless it exists; returns its
    node count and its input's dynamic dims."""
    import onnx
    import torch
    import torchvision

    if not os.path.exists(path):
        torch.manual_seed(0)
        tv = torchvision.models
        seg = name in tv.list_models(module=tv.segmentation)
        kwargs = {"weights": None}
        if name in ("inception_v3", "googlenet"):
            kwargs.update(aux_logits=False, init_weights=True)
        if seg:
            kwargs["weights_backbone"] = None
        model = tv.get_model(name, **kwargs).eval()
        if seg:
            sys.path.insert(0, HERE)
            import extended_models
            model = extended_models.segmenter_output(torch, model)
        size = 299 if name == "inception_v3" else 224
        tmp = path + ".tmp"
        for hw in ([] if name.startswith(FIXED_SIZE) else [True]) + [False]:
            dyn = {0: "N", 2: "H", 3: "W"} if hw else {0: "N"}
            try:
                # Gradients on: torch 1.13's nn.MultiheadAttention takes a
                # fused path that does not export under no_grad (ViTs).
                with torch.enable_grad():
                    torch.onnx.export(
                        model, torch.randn(1, 3, size, size), tmp,
                        input_names=["input"], output_names=["output"],
                        dynamic_axes={"input": dyn,
                                      "output": dyn if seg else {0: "N"}},
                        opset_version=17)
                break
            except torch.onnx.errors.OnnxExporterError:
                # AdaptiveAvgPool2d to a fixed size (AlexNet, VGG) exports
                # only for a static H, W.
                if not hw:
                    raise
        os.replace(tmp, path)
    m = onnx.load(path, load_external_data=False)
    dims = [d.dim_param for d in m.graph.input[0].type.tensor_type.shape.dim
            if d.dim_param]
    return len(m.graph.node), ", ".join(dims)


def export_train_step(path, layers):
    """Writes gpt_train_step with `layers` decoder layers to `path`
    (checked against torch.autograd on the way); returns its node count."""
    import onnx
    import disc_models
    import gpt_train_step

    gpt_train_step.LAYERS = layers
    gpt_train_step.PARAM_NAMES = [n for n, _ in gpt_train_step.param_specs()]
    spec = disc_models.MODELS["gpt_train_step"]
    spec["inputs"] = ["tokens", "targets"] + gpt_train_step.PARAM_NAMES
    spec["outputs"] = ["loss"] + ["new_" + n
                                  for n in gpt_train_step.PARAM_NAMES]
    disc_models.export_onnx("gpt_train_step", gpt_train_step.build(), path)
    return len(onnx.load(path).graph.node)


def export_resnet18(work):
    import disc_models
    disc_models.main("resnet18", ["--out-dir", work, "--shapes", "1x3x224x224"])
    return os.path.join(work, "resnet18.onnx")


# User and wall columns, or only wall where no phase ran threads.
PHASE = re.compile(r"^\s*(?:[\d.]+\s+\(\s*[\d.]+%\)\s+)?([\d.]+)\s+\(\s*[\d.]+%\)"
                   r"\s+(\S.*)$")


RSS = "max RSS (MB)"
CPU = "CPU s (user + sys)"
# Pass groups, summed over the --timing rows whose names start with these.
GROUPS = {
    "= memory schedule + memory model": ("DiscMemorySchedule",
                                         "DiscAttachMemoryModel"),
    "= LLVM O3 + code generation": ("LLVM optimization (O3)",
                                    "machine code emission", "split into"),
}


def compile_once(binary, model, out, extra):
    """Runs disc-compile --timing; returns {phase: wall seconds} with the
    process's maximum resident set size under RSS."""
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen([binary, model, "-o", out, "--timing"] + extra,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read()
    if proc.returncode != 0:
        sys.exit(f"disc-compile failed on {model}:\n{stderr}")
    phases = {RSS: usage.ru_maxrss / 1024}  # KiB on Linux
    phases[CPU] = usage.ru_utime + usage.ru_stime
    groups = dict.fromkeys(GROUPS, 0.0)
    for line in stderr.splitlines():
        m = PHASE.match(line)
        if not m:
            continue
        name = m.group(2).strip()
        for group, prefixes in GROUPS.items():
            if name.startswith(prefixes):
                groups[group] += float(m.group(1))
        if not line.startswith("    " * 3):
            if line.startswith("      "):
                name = "  " + name
            phases.setdefault(name, float(m.group(1)))
    phases.update(groups)
    return phases


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work-dir", default="/tmp/disc-compile-bench")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--layers", type=int, default=12,
                   help="encoder layers of the OCR-like model (default 12)")
    p.add_argument("--extra", default="",
                   help="more disc-compile options, space-separated")
    p.add_argument("--swin", action="store_true",
                   help="also compile torchvision's Swin-T (dynamic batch)")
    p.add_argument("--train-layers", type=int, default=0,
                   help="also compile gpt_train_step with this many layers "
                        "(51: 10,027 ONNX nodes that are not Constant)")
    p.add_argument("--only-large", action="store_true",
                   help="leave out ResNet-18 and the OCR-like model")
    p.add_argument("--torchvision", nargs="+", metavar="NAME",
                   help="compile these torchvision models instead ('largest':"
                        " one of each family, TORCHVISION_LARGEST) and print"
                        " one row per model")
    p.add_argument("--export-torchvision", nargs=2, metavar=("NAME", "PATH"),
                   help=argparse.SUPPRESS)
    p.add_argument("--extended", action="store_true",
                   help="also compile the extended benchmark set "
                        "(benchmarks/extended_models.py)")
    args = p.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    if args.export_torchvision:
        nodes, dims = export_torchvision(*args.export_torchvision)
        print(f"{nodes}\t{dims}")
        return 0
    if args.torchvision:
        return compile_torchvision(args)
    models = {}
    if args.extended:
        sys.path.insert(0, HERE)
        import extended_models
        for name in extended_models.MODELS:
            path = os.path.join(args.work_dir, name + ".onnx")
            if not os.path.exists(path):
                subprocess.run([sys.executable,
                                os.path.join(HERE, "extended_models.py"),
                                "--out-dir", args.work_dir, "--model", name],
                               check=True, stdout=subprocess.DEVNULL)
            models[name] = path
    if not args.only_large:
        models["resnet18"] = export_resnet18(args.work_dir)
        ocr = os.path.join(args.work_dir, "ocr_like.onnx")
        nodes = export_ocr_like(ocr, args.layers)
        print(f"ocr_like: {nodes} ONNX nodes")
        models[f"ocr_like ({nodes} nodes)"] = ocr
    if args.swin:
        swin = os.path.join(args.work_dir, "swin_t.onnx")
        nodes = export_swin_t(swin)
        print(f"swin_t: {nodes} ONNX nodes")
        models[f"swin_t ({nodes} nodes)"] = swin
    if args.train_layers:
        train = os.path.join(args.work_dir,
                             f"gpt_train_step_{args.train_layers}.onnx")
        nodes = export_train_step(train, args.train_layers)
        print(f"gpt_train_step, {args.train_layers} layers: {nodes} ONNX nodes")
        models[f"train step ({nodes} nodes)"] = train
    binary = os.path.join(args.bin_dir, "disc-compile")
    results = {name: [] for name in models}
    for _ in range(args.repeat):  # interleaved
        for name, path in models.items():
            out = os.path.join(args.work_dir, "model.so")
            results[name].append(compile_once(binary, path, out,
                                              args.extra.split()))
    names = []
    for runs in results.values():
        for r in runs:
            for k in r:
                if k not in names:
                    names.append(k)
    for k in list(GROUPS) + [CPU, RSS]:
        names.remove(k)
        names.append(k)
    print("\n| phase (median wall s) | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for k in names:
        cells = []
        for runs in results.values():
            vals = [r[k] for r in runs if k in r]
            fmt = "{:.0f}" if k == RSS else "{:.2f}"
            cells.append(fmt.format(statistics.median(vals)) if vals else "")
        print(f"| {k} | " + " | ".join(cells) + " |")


def compile_torchvision(args):
    """--torchvision: one row per model (wall and CPU seconds of the whole
    compile, the maximum RSS), the slowest of --repeat runs."""
    names = []
    for n in args.torchvision:
        names += TORCHVISION_LARGEST if n == "largest" else [n]
    binary = os.path.join(args.bin_dir, "disc-compile")
    print("| model | ONNX nodes | dynamic dims | wall s | CPU s | max RSS (MB) |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for name in names:
        path = os.path.join(args.work_dir, name + ".onnx")
        # Exported in a child process: a compile's max RSS counts its
        # parent's at the fork (Linux keeps the high-water mark through
        # exec), and torch would make this process large.
        proc = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--bin-dir",
             args.bin_dir, "--export-torchvision", name, path],
            capture_output=True, text=True)
        if proc.returncode != 0:  # an export torch 1.13 cannot do
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"| {name} | export failed: {last[:100]} | | | | |",
                  flush=True)
            continue
        nodes, dims = proc.stdout.strip().splitlines()[-1].split("\t")
        walls, runs = [], []
        try:
            for _ in range(args.repeat):
                start = time.monotonic()
                runs.append(compile_once(
                    binary, path, os.path.join(args.work_dir, "model.so"),
                    args.extra.split()))
                walls.append(time.monotonic() - start)
        except SystemExit as e:  # the compile failed: its message, go on
            print(f"| {name} | {nodes} | compile failed: "
                  f"{str(e).splitlines()[-1][:100]} | | | |", flush=True)
            continue
        i = max(range(len(walls)), key=walls.__getitem__)
        worst = max(worst, walls[i])
        print(f"| {name} | {nodes} | {dims} | {walls[i]:.1f} | "
              f"{runs[i][CPU]:.1f} | {runs[i][RSS]:.0f} |", flush=True)
    print(f"\nslowest compile: {worst:.1f} s wall")
    return 0


if __name__ == "__main__":
    main()

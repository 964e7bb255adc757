#!/usr/bin/env python3
"""Row kernels of the CUDA target (docs/cuda.md, "Row kernels") against PyTorch.

Builds two ONNX models, compiles each for `--target=cuda` (`--emit=gpu --remat=off`,
to check that the row kernels are there: `gpu.barrier` and `gpu.shuffle`
in the mapped IR, and at most how many launches) and `--target=cuda-emulate` (the
mapped kernels run on the CPU with their barriers, shared memory and
shuffles), and runs the emulation with disc-run at many shapes against
PyTorch, with measured peak == predicted:

  softmax_norm: rows R and row length D both dynamic: Softmax, the row
    mean's centering, a squared row max normalisation (three reductions of
    different combiners) -> row lengths 1, 31, 32, 33, 100, 257, 1000 cover
    one partial warp, whole warps, several strides per thread;
  layer_norm: LayerNormalization over 768 features (a GPT-2 width: 64
    threads, twelve strided elements each), rows dynamic.

Exit 0 when every case matches (rtol 1e-4, atol 1e-5), 1 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper


def softmax_norm_model(path):
    nodes = [
        helper.make_node("Softmax", ["x"], ["z"], axis=-1),
        helper.make_node("ReduceMean", ["x"], ["m"], axes=[-1], keepdims=1),
        helper.make_node("Sub", ["x", "m"], ["c"]),
        helper.make_node("Mul", ["c", "c"], ["c2"]),
        helper.make_node("ReduceMax", ["c2"], ["mx"], axes=[-1], keepdims=1),
        helper.make_node("Add", ["mx", "one"], ["mx1"]),
        helper.make_node("Div", ["c2", "mx1"], ["w"]),
    ]
    graph = helper.make_graph(
        nodes, "softmax_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["R", "D"])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["R", "D"]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, ["R", "D"])],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13)]), path)


def softmax_norm_ref(x):
    t = torch.from_numpy(x)
    z = torch.softmax(t, dim=-1)
    c2 = (t - t.mean(dim=-1, keepdim=True)) ** 2
    w = c2 / (c2.amax(dim=-1, keepdim=True) + 1.0)
    return {"z": z.numpy(), "w": w.numpy()}


FEATURES = 768


def layer_norm_model(path, scale, bias):
    graph = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"],
                          axis=-1, epsilon=1e-5)],
        "layer_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["B", "T", FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["B", "T", FEATURES])],
        [numpy_helper.from_array(scale, "s"),
         numpy_helper.from_array(bias, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), path)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    compile_bin = os.path.join(args.bin_dir, "disc-compile")
    run_bin = os.path.join(args.bin_dir, "disc-run")
    rng = np.random.default_rng(7)
    scale = rng.standard_normal(FEATURES).astype(np.float32)
    bias = rng.standard_normal(FEATURES).astype(np.float32)

    cases = {
        "softmax_norm": (softmax_norm_model, softmax_norm_ref,
                         [(5, 1), (3, 31), (4, 32), (2, 33), (3, 100),
                          (2, 257), (2, 1000), (70, 65)],
                         # softmax max+exp, sum+div, mean+centering, max,
                         # normalisation: a deallocation followed by an
                         # allocation ends each run.
                         5),
        "layer_norm": (lambda p: layer_norm_model(p, scale, bias),
                       lambda x: {"y": torch.nn.functional.layer_norm(
                           torch.from_numpy(x), (FEATURES,),
                           torch.from_numpy(scale), torch.from_numpy(bias),
                           1e-5).numpy()},
                       [(1, 1, FEATURES), (2, 7, FEATURES),
                        (3, 33, FEATURES)],
                       # mean + centering, variance + normalisation.
                       2),
    }
    failed = 0
    for name, (build, ref, shapes, max_launches) in cases.items():
        onnx_path = os.path.join(args.work_dir, name + ".onnx")
        build(onnx_path)
        gpu_ir = os.path.join(args.work_dir, name + ".gpu.mlir")
        # Without rematerialization candidates: the regeneration branches
        # (not run without a memory limit) would add launches to the IR.
        r = run([compile_bin, onnx_path, "--target=cuda", "--emit=gpu",
                 "--remat=off", "-o", gpu_ir])
        if r.returncode != 0:
            print(f"FAIL {name}: --emit=gpu: {r.stderr.strip()}")
            failed += 1
            continue
        ir = open(gpu_ir).read()
        launches = len(re.findall(r"gpu\.launch ", ir))
        barriers = ir.count("gpu.barrier")
        shuffles = len(re.findall(r"gpu\.shuffle\s+xor", ir))
        ok = barriers > 0 and shuffles > 0 and launches <= max_launches
        print(f"{'ok' if ok else 'FAIL'} {name}: {launches} launches "
              f"(at most {max_launches}), {barriers} barriers, "
              f"{shuffles} shuffles")
        failed += not ok
        so = os.path.join(args.work_dir, name + ".emulate.so")
        r = run([compile_bin, onnx_path, "--target=cuda-emulate", "-o", so])
        if r.returncode != 0:
            print(f"FAIL {name}: --target=cuda-emulate: {r.stderr.strip()}")
            failed += 1
            continue
        for shape in shapes:
            x = (rng.standard_normal(shape) * 3).astype(np.float32)
            tag = "x".join(map(str, shape))
            xin = os.path.join(args.work_dir, f"{name}.{tag}.x.npy")
            np.save(xin, x)
            cmd = [run_bin, so, "--input", f"x={xin}", "--rtol", "1e-4",
                   "--atol", "1e-5"]
            for out, value in ref(x).items():
                path = os.path.join(args.work_dir, f"{name}.{tag}.{out}.npy")
                np.save(path, value.astype(np.float32))
                cmd += ["--compare", f"{out}={path}"]
            r = run(cmd)
            text = r.stdout + r.stderr
            m = re.search(r"peak_bytes: (\d+)\s+predicted_peak_bytes: (\d+)",
                          text)
            exact = m is not None and m.group(1) == m.group(2)
            errs = re.findall(r"max_abs_err=([0-9.e+-]+)", text)
            ok = r.returncode == 0 and exact
            print(f"{'ok' if ok else 'FAIL'} {name} {tag}: max abs err "
                  f"{', '.join(errs) or '-'}; peak "
                  f"{m.group(1) + ' == ' + m.group(2) if m else 'missing'}")
            if not ok:
                print(text.strip())
                failed += 1
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

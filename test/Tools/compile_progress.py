#!/usr/bin/python3
"""disc-compile's progress line (docs/cli.md, "Progress"): on a terminal a
compile prints one line rewritten in place ("\\r", erase to the end of the
line) naming the phase and, in code generation, the kernels compiled out of
the total, and erases it at the end; with stderr not a terminal it prints
nothing extra.

Builds an ONNX model of about NODES nodes (onnx.helper): a chain of blocks
MatMul -> Add -> Tanh -> ReduceMean -> Sub, each block its own kernels.

  1. stderr a pipe: the compile succeeds and stderr is empty (no "\\r", no
     progress text), and the model runs (disc-run) and matches NumPy;
  2. stderr a terminal (util-linux `script` gives the compile a
     pseudo-terminal; DISC_COMPILE_PROGRESS_DELAY=0 shows the line at once
     instead of after 2 s): the output has the progress line with a pass
     name and "K/N kernels compiled" for the code generation (N the number
     of distinct kernels, as --report-codegen counts them: the identical
     blocks share theirs), rewritten with "\\r", and ends by erasing it
     ("\\r\\033[K").

    test/Tools/compile_progress.py --bin-dir build/bin --work-dir /tmp/p

Exit 0 when every check holds, 1 otherwise.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np


def fail(msg):
    print("FAILED: " + msg)
    sys.exit(1)


def build_model(path, blocks, width, seed=7):
    """A chain of `blocks` blocks of 5 nodes; returns the weights."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits, weights = [], [], []
    x = "x"
    for b in range(blocks):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        c = rng.standard_normal(width).astype(np.float32) * 0.1
        weights.append((w, c))
        inits += [numpy_helper.from_array(w, f"w{b}"),
                  numpy_helper.from_array(c, f"c{b}")]
        nodes += [
            helper.make_node("MatMul", [x, f"w{b}"], [f"m{b}"], name=f"matmul{b}"),
            helper.make_node("Add", [f"m{b}", f"c{b}"], [f"a{b}"], name=f"add{b}"),
            helper.make_node("Tanh", [f"a{b}"], [f"t{b}"], name=f"tanh{b}"),
            helper.make_node("ReduceMean", [f"t{b}"], [f"r{b}"], name=f"mean{b}",
                             axes=[-1], keepdims=1),
            helper.make_node("Sub", [f"t{b}", f"r{b}"], [f"s{b}"], name=f"sub{b}"),
        ]
        x = f"s{b}"
    nodes.append(helper.make_node("Identity", [x], ["y"], name="out"))
    graph = helper.make_graph(
        nodes, "progress_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", width])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return weights


def reference(x, weights):
    for w, c in weights:
        t = np.tanh(x @ w + c)
        x = t - t.mean(axis=-1, keepdims=True)
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--nodes", type=int, default=1000)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    compile_bin = os.path.join(args.bin_dir, "disc-compile")
    onnx_path = os.path.join(args.work_dir, "chain.onnx")
    blocks = max(1, args.nodes // 5)
    weights = build_model(onnx_path, blocks, width=16)
    so = os.path.join(args.work_dir, "chain.so")

    # 1. Not a terminal: nothing extra on stderr.
    t0 = time.time()
    r = subprocess.run([compile_bin, onnx_path, "-o", so],
                       stdin=subprocess.DEVNULL, capture_output=True)
    seconds = time.time() - t0
    if r.returncode != 0:
        fail("disc-compile failed:\n" + r.stderr.decode(errors="replace"))
    if r.stderr:
        fail(f"stderr not a terminal, yet disc-compile wrote {r.stderr[:200]!r}")
    print(f"{blocks * 5 + 1} nodes: compiled in {seconds:.1f} s, stderr empty")
    x = np.random.default_rng(1).standard_normal((3, 16)).astype(np.float32)
    np.save(os.path.join(args.work_dir, "x.npy"), x)
    np.save(os.path.join(args.work_dir, "y.npy"), reference(x, weights))
    r = subprocess.run([os.path.join(args.bin_dir, "disc-run"), so,
                        "--input", "x=" + os.path.join(args.work_dir, "x.npy"),
                        "--compare", "y=" + os.path.join(args.work_dir, "y.npy")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("disc-run of the chain failed:\n" + r.stdout + r.stderr)

    # 2. A terminal (script's pseudo-terminal).
    script = shutil.which("script")
    if not script:
        fail("util-linux 'script' not found (needed for the terminal case)")
    so2 = os.path.join(args.work_dir, "chain.tty.so")
    cmd = " ".join(shlex.quote(a) for a in [compile_bin, onnx_path, "-o", so2,
                                            "--report-codegen"])
    env = dict(os.environ, DISC_COMPILE_PROGRESS_DELAY="0", TERM="xterm")
    r = subprocess.run([script, "-qec", cmd, "/dev/null"], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True)
    out = r.stdout.decode(errors="replace")
    if r.returncode != 0:
        fail(f"disc-compile on a terminal failed ({r.returncode}):\n{out}")
    if "\rdisc-compile: " not in out:
        fail(f"no progress line on a terminal: {out[:300]!r}")
    if not re.search(r"disc-compile: pass [a-z][a-z0-9-]+", out):
        fail(f"the progress line names no pass: {out[:300]!r}")
    m = re.findall(r"code generation (\d+)/(\d+) kernels compiled", out)
    if not m:
        fail(f"the progress line shows no kernel count: {out[-300:]!r}")
    # The blocks are identical, so they share their kernels
    # (disc-dedupe-kernels): the total is the number of distinct kernels,
    # which --report-codegen counts.
    report = re.findall(r"codegen: (\d+) loop-nest kernels", out)
    if len(report) != 1:
        fail(f"--report-codegen gave no kernel count: {out[-300:]!r}")
    totals = {int(t) for _, t in m}
    if totals != {int(report[0])} or int(report[0]) < 1:
        fail(f"kernel totals {sorted(totals)}, expected the "
             f"{report[0]} kernels of --report-codegen")
    if not out.endswith("\r\x1b[K"):
        fail(f"the progress line is not erased at the end: {out[-80:]!r}")
    print(f"terminal: {out.count(chr(13))} line rewrites, last "
          f"{m[-1][0]}/{m[-1][1]} kernels compiled, line erased at the end")
    print("PASSED")


if __name__ == "__main__":
    main()

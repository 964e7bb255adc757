#!/usr/bin/python3
"""End-to-end check of examples/train_cpp (ctest e2e-train-cpp): a training
loop in one session of the installed runtime, at a new sequence length
every step, against PyTorch autograd and torch.optim.SGD in float64.

  1. Installs the runtime component of BUILD_DIR into WORK/runtime and
     builds the installed copy of examples/train_cpp against it
     (find_package(DiscRuntime), -Wall -Wextra -Werror).
  2. Exports the Llama decoder of examples/models/train_models.py (forward +
     loss) and compiles one SGD training step with `disc-compile --train`.
  3. Runs train_cpp for 3 steps at lengths 16, 33, 64 (batch 2) with
     --dump-batches and --save-params; replays the dumped batches in
     PyTorch: the loss of every step matches (rtol 1e-3, atol 1e-5), and
     so does every parameter after the 3 steps, and the last update
     (test/e2e/train_step.py's comparison).
  4. The same under --memory-limit 70% (of the longest step's predicted
     peak; the step's minimum is about 57% of it at T=64): the longest step
     evicts, the peak stays within the limit, the
     losses and parameters equal the unlimited run's.
  5. Errors: a limit no step can hold exits 3, a bad --lengths exits 2,
     both before the first step.

    /usr/bin/python3 test/e2e/train_cpp.py --build-dir build \
        --source-dir . --work-dir build/test/e2e/train_cpp

Exit codes: 0 pass, 1 a check failed, 2 bad usage or a tool failed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "models"))
import train_models  # noqa: E402
import train_step  # noqa: E402

LENGTHS = [16, 33, 64]
BATCH = 2
LR = 0.1
SEED = 7
# The memory limit of check 4, in percent of the longest step's prediction.
LIMIT_PERCENT = 70


def run(cmd, env=None, expect_rc=0):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    if r.returncode != expect_rc:
        print(f"`{' '.join(cmd)}` exited with {r.returncode} "
              f"(expected {expect_rc}):\n{r.stdout}")
        sys.exit(2 if expect_rc == 0 else 1)
    return r.stdout


def clean_env():
    """The environment without variables that could point the example's
    build or the loader at the build tree."""
    env = dict(os.environ)
    for var in ["CMAKE_PREFIX_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH",
                "CPATH", "CPLUS_INCLUDE_PATH", "DiscRuntime_DIR",
                "DiscRuntime_ROOT"]:
        env.pop(var, None)
    return env


STEP_RE = re.compile(r"^step (\d+): T=(\d+) loss=(\S+) time_ms=\S+ "
                     r"peak_bytes=(\d+) predicted_peak_bytes=(-?\d+) "
                     r"evictions=(\d+)$", re.M)


def parse_steps(text):
    steps = [dict(step=int(m.group(1)), T=int(m.group(2)),
                  loss=float(m.group(3)), peak=int(m.group(4)),
                  predicted=int(m.group(5)), evictions=int(m.group(6)))
             for m in STEP_RE.finditer(text)]
    if len(steps) != len(LENGTHS) or "total: steps=" not in text:
        print(f"train_cpp printed {len(steps)} step lines, expected "
              f"{len(LENGTHS)}, and a total:\n{text}")
        sys.exit(1)
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    build = os.path.realpath(args.build_dir)
    work = os.path.realpath(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = clean_env()
    failures = []

    # 1. The example against the installed runtime only.
    rt = os.path.join(work, "runtime")
    run(["cmake", "--install", build, "--prefix", rt, "--component",
         "runtime"])
    example = os.path.join(rt, "share", "doc", "disc", "examples",
                           "train_cpp")
    exe_build = os.path.join(work, "train_cpp.build")
    run(["cmake", "-G", "Ninja", "-S", example, "-B", exe_build,
         "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + rt,
         "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror",
         "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF",
         "-DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF"], env=env)
    run(["cmake", "--build", exe_build], env=env)
    train_cpp = os.path.join(exe_build, "train_cpp")

    # 2. One SGD step of the Llama decoder.
    onnx_path = os.path.join(work, "llama.train.onnx")
    train_models.export("llama", onnx_path)
    so = os.path.join(work, "llama.sgd.so")
    run([os.path.join(build, "bin", "disc-compile"), onnx_path, "-o", so,
         "--train", "--loss", "loss", "--optimizer", "sgd", "--lr",
         repr(LR)])

    # 3. 3 steps at 3 lengths in one session, replayed in PyTorch.
    base = [train_cpp, so, "--steps", str(len(LENGTHS)), "--batch",
            str(BATCH), "--lengths", ",".join(map(str, LENGTHS)),
            "--seed", str(SEED), "--threads", "1"]
    batches = os.path.join(work, "batches")
    params = os.path.join(work, "params")
    out = run(base + ["--dump-batches", batches, "--save-params", params],
              env=env)
    print(out, end="")
    steps = parse_steps(out)

    import torch
    spec = train_models.MODELS["llama"]
    model = spec["build"]().double()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    before = None
    for k, (st, t) in enumerate(zip(steps, LENGTHS)):
        feed = {n: np.load(os.path.join(batches, f"step{k + 1}.{n}.npy"))
                for n in spec["inputs"]}
        if st["T"] != t or any(v.shape != (BATCH, t) for v in feed.values()):
            failures.append(f"step {k + 1}: T={st['T']}, batches "
                            f"{[v.shape for v in feed.values()]}, expected "
                            f"[{BATCH}, {t}]")
            continue
        if not np.array_equal(feed["targets"][:, :-1], feed["tokens"][:, 1:]):
            failures.append(f"step {k + 1}: targets are not the tokens "
                            "shifted by one")
        before = {n: p.detach().numpy().copy()
                  for n, p in model.named_parameters()}
        opt.zero_grad()
        loss = train_models.loss_of(
            model(*[torch.from_numpy(feed[n]) for n in spec["inputs"]]))
        loss.backward()
        opt.step()
        ref = float(loss)
        print(f"step {k + 1} (T={t}): loss {st['loss']:.6f} "
              f"(PyTorch {ref:.6f})")
        if not np.isclose(st["loss"], ref, rtol=1e-3, atol=1e-5):
            failures.append(f"step {k + 1}: loss {st['loss']} != PyTorch's "
                            f"{ref}")
        if st["predicted"] >= 0 and st["peak"] > st["predicted"]:
            failures.append(f"step {k + 1}: peak {st['peak']} above the "
                            f"prediction {st['predicted']}")
    if before is not None:
        failures += train_step.compare(
            f"parameters after {len(LENGTHS)} steps", params, model, before,
            types.SimpleNamespace(update_tol=2e-3))

    # 4. Under a memory limit: evictions, the same numbers.
    limited = os.path.join(work, "params.limited")
    out = run(base + ["--memory-limit", f"{LIMIT_PERCENT}%",
                      "--save-params", limited],
              env=env)
    print(out, end="")
    m = re.search(r"^memory limit: (\d+) bytes", out, re.M)
    if not m:
        failures.append(f"--memory-limit {LIMIT_PERCENT}%: no 'memory "
                        "limit:' line")
    limit = int(m.group(1)) if m else 0
    longest = max(steps, key=lambda s: s["T"])
    if longest["predicted"] > 0 and \
            abs(limit - longest["predicted"] * LIMIT_PERCENT // 100) > 1:
        failures.append(f"--memory-limit {LIMIT_PERCENT}%: limit {limit}, "
                        f"expected {LIMIT_PERCENT}% "
                        f"of the longest step's prediction "
                        f"{longest['predicted']}")
    for st, lim in zip(steps, parse_steps(out)):
        if lim["peak"] > limit:
            failures.append(f"limited step {lim['step']}: peak {lim['peak']} "
                            f"above the limit {limit}")
        if lim["loss"] != st["loss"]:
            failures.append(f"limited step {lim['step']}: loss {lim['loss']} "
                            f"!= {st['loss']} without a limit")
        if st is longest and lim["evictions"] == 0:
            failures.append(f"limited step {lim['step']} (T={lim['T']}): no "
                            f"evictions at {LIMIT_PERCENT}% of its "
                            "predicted peak")
    for name in os.listdir(params):
        a = np.load(os.path.join(params, name))
        b = np.load(os.path.join(limited, name))
        if not np.array_equal(a, b):
            failures.append(f"{name} under the limit differs by "
                            f"{np.abs(a - b).max():.3g}")

    # 5. Errors before the first step.
    out = run(base + ["--memory-limit", "1%"], env=env, expect_rc=3)
    if "cannot be held" not in out or "step 1:" in out:
        failures.append(f"--memory-limit 1%: unexpected output:\n{out}")
    out = run(base[:-6] + ["--lengths", "16,0"], env=env, expect_rc=2)
    if "bad --lengths" not in out:
        failures.append(f"--lengths 16,0: unexpected output:\n{out}")

    for f in failures:
        print("FAIL:", f)
    print(f"train_cpp: {'FAIL' if failures else 'PASS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

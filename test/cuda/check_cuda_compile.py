#!/usr/bin/python3
"""CUDA target without a GPU (docs/cuda.md): models compile for each GPU
architecture, ptxas accepts every kernel, and a CUDA model.so on a machine
without a device is a clear error.

For each ONNX model and each --gpu-arch: `disc-compile --target=cuda` must
either succeed (every kernel went through ptxas into a cubin embedded in
model.so) or, for models listed with --allow-unsupported, exit 2 with
"not supported on --target=cuda yet" naming an ONNX node. Anything else
(a crash, exit 1, a cubin missing) fails. Then `disc-run` on the first
compiled model must exit 2 with "no CUDA device" when the driver reports
none (on a machine with a GPU this check is skipped: scripts/gpu-check.sh
runs the models there).

    /usr/bin/python3 test/cuda/check_cuda_compile.py --bin-dir build/bin \
        --work-dir build/test/cuda MODEL.onnx ...

Prints one line per model and arch and "N compiled, M unsupported, K failed".
Exit codes: 0 no failure, 1 some failure, 2 bad usage, 77 no CUDA
toolkit (ctest reports the test as skipped).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time


def has_device():
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                           text=True, timeout=30)
        return r.returncode == 0 and "GPU" in r.stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


def host_libc_allocations(compile_cmd):
    """The C library allocation functions that the host LLVM IR of the
    model (`--emit=llvm`) calls; [] when it calls none."""
    out = list(compile_cmd)
    i = out.index("-o")
    out[i + 1] = out[i + 1] + ".ll"
    r = subprocess.run(out + ["--emit=llvm"], capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0:
        return ["(--emit=llvm failed: exit %d)" % r.returncode]
    with open(out[i + 1]) as f:
        ir = f.read()
    return sorted(set(re.findall(
        r"call [^@\n]*@(malloc|free|calloc|aligned_alloc|realloc)\(", ir)))


def peak_cases(model, manifest):
    """disc-run --input argument lists, one per shape: a node model's
    stored test cases, or the cases of an e2e model's export manifest."""
    if manifest:
        with open(manifest) as f:
            man = json.load(f)
        work = os.path.dirname(os.path.abspath(manifest))
        return [(c["name"], [f"{n}={os.path.join(work, rel)}"
                             for n, rel in c["inputs"].items()])
                for c in man["cases"]]
    cases = []
    for d in sorted(glob.glob(os.path.join(os.path.dirname(model),
                                           "test_data_set_*"))):
        files = sorted(glob.glob(os.path.join(d, "input_*.pb")))
        cases.append((os.path.basename(d), [
            f"#{os.path.basename(f)[6:-3]}={f}" for f in files]))
    return cases


def run_with_report(cmd, report, env):
    """Runs disc-run `cmd` (which writes --report `report`); returns the
    completed process and the report ({} when there is none)."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=env)
    try:
        with open(report) as f:
            return r, json.load(f)
    except (OSError, ValueError):
        return r, {}


def check_peaks(run_bin, so, cases, driver, exact=True):
    """Runs the CUDA model.so's host code on the substitute driver
    (kernels skipped: no GPU needed; the substitute cuBLAS and cuDNN beside
    it) at each case and returns the failures: the run must succeed and,
    with `exact`, the measured peak device bytes must equal the
    prediction."""
    fixtures = os.path.dirname(os.path.abspath(driver))
    env = dict(os.environ, DISC_CUDA_DRIVER=driver, FAKE_CUDA_SKIP_KERNELS="1",
               DISC_CUBLAS_LIBRARY=os.path.join(fixtures, "fake_libcublas.so"),
               DISC_CUDNN_LIBRARY=os.path.join(fixtures, "fake_libcudnn.so"))
    bad = []
    for name, inputs in cases:
        # Per model: the e2e tests share the work dir and run in parallel.
        report = so + ".peak.json"
        if os.path.exists(report):
            os.remove(report)
        cmd = [run_bin, so, "--report", report]
        for i in inputs:
            cmd += ["--input", i]
        r, rep = run_with_report(cmd, report, env)
        peak, pred = rep.get("peak_bytes"), rep.get("predicted_peak_bytes")
        if r.returncode == 0 and peak is not None and pred is None:
            continue  # Not predictable from input shapes (--emit=memory says why).
        if r.returncode != 0 or peak is None or (exact and peak != pred):
            bad.append(f"{name}: exit {r.returncode}, peak {peak} B, "
                       f"predicted {pred} B {r.stderr.strip()[:200]}")
            continue
        if exact:
            continue
        # cuBLAS/cuDNN workspaces are not predicted (taken only where the
        # allocator grants them): without a limit the peak may be above the
        # prediction, but a limit of the predicted peak must hold.
        os.remove(report)
        r, rep = run_with_report(cmd + ["--memory-limit", "100%"], report, env)
        peak, limit = rep.get("peak_bytes"), rep.get("memory_limit_bytes")
        if r.returncode != 0 or peak is None or not limit or peak > limit:
            bad.append(f"{name} --memory-limit 100%: exit {r.returncode}, "
                       f"peak {peak} B, limit {limit} B "
                       f"{r.stderr.strip()[:200]}")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--arch", action="append", default=None,
                    help="GPU architecture (repeatable; default sm_80, sm_90)")
    ap.add_argument("--allow-unsupported", action="append", default=[],
                    help="model stem that may be rejected as unsupported")
    ap.add_argument("--expect-library-calls", action="append", default=[],
                    help="model stem whose MatMul/Gemm/Conv must all become "
                    "cuBLAS/cuDNN calls (--report-codegen)")
    ap.add_argument("--force-dynamic", action="store_true",
                    help="compile with --force-dynamic (every dim dynamic)")
    ap.add_argument("--fake-driver",
                    help="substitute libcuda: also run each model's host code "
                    "at its shapes and check measured peak == predicted")
    ap.add_argument("--manifest", help="e2e export manifest (MODEL.json) "
                    "giving the shapes of --fake-driver runs")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args(argv)
    archs = args.arch or ["sm_80", "sm_90"]
    toolkit = os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    if not (os.path.exists(os.path.join(toolkit, "bin", "ptxas")) or
            shutil.which("ptxas")):
        print(f"SKIP: no CUDA toolkit (no ptxas in {toolkit}/bin or on PATH)")
        return 77
    os.makedirs(args.work_dir, exist_ok=True)
    compile_bin = os.path.join(args.bin_dir, "disc-compile")
    run_bin = os.path.join(args.bin_dir, "disc-run")
    compiled, unsupported, failed = 0, 0, 0
    first_so = None
    for model in args.models:
        stem = os.path.basename(os.path.dirname(model)) \
            if os.path.basename(model) == "model.onnx" \
            else os.path.splitext(os.path.basename(model))[0]
        for arch in archs:
            out = os.path.join(args.work_dir, f"{stem}.{arch}.so")
            cmd = [compile_bin, model, "--target=cuda", f"--gpu-arch={arch}",
                   "--report-codegen", "-o", out]
            if args.force_dynamic:
                cmd.append("--force-dynamic")
            t0 = time.monotonic()
            r = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=900)
            seconds = time.monotonic() - t0
            msg = (r.stderr or "").strip().splitlines()
            # "library calls: B cuBLAS, D cuDNN, L MatMul/Conv as generated
            # loops" (--report-codegen on --target=cuda).
            lib = re.search(r"^library calls: (\d+) cuBLAS, (\d+) cuDNN, "
                            r"(\d+) MatMul/Conv", r.stderr or "", re.M)
            calls = int(lib.group(1)) + int(lib.group(2)) if lib else 0
            loops = int(lib.group(3)) if lib else 0
            if r.returncode == 0 and stem in args.expect_library_calls and \
                    (calls == 0 or loops > 0):
                failed += 1
                print(f"FAIL {stem} {arch}: expected library calls only, "
                      f"got {lib.group(0) if lib else 'no report'}")
                continue
            if r.returncode == 0:
                # Every kernel is a cubin (ELF) in model.so's read-only data.
                nm = subprocess.run(["nm", out], capture_output=True,
                                    text=True)
                kernels = len(re.findall(r" r \S+_binary$", nm.stdout, re.M))
                with open(out, "rb") as f:
                    elves = f.read().count(b"\x7fELF") - 1
                # A model of library calls only has no kernel.
                if (kernels == 0 and calls == 0) or elves < kernels:
                    failed += 1
                    print(f"FAIL {stem} {arch}: {kernels} kernels, "
                          f"{elves} cubins in {out}")
                    continue
                # Host code allocates only through the session's (device)
                # allocator, never with the C library's malloc: a kernel
                # handed a host buffer faults on the GPU (CUresult 700),
                # which no check without a device would otherwise see.
                if arch == archs[0]:
                    bad = host_libc_allocations(cmd)
                    if bad:
                        failed += 1
                        print(f"FAIL {stem} {arch}: host code calls "
                              f"{', '.join(bad)} instead of the session "
                              "allocator")
                        continue
                if args.fake_driver and arch == archs[0]:
                    bad = check_peaks(run_bin, out,
                                      peak_cases(model, args.manifest),
                                      args.fake_driver, exact=calls == 0)
                    if bad:
                        failed += 1
                        print(f"FAIL {stem} {arch}: peak != predicted: "
                              + "; ".join(bad))
                        continue
                compiled += 1
                first_so = first_so or out
                print(f"OK   {stem} {arch}: {kernels} kernels, "
                      f"ptxas accepted all ({seconds:.1f} s), {calls} "
                      "library calls" +
                      ((", measured peak == predicted" if calls == 0 else
                        ", host code ran (peak not compared: library "
                        "workspaces are not predicted yet)")
                       if args.fake_driver and arch == archs[0] else ""))
            elif (r.returncode == 2 and stem in args.allow_unsupported and
                  any("not supported on --target=cuda yet" in m and
                      "ONNX node '" in m for m in msg)):
                unsupported += 1
                first = next(m for m in msg if "not supported" in m)
                print(f"UNSUPPORTED {stem} {arch}: "
                      f"{first.split('error: ', 1)[-1]}")
            else:
                failed += 1
                print(f"FAIL {stem} {arch}: exit {r.returncode}: "
                      f"{' | '.join(msg[:3])}")
    if first_so and not has_device():
        r = subprocess.run([run_bin, first_so], capture_output=True,
                           text=True, timeout=120)
        text = r.stdout + r.stderr
        if r.returncode == 2 and "no CUDA device" in text:
            print(f"OK   disc-run {os.path.basename(first_so)}: exit 2, "
                  "no CUDA device")
        else:
            failed += 1
            print(f"FAIL disc-run {first_so}: exit {r.returncode}: "
                  f"{text.strip()[:300]}")
    print(f"{compiled} compiled, {unsupported} unsupported, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

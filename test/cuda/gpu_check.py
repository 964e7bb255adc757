#!/usr/bin/python3
"""GPU checks of the CUDA target (docs/cuda.md), in two steps.

prepare: on any machine with a DISC build (no GPU needed), compile the
    checked models for one GPU architecture and gather everything a run
    needs into one folder: disc-run, the runtime and the libraries they
    load (not glibc, libstdc++ or the CUDA driver), the model.so files, the
    inputs and the reference outputs, and cases.json.
run: on a machine with an NVIDIA GPU and its driver, run every case of a
    prepared folder with disc-run, compare with the references, print one
    line per case, the memory-limit table, and `N passed, M failed`.

The cases:
- ONNX node models (stored test cases of the ONNX backend suite), compiled
  once with every dim dynamic and run at each stored test case
  (rtol 1e-4, atol 1e-5);
- the e2e demo models (examples/models, PyTorch references), compiled once
  and run at every e2e shape (rtol 1e-3, atol 1e-4), each run reporting
  measured against predicted peak device bytes;
- the memory-limit table: each e2e model at its largest shape under
  100%, 80% and 60% of its predicted peak, once evicting by recompute and
  once by offload to host memory (limit, measured peak, evictions,
  offloads, recomputes, slowdown against the unlimited run), outputs
  still compared with the references. A limit below the lowest reachable
  peak exits 3 before running, which the table shows; it is not a
  failure.

A model that does not compile for CUDA is one failed case ("compile"), so
the counts stay honest.

After the cases, the roofline table (docs/cuda.md, "Roofline"): each e2e
model at each shape, its measured latency against the sum of its kernels'
and library calls' roofline times at the H200's peaks (--peak-bandwidth,
--peak-flops), evaluated from the signature's bytes and FLOPs expressions
(test/cuda/roofline.py, copied into the folder: only python3 is needed),
the bandwidth the run achieved (the kernels' bytes over the latency) as a
percentage of the peak, the device time of the kernels and of the
library calls in a traced run (CUDA events around every launch and call,
docs/cuda.md "Kernel times") against the roofline, and the launches per
run (the signature's kernels that run; with `prepare --fake-driver`,
also the launches and syncs the substitute driver counted,
test/cuda/count_launches.py). It is printed as markdown and written to
DIR/roofline.json. The e2e models also run at larger shapes (roofline
cases, random inputs, not compared).

The bandwidth cases: LayerNorm, Softmax, SiLU and bias + GELU over x
[32768, 1024] f32 (one fused kernel each), run traced; per kernel its
bytes over its device time as a percentage of the peak bandwidth
(DIR/bandwidth.json).

    test/cuda/gpu_check.py prepare --bin-dir build/bin \\
        --e2e-dir build/test/e2e/models --out build/gpu-check --arch sm_90
    test/cuda/gpu_check.py run build/gpu-check

Exit codes: 0 every case passed, 1 some failed, 2 bad usage, no GPU, or a
failed preparation.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NODE_DATA = "/usr/share/libonnx-testdata/data/node"

# Node models: elementwise, broadcast, reductions, softmax, normalization,
# data movement, and the ops that become library calls where the target
# has them (MatMul, Gemm, Conv).
NODE_TESTS = [
    "test_add", "test_add_bcast", "test_mul_bcast", "test_exp", "test_relu",
    "test_sigmoid", "test_tanh", "test_erf", "test_pow", "test_where_example",
    "test_softmax_axis_1", "test_logsoftmax_axis_1",
    "test_layer_normalization_3d_axis2_epsilon",
    "test_reduce_sum_default_axes_keepdims_example",
    "test_reduce_mean_default_axes_keepdims_example",
    "test_reduce_max_default_axes_keepdim_example",
    "test_transpose_all_permutations_3", "test_concat_3d_axis_1",
    "test_slice", "test_gather_0", "test_gather_1", "test_expand_dim_changed",
    "test_cast_FLOAT_to_DOUBLE",
    "test_matmul_2d", "test_matmul_3d", "test_matmul_4d",
    "test_gemm_default_no_bias", "test_gemm_all_attributes",
    "test_gemm_transposeA", "test_gemm_transposeB", "test_gemm_alpha",
    "test_gemm_beta", "test_gemm_default_matrix_bias",
    "test_gemm_default_scalar_bias", "test_gemm_default_vector_bias",
    "test_gemm_default_single_elem_vector_bias", "test_gemm_default_zero_bias",
    "test_conv_with_strides_padding", "test_basic_conv_with_padding",
    "test_basic_conv_without_padding", "test_conv_with_strides_no_padding",
    "test_conv_with_strides_and_asymmetric_padding",
    "test_conv_with_autopad_same", "test_convtranspose",
    "test_convtranspose_1d", "test_convtranspose_3d",
    "test_convtranspose_dilations", "test_convtranspose_pads",
    "test_maxpool_2d_pads", "test_averagepool_2d_pads",
    "test_batchnorm_example", "test_globalaveragepool",
]

E2E_MODELS = ["resnet18", "transformer", "gpt_decoder", "mobilenet_v2",
              "unet", "shufflenet_v2", "gpt_train_step"]
LIMITS = [100, 80, 60]

# Bandwidth cases (issue: fused LayerNorm/Softmax/elementwise kernels at
# >= 64 MB): one-op models over x [rows, 1024] f32 with rows dynamic, run
# at 32768 rows (128 MiB in, 128 MiB out); each should be one kernel.
BANDWIDTH_ROWS, BANDWIDTH_COLS = 32768, 1024
BANDWIDTH_MODELS = ["layernorm", "softmax", "silu", "bias_gelu"]
BANDWIDTH_RUNS = 5
# The alternatives compiled beside each bandwidth model (disc-compile
# flags; the defaults are 16 row elements and 4 elementwise elements per
# thread, docs/cuda.md).
BANDWIDTH_VARIANTS = {
    "layernorm": [["--gpu-row-elements-per-thread=1"],
                  ["--gpu-row-elements-per-thread=4"]],
    "softmax": [["--gpu-row-elements-per-thread=1"],
                ["--gpu-row-elements-per-thread=4"]],
    "silu": [["--gpu-elements-per-thread=1"]],
    "bias_gelu": [["--gpu-elements-per-thread=1"]],
}

# Roofline cases: e2e models at shapes larger than the e2e ones (random
# inputs, not compared), where the kernels, not the launches, take the time.
ROOFLINE_SHAPES = {"resnet18": [32, 3, 224, 224], "transformer": [64, 77],
                   "gpt_decoder": [64, 77], "mobilenet_v2": [32, 3, 224, 224]}

SYSTEM_LIBS = ("libc.so", "libm.so", "libdl.so", "librt.so", "libpthread.so",
               "ld-linux", "libstdc++.so", "libgcc_s.so", "linux-vdso",
               "libcuda.so")


def log(msg):
    print(msg, flush=True)


def copy_runtime(bin_dir, out):
    """disc-run and the shared libraries it loads, except the system's."""
    os.makedirs(os.path.join(out, "bin"), exist_ok=True)
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    exe = os.path.join(bin_dir, "disc-run")
    shutil.copy2(exe, os.path.join(out, "bin", "disc-run"))
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True,
                         check=True).stdout
    for line in ldd.splitlines():
        parts = line.split("=>")
        if len(parts) != 2:
            continue
        name = parts[0].strip()
        path = parts[1].split("(")[0].strip()
        if not path or any(name.startswith(s) for s in SYSTEM_LIBS):
            continue
        shutil.copy2(os.path.realpath(path), os.path.join(out, "lib", name))


def compile_model(bin_dir, onnx, so, arch, extra, timeout=900):
    """Returns (ok, seconds, message)."""
    cmd = [os.path.join(bin_dir, "disc-compile"), onnx, "-o", so,
           "--target=cuda", f"--gpu-arch={arch}"] + extra
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, time.time() - t0, "compile timed out"
    secs = time.time() - t0
    if p.returncode != 0 or not os.path.exists(so):
        msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
        return False, secs, msg
    return True, secs, ""


def bandwidth_model(kind, path):
    """Writes the ONNX model of bandwidth case `kind`: x [rows, 1024] f32
    (rows dynamic) to y of the same shape."""
    import numpy as np  # noqa: E402  (prepare only)
    from onnx import TensorProto, helper, numpy_helper, save  # noqa: E402
    cols = BANDWIDTH_COLS
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(
            np.asarray(value, dtype=np.float32), name))
        return name
    if kind == "layernorm":
        nodes.append(helper.make_node(
            "LayerNormalization",
            ["x", const("g", rng.standard_normal(cols)),
             const("b", rng.standard_normal(cols))], ["y"], axis=-1,
            epsilon=1e-5, name="LayerNorm"))
    elif kind == "softmax":
        nodes.append(helper.make_node("Softmax", ["x"], ["y"], axis=-1,
                                      name="Softmax"))
    elif kind == "silu":
        nodes += [helper.make_node("Sigmoid", ["x"], ["s"], name="Sigmoid"),
                  helper.make_node("Mul", ["x", "s"], ["y"], name="Mul")]
    elif kind == "bias_gelu":
        # Bias add then GELU as torch.onnx exports it: 0.5 x (1 + erf(x/√2)).
        nodes += [
            helper.make_node("Add", ["x", const("bias", rng.standard_normal(
                cols))], ["h"], name="BiasAdd"),
            helper.make_node("Div", ["h", const("sqrt2", 2 ** 0.5)], ["d"],
                             name="Div"),
            helper.make_node("Erf", ["d"], ["e"], name="Erf"),
            helper.make_node("Add", ["e", const("one", 1.0)], ["e1"],
                             name="Add"),
            helper.make_node("Mul", ["h", "e1"], ["m"], name="Mul"),
            helper.make_node("Mul", ["m", const("half", 0.5)], ["y"],
                             name="Mul_1")]
    else:
        raise ValueError(kind)
    graph = helper.make_graph(
        nodes, "bandwidth_" + kind,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["rows", cols])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["rows", cols])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         path)


def input_name(sig):
    return sig["inputs"][0]["name"]


def prepare(args):
    out = os.path.abspath(args.out)
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(os.path.join(out, "models"))
    os.makedirs(os.path.join(out, "data"))
    copy_runtime(args.bin_dir, out)
    # The roofline evaluation of the run step (python3 only).
    shutil.copy2(os.path.join(HERE, "roofline.py"),
                 os.path.join(out, "roofline.py"))
    sys.path.insert(0, HERE)
    import roofline  # noqa: E402
    cases = []

    def add_compile_failure(name, msg):
        cases.append({"name": name, "kind": "compile", "error": msg})

    def compile_with_signature(label, name, onnx_path, stem, extra):
        """Compiles `onnx_path` into models/STEM.so and writes its signature
        (kernels' bytes and FLOPs, for the roofline) beside it; returns
        (so, signature path), or None after logging and recording the
        failure as case `name`."""
        so = os.path.join(out, "models", stem + ".so")
        ok, secs, msg = compile_model(args.bin_dir, onnx_path, so, args.arch,
                                      extra)
        log(f"prepare: {label}: {'compiled' if ok else 'FAILED'} in "
            f"{secs:.1f} s" + ("" if ok else f": {msg}"))
        if not ok:
            add_compile_failure(name, msg)
            return None
        sig_path = os.path.join(out, "models", stem + ".signature.json")
        with open(sig_path, "w") as f:
            json.dump(roofline.load_signature(model=so), f)
        return so, sig_path

    for t in args.node_tests:
        src = os.path.join(NODE_DATA, t)
        if not os.path.isdir(src):
            log(f"prepare: {t}: not in {NODE_DATA}, skipped")
            continue
        so = os.path.join(out, "models", t + ".so")
        ok, secs, msg = compile_model(args.bin_dir,
                                      os.path.join(src, "model.onnx"), so,
                                      args.arch, ["--force-dynamic"])
        if not ok:  # Every dim dynamic failed: the model's own (static) dims.
            ok, secs, static_msg = compile_model(
                args.bin_dir, os.path.join(src, "model.onnx"), so, args.arch,
                [])
            msg = msg if not ok else f"static dims only ({msg})"
        log(f"prepare: {t}: {'compiled' if ok else 'FAILED'} in {secs:.1f} s"
            + (f": {msg}" if msg else ""))
        if not ok:
            add_compile_failure(t, msg)
            continue
        for d in sorted(os.listdir(src)):
            if not d.startswith("test_data_set_"):
                continue
            dst = os.path.join(out, "data", t, d)
            shutil.copytree(os.path.join(src, d), dst)
            run_args = []
            for f in sorted(os.listdir(dst)):
                stem, _ = os.path.splitext(f)
                kind, idx = stem.split("_", 1)
                rel = os.path.relpath(os.path.join(dst, f), out)
                flag = "--input" if kind == "input" else "--compare"
                run_args += [flag, f"#{idx}={rel}"]
            cases.append({"name": f"{t}/{d}", "kind": "node",
                          "model": os.path.relpath(so, out),
                          "args": run_args + ["--rtol", "1e-4",
                                              "--atol", "1e-5"]})

    if args.models:
        sys.path.insert(0, os.path.join(REPO, "test", "e2e"))
        import run_model  # noqa: E402  (ensure_exported)
        import disc_models  # noqa: E402
    for m in args.models:
        shapes = disc_models.MODELS[m]["default_shapes"]
        man = run_model.ensure_exported(m, args.e2e_dir, shapes, 1800)
        if man is None:
            log(f"prepare: {m}: export failed")
            return 2
        built = compile_with_signature(
            m, m, os.path.join(args.e2e_dir, man["onnx"]), m,
            args.compile_arg)
        if built is None:
            continue
        so, sig_path = built
        by_name = {c["name"]: c for c in man["cases"]}
        largest = None
        for shape in shapes:
            c = by_name[shape]
            run_args = []
            for flag, files in (("--input", c["inputs"]),
                                ("--compare", c["refs"])):
                for name, rel in files.items():
                    dst = os.path.join(out, "data", m, rel)
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy2(os.path.join(args.e2e_dir, rel), dst)
                    run_args += [flag, f"{name}={os.path.relpath(dst, out)}"]
            cases.append({"name": f"{m}/{shape}", "kind": "e2e",
                          "model": os.path.relpath(so, out),
                          "signature": os.path.relpath(sig_path, out),
                          "input_shapes": c["input_shapes"],
                          "args": run_args + ["--rtol", "1e-3",
                                              "--atol", "1e-4"]})
            size = 1
            for s in c["input_shapes"].values():
                for d in s:
                    size *= d
            if largest is None or size > largest[0]:
                largest = (size, shape, cases[-1]["args"])
        for pct in LIMITS:
            for how in ("recompute", "offload"):
                cases.append({"name": f"{m}/{largest[1]}@{pct}%/{how}",
                              "kind": "limit",
                              "model": os.path.relpath(so, out),
                              "percent": pct,
                              "args": largest[2] + [
                                  "--memory-limit", f"{pct}%",
                                  "--evict-by", how]})

    # Bandwidth cases: one fused kernel over 128 MiB, timed on the device;
    # each also with the other elements-per-thread choices (the defaults'
    # alternatives, so one run compares them).
    for kind in args.bandwidth:
        onnx_path = os.path.join(out, "models", f"bw_{kind}.onnx")
        bandwidth_model(kind, onnx_path)
        for variant in [[]] + BANDWIDTH_VARIANTS[kind]:
            tag = "".join(f"[{v.lstrip('-')}]" for v in variant)
            stem = "bw_" + kind + "".join(
                "_" + re.sub(r"[^0-9a-z]+", "_", v.lstrip("-"))
                for v in variant)
            name = (f"bandwidth/{kind}{tag}/"
                    f"{BANDWIDTH_ROWS}x{BANDWIDTH_COLS}")
            built = compile_with_signature(f"bandwidth {kind}{tag}", name,
                                           onnx_path, stem, variant)
            if built is None:
                continue
            so, sig_path = built
            cases.append({
                "name": name, "kind": "bandwidth",
                "model": os.path.relpath(so, out),
                "signature": os.path.relpath(sig_path, out),
                "input_shapes": {"x": [BANDWIDTH_ROWS, BANDWIDTH_COLS]},
                "args": ["--input",
                         f"x={BANDWIDTH_ROWS}x{BANDWIDTH_COLS}:random"]})
        os.remove(onnx_path)

    # Roofline cases: e2e models at larger shapes (random inputs).
    for m, shape in ROOFLINE_SHAPES.items():
        so = os.path.join(out, "models", m + ".so")
        sig_path = os.path.join(out, "models", m + ".signature.json")
        if m not in args.models or not os.path.exists(sig_path):
            continue
        with open(sig_path) as f:
            name_in = input_name(json.load(f))
        dims = "x".join(str(d) for d in shape)
        cases.append({"name": f"{m}/{dims}", "kind": "roofline",
                      "model": os.path.relpath(so, out),
                      "signature": os.path.relpath(sig_path, out),
                      "input_shapes": {name_in: shape},
                      "args": ["--input", f"{name_in}={dims}:random"]})

    # A run-time check inside a kernel: an out-of-range token id fails the
    # run with the CPU path's message naming the Gather node.
    tr = [c for c in cases if c["name"].startswith("transformer/")]
    if tr:
        import numpy as np  # noqa: E402  (prepare only)
        bad = os.path.join(out, "data", "transformer_bad_tokens.npy")
        np.save(bad, np.full((1, 16), 100000, dtype=np.int64))
        cases.append({"name": "transformer-token-out-of-range",
                      "kind": "error", "model": tr[0]["model"],
                      "args": ["--input", "#0=" + os.path.relpath(bad, out)],
                      "env": {}, "exit": 2,
                      "message": "Gather node '/embed/Gather': index 100000 "
                                 "is out of range"})

    # A missing cuBLAS is a clear error, not a crash (docs/cuda.md).
    mm = [c for c in cases if c["name"].startswith("test_matmul_2d/")]
    if mm:
        cases.append({"name": "missing-cublas", "kind": "error",
                      "model": mm[0]["model"], "args": mm[0]["args"],
                      "env": {"DISC_CUBLAS_LIBRARY":
                              "/nonexistent/libcublas.so.13"},
                      "exit": 2, "message": "cuBLAS is not available"})

    # Launches and syncs per run on the substitute driver (kernels skipped).
    if args.fake_driver and args.models:
        counts = os.path.join(out, "counts.json")
        cmd = [sys.executable, os.path.join(HERE, "count_launches.py"),
               "--bin-dir", args.bin_dir,
               "--work-dir", os.path.join(out + ".counts"),
               "--models-dir", args.e2e_dir, "--fake-driver",
               args.fake_driver, "--json", counts] + args.models
        p = subprocess.run(cmd, capture_output=True, text=True)
        ok = p.returncode == 0
        log("prepare: launch counts " + ("written" if ok else "FAILED: " +
                                         p.stderr.strip()[-300:]))
        shutil.rmtree(out + ".counts", ignore_errors=True)

    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"arch": args.arch, "cases": cases}, f, indent=1)
    log(f"prepare: {len(cases)} cases in {out}")
    return 0


def minimum_peak(report, message):
    """The lowest reachable peak of a run refused with exit 3: the
    report's, else the number disc-run's message names ("... below the
    minimum peak N bytes ...")."""
    if report.get("minimum_peak_bytes") is not None:
        return report["minimum_peak_bytes"]
    m = re.search(r"minimum peak (\d+) bytes", message or "")
    return int(m.group(1)) if m else None


def have_gpu():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False, "nvidia-smi not found"
    if "GPU" not in p.stdout:
        return False, "nvidia-smi finds no GPU"
    return True, p.stdout.strip().splitlines()[0]


def run(args):
    root = os.path.abspath(args.dir)
    with open(os.path.join(root, "cases.json")) as f:
        spec = json.load(f)
    ok, what = have_gpu()
    if not ok:
        log(f"gpu-check: no CUDA device ({what}); run this on a machine with "
            "an NVIDIA GPU and its driver")
        return 2
    log(f"gpu-check: {what}, kernels for {spec['arch']}")
    env = dict(os.environ)
    libs = [os.path.join(root, "lib")]
    env["LD_LIBRARY_PATH"] = ":".join(
        libs + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p])
    disc_run = os.path.join(root, "bin", "disc-run")
    logs = os.path.join(root, "logs")
    os.makedirs(logs, exist_ok=True)
    passed = failed = 0
    unlimited_ms = {}
    table = []
    measured = []
    bandwidth_rows = []
    sys.path.insert(0, root)
    import roofline  # noqa: E402  (the prepared copy)

    def traced_run(c, i):
        """(device slices, error) of a plain run of case `c` (its inputs
        only) with --trace: every launch and library call timed with CUDA
        events (docs/cuda.md, "Kernel times")."""
        inputs, a = [], c["args"]
        for j in range(len(a) - 1):
            if a[j] == "--input":
                inputs += a[j:j + 2]
        path = os.path.join(logs, f"case{i}.trace.json")
        cmd = [disc_run, c["model"]] + inputs + [
            "--cuda-graphs", "0", "--repeat", "2", "--trace", path]
        try:
            p = subprocess.run(cmd, cwd=root, env=env, capture_output=True,
                               text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return None, "traced run timed out"
        if p.returncode != 0:
            err = (p.stdout + p.stderr).strip().splitlines()
            return None, f"traced run: exit {p.returncode}: " + (
                err[-1] if err else "")
        try:
            return roofline.device_slices(path), ""
        except (OSError, ValueError, KeyError) as e:
            return None, f"trace: {e}"

    for i, c in enumerate(spec["cases"]):
        name = c["name"]
        if c["kind"] == "compile":
            log(f"FAIL {name} (compile: {c['error']})")
            failed += 1
            continue
        if c["kind"] == "bandwidth":
            # Five traced runs (one process each): each slice's device time
            # is the median of its five times (one run alone varies by
            # 10-20% on an H200).
            runs, why = [], ""
            for _ in range(BANDWIDTH_RUNS):
                slices, why = traced_run(c, i)
                if slices is None:
                    break
                runs.append(slices)
            if slices is None or not runs:
                failed += 1
                log(f"FAIL {name} ({why})")
                continue
            slices = runs[0]
            if any(len(r) != len(slices) for r in runs):
                failed += 1
                log(f"FAIL {name} (the traced runs made different launches)")
                continue
            for k, s0 in enumerate(slices):
                s0["us"] = statistics.median(r[k]["us"] for r in runs)
            with open(os.path.join(root, c["signature"])) as f:
                sig = json.load(f)
            res = roofline.roofline(
                sig, roofline.bind_dims(sig, c["input_shapes"]),
                args.peak_bandwidth, args.peak_flops, args.peak_pcie)
            roofline.match_device_times(res, slices)
            timed = [r for r in res["kernels"] if r.get("device_us")]
            for r in timed:
                pct = (r["bytes"] / (r["device_us"] * 1e-6) /
                       args.peak_bandwidth * 100) if r["bytes"] else None
                bandwidth_rows.append((name, r["name"], r["node"],
                                       r["bytes"], r["device_us"], pct))
            passed += 1
            log(f"PASS {name} ({len(slices)} launches, "
                f"{sum(x['us'] for x in slices):.1f} µs on the device)")
            continue
        report = os.path.join(logs, f"case{i}.json")
        cmd = [disc_run, c["model"]] + c["args"] + [
            "--repeat", str(args.repeat), "--report", report]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, cwd=root, env=dict(env, **c.get("env", {})),
                               capture_output=True,
                               text=True, timeout=args.timeout)
            rc, err = p.returncode, (p.stdout + p.stderr).strip()
        except subprocess.TimeoutExpired:
            rc, err = None, "timed out"
        secs = time.time() - t0
        rep = {}
        try:
            with open(report) as f:
                rep = json.load(f)
        except (OSError, ValueError):
            pass
        lat = rep.get("latency_ms")
        peak, pred = rep.get("peak_bytes"), rep.get("predicted_peak_bytes")
        if c["kind"] == "error":
            if rc == c["exit"] and c["message"] in err:
                passed += 1
                log(f"PASS {name} (exit {rc}: {err.splitlines()[-1]})")
            else:
                failed += 1
                log(f"FAIL {name} (exit {rc}, expected {c['exit']} with "
                    f"'{c['message']}'): {err[-300:]}")
            continue
        if c["kind"] == "limit":
            base = unlimited_ms.get(c["model"])
            ok = rc == 0 and rep.get("passed") is True and (
                peak is not None and peak <= rep.get("memory_limit_bytes"))
            row = [name, rep.get("memory_limit_bytes"), peak, pred,
                   rep.get("evictions"), rep.get("offloads"),
                   rep.get("regenerations"),
                   (lat / base) if lat and base else None,
                   "ok" if ok else ("exit 3: below the lowest reachable peak "
                                    f"({minimum_peak(rep, err)} B)"
                                    if rc == 3 else f"exit {rc}")]
            table.append(row)
            if ok or rc == 3:
                passed += 1
                log(f"PASS {name} (exit {rc})")
            else:
                failed += 1
                log(f"FAIL {name} (exit {rc}): {err.splitlines()[-1] if err else ''}")
            continue
        if c["kind"] == "e2e" and lat:
            unlimited_ms.setdefault(c["model"], lat)
        if c["kind"] in ("e2e", "roofline"):
            slices = traced_run(c, i)[0] if rc == 0 else None
            measured.append((c, lat if rc == 0 else None, slices))
        if c["kind"] == "roofline":
            if rc == 0:
                passed += 1
                log(f"PASS {name} ({lat:.3f} ms, not compared)")
            else:
                failed += 1
                log(f"FAIL {name} (exit {rc}): {err[-300:]}")
            continue
        errs = [o.get("max_abs_err") for o in rep.get("outputs", [])
                if isinstance(o.get("max_abs_err"), (int, float))]
        detail = (f"{lat:.3f} ms" if lat else f"{secs:.1f} s") + (
            f", max abs err {max(errs):.2e}" if errs else "") + (
            f", peak {peak} B, predicted {pred} B" if peak is not None else "")
        if rc == 0 and rep.get("passed") is True:
            passed += 1
            log(f"PASS {name} ({detail})")
        else:
            failed += 1
            last = err.splitlines()[-1] if err else ""
            log(f"FAIL {name} (exit {rc}; {detail}): {last}")
    if table:
        log("")
        log("| case | limit (B) | peak (B) | predicted (B) | evictions | "
            "offloads | recomputes | slowdown | result |")
        log("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in table:
            log("| " + " | ".join(
                "" if v is None else (f"{v:.2f}x" if isinstance(v, float)
                                      else str(v)) for v in r) + " |")
    roofline_table(root, measured, args)
    if bandwidth_rows:
        log("")
        log("| case | kernel | ONNX node | bytes | device µs | % of peak "
            "bandwidth |")
        log("|---|---|---|---:|---:|---:|")
        for case, k, node, nbytes, us, pct in bandwidth_rows:
            log(f"| {case} | {k} | {node} | {nbytes} | {us:.2f} | "
                + ("" if pct is None else f"{pct:.1f}") + " |")
        with open(os.path.join(root, "bandwidth.json"), "w") as f:
            json.dump([{"case": r[0], "kernel": r[1], "node": r[2],
                        "bytes": r[3], "device_us": r[4],
                        "bandwidth_pct": r[5]} for r in bandwidth_rows], f,
                      indent=1)
    log(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def roofline_table(root, measured, args):
    """Prints the roofline table of the e2e cases (measured latency against
    the roofline sum) and writes it to ROOT/roofline.json."""
    if not measured or not os.path.exists(os.path.join(root, "roofline.py")):
        return
    sys.path.insert(0, root)
    import roofline  # noqa: E402  (the prepared copy)
    counts = {}
    try:
        with open(os.path.join(root, "counts.json")) as f:
            data = json.load(f)
        for r in data if isinstance(data, list) else data.get("rows", []):
            counts[(r.get("model"), r.get("shape"))] = r
    except (OSError, ValueError, AttributeError):
        pass
    rows = []
    for c, lat, slices in measured:
        model, shape = c["name"].split("/", 1)
        try:
            with open(os.path.join(root, c["signature"])) as f:
                sig = json.load(f)
            res = roofline.roofline(
                sig, roofline.bind_dims(sig, c["input_shapes"]),
                args.peak_bandwidth, args.peak_flops, args.peak_pcie)
        except (OSError, KeyError, ValueError) as e:
            log(f"roofline: {c['name']}: {e}")
            continue
        t = res["total"]
        launches = sum(1 for k in res["kernels"]
                       if not k["library"] and not k["copy"] and
                       k["runs"] != "recompute")
        cnt = counts.get((model, shape), {})
        dev = roofline.match_device_times(res, slices) if slices else None
        dev_us = dev["kernels_us"] + dev["library_us"] if dev else None
        # The generated kernels' bytes over their device time.
        kernel_bytes = sum(k["bytes"] or 0 for k in res["kernels"]
                           if k.get("device_us") and not k["library"])
        row = {"model": model, "shape": shape, "latency_ms": lat,
               "device_us": dev_us,
               "device_kernels_us": dev["kernels_us"] if dev else None,
               "device_library_us": dev["library_us"] if dev else None,
               "device_over_roofline": (dev_us / t["us"])
               if dev_us and t["us"] else None,
               "kernel_bandwidth_pct": (kernel_bytes /
                                        (dev["kernels_us"] * 1e-6) /
                                        args.peak_bandwidth * 100)
               if dev and dev["kernels_us"] else None,
               "roofline_us": t["us"], "roofline_kernels_us":
               t["generated_us"], "roofline_library_us": t["library_us"],
               "roofline_copies_us": t["copies_us"],
               "copy_bytes": t["copy_bytes"],
               "bytes": t["bytes"], "flops": t["flops"],
               "unknown": t["unknown"],
               "latency_over_roofline": (lat * 1e3 / t["us"])
               if lat and t["us"] else None,
               "achieved_bandwidth_pct": (t["bytes"] / (lat * 1e-3) /
                                          args.peak_bandwidth * 100)
               if lat else None,
               "launches_per_run": launches,
               "library_calls_per_run": t["library_calls"],
               "driver_launches": cnt.get("launches"),
               "driver_syncs": cnt.get("syncs")}
        rows.append(row)
    if not rows:
        return
    log("")
    log("| model | shape | latency (ms) | roofline (µs) | kernels / library "
        "/ copies (µs) | latency / roofline | bandwidth (% of peak) | "
        "device time: kernels / library (µs) | device / roofline | "
        "kernels' bandwidth (% of peak) | "
        "launches | library calls | launches / syncs (substitute driver) | "
        "unknown |")
    log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        "---:|")

    def fmt(v, f):
        return "" if v is None else f % v
    for r in rows:
        drv = ("" if r["driver_launches"] is None else
               f"{r['driver_launches']} / {r['driver_syncs']}")
        log(f"| {r['model']} | {r['shape']} | {fmt(r['latency_ms'], '%.3f')} "
            f"| {r['roofline_us']:.2f} | {r['roofline_kernels_us']:.2f} / "
            f"{r['roofline_library_us']:.2f} / "
            f"{r['roofline_copies_us']:.2f} | "
            f"{fmt(r['latency_over_roofline'], '%.1fx')} | "
            f"{fmt(r['achieved_bandwidth_pct'], '%.2f')} | "
            f"{fmt(r['device_kernels_us'], '%.1f')} / "
            f"{fmt(r['device_library_us'], '%.1f')} | "
            f"{fmt(r['device_over_roofline'], '%.1fx')} | "
            f"{fmt(r['kernel_bandwidth_pct'], '%.1f')} | "
            f"{r['launches_per_run']} | {r['library_calls_per_run']} | {drv} "
            f"| {r['unknown']} |")
    with open(os.path.join(root, "roofline.json"), "w") as f:
        json.dump({"peak_bandwidth": args.peak_bandwidth,
                   "peak_flops": args.peak_flops,
                   "peak_pcie": args.peak_pcie, "rows": rows}, f, indent=1)
    log(f"roofline: {os.path.join(root, 'roofline.json')}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("--bin-dir", required=True)
    pp.add_argument("--e2e-dir", required=True,
                    help="where the e2e models are exported (cached)")
    pp.add_argument("--out", required=True)
    pp.add_argument("--arch", default="sm_90")
    pp.add_argument("--models", nargs="*", default=E2E_MODELS)
    pp.add_argument("--node-tests", nargs="*", default=NODE_TESTS)
    pp.add_argument("--bandwidth", nargs="*", default=BANDWIDTH_MODELS,
                    help="bandwidth cases (%s)" % ", ".join(BANDWIDTH_MODELS))
    pp.add_argument("--compile-arg", action="append", default=[],
                    help="extra disc-compile argument for the e2e models")
    pp.add_argument("--fake-driver",
                    help="the substitute libcuda: count launches and syncs "
                         "per run of the e2e models (count_launches.py)")
    pr = sub.add_parser("run")
    pr.add_argument("dir")
    pr.add_argument("--repeat", type=int, default=12,
                    help="runs per case; the latency is their median (the "
                         "first run is plain, the second captures a CUDA "
                         "graph, later ones replay it)")
    pr.add_argument("--timeout", type=int, default=300)
    pr.add_argument("--peak-bandwidth", type=float, default=4.8e12,
                    help="bytes/s of the roofline (default: H200, 4.8e12)")
    pr.add_argument("--peak-flops", type=float, default=67e12,
                    help="FP32 FLOP/s of the roofline (default: H200, 67e12)")
    pr.add_argument("--peak-pcie", type=float, default=64e9,
                    help="host<->device bytes/s of the copies (default: "
                         "PCIe 5.0 x16, 64e9)")
    args = p.parse_args(argv)
    return prepare(args) if args.cmd == "prepare" else run(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Launches, library calls and synchronizations per run of CUDA models,
counted on the substitute driver (docs/cuda.md, "Synchronization").

For each e2e model (the export of test/e2e: MODEL.onnx and MODEL.json in
--models-dir): `disc-compile --target=cuda`, then at every shape of its
manifest `disc-run` on the substitute libcuda (kernels skipped, the
substitute cuBLAS and cuDNN beside it) once with --repeat 1 and once with
--repeat 2. The difference of the driver's counters ($FAKE_CUDA_COUNTS) is
one run of a warm session (module loads, constant uploads and the session's
first and last synchronizations excluded):

- launches: cuLaunchKernel calls;
- library calls: cuBLAS GEMMs and cuDNN convolutions;
- syncs: cuStreamSynchronize / cuCtxSynchronize;
- host reads: synchronizations with a device-to-host copy of tensor data
  queued since the previous one, i.e. the points where the host waits to
  read device data (shape values the host code needs, and the outputs at
  the end of the run).

The sessions run with plain launches (disc-run --cuda-graphs 0).

Prints a markdown table (model, shape, launches, library calls, syncs,
host reads, device-to-host copies) and writes it as JSON with --json.
With --check-syncs every run must have syncs <= 1 + host reads (the host
waits only where it reads device data, plus once at the end of the run for
the error words of the run-time checks). With --max-launches N every run
must make at most N kernel launches.

    /usr/bin/python3 test/cuda/count_launches.py --bin-dir build/bin \\
        --work-dir /tmp/counts --models-dir build/test/e2e/models \\
        --fake-driver build/test/unittests/fixtures/fake_libcuda.so \\
        --check-syncs gpt_decoder transformer

With --cuda-graphs (CUDA graph replay, docs/cuda.md "Graph replay") it
counts instead one replayed run of a warm session: `--repeat 3` minus
`--repeat 2` with graphs on (the first run at the shapes is plain, the
second is captured, the third replays the graph), and checks that it made
0 cuLaunchKernel calls, exactly 1 graph launch and no capture, that the
libraries ran as many GEMMs and convolutions as in a plain run (recorded in
the graph, not called again), and that its outputs equal a plain run's bit
for bit.

Exit codes: 0 no failure, 1 some failure (compile or run failed, a bound
exceeded), 2 bad usage, 77 no CUDA toolkit (ctest reports a skip).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys


def counts_of(path):
    """The "name value" lines the substitute libraries appended."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    out[parts[0]] = out.get(parts[0], 0) + int(parts[1])
    except OSError:
        pass
    return out


def run_counts(run_bin, so, inputs, driver, repeat, counts_path, graphs=0,
               output_dir=None):
    fixtures = os.path.dirname(os.path.abspath(driver))
    env = dict(os.environ, DISC_CUDA_DRIVER=driver, FAKE_CUDA_SKIP_KERNELS="1",
               FAKE_CUDA_COUNTS=counts_path,
               DISC_CUBLAS_LIBRARY=os.path.join(fixtures, "fake_libcublas.so"),
               DISC_CUDNN_LIBRARY=os.path.join(fixtures, "fake_libcudnn.so"))
    if os.path.exists(counts_path):
        os.remove(counts_path)
    cmd = [run_bin, so, "--repeat", str(repeat), "--cuda-graphs", str(graphs)]
    if output_dir:
        cmd += ["--output-dir", output_dir]
    for i in inputs:
        cmd += ["--input", i]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                       env=env)
    if r.returncode != 0:
        return None, f"exit {r.returncode}: {r.stderr.strip()[:300]}"
    return counts_of(counts_path), None


LIBRARY_RUNS = ("cublas_gemms", "cudnn_convolutions", "cudnn_backward_data")
LIBRARY_CAPTURES = ("cublas_captured_gemms", "cudnn_captured_calls")


def same_outputs(dir_a, dir_b):
    """Names of the output files that differ (or are missing) between the
    two --output-dir folders; [] when every file is equal bit for bit."""
    names = sorted(set(os.listdir(dir_a)) | set(os.listdir(dir_b)))
    bad = []
    for n in names:
        pa, pb = os.path.join(dir_a, n), os.path.join(dir_b, n)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            bad.append(n)
            continue
        with open(pa, "rb") as fa, open(pb, "rb") as fb:
            if fa.read() != fb.read():
                bad.append(n)
    return bad if names else ["(no outputs written)"]


def outputs_nonzero(folder):
    """Whether some output in `folder` has a nonzero element (kernels are
    skipped: the library calls and copies make the values); None without
    numpy."""
    try:
        import numpy as np
    except ImportError:
        return None
    return any(np.count_nonzero(np.load(os.path.join(folder, n))) > 0
               for n in os.listdir(folder) if n.endswith(".npy"))


def check_replay(run_bin, so, inputs, args, counts_path, model, shape):
    """One replayed run at these inputs (--repeat 3 minus --repeat 2, graphs
    on) against a plain run: (row, list of failures)."""
    base = f"{so}.{shape}"
    plain_dir, graph_dir = base + ".plain", base + ".graphs"
    for d in (plain_dir, graph_dir):
        shutil.rmtree(d, ignore_errors=True)
    plain, err = run_counts(run_bin, so, inputs, args.fake_driver, 1,
                            counts_path, graphs=0, output_dir=plain_dir)
    if plain is None:
        return None, [f"plain run: {err}"]
    two, err = run_counts(run_bin, so, inputs, args.fake_driver, 2,
                          counts_path, graphs=8)
    if two is None:
        return None, [f"--repeat 2: {err}"]
    three, err = run_counts(run_bin, so, inputs, args.fake_driver, 3,
                            counts_path, graphs=8, output_dir=graph_dir)
    if three is None:
        return None, [f"--repeat 3: {err}"]
    d = {k: three.get(k, 0) - two.get(k, 0) for k in set(two) | set(three)}
    library = sum(d.get(k, 0) for k in LIBRARY_RUNS)
    plain_library = sum(plain.get(k, 0) for k in LIBRARY_RUNS)
    differ = same_outputs(plain_dir, graph_dir)
    nonzero = outputs_nonzero(graph_dir)
    row = {
        "model": model, "shape": shape,
        "launches": d.get("launches", 0),
        "graph_launches": d.get("graph_launches", 0),
        "captured_launches": d.get("captured_launches", 0),
        "captures": d.get("captures", 0),
        "library_calls": library,
        "library_captures": sum(d.get(k, 0) for k in LIBRARY_CAPTURES),
        "plain_library_calls": plain_library,
        "plain_launches": plain.get("launches", 0),
        "syncs": d.get("syncs", 0),
        "outputs_equal": not differ,
        "outputs_nonzero": nonzero,
    }
    errors = []
    if row["launches"] != 0:
        errors.append(f"{row['launches']} cuLaunchKernel calls in a "
                      "replayed run (expected 0)")
    if row["graph_launches"] != 1:
        errors.append(f"{row['graph_launches']} graph launches in a "
                      "replayed run (expected 1)")
    if row["captures"] != 0 or row["captured_launches"] != 0:
        errors.append("a replayed run captured again")
    if row["plain_launches"] == 0:
        errors.append("the plain run made no launches")
    if library != plain_library:
        errors.append(f"{library} library calls ran in a replayed run, "
                      f"{plain_library} in a plain one")
    if row["library_captures"] != 0:
        errors.append("the libraries were called again in a replayed run")
    if differ:
        errors.append("outputs differ from a plain run: " + ", ".join(differ))
    return row, errors


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--models-dir", required=True,
                    help="the e2e export (MODEL.onnx, MODEL.json)")
    ap.add_argument("--fake-driver", required=True)
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--compile-arg", action="append", default=[])
    ap.add_argument("--json", help="write the table as JSON here")
    ap.add_argument("--reuse", action="store_true",
                    help="use MODEL.ARCH.so in --work-dir when it exists")
    ap.add_argument("--check-syncs", action="store_true",
                    help="fail when a run has syncs > 1 + host reads")
    ap.add_argument("--max-launches", type=int,
                    help="fail when a run makes more kernel launches")
    ap.add_argument("--cuda-graphs", action="store_true",
                    help="count a replayed run (CUDA graphs) and check it "
                    "against a plain run")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args(argv)
    toolkit = os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    if not (os.path.exists(os.path.join(toolkit, "bin", "ptxas")) or
            shutil.which("ptxas")):
        print(f"SKIP: no CUDA toolkit (no ptxas in {toolkit}/bin or on PATH)")
        return 77
    os.makedirs(args.work_dir, exist_ok=True)
    compile_bin = os.path.join(args.bin_dir, "disc-compile")
    run_bin = os.path.join(args.bin_dir, "disc-run")
    rows, failed = [], 0
    for model in args.models:
        onnx = os.path.join(args.models_dir, model + ".onnx")
        manifest = os.path.join(args.models_dir, model + ".json")
        so = os.path.join(args.work_dir, f"{model}.{args.arch}.so")
        cmd = [compile_bin, onnx, "--target=cuda", f"--gpu-arch={args.arch}",
               "-o", so] + args.compile_arg
        r = None if args.reuse and os.path.exists(so) else subprocess.run(
            cmd, capture_output=True, text=True, timeout=1800)
        if r is not None and r.returncode != 0:
            failed += 1
            print(f"FAIL {model}: disc-compile exit {r.returncode}: "
                  f"{r.stderr.strip()[:300]}")
            continue
        with open(manifest) as f:
            man = json.load(f)
        for case in man["cases"]:
            inputs = [f"{n}={os.path.join(args.models_dir, rel)}"
                      for n, rel in case["inputs"].items()]
            counts_path = so + ".counts"
            if args.cuda_graphs:
                row, errors = check_replay(run_bin, so, inputs, args,
                                           counts_path, model, case["name"])
                if row is not None:
                    rows.append(row)
                for e in errors:
                    failed += 1
                    print(f"FAIL {model} {case['name']}: {e}")
                continue
            one, err = run_counts(run_bin, so, inputs, args.fake_driver, 1,
                                  counts_path)
            two, err2 = (run_counts(run_bin, so, inputs, args.fake_driver, 2,
                                    counts_path) if one is not None
                         else (None, None))
            if one is None or two is None:
                failed += 1
                print(f"FAIL {model} {case['name']}: {err or err2}")
                continue
            d = {k: two.get(k, 0) - one.get(k, 0)
                 for k in set(one) | set(two)}
            row = {
                "model": model, "shape": case["name"],
                "launches": d.get("launches", 0),
                "library_calls": d.get("cublas_gemms", 0) +
                d.get("cudnn_convolutions", 0) +
                d.get("cudnn_backward_data", 0),
                "syncs": d.get("syncs", 0),
                "host_reads": d.get("reading_syncs", 0),
                "copies_d2h": d.get("copies_d2h", 0),
                "check_word_reads": d.get("check_word_reads", 0),
            }
            rows.append(row)
            if args.check_syncs and row["syncs"] > 1 + row["host_reads"]:
                failed += 1
                print(f"FAIL {model} {case['name']}: {row['syncs']} syncs > "
                      f"1 + {row['host_reads']} host reads")
            if (args.max_launches is not None and
                    row["launches"] > args.max_launches):
                failed += 1
                print(f"FAIL {model} {case['name']}: {row['launches']} "
                      f"launches > {args.max_launches}")
    if args.cuda_graphs:
        print("| model | shape | launches | graph launches | library calls "
              "| syncs | outputs equal |")
        print("|---|---|---:|---:|---:|---:|---|")
        for row in rows:
            print(f"| {row['model']} | {row['shape']} | {row['launches']} | "
                  f"{row['graph_launches']} | {row['library_calls']} | "
                  f"{row['syncs']} | {row['outputs_equal']} |")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=1)
        print(f"{len(rows)} replayed runs counted, {failed} failed")
        return 1 if failed else 0
    print("| model | shape | launches | library calls | syncs | host reads "
          "| D2H copies |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['model']} | {row['shape']} | {row['launches']} | "
              f"{row['library_calls']} | {row['syncs']} | "
              f"{row['host_reads']} | {row['copies_d2h']} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(f"{len(rows)} runs counted, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

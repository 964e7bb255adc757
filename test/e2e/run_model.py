#!/usr/bin/python3
"""End-to-end check of DISC on the demo models (examples/models).

For each model: export it to ONNX with PyTorch reference outputs (cached:
skipped when the files exist and are newer than the export scripts), compile
it once with disc-compile, run it at every shape with disc-run --compare,
and print a table:

    model | input shapes | compile time (s) | latency (ms, median) |
    peak bytes | predicted peak bytes | max abs err | max rel err | status

With --exact-peak, every run also checks the memory model
(docs/memory.md): the peak bytes the runtime measured must equal the peak
the compiled model predicts for the input shapes (status PEAK_MISMATCH
otherwise). The model does not yet see the temporaries of oneDNN library
calls, so ctest runs that check on a `--library-calls=none` build
(e2e-memory-*), and the default build's peaks are reported only. Models with fewer than three
reference shapes also run at the shapes in PEAK_ONLY_SHAPES, with random
inputs and no comparison, for this check.

    /usr/bin/python3 test/e2e/run_model.py --bin-dir build/bin \
        --work-dir build/test/e2e resnet18 transformer

Exit codes: 0 every case passed, 1 some case failed (mismatch, run or
compile failure), 2 bad usage or export failure.
"""

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS_DIR = os.path.join(REPO, "examples", "models")
sys.path.insert(0, MODELS_DIR)
import disc_models  # noqa: E402  (imports torch lazily)

PYTHON = "/usr/bin/python3"
EXPORT_SCRIPTS = {
    "resnet18": "export_resnet18.py",
    "transformer": "export_transformer.py",
    "gpt_decoder": "export_gpt_decoder.py",
    "mobilenet_v2": "export_mobilenet_v2.py",
    "unet": "export_unet.py",
    "inception": "export_inception.py",
    "gpt_train_step": "export_gpt_train_step.py",
    "shufflenet_v2": "export_shufflenet_v2.py",
    "nhwc_resnet": "export_nhwc_resnet.py",
    "mobilenet_v3_small": "export_mobilenet_v3_small.py",
    "mlp_train_step": "export_mlp_train_step.py",
    "llama_decoder": "export_llama_decoder.py",
    "resmlp_train_step": "export_resmlp_train_step.py",
}


# Extra shapes (random inputs, peak check only) so that every model is
# checked at three shapes or more.
PEAK_ONLY_SHAPES = {
    "resnet18": ["1x3x64x72"],
    "transformer": ["3x5"],
}


def log(msg):
    print(msg, flush=True)


def run(cmd, timeout):
    log("+ " + " ".join(shlex.quote(c) for c in cmd))
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the command and its children
            except OSError:
                pass
            out, _ = p.communicate()
            rc = None
            log(f"  timed out after {timeout:g} s")
        out = out.decode(errors="replace")
    except OSError as e:
        out, rc = str(e), 127
    dt = time.monotonic() - t0
    if out.strip():
        for line in out.rstrip().splitlines()[-40:]:
            log("  | " + line)
    return rc, out, dt


# --------------------------------------------------------------------------
# Export (cached).
# --------------------------------------------------------------------------

def _manifest_ok(path, work, shapes):
    try:
        with open(path) as f:
            man = json.load(f)
    except (OSError, ValueError):
        return None
    cases = {c["name"]: c for c in man.get("cases", [])}
    for s in shapes:
        c = cases.get(s)
        if c is None:
            return None
        for rel in list(c["inputs"].values()) + list(c["refs"].values()):
            if not os.path.exists(os.path.join(work, rel)):
                return None
    return man


def ensure_exported(model, work, shapes, timeout):
    """Returns the manifest; exports or regenerates references if needed."""
    script = os.path.join(MODELS_DIR, EXPORT_SCRIPTS[model])
    sources = [script] + [os.path.join(MODELS_DIR, f)
                          for f in ("disc_models.py", "gpt_train_step.py",
                                    "mlp_train_step.py", "resmlp_train_step.py")]
    newest_src = max(os.path.getmtime(s) for s in sources)
    onnx_path = os.path.join(work, model + ".onnx")
    man_path = os.path.join(work, model + ".json")
    fresh = (os.path.exists(onnx_path) and os.path.getmtime(onnx_path) > newest_src
             and os.path.exists(man_path) and os.path.getmtime(man_path) > newest_src)
    if fresh:
        man = _manifest_ok(man_path, work, shapes)
        if man is not None:
            log(f"{model}: export up to date ({onnx_path})")
            return man
        cmd = [PYTHON, os.path.join(MODELS_DIR, "make_reference.py"), model,
               "--out-dir", work, "--shapes"] + shapes
    else:
        cmd = [PYTHON, script, "--out-dir", work, "--shapes"] + shapes
    rc, _, _ = run(cmd, timeout)
    if rc != 0:
        return None
    return _manifest_ok(man_path, work, shapes)


# --------------------------------------------------------------------------
# Compile and run.
# --------------------------------------------------------------------------

class Row:
    def __init__(self, model, shapes):
        self.model = model
        self.shapes = shapes
        self.compile_s = None
        self.latency_ms = None
        self.peak_bytes = None
        self.predicted_peak_bytes = None
        self.max_abs = None
        self.max_rel = None
        self.status = "?"

    @property
    def passed(self):
        return self.status == "PASS"


def run_model(model, args):
    shapes = args.shapes or disc_models.MODELS[model]["default_shapes"]
    rows = []
    os.makedirs(args.work_dir, exist_ok=True)
    man = ensure_exported(model, args.work_dir, shapes, args.timeout)
    if man is None:
        r = Row(model, ", ".join(shapes))
        r.status = "EXPORT_FAIL"
        return [r]

    onnx_path = os.path.join(args.work_dir, man["onnx"])
    tag = model + args.tag
    so = os.path.join(args.work_dir, tag + ".so")
    if os.path.exists(so):
        os.remove(so)
    rc, out, compile_s = run([os.path.join(args.bin_dir, "disc-compile"),
                              onnx_path, "-o", so] + args.compile_arg,
                             args.timeout)
    compile_status = None
    if rc is None:
        compile_status = "COMPILE_TIMEOUT"
    elif rc == 2:
        compile_status = "UNSUPPORTED"
    elif rc != 0 or not os.path.exists(so):
        compile_status = f"COMPILE_FAIL({rc})"

    cases = {c["name"]: c for c in man["cases"]}
    for shape in shapes:
        case = cases[shape]
        shown = list(case["input_shapes"].items())
        desc = ", ".join(f"{n}[{'x'.join(map(str, s))}]" for n, s in shown[:3])
        if len(shown) > 3:  # the training step's parameters
            desc += f", +{len(shown) - 3} more"
        row = Row(model, desc)
        rows.append(row)
        if compile_status:
            row.status = compile_status
            continue
        row.compile_s = compile_s
        report = os.path.join(args.work_dir, f"{tag}.{shape}.report.json")
        if os.path.exists(report):
            os.remove(report)
        cmd = [os.path.join(args.bin_dir, "disc-run"), so]
        for name, rel in case["inputs"].items():
            cmd += ["--input", f"{name}={os.path.join(args.work_dir, rel)}"]
        for name, rel in case["refs"].items():
            cmd += ["--compare", f"{name}={os.path.join(args.work_dir, rel)}"]
        cmd += ["--rtol", repr(args.rtol), "--atol", repr(args.atol),
                "--repeat", str(args.repeat), "--report", report]
        cmd += args.run_arg
        outdir = os.path.join(args.work_dir, f"{tag}.{shape}.out")
        if args.same_as_one_thread:
            cmd += ["--output-dir", outdir]
        rc, out, _ = run(cmd, args.timeout)
        rep = read_report(report, row)
        outs = rep.get("outputs") or []
        abs_errs = [o["max_abs_err"] for o in outs
                    if isinstance(o.get("max_abs_err"), (int, float))]
        rel_errs = [o["max_rel_err"] for o in outs
                    if isinstance(o.get("max_rel_err"), (int, float))]
        row.max_abs = max(abs_errs) if abs_errs else None
        row.max_rel = max(rel_errs) if rel_errs else None
        if rc is None:
            row.status = "RUN_TIMEOUT"
        elif rc == 1:
            row.status = "MISMATCH"
        elif rc == 3:
            row.status = "OUT_OF_MEMORY"
        elif rc != 0:
            row.status = f"RUN_FAIL({rc})"
        elif not rep:
            row.status = "NO_REPORT"
        elif rep.get("passed") is not True or len(outs) < len(case["refs"]):
            row.status = "MISMATCH"
        else:
            row.status = peak_status(row, args)
        if row.status == "PASS" and args.same_as_one_thread:
            row.status = same_as_one_thread(so, case, outdir, args)
    if not compile_status and args.exact_peak:
        for shape in PEAK_ONLY_SHAPES.get(model, []) if not args.shapes else []:
            rows.append(run_peak_only(model, so, shape, args))
    return rows


def same_as_one_thread(so, case, outdir, args):
    """Runs the case again with --threads 1 and compares every output file
    of the first run (--output-dir) byte for byte with it."""
    one = outdir + ".t1"
    cmd = [os.path.join(args.bin_dir, "disc-run"), so, "--threads", "1",
           "--output-dir", one]
    for name, rel in case["inputs"].items():
        cmd += ["--input", f"{name}={os.path.join(args.work_dir, rel)}"]
    rc, _, _ = run(cmd, args.timeout)
    if rc != 0:
        return f"RUN_FAIL({rc}, 1 thread)"
    files = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []
    if not files:
        return "NO_OUTPUTS"
    for f in files:
        with open(os.path.join(outdir, f), "rb") as a, \
                open(os.path.join(one, f), "rb") as b:
            if a.read() != b.read():
                log(f"  {f}: differs from the 1-thread run")
                return "NOT_BITWISE"
    return "PASS"


def read_report(path, row):
    """Loads a disc-run --report file ({} when missing or unreadable) and
    copies its latency and peak figures into `row`."""
    rep = {}
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        pass
    if isinstance(rep.get("latency_ms"), (int, float)):
        row.latency_ms = rep["latency_ms"]
    if isinstance(rep.get("peak_bytes"), int):
        row.peak_bytes = rep["peak_bytes"]
    if isinstance(rep.get("predicted_peak_bytes"), int):
        row.predicted_peak_bytes = rep["predicted_peak_bytes"]
    return rep


def peak_status(row, args):
    """PASS when the measured peak equals the memory model's prediction (or
    without --exact-peak)."""
    if not args.exact_peak:
        return "PASS"
    if row.predicted_peak_bytes is None:
        return "NO_PREDICTION"
    if row.peak_bytes != row.predicted_peak_bytes:
        return "PEAK_MISMATCH"
    return "PASS"


def run_peak_only(model, so, shape, args):
    """Runs the compiled model once at `shape` with random inputs and checks
    the peak against the prediction (no reference comparison)."""
    row = Row(model, f"{shape} (random, peak only)")
    report = os.path.join(args.work_dir, f"{model}{args.tag}.{shape}.peak.report.json")
    if os.path.exists(report):
        os.remove(report)
    rc, _, _ = run([os.path.join(args.bin_dir, "disc-run"), so,
                    "--input", f"#0={shape}:random", "--report", report],
                   args.timeout)
    rep = read_report(report, row)
    if rc is None:
        row.status = "RUN_TIMEOUT"
    elif rc != 0 or not rep:
        row.status = f"RUN_FAIL({rc})"
    else:
        row.status = peak_status(row, args)
    return row


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def print_table(rows, out=sys.stdout):
    header = ["model", "input shapes", "compile time (s)", "latency (ms, median)",
              "peak bytes", "predicted peak bytes", "max abs err", "max rel err",
              "status"]
    body = [[r.model, r.shapes, _fmt(r.compile_s, ".2f"), _fmt(r.latency_ms, ".3f"),
             _fmt(r.peak_bytes, "d"), _fmt(r.predicted_peak_bytes, "d"),
             _fmt(r.max_abs, ".2e"), _fmt(r.max_rel, ".2e"),
             r.status] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"

    print(line(header), file=out)
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|", file=out)
    for b in body:
        print(line(b), file=out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", choices=sorted(EXPORT_SCRIPTS))
    p.add_argument("--bin-dir", required=True, help="directory with disc-compile, disc-run")
    p.add_argument("--work-dir", required=True,
                   help="where models, references and compiled .so files go")
    p.add_argument("--shapes", nargs="+",
                   help="override the model's shapes (only with one model)")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--compile-arg", action="append", default=[],
                   help="extra disc-compile argument (repeatable)")
    p.add_argument("--tag", default="",
                   help="suffix of the compiled model's file names, so that "
                        "builds with different --compile-arg can share a "
                        "work dir")
    p.add_argument("--run-arg", action="append", default=[],
                   help="extra disc-run argument (repeatable)")
    p.add_argument("--same-as-one-thread", action="store_true",
                   help="also run each case with --threads 1 and fail when "
                        "an output differs in any bit")
    p.add_argument("--exact-peak", action="store_true",
                   help="fail a run whose measured peak bytes differ from "
                        "the predicted peak bytes")
    p.add_argument("--timeout", type=float, default=1200.0,
                   help="seconds per command (default 1200)")
    p.add_argument("--summary-json", metavar="FILE",
                   help="also write the table rows as JSON")
    args = p.parse_args(argv)
    if args.shapes and len(args.models) != 1:
        p.error("--shapes needs exactly one model")
    for tool in ("disc-compile", "disc-run"):
        if not os.access(os.path.join(args.bin_dir, tool), os.X_OK):
            print(f"error: {os.path.join(args.bin_dir, tool)} not found", file=sys.stderr)
            return 2
    args.work_dir = os.path.abspath(args.work_dir)

    rows = []
    for m in args.models:
        rows += run_model(m, args)

    log("")
    print_table(rows)
    if args.summary_json:
        with open(args.summary_json, "w") as f:
            json.dump([vars(r) for r in rows], f, indent=2)
    failed = [r for r in rows if not r.passed]
    log(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
    if any(r.status == "EXPORT_FAIL" for r in rows):
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

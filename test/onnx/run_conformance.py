#!/usr/bin/python3
"""ONNX backend conformance runner for DISC.

Runs every test of the ONNX backend test suite installed by Debian's
`libonnx-testdata` (/usr/share/libonnx-testdata/data/{node,pytorch-converted,
pytorch-operator,simple}; `real/` is skipped) through the DISC command-line
tools:

    disc-compile <test>/model.onnx -o <work>/<suite>/<test>/model.so
    disc-run model.so --input NAME=input_i.pb ... --compare '#i=output_i.pb' ...
             --rtol 1e-3 --atol 1e-5

Inputs: `input_i.pb` binds to the i-th graph input that is not an initializer
(older exporters list initializers among the graph inputs), positionally, as
the ONNX backend test runner does. Outputs: `output_i.pb` is compared with
output number i.

Tolerances: the ONNX backend runner defaults to rtol=1e-3, atol=1e-7. Like
onnx-mlir for float32, we use atol=1e-5: many node tests have outputs near
zero where a different (but equally valid) summation order or a vectorised
exp/tanh differs from NumPy by a few ULPs of 1.0, which atol=1e-7 rejects.
Both can be changed with --rtol / --atol.

Classification of each test (all its test_data_set_* must pass):
    PASS          every data set matched
    COMPILE_FAIL  disc-compile failed; exit 2 = unsupported (op, type,
                  attribute), anything else = compiler crash
    RUN_FAIL      disc-run failed for another reason than a mismatch
    MISMATCH      disc-run exit 1: outputs outside tolerance
    TIMEOUT       a command ran past --timeout seconds

Modes (--mode): `static` compiles each model with the input shapes it
declares; `dynamic` compiles it with `disc-compile --force-dynamic`, which
makes every dim of every graph input unknown (named `<input>_d<i>`), and runs
the stored inputs through that single artifact, as onnx-mlir's dynamic
backend tests do; `both` runs each test in both modes and reports the two
modes' totals separately (the final `N passed, M failed` line sums both).

Expected failures live in a side table (default: expected_failures.txt next
to this script). One entry per line, `<suite>/<test-glob>  # reason`; the
reason is required; fnmatch globs (`node/test_sequence_*`) let one line cover
a family. An entry prefixed `dynamic:` (`dynamic:node/test_foo  # reason`)
applies only in dynamic mode; unprefixed entries apply to both modes. The run
fails (exit 1) only when a test that is not in the table
fails. A listed test that passes is reported as an unexpected pass, so the
table can be pruned. The last two lines of the output are always

    N passed, M failed
    unexpected failures: K

where M counts every failing test, expected or not.

Exit codes: 0 ok, 1 unexpected failures, 2 bad usage or bad side table.
"""

import argparse
import concurrent.futures
import fnmatch
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

DATA_ROOT = "/usr/share/libonnx-testdata/data"
SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_TABLE = os.path.join(HERE, "expected_failures.txt")

PASS = "PASS"
COMPILE_FAIL = "COMPILE_FAIL"
RUN_FAIL = "RUN_FAIL"
MISMATCH = "MISMATCH"
TIMEOUT = "TIMEOUT"
STATUSES = (PASS, COMPILE_FAIL, RUN_FAIL, MISMATCH, TIMEOUT)


# --------------------------------------------------------------------------
# Discovery.
# --------------------------------------------------------------------------

MODES = ("static", "dynamic")


class Test:
    def __init__(self, suite, name, path, mode="static"):
        self.suite = suite
        self.name = name
        self.path = path
        self.mode = mode
        self.id = f"{suite}/{name}"


def discover(root, suites, regex):
    tests = []
    for suite in suites:
        sdir = os.path.join(root, suite)
        if not os.path.isdir(sdir):
            continue
        for dirpath, dirnames, filenames in os.walk(sdir):
            dirnames.sort()
            if "model.onnx" in filenames:
                name = os.path.relpath(dirpath, sdir)
                t = Test(suite, name, dirpath)
                if regex is None or regex.search(t.id):
                    tests.append(t)
                dirnames[:] = []  # data sets live below; nothing more to find
    tests.sort(key=lambda t: t.id)
    return tests


def graph_io(model_path):
    """Names of the non-initializer graph inputs and of the graph outputs."""
    import onnx

    model = onnx.load(model_path, load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    inits |= {t.values.name for t in model.graph.sparse_initializer}
    inputs = [vi.name for vi in model.graph.input if vi.name not in inits]
    outputs = [vi.name for vi in model.graph.output]
    return inputs, outputs


def _index(path, prefix):
    m = re.match(prefix + r"_(\d+)\.pb$", os.path.basename(path))
    return int(m.group(1)) if m else -1


def data_sets(test_dir):
    sets = []
    for d in sorted(glob.glob(os.path.join(test_dir, "test_data_set_*"))):
        if not os.path.isdir(d):
            continue
        ins = sorted(glob.glob(os.path.join(d, "input_*.pb")),
                     key=lambda p: _index(p, "input"))
        outs = sorted(glob.glob(os.path.join(d, "output_*.pb")),
                      key=lambda p: _index(p, "output"))
        sets.append((d, ins, outs))
    return sets


# --------------------------------------------------------------------------
# Side table.
# --------------------------------------------------------------------------

class TableError(Exception):
    pass


def load_table(path):
    """Returns [(pattern, reason, lineno, modes)]; `modes` is the tuple of
    modes the entry applies to. Raises TableError on bad lines."""
    entries = []
    if not os.path.exists(path):
        return entries
    errors = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            pattern, sep, reason = line.partition("#")
            pattern, reason = pattern.strip(), reason.strip()
            modes = MODES
            for m in MODES:
                if pattern.startswith(m + ":"):
                    pattern, modes = pattern[len(m) + 1:].strip(), (m,)
            if not sep or not reason:
                errors.append(f"{path}:{lineno}: entry '{pattern}' has no reason "
                              "(write '<suite>/<test>  # reason')")
                continue
            if len(pattern.split()) != 1 or "/" not in pattern:
                errors.append(f"{path}:{lineno}: bad pattern '{pattern}' "
                              "(want one '<suite>/<test-glob>')")
                continue
            entries.append((pattern, reason, lineno, modes))
    if errors:
        raise TableError("\n".join(errors))
    return entries


def match_table(entries, test_id, mode="static"):
    for pattern, reason, _, modes in entries:
        if mode in modes and fnmatch.fnmatchcase(test_id, pattern):
            return pattern, reason
    return None


# --------------------------------------------------------------------------
# Running one test.
# --------------------------------------------------------------------------

def _run_cmd(cmd, timeout):
    """Returns (returncode or None on timeout, stderr+stdout text, seconds).
    The command runs in its own process group so that a timeout also ends
    whatever it started (a linker, say)."""
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        return 127, str(e), time.monotonic() - t0
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
        rc = None
    text = err.decode(errors="replace") + out.decode(errors="replace")
    return rc, text, time.monotonic() - t0


def first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:300]
    return ""


def _error_line(text):
    """The most telling line of a tool's output: the first one that looks
    like an error, else the first non-empty one."""
    for line in text.splitlines():
        if re.search(r"error|unsupported|not supported|failed|mismatch", line, re.I):
            return line.strip()[:300]
    return first_line(text)


class Result:
    def __init__(self, test, status, detail="", seconds=0.0, unsupported=False):
        self.test = test
        self.status = status
        self.detail = detail
        self.seconds = seconds
        self.unsupported = unsupported  # COMPILE_FAIL with exit 2
        self.peaks = []  # --check-peak: (kind, measured, predicted) per data set


def run_test(test, args):
    try:
        return _run_test(test, args)
    except Exception as e:  # noqa: BLE001 - a runner bug must not stop the run
        return Result(test, RUN_FAIL, f"runner error: {type(e).__name__}: {e}")


def _run_test(test, args):
    t0 = time.monotonic()
    work = os.path.join(args.work_dir, test.suite, test.name)
    if test.mode != "static":
        work = os.path.join(args.work_dir, test.mode, test.suite, test.name)
    os.makedirs(work, exist_ok=True)
    so = os.path.join(work, "model.so")
    if os.path.exists(so):
        os.remove(so)
    model = os.path.join(test.path, "model.onnx")

    peaks = []

    def done(status, detail="", unsupported=False):
        r = Result(test, status, detail, time.monotonic() - t0, unsupported)
        r.peaks = peaks
        if status == PASS and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        return r

    try:
        inputs, outputs = graph_io(model)
    except Exception as e:  # noqa: BLE001 - any parse error is a test failure
        return done(COMPILE_FAIL, f"cannot read model.onnx: {e}")

    cmd = [args.compile, model, "-o", so] + args.compile_arg
    if test.mode == "dynamic":
        cmd.append("--force-dynamic")
    rc, text, _ = _run_cmd(cmd, args.timeout)
    if rc is None:
        return done(TIMEOUT, f"disc-compile ran past {args.timeout:g} s")
    if rc != 0:
        kind = "unsupported" if rc == 2 else f"crash (exit {rc})"
        return done(COMPILE_FAIL, f"{kind}: {_error_line(text)}", rc == 2)
    if not os.path.exists(so):
        return done(COMPILE_FAIL, "disc-compile exited 0 but wrote no model.so")

    sets = data_sets(test.path)
    if not sets:
        return done(PASS, "compiled; no data sets")
    for d, ins, outs in sets:
        cmd = [args.run, so]
        for i, f in enumerate(ins):
            idx = _index(f, "input")
            if 0 <= idx < len(inputs):
                name = inputs[idx]
            else:
                return done(RUN_FAIL, f"{os.path.basename(d)}: {os.path.basename(f)} "
                                      f"has no matching graph input ({len(inputs)} inputs)")
            cmd += ["--input", f"{name}={f}"]
        for f in outs:
            idx = _index(f, "output")
            if idx >= len(outputs):
                continue
            cmd += ["--compare", f"#{idx}={f}"]
        cmd += ["--rtol", repr(args.rtol), "--atol", repr(args.atol)] + args.run_arg
        ds = os.path.basename(d)
        report = os.path.join(work, f"report_{ds}.json")
        if args.check_peak:
            cmd += ["--report", report]
        rc, text, _ = _run_cmd(cmd, args.timeout)
        if rc is None:
            return done(TIMEOUT, f"{ds}: disc-run ran past {args.timeout:g} s")
        if rc == 1:
            return done(MISMATCH, f"{ds}: {_error_line(text)}")
        if rc != 0:
            return done(RUN_FAIL, f"{ds}: exit {rc}: {_error_line(text)}")
        if args.check_peak:
            over = _check_peak(report, peaks)
            if over:
                return done(MISMATCH, f"{ds}: {over}")
    return done(PASS)


def _check_peak(report, peaks):
    """Records the run's (kind, measured, predicted) in `peaks`, kind one of
    exact / bound / none; returns a message when the measured peak is above
    the memory model's prediction (exact or an upper bound), else None."""
    with open(report) as f:
        rep = json.load(f)
    measured, predicted = rep.get("peak_bytes"), rep.get("predicted_peak_bytes")
    if not isinstance(predicted, int):
        peaks.append(("none", measured, None))
        return None
    bound = bool(rep.get("predicted_peak_is_upper_bound"))
    peaks.append(("bound" if bound else "exact", measured, predicted))
    if measured <= predicted:
        return None
    kind = "upper bound" if bound else "peak"
    return f"measured peak {measured} bytes above the predicted {kind} {predicted}"


def print_peaks(results):
    """--check-peak: how the predictions of the passing runs compare."""
    runs = [p for r in results if r.status == PASS for p in r.peaks]
    exact = [p for p in runs if p[0] == "exact"]
    bound = [p for p in runs if p[0] == "bound"]
    equal = sum(1 for _, m, q in exact if m == q)
    ratios = sorted(m / q for _, m, q in bound if q)
    median = ratios[len(ratios) // 2] if ratios else float("nan")
    print(f"\npeaks of {len(runs)} passing runs: {len(exact)} exact "
          f"predictions ({equal} equal to the measured peak, {len(exact) - equal} "
          f"above it), {len(bound)} upper bounds (measured/bound median "
          f"{median:.2f}, min {ratios[0] if ratios else float('nan'):.2f}), "
          f"{sum(1 for p in runs if p[0] == 'none')} not predictable")


# --------------------------------------------------------------------------
# Reporting.
# --------------------------------------------------------------------------

NODE_NON_EXPANDED = "node w/o _expanded"


def suite_totals(results, table):
    """{suite: {status: n, 'tests': n, 'expected': n}} plus a 'total' row."""
    rows = {}
    for r in results:
        keys = [r.test.suite, "total"]
        # The issue-level target counts the node tests without the
        # `_expanded` variants (those re-test a function op's decomposition).
        if r.test.suite == "node" and "_expanded" not in r.test.name:
            keys.insert(1, NODE_NON_EXPANDED)
        for key in keys:
            row = rows.setdefault(key, dict({s: 0 for s in STATUSES},
                                            tests=0, expected=0, unsupported=0))
            row["tests"] += 1
            row[r.status] += 1
            if r.status != PASS and match_table(table, r.test.id, r.test.mode):
                row["expected"] += 1
            if r.unsupported:
                row["unsupported"] += 1
    order = []
    for s in SUITES:
        if s in rows:
            order.append(s)
        if s == "node" and NODE_NON_EXPANDED in rows:
            order.append(NODE_NON_EXPANDED)
    order += sorted(k for k in rows
                    if k not in SUITES and k not in ("total", NODE_NON_EXPANDED))
    if "total" in rows:
        order.append("total")
    return [(k, rows[k]) for k in order]


def print_totals(totals, out):
    hdr = f"{'suite':<20} {'tests':>6} {'pass':>6} {'compile':>8} {'run':>5} " \
          f"{'mismatch':>8} {'timeout':>7} {'expected':>8} {'pass %':>7}"
    print(hdr, file=out)
    print("-" * len(hdr), file=out)
    for suite, row in totals:
        pct = 100.0 * row[PASS] / row["tests"] if row["tests"] else 0.0
        print(f"{suite:<20} {row['tests']:>6} {row[PASS]:>6} {row[COMPILE_FAIL]:>8} "
              f"{row[RUN_FAIL]:>5} {row[MISMATCH]:>8} {row[TIMEOUT]:>7} "
              f"{row['expected']:>8} {pct:>6.1f}%", file=out)


def write_summary(path, mode_totals, args):
    """`mode_totals`: [(mode, totals)]; one table per mode."""
    lines = []
    for mode, totals in mode_totals:
        if len(mode_totals) > 1 or mode != "static":
            if lines:
                lines.append("")
            lines.append(f"{mode.capitalize()} mode:")
            lines.append("")
        lines += _summary_rows(totals)
    lines.append("")
    lines.append(f"Tolerances: rtol={args.rtol:g}, atol={args.atol:g}; "
                 f"per-command timeout {args.timeout:g} s. Generated by "
                 "`test/onnx/run_conformance.py --write-summary`.")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def _summary_rows(totals):
    lines = [
        "| suite | tests | pass | compile fail (unsupported) | run fail | "
        "mismatch | timeout | expected failures | pass rate |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for suite, row in totals:
        pct = 100.0 * row[PASS] / row["tests"] if row["tests"] else 0.0
        name = f"**{suite}**" if suite == "total" else suite
        lines.append(
            f"| {name} | {row['tests']} | {row[PASS]} | {row[COMPILE_FAIL]} "
            f"({row['unsupported']}) | {row[RUN_FAIL]} | {row[MISMATCH]} | "
            f"{row[TIMEOUT]} | {row['expected']} | {pct:.1f}% |")
    return lines


def concise_reason(detail):
    """One line from a tool's error: no file paths, no 'supported:' tail."""
    text = detail.replace("\n", " ").strip()
    text = re.sub(r"^(unsupported|crash \(exit \d+\)): ", "", text)
    text = re.sub(r"\S*model\.onnx:\d+:\d+: error: ", "", text)
    text = re.sub(r" \(supported: [^)]*\)", "", text)
    return text[:160]


def update_table(path, results, table):
    new = [r for r in results
           if r.status != PASS and not match_table(table, r.test.id, r.test.mode)]
    # A test failing in both modes gets one unprefixed entry; one failing only
    # in dynamic mode gets a `dynamic:` entry.
    static_ids = {r.test.id for r in new if r.test.mode == "static"}
    new = [r for r in new if r.test.mode == "static" or r.test.id not in static_ids]
    if not new:
        print(f"update-table: nothing to add to {path}")
        return
    with open(path, "a") as f:
        for r in sorted(new, key=lambda r: (r.test.mode, r.test.id)):
            reason = concise_reason(r.detail) or r.status
            prefix = "" if r.test.mode == "static" else r.test.mode + ":"
            f.write(f"{prefix}{r.test.id}  # {r.status}: {reason}\n")
    print(f"update-table: appended {len(new)} entries to {path} "
          "(edit the reasons by hand)")


# --------------------------------------------------------------------------
# Main.
# --------------------------------------------------------------------------

def default_bin_dir():
    env = os.environ.get("DISC_BIN_DIR")
    if env:
        return env
    return os.path.join(REPO, os.environ.get("BUILD_DIR", "build"), "bin")


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Run the ONNX backend test suite through disc-compile/disc-run.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin-dir", default=default_bin_dir(),
                   help="directory holding disc-compile and disc-run "
                        "(default: $DISC_BIN_DIR or <repo>/build/bin)")
    p.add_argument("--data-root", default=DATA_ROOT, help=f"default: {DATA_ROOT}")
    p.add_argument("--suite", action="append", choices=SUITES,
                   help="run only this suite (repeatable; default: all four)")
    p.add_argument("--filter", metavar="REGEX",
                   help="run only tests whose '<suite>/<test>' matches REGEX (re.search)")
    p.add_argument("--mode", choices=("static", "dynamic", "both"), default="static",
                   help="static: the shapes the models declare; dynamic: every "
                        "input dim unknown (disc-compile --force-dynamic); both: "
                        "run each test in both modes (default: static)")
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                   help="tests run in parallel (default: os.cpu_count())")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds per disc-compile / disc-run command (default 120)")
    p.add_argument("--work-dir", default=None,
                   help="where compiled models go (default: <bin-dir>/../onnx-conformance)")
    p.add_argument("--keep", action="store_true",
                   help="keep the work directories of passing tests")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--table", default=DEFAULT_TABLE,
                   help="expected-failure side table (default: expected_failures.txt here)")
    p.add_argument("--write-summary", metavar="FILE.md",
                   help="write a markdown table of per-suite totals")
    p.add_argument("--json", metavar="FILE.json",
                   help="write every test's status and detail as JSON")
    p.add_argument("--update-table", action="store_true",
                   help="append failing tests missing from the table, with the "
                        "tool's first error line as reason (edit by hand after)")
    p.add_argument("--compile-arg", action="append", default=[],
                   help="extra argument for disc-compile (repeatable)")
    p.add_argument("--run-arg", action="append", default=[],
                   help="extra argument for disc-run (repeatable)")
    p.add_argument("--check-peak", action="store_true",
                   help="also fail a test whose measured peak (disc-run "
                        "--report) is above the memory model's prediction")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="print every test's result, not only failures")
    args = p.parse_args(argv)
    args.jobs = max(1, args.jobs)
    args.suite = args.suite or list(SUITES)
    args.modes = list(MODES) if args.mode == "both" else [args.mode]
    args.compile = os.path.join(args.bin_dir, "disc-compile")
    args.run = os.path.join(args.bin_dir, "disc-run")
    if args.work_dir is None:
        args.work_dir = os.path.join(os.path.dirname(os.path.abspath(args.bin_dir)),
                                     "onnx-conformance")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        table = load_table(args.table)
    except TableError as e:
        print(f"error: bad side table:\n{e}", file=sys.stderr)
        return 2
    for tool in (args.compile, args.run):
        if not os.access(tool, os.X_OK):
            print(f"error: {tool} not found or not executable (use --bin-dir)",
                  file=sys.stderr)
            return 2
    try:
        regex = re.compile(args.filter) if args.filter else None
    except re.error as e:
        print(f"error: bad --filter: {e}", file=sys.stderr)
        return 2
    found = discover(args.data_root, args.suite, regex)
    tests = [Test(t.suite, t.name, t.path, m) for m in args.modes for t in found]
    if not tests:
        print(f"error: no tests found under {args.data_root} "
              f"(suites {','.join(args.suite)}, filter {args.filter!r})", file=sys.stderr)
        return 2
    os.makedirs(args.work_dir, exist_ok=True)

    print(f"onnx-conformance: {len(found)} tests, mode {args.mode}, {args.jobs} jobs, "
          f"rtol={args.rtol:g} atol={args.atol:g}, timeout {args.timeout:g} s, "
          f"bin {args.bin_dir}", flush=True)
    t0 = time.monotonic()
    results = []
    lock = threading.Lock()
    step = max(1, len(tests) // 10)

    def report(r):
        with lock:
            results.append(r)
            n = len(results)
            expected = match_table(table, r.test.id, r.test.mode)
            tag = f"{r.test.mode}:" if len(args.modes) > 1 or r.test.mode != "static" else ""
            if r.status != PASS and not expected:
                print(f"  [UNEXPECTED] {r.status:<12} {tag}{r.test.id}: {r.detail}",
                      flush=True)
            elif r.status != PASS and args.verbose:
                print(f"  [expected] {r.status:<12} {tag}{r.test.id}: {r.detail}",
                      flush=True)
            elif r.status == PASS and expected:
                print(f"  [unexpected pass] {tag}{r.test.id}", flush=True)
            elif args.verbose:
                print(f"  PASS {tag}{r.test.id} ({r.seconds:.1f} s)", flush=True)
            if n % step == 0 or n == len(tests):
                print(f"  ... {n}/{len(tests)} done, {time.monotonic() - t0:.0f} s",
                      flush=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_test, t, args) for t in tests]
        try:
            for fut in concurrent.futures.as_completed(futures):
                report(fut.result())
        except KeyboardInterrupt:
            for fut in futures:
                fut.cancel()
            raise

    results.sort(key=lambda r: (MODES.index(r.test.mode), r.test.id))
    elapsed = time.monotonic() - t0
    passed = [r for r in results if r.status == PASS]
    failed = [r for r in results if r.status != PASS]
    unexpected = [r for r in failed if not match_table(table, r.test.id, r.test.mode)]
    unexpected_pass = [r for r in passed if match_table(table, r.test.id, r.test.mode)]
    tagged = len(args.modes) > 1 or args.modes != ["static"]

    def tag(r):
        return f"{r.test.mode}:{r.test.id}" if tagged else r.test.id

    # Table entries that match no test at all (only meaningful on a full run).
    if not args.filter and set(args.suite) == set(SUITES):
        ids = [t.id for t in found]
        stale = [(p, n) for p, _, n, modes in table
                 if any(m in args.modes for m in modes)
                 and not any(fnmatch.fnmatchcase(i, p) for i in ids)]
        for p, n in stale:
            print(f"warning: {args.table}:{n}: '{p}' matches no test")

    mode_totals = []
    for mode in args.modes:
        totals = suite_totals([r for r in results if r.test.mode == mode], table)
        mode_totals.append((mode, totals))
        print()
        if tagged:
            n_pass = sum(1 for r in results if r.test.mode == mode and r.status == PASS)
            n_all = sum(1 for r in results if r.test.mode == mode)
            print(f"{mode} mode: {n_pass} passed, {n_all - n_pass} failed")
        print_totals(totals, sys.stdout)
    if args.check_peak:
        print_peaks(results)
    print(f"\n{elapsed:.0f} s wall, {args.jobs} jobs")
    if unexpected_pass:
        print(f"\nunexpected passes ({len(unexpected_pass)}; prune them from "
              f"{os.path.relpath(args.table)}):")
        for r in unexpected_pass:
            print(f"  {tag(r)}")
    if unexpected:
        print(f"\nunexpected failures ({len(unexpected)}):")
        for r in unexpected:
            print(f"  {r.status:<12} {tag(r)}: {r.detail}")

    if args.write_summary:
        write_summary(args.write_summary, mode_totals, args)
        print(f"\nwrote {args.write_summary}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"test": r.test.id, "mode": r.test.mode,
                        "status": r.status, "detail": r.detail,
                        "unsupported": r.unsupported, "seconds": round(r.seconds, 3),
                        "expected_failure": bool(match_table(table, r.test.id,
                                                             r.test.mode))}
                       for r in results], f, indent=1)
        print(f"wrote {args.json}")
    if args.update_table:
        update_table(args.table, results, table)

    print()
    print(f"{len(passed)} passed, {len(failed)} failed")
    print(f"unexpected failures: {len(unexpected)}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())

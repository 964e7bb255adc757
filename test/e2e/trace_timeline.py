#!/usr/bin/python3
"""The memory timeline of a run (docs/memory.md, "Timeline"): compiles the
GPT training step (examples/models/gpt_train_step.py, exported as test/e2e
does), runs it at one shape under a memory limit (default 60% of the
predicted peak) with disc-run --trace and --memory-plot, and checks

  trace (Trace Event Format, the JSON object form):
    - every event has name, ph, ts, pid, tid; "X" events a dur >= 0,
      "C" events numeric args; the complete events do not overlap;
    - there is a slice per kernel or library call: both kinds occur, and
      every slice is named after a node of the ONNX graph (read with the
      onnx package, independently of the compiler);
    - the maximum of the "live bytes" counter equals the report's
      peak_bytes, and the "predicted live bytes" counter reaches the
      report's predicted_peak_bytes;
    - one "evict" instant per eviction the report counts (at least one)
      and one "regenerate" per regeneration;
  plot (SVG):
    - parses as XML; the element "peak-label" names the peak bytes and,
      first among the buffers, the largest buffer live at the peak (as the
      trace's otherData lists them); one "evict-marker" per eviction.

    test/e2e/trace_timeline.py --bin-dir build/bin --work-dir build/test/e2e/models

Exit 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_model import ensure_exported  # noqa: E402

SVG_NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("FAILED: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def bytes_text(n):
    """The plot's spelling of a byte count: two decimals of the largest
    binary unit not above it."""
    for div, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= div:
            return f"{n / div:.2f} {unit}"
    return f"{n:.2f} B"


def validate_trace(trace):
    """Trace Event Format, JSON object form; returns the event list."""
    check(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list),
          "trace: not an object with a 'traceEvents' list")
    events = trace["traceEvents"]
    check(events, "trace: no events")
    for k, e in enumerate(events):
        where = f"trace event {k} ({e.get('name')!r})"
        check(isinstance(e, dict), where + ": not an object")
        for field, types in (("name", str), ("ph", str), ("ts", (int, float)),
                             ("pid", int), ("tid", int)):
            check(field in e, f"{where}: missing '{field}'")
            check(isinstance(e[field], types) and not isinstance(e[field], bool),
                  f"{where}: '{field}' has type {type(e[field]).__name__}")
        check(e["ph"] in ("X", "C", "i", "M"), f"{where}: unexpected ph {e['ph']}")
        check(e["ts"] >= 0, f"{where}: negative ts")
        if e["ph"] == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0,
                  f"{where}: 'X' event without a dur >= 0")
        if e["ph"] == "C":
            args = e.get("args")
            check(isinstance(args, dict) and args and all(
                isinstance(v, (int, float)) for v in args.values()),
                f"{where}: 'C' event without numeric args")
        if e["ph"] == "i":
            check(e.get("s", "t") in ("g", "p", "t"), f"{where}: bad scope")
    return events


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--model", default="gpt_train_step")
    ap.add_argument("--shape", default="3x64")
    ap.add_argument("--limit", default="60%")
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    man = ensure_exported(args.model, args.work_dir, [args.shape], 3600)
    check(man is not None, f"{args.model}: export failed")
    onnx_path = os.path.join(args.work_dir, man["onnx"])
    case = next(c for c in man["cases"] if c["name"] == args.shape)
    so = os.path.join(args.work_dir, f"{args.model}.trace.so")
    r = subprocess.run([os.path.join(args.bin_dir, "disc-compile"), onnx_path,
                        "-o", so], capture_output=True, text=True)
    check(r.returncode == 0, "disc-compile failed:\n" + r.stderr)
    out = os.path.join(args.work_dir, f"{args.model}.trace")
    trace_path, svg_path, rep_path = out + ".json", out + ".svg", out + ".report.json"
    cmd = [os.path.join(args.bin_dir, "disc-run"), so,
           "--memory-limit", args.limit, "--trace", trace_path,
           "--memory-plot", svg_path, "--report", rep_path]
    for k, v in case["inputs"].items():
        cmd += ["--input", f"{k}={os.path.join(args.work_dir, v)}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, "disc-run failed:\n" + r.stdout + r.stderr)
    rep = json.load(open(rep_path))
    print(f"{args.model} {args.shape} limit {args.limit}: peak_bytes "
          f"{rep['peak_bytes']}, predicted {rep['predicted_peak_bytes']}, "
          f"evictions {rep['evictions']}, regenerations {rep['regenerations']}")

    # The trace.
    trace = json.load(open(trace_path))
    events = validate_trace(trace)
    slices = [e for e in events if e["ph"] == "X"]
    kinds = {e["cat"] for e in slices}
    check({"kernel", "library"} <= kinds,
          f"trace: slices of kinds {sorted(kinds)}, expected kernel and library")
    import onnx
    nodes = {n.name for n in onnx.load(onnx_path).graph.node}
    unnamed = sorted({e["name"] for e in slices} - nodes)
    check(not unnamed, f"trace: {len(unnamed)} slice names are no ONNX node: "
          f"{unnamed[:5]}")
    slices.sort(key=lambda e: e["ts"])
    for a, b in zip(slices, slices[1:]):
        # Microsecond floats: allow rounding in the last digits.
        check(a["ts"] + a["dur"] <= b["ts"] + 1e-3,
              f"trace: slices {a['name']!r} and {b['name']!r} overlap")
    live = [e["args"]["live"] for e in events
            if e["ph"] == "C" and e["name"] == "live bytes"]
    check(live, "trace: no live-bytes counter")
    check(max(live) == rep["peak_bytes"],
          f"trace: live-bytes maximum {max(live)} != report peak_bytes "
          f"{rep['peak_bytes']}")
    predicted = [e["args"]["predicted"] for e in events
                 if e["ph"] == "C" and e["name"] == "predicted live bytes"]
    check(predicted, "trace: no predicted-live-bytes counter")
    check(max(predicted) == rep["predicted_peak_bytes"],
          f"trace: predicted maximum {max(predicted)} != report "
          f"predicted_peak_bytes {rep['predicted_peak_bytes']}")
    evicts = [e for e in events if e["ph"] == "i" and e["name"] == "evict"]
    regens = [e for e in events if e["ph"] == "i" and e["name"] == "regenerate"]
    check(rep["evictions"] > 0, f"report: no eviction under {args.limit}")
    check(len(evicts) == rep["evictions"],
          f"trace: {len(evicts)} evict events, report {rep['evictions']}")
    check(len(regens) == rep["regenerations"],
          f"trace: {len(regens)} regenerate events, report "
          f"{rep['regenerations']}")
    other = trace.get("otherData", {})
    check(other.get("peak_bytes") == rep["peak_bytes"],
          "trace: otherData.peak_bytes differs from the report")
    tensors = other.get("peak_tensors", [])
    check(tensors and sum(t["bytes"] for t in tensors) == rep["peak_bytes"],
          "trace: the buffers live at the peak do not add up to peak_bytes")
    check(all(a["bytes"] >= b["bytes"] for a, b in zip(tensors, tensors[1:])),
          "trace: peak buffers not largest first")

    # The plot.
    root = ET.parse(svg_path).getroot()
    check(root.tag == SVG_NS + "svg", f"plot: root element {root.tag}")
    label = next((el for el in root.iter() if el.get("id") == "peak-label"), None)
    check(label is not None, "plot: no element 'peak-label'")
    text = "\n".join(t.strip() for t in label.itertext())
    peak_text = bytes_text(rep["peak_bytes"])
    check(text.startswith("peak " + peak_text),
          f"plot: peak label does not name the peak {peak_text}: "
          f"{text[:120]!r}")
    check(tensors[0]["name"] in text,
          f"plot: peak label does not list the largest buffer "
          f"{tensors[0]['name']!r}")
    markers = [el for el in root.iter() if el.get("class") == "evict-marker"]
    check(len(markers) == rep["evictions"],
          f"plot: {len(markers)} evict markers, report {rep['evictions']}")
    print(f"PASSED: {len(slices)} slices, {len(live)} live-bytes samples, "
          f"{len(evicts)} evictions, {len(markers)} markers; trace {trace_path}, "
          f"plot {svg_path}")


if __name__ == "__main__":
    main()

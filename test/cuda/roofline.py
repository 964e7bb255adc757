#!/usr/bin/env python3
"""Roofline of a CUDA model at given input shapes, without a GPU.

The compiler records in the signature of a CUDA model.so (`kernels`, by
disc-gpu-kernel-cost, docs/cuda.md "Roofline") every kernel's and every
cuBLAS/cuDNN call's compulsory global-memory bytes and floating-point
operations as expressions of the input dims. This evaluates them at the
shapes given and reports, per kernel, bytes / peak bandwidth and FLOPs /
peak FLOP rate; the roofline time of a kernel is the larger of the two, the
model's is their sum over the kernels that run (a kernel that runs only to
recompute an evicted buffer under a memory limit is listed, not summed).
Copies (`gpu.memcpy`: a constant operand's per-run device copy, a mirrored
host buffer) take their bytes over PCIe (host-to-device, device-to-host)
or twice their bytes over HBM (device-to-device). The defaults are an
NVIDIA H200's peaks: 4.8 TB/s HBM3e, 67 TFLOP/s FP32, 64 GB/s PCIe 5.0
x16 per direction.

    roofline.py --model model.so --shape tokens=2x77 [--json out.json]
    roofline.py --signature sig.json --dim batch=2 --dim seq=77

Only the Python standard library is needed (the GPU machine of
scripts/gpu-check.sh has no NumPy requirement). Exit codes: 0 ok, 2 bad
usage or an expression that cannot be evaluated (an unbound dim).
"""
import argparse
import ctypes
import json
import sys

H200_BANDWIDTH = 4.8e12  # bytes/s
H200_FLOPS = 67e12  # FP32 FLOP/s
H200_PCIE = 64e9  # bytes/s per direction, PCIe 5.0 x16


def load_signature(model=None, signature=None):
    """The signature JSON of a model.so (its `disc_model_signature`), or a
    file holding it."""
    if signature:
        with open(signature) as f:
            try:
                return json.load(f)
            except ValueError as e:
                raise ValueError("'%s' is not a signature JSON: %s" %
                                 (signature, e))
    lib = ctypes.CDLL(model, mode=ctypes.RTLD_LOCAL)
    fn = lib.disc_model_signature
    fn.restype = ctypes.c_char_p
    return json.loads(fn().decode())


def evaluate(expr, dims):
    """Value of a signature expression: an integer, a dim name, or [OP, A,
    B] with OP in + * floordiv ceildiv mod max min. KeyError for an unbound
    dim."""
    if isinstance(expr, bool):
        raise ValueError("bad expression %r" % (expr,))
    if isinstance(expr, int):
        return expr
    if isinstance(expr, str):
        return dims[expr]
    op, a, b = expr
    a, b = evaluate(a, dims), evaluate(b, dims)
    if op == "+":
        return a + b
    if op == "*":
        return a * b
    if op == "floordiv":
        return a // b
    if op == "ceildiv":
        return -(-a // b)
    if op == "mod":
        return a % b
    if op == "max":
        return max(a, b)
    if op == "min":
        return min(a, b)
    raise ValueError("unknown operator %r" % (op,))


def bind_dims(sig, shapes):
    """Dim name -> size from input shapes {input name: [sizes]}; ValueError
    when a shape does not match the signature."""
    dims = {}
    for entry in sig.get("inputs", []):
        name = entry["name"]
        if name not in shapes:
            continue
        shape = shapes[name]
        if len(shape) != len(entry["shape"]):
            raise ValueError("input '%s' has rank %d, not %d" %
                             (name, len(shape), len(entry["shape"])))
        for want, got in zip(entry["shape"], shape):
            if isinstance(want, str):
                if dims.setdefault(want, got) != got:
                    raise ValueError("dim '%s' is both %d and %d" %
                                     (want, dims[want], got))
            elif want != got:
                raise ValueError("input '%s' has a dim %d where %d is fixed" %
                                 (name, got, want))
    return dims


def roofline(sig, dims, bandwidth=H200_BANDWIDTH, flops_rate=H200_FLOPS,
             pcie=H200_PCIE):
    """Per-kernel bytes, FLOPs and roofline times (µs) at `dims`, and the
    model's sums (`bytes` and `flops` of the kernels and library calls;
    copies apart). A kernel with an unknown cost has None values."""
    rows = []
    total = {"bytes": 0, "flops": 0, "us": 0.0, "library_us": 0.0,
             "generated_us": 0.0, "copies_us": 0.0, "copy_bytes": 0,
             "unknown": 0, "kernels": 0, "library_calls": 0, "copies": 0}
    for k in sig.get("kernels", []):
        row = {"name": k["name"], "node": k.get("node", ""),
               "library": k.get("library", False),
               "copy": k.get("copy"),
               "runs": k.get("runs", "always"),
               "bytes": None, "flops": None, "us": None}
        if k.get("bytes") is not None and k.get("flops") is not None:
            row["bytes"] = evaluate(k["bytes"], dims)
            row["flops"] = evaluate(k["flops"], dims)
            if row["copy"] in ("host-to-device", "device-to-host"):
                row["bytes_us"] = row["bytes"] / pcie * 1e6
            elif row["copy"] == "device-to-device":
                row["bytes_us"] = 2 * row["bytes"] / bandwidth * 1e6
            elif row["copy"]:
                row["bytes_us"] = 0.0
            else:
                row["bytes_us"] = row["bytes"] / bandwidth * 1e6
            row["flops_us"] = row["flops"] / flops_rate * 1e6
            row["us"] = max(row["bytes_us"], row["flops_us"])
            row["bound"] = ("copy" if row["copy"] else
                            "memory" if row["bytes_us"] >= row["flops_us"]
                            else "compute")
        else:
            row["unknown"] = k.get("bytes_unknown") or k.get("flops_unknown")
        rows.append(row)
        if row["runs"] == "recompute":
            continue
        if row["us"] is None:
            total["unknown"] += 1
            continue
        total["us"] += row["us"]
        if row["copy"]:
            total["copies"] += 1
            total["copy_bytes"] += row["bytes"]
            total["copies_us"] += row["us"]
            continue
        total["library_calls" if row["library"] else "kernels"] += 1
        total["bytes"] += row["bytes"]
        total["flops"] += row["flops"]
        total["library_us" if row["library"] else "generated_us"] += row["us"]
    return {"kernels": rows, "total": total, "dims": dims,
            "peak_bandwidth": bandwidth, "peak_flops": flops_rate,
            "peak_pcie": pcie}


def device_slices(trace_path):
    """The device slices of a disc-run --trace file (a CUDA model's
    launches and library calls timed with CUDA events, docs/cuda.md
    "Kernel times"), in order: dicts with name (the ONNX node), callee (the
    kernel symbol or "cuBLAS matmul", ...), kind and us."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    return [{"name": e["name"], "callee": e["args"].get("callee", ""),
             "kind": e["args"].get("kind", ""), "us": float(e["dur"])}
            for e in events
            if e.get("ph") == "X" and "callee" in e.get("args", {})]


def match_device_times(result, slices):
    """Adds `device_us` (the summed device time of its launches) to each
    kernel row of `result` (from `roofline`) that ran: kernels by symbol,
    library calls one to one in program order when the run made as many as
    the rows that always run. Returns the sums {kernels_us, library_us,
    unmatched}."""
    rows = result["kernels"]
    by_name = {r["name"]: r for r in rows
               if not r["library"] and not r["copy"]}
    library = [r for r in rows if r["library"] and r["runs"] == "always"]
    lib_slices = [s for s in slices if s["kind"] == "library"]
    sums = {"kernels_us": 0.0, "library_us": 0.0, "unmatched": 0}
    for r in rows:
        r["device_us"] = None
    for s in slices:
        if s["kind"] == "library":
            sums["library_us"] += s["us"]
            continue
        sums["kernels_us"] += s["us"]
        r = by_name.get(s["callee"])
        if r is None:
            sums["unmatched"] += 1
            continue
        r["device_us"] = (r["device_us"] or 0.0) + s["us"]
    if len(lib_slices) == len(library):
        for r, s in zip(library, lib_slices):
            r["device_us"] = s["us"]
    else:
        sums["unmatched"] += len(lib_slices)
    return sums


def parse_shape(text):
    """'tokens=2x77' -> ('tokens', [2, 77]); 'x=' is a scalar."""
    name, _, dims = text.partition("=")
    if not name:
        raise ValueError("bad --shape '%s' (expected NAME=AxBxC)" % text)
    return name, [int(d) for d in dims.split("x")] if dims else []


def print_report(result, out=sys.stdout):
    print("| kernel | ONNX node | runs | bytes | FLOPs | bytes µs | "
          "FLOPs µs | roofline µs |", file=out)
    print("|---|---|---|---:|---:|---:|---:|---:|", file=out)
    for r in result["kernels"]:
        name = r["name"] + (" (library)" if r["library"] else
                            " (%s)" % r["copy"] if r["copy"] else "")
        if r["us"] is None:
            print("| %s | %s | %s | unknown | unknown | | | (%s) |" %
                  (name, r["node"], r["runs"], r.get("unknown", "")), file=out)
            continue
        print("| %s | %s | %s | %d | %d | %.3f | %.3f | %.3f |" %
              (name, r["node"], r["runs"], r["bytes"], r["flops"],
               r["bytes_us"], r["flops_us"], r["us"]), file=out)
    t = result["total"]
    print("\nroofline: %.3f µs (%d kernels %.3f µs, %d library calls %.3f "
          "µs, %d copies %.3f µs), %d bytes, %d FLOPs, %d copied bytes, %d "
          "with an unknown cost; peaks %.3g B/s, %.3g FLOP/s, PCIe %.3g B/s" %
          (t["us"], t["kernels"], t["generated_us"], t["library_calls"],
           t["library_us"], t["copies"], t["copies_us"], t["bytes"],
           t["flops"], t["copy_bytes"], t["unknown"],
           result["peak_bandwidth"], result["peak_flops"],
           result["peak_pcie"]), file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="a CUDA model.so (its signature)")
    src.add_argument("--signature", help="the signature JSON in a file")
    ap.add_argument("--shape", action="append", default=[],
                    help="an input's shape, NAME=AxBxC (repeatable)")
    ap.add_argument("--dim", action="append", default=[],
                    help="a dim's size, NAME=N (repeatable)")
    ap.add_argument("--peak-bandwidth", type=float, default=H200_BANDWIDTH,
                    help="bytes/s (default 4.8e12, H200)")
    ap.add_argument("--peak-flops", type=float, default=H200_FLOPS,
                    help="FLOP/s (default 67e12, H200 FP32)")
    ap.add_argument("--peak-pcie", type=float, default=H200_PCIE,
                    help="host<->device bytes/s (default 64e9, PCIe 5.0 "
                         "x16)")
    ap.add_argument("--json", help="write the result as JSON here")
    args = ap.parse_args()
    try:
        sig = load_signature(args.model, args.signature)
        if "kernels" not in sig:
            raise ValueError("the signature has no 'kernels' (not a CUDA "
                             "model, or compiled before the kernel costs)")
        dims = bind_dims(sig, dict(parse_shape(s) for s in args.shape))
        for d in args.dim:
            name, _, value = d.partition("=")
            dims[name] = int(value)
        result = roofline(sig, dims, args.peak_bandwidth, args.peak_flops,
                          args.peak_pcie)
    except KeyError as e:
        print("roofline.py: error: no size for dim %s (give --shape or "
              "--dim)" % e, file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print("roofline.py: error: %s" % e, file=sys.stderr)
        return 2
    print_report(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

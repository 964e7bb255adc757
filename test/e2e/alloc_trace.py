#!/usr/bin/python3
"""Runs a DISC model.so through its C ABI with a tracing allocator.

An independent view of what the compiled code allocates (docs/runtime-abi.md:
every buffer goes through the context's alloc/free): prints each alloc and
free in order, the peak live bytes, and with --check the peak that the
signature's memory model predicts for the same shapes.

    /usr/bin/python3 test/e2e/alloc_trace.py model.so --shape 1x3x64x64 [--events]

Exit codes: 0 ok (with --check: prediction == measurement), 1 mismatch,
2 bad usage.
"""

import argparse
import ctypes
import json
import sys

import numpy as np

DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
          "int8": np.int8, "int16": np.int16, "int32": np.int32,
          "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16,
          "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_}

ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                         ctypes.c_int64)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
# Rematerialization entries (ABI v3): this tracer keeps every candidate, as
# the runtime does without a memory limit.
EVICT = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32,
                         ctypes.c_void_p)
REGENERATE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32)


class Context(ctypes.Structure):
    _fields_ = [("self", ctypes.c_void_p), ("alloc", ALLOC), ("free", FREE),
                ("error", ctypes.c_void_p), ("library_call", ctypes.c_void_p),
                ("remat_evict", EVICT), ("remat_regenerate", REGENERATE),
                ("remat_regenerated", ctypes.c_void_p)]


def evaluate(expr, dims):
    """Evaluates a memory-model expression (docs/runtime-abi.md)."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, str):
        return dims[expr]
    op, a, b = expr[0], evaluate(expr[1], dims), evaluate(expr[2], dims)
    if op == "+":
        return a + b
    if op == "*":
        return a * b
    if op == "floordiv":
        return a // b
    if op == "ceildiv":
        return -((-a) // b)
    if op == "mod":
        return a % b
    raise ValueError(f"bad operator {op}")


def trace(so_path, shapes, seed=0):
    """Runs the model once; returns (signature, events, peak, live_at_exit)."""
    lib = ctypes.CDLL(so_path if "/" in so_path else "./" + so_path)
    lib.disc_model_signature.restype = ctypes.c_char_p
    sig = json.loads(lib.disc_model_signature())
    if len(shapes) != len(sig["inputs"]):
        raise ValueError(f"model has {len(sig['inputs'])} inputs, got "
                         f"{len(shapes)} shapes")
    rng = np.random.default_rng(seed)
    keep = []
    in_descs = []
    for spec, shape in zip(sig["inputs"], shapes):
        dt = DTYPES[spec["dtype"]]
        if np.issubdtype(dt, np.floating):
            a = rng.standard_normal(shape).astype(dt)
        else:
            a = rng.integers(0, 2, size=shape).astype(dt)
        a = np.ascontiguousarray(a)
        keep.append(a)
        r = len(shape)
        desc = (ctypes.c_int64 * (3 + 2 * r))()
        ptr = a.ctypes.data
        desc[0], desc[1], desc[2] = ptr, ptr, 0
        strides = [s // a.itemsize for s in a.strides]
        for k in range(r):
            desc[3 + k] = shape[k]
            desc[3 + r + k] = strides[k]
        in_descs.append(desc)
    out_descs = [(ctypes.c_int64 * (3 + 2 * len(o["shape"])))()
                 for o in sig["outputs"]]

    events = []
    live = {}
    state = {"cur": 0, "peak": 0}
    blocks = {}

    kept = {}  # candidate id -> block kept at its evict point
    handback = []

    def do_alloc(_self, n, align):
        if handback:
            addr = handback.pop()
            assert live[addr] == n, "regenerated buffer size differs"
            return addr
        buf = ctypes.create_string_buffer(int(n) + int(align))
        addr = ctypes.addressof(buf)
        addr = (addr + align - 1) // align * align
        blocks[addr] = buf
        live[addr] = n
        state["cur"] += n
        state["peak"] = max(state["peak"], state["cur"])
        events.append(("alloc", int(n), state["cur"]))
        return addr

    def do_free(_self, p):
        if p is None or p not in live or p in kept.values():
            return
        n = live.pop(p)
        state["cur"] -= n
        blocks.pop(p, None)
        events.append(("free", int(n), state["cur"]))

    def do_evict(_self, cid, p):
        if p in live:
            kept[cid] = p
            events.append(("keep", int(live[p]), state["cur"]))
        return 0

    def do_regenerate(_self, cid):
        if cid not in kept:
            return 0
        handback.append(kept.pop(cid))
        events.append(("reuse", int(live[handback[-1]]), state["cur"]))
        return 1

    alloc_cb, free_cb = ALLOC(do_alloc), FREE(do_free)
    evict_cb, regen_cb = EVICT(do_evict), REGENERATE(do_regenerate)
    ctx = Context(None, alloc_cb, free_cb, None, None, evict_cb, regen_cb,
                  None)
    ins = (ctypes.c_void_p * max(1, len(in_descs)))(
        *[ctypes.cast(d, ctypes.c_void_p) for d in in_descs])
    outs = (ctypes.c_void_p * max(1, len(out_descs)))(
        *[ctypes.cast(d, ctypes.c_void_p) for d in out_descs])
    rc = lib.disc_model_run(ctypes.byref(ctx), ins, outs)
    if rc != 0:
        raise RuntimeError(f"disc_model_run returned {rc}")
    return sig, events, state["peak"], state["cur"]


def bind(sig, shapes):
    dims = {}
    for spec, shape in zip(sig["inputs"], shapes):
        for d, n in zip(spec["shape"], shape):
            if isinstance(d, str):
                dims[d] = n
    return dims


def predicted_peak(sig, shapes):
    mem = sig.get("memory")
    if not mem or not mem.get("predictable"):
        return None
    dims = bind(sig, shapes)
    return max(evaluate(e, dims) for e in mem["peak_bytes"])


def parse_shape(text):
    return [int(x) for x in text.split("x")] if text != "scalar" else []


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--shape", action="append", required=True,
                   help="input shape like 1x3x64x64 (once per input)")
    p.add_argument("--events", action="store_true", help="print every event")
    p.add_argument("--check", action="store_true",
                   help="exit 1 unless the predicted peak equals the measured")
    args = p.parse_args(argv)
    shapes = [parse_shape(s) for s in args.shape]
    sig, events, peak, at_exit = trace(args.model, shapes)
    if args.events:
        for kind, n, cur in events:
            print(f"{kind:5} {n:12d}  live {cur}")
    pred = predicted_peak(sig, shapes)
    allocs = sum(1 for e in events if e[0] == "alloc")
    print(f"allocs {allocs} (model {sig.get('memory', {}).get('num_allocs')})"
          f"  peak {peak}  predicted {pred}  live at exit {at_exit}")
    if args.check and pred != peak:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs the kernels of emulate-sync-kernels.mlir through
disc-gpu-emulate-launches on the CPU (upstream lowering to the LLVM dialect,
mlir-runner) and compares every output bit for bit with a NumPy float32
replay of the same operation order: shared-memory tree sums across
barriers, shuffle xor/down/up/idx with the NVVM lowering's semantics
(`valid` included), warp and block reductions. Prints one line per kernel;
exits 1 on the first mismatch.

Usage: emulate_sync_exec.py KERNELS.mlir WORKDIR RUNNER_LIB[,RUNNER_LIB]
(disc-opt, mlir-opt and mlir-runner on PATH).
"""
import os
import re
import subprocess
import sys

import numpy as np

LOWER = [
    "--convert-scf-to-cf", "--expand-strided-metadata",
    "--finalize-memref-to-llvm", "--convert-arith-to-llvm",
    "--convert-index-to-llvm", "--convert-cf-to-llvm",
    "--convert-func-to-llvm", "--reconcile-unrealized-casts"
]


def butterfly(v, offsets, width=32):
    """gpu.shuffle xor steps `v += shfl(v, off)` over the last axis (lanes
    of a warp): sources at or past `width`, and lanes past it (outside the
    member mask), give the lane its own value."""
    lanes = np.arange(v.shape[-1])
    for off in offsets:
        src = lanes ^ off
        ok = (src < width) & (lanes < width)
        v = v + np.where(ok, v[..., np.where(ok, src, lanes)], v)
    return v


def ref_tree_sum(x, nb):
    s = x.reshape(nb, 128).copy()
    for stride in (64, 32, 16, 8, 4, 2, 1):
        s[:, :stride] = s[:, :stride] + s[:, stride:2 * stride]
    return [(s[:, :1] * x.reshape(nb, 128)).reshape(-1)]


def ref_xor_sum(x, nb):
    v = butterfly(x.reshape(nb, 3, 32), (16, 8, 4, 2, 1))
    return [v.reshape(-1), np.ones(nb * 96, np.int32)]


def ref_xor_sum_w16(x, nb):
    v = butterfly(x.reshape(nb, 2, 32), (8, 4, 2, 1), width=16)
    lanes = np.arange(32)
    valid = np.broadcast_to(((lanes ^ 8) < 16) & (lanes < 16), (nb, 2, 32))
    return [v.reshape(-1), valid.astype(np.int32).reshape(-1)]


def down_step(v, off, threads):
    """One `shuffle down` over a block of `threads` lanes (last axis):
    the valid flags and v + shfl(v)."""
    t = np.arange(threads)
    lane, base = t % 32, t - t % 32
    src = base + lane + off
    ok = (lane + off <= 31) & (src < threads)
    got = v[..., np.where(ok, src, t)]
    return ok, v + got


def ref_down_sum(x, nb):
    v = x.reshape(nb, 80)
    ok0, _ = down_step(v, 16, 80)
    for off in (16, 8, 4, 2, 1):
        _, v = down_step(v, off, 80)
    valid = np.broadcast_to(ok0, (nb, 80)).astype(np.int32)
    return [v.reshape(-1), valid.reshape(-1)]


def ref_idx_up(x, nb):
    v = x.reshape(nb, 2, 32)
    lanes = np.arange(32)
    up_ok = lanes >= 1
    up = v[..., np.where(up_ok, lanes - 1, lanes)]
    valid = np.broadcast_to(up_ok, (nb, 2, 32)).astype(np.int32)
    return [np.repeat(v[..., 3:4], 32, axis=-1).reshape(-1), up.reshape(-1),
            valid.reshape(-1)]


def ref_block_sum(x, nb):
    rows = x.reshape(2 * nb, 3, 32)
    out = np.zeros(nb, np.float32)
    for b in range(nb):
        acc = np.float32(0)
        for row in (b, b + nb):
            ws = butterfly(rows[row], (16, 8, 4, 2, 1))[:, 0]
            p = np.zeros(32, np.float32)
            p[:3] = ws
            acc = np.float32(acc + butterfly(p, (16, 8, 4, 2, 1))[0])
        out[b] = acc
    return [out]


def ref_dyn_shared(x, nb):
    v = x.reshape(nb, 64)
    return [(v[:, ::-1] + (v + v)).reshape(-1)]


# name: (blocks, input elements, outputs (element type, size), reference)
KERNELS = {
    "tree_sum": (3, 3 * 128, [("f32", 3 * 128)], ref_tree_sum),
    "xor_sum": (2, 2 * 96, [("f32", 2 * 96), ("i32", 2 * 96)], ref_xor_sum),
    "xor_sum_w16": (2, 2 * 64, [("f32", 2 * 64),
                                ("i32", 2 * 64)], ref_xor_sum_w16),
    "down_sum": (2, 2 * 80, [("f32", 2 * 80), ("i32", 2 * 80)],
                 ref_down_sum),
    "idx_up": (2, 2 * 64, [("f32", 2 * 64), ("f32", 2 * 64),
                           ("i32", 2 * 64)], ref_idx_up),
    "block_sum": (3, 6 * 96, [("f32", 3)], ref_block_sum),
    "dyn_shared": (2, 2 * 64, [("f32", 2 * 64)], ref_dyn_shared),
}


def hex_dense(a):
    return '"0x' + a.tobytes().hex().upper() + '"'


def main_func(name, nb, data, outs):
    """A @main that calls kernel `name` on `data` and prints each output
    as i32 (f32 outputs bit-cast)."""
    n = data.size
    lines = [
        f'memref.global "private" constant @in_{name} : memref<{n}xf32> = '
        f'dense<{hex_dense(data)}>'
    ]
    for k, (t, size) in enumerate(outs):
        zero = "0.0" if t == "f32" else "0"
        lines.append(f'memref.global "private" @out{k}_{name} : '
                     f'memref<{size}x{t}> = dense<{zero}>')
        lines.append(f'memref.global "private" @bits{k}_{name} : '
                     f'memref<{size}xi32> = dense<0>')
    lines.append("func.func private @printMemrefI32(memref<*xi32>)")
    lines.append("func.func @main() {")
    lines.append(f"  %nb = arith.constant {nb} : index")
    lines.append("  %c0 = arith.constant 0 : index")
    lines.append("  %c1 = arith.constant 1 : index")
    lines.append(f"  %in = memref.get_global @in_{name} : memref<{n}xf32>")
    lines.append(f"  %inc = memref.cast %in : memref<{n}xf32> to memref<?xf32>")
    args = ["%inc"]
    types = ["memref<?xf32>"]
    for k, (t, size) in enumerate(outs):
        lines.append(f"  %o{k} = memref.get_global @out{k}_{name} : "
                     f"memref<{size}x{t}>")
        lines.append(f"  %oc{k} = memref.cast %o{k} : memref<{size}x{t}> to "
                     f"memref<?x{t}>")
        args.append(f"%oc{k}")
        types.append(f"memref<?x{t}>")
    lines.append(f"  call @{name}({', '.join(args)}, %nb) : "
                 f"({', '.join(types)}, index) -> ()")
    for k, (t, size) in enumerate(outs):
        lines.append(f"  %n{k} = arith.constant {size} : index")
        lines.append(f"  %b{k} = memref.get_global @bits{k}_{name} : "
                     f"memref<{size}xi32>")
        lines.append(f"  scf.for %i = %c0 to %n{k} step %c1 {{")
        lines.append(f"    %e = memref.load %o{k}[%i] : memref<{size}x{t}>")
        if t == "f32":
            lines.append("    %e2 = arith.bitcast %e : f32 to i32")
            lines.append(f"    memref.store %e2, %b{k}[%i] : "
                         f"memref<{size}xi32>")
        else:
            lines.append(f"    memref.store %e, %b{k}[%i] : memref<{size}xi32>")
        lines.append("  }")
        lines.append(f"  %u{k} = memref.cast %b{k} : memref<{size}xi32> to "
                     "memref<*xi32>")
        lines.append(f"  call @printMemrefI32(%u{k}) : (memref<*xi32>) -> ()")
    lines.append("  return")
    lines.append("}")
    return "\n".join(lines) + "\n"


def run(cmd, stdin=None):
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"{' '.join(cmd)} failed:\n{r.stderr}")
        sys.exit(1)
    return r.stdout


def main():
    kernels_path, work, libs = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    kernels = open(kernels_path).read()
    rng = np.random.default_rng(7)
    for name, (nb, n, outs, ref) in KERNELS.items():
        data = rng.standard_normal(n).astype(np.float32)
        src = os.path.join(work, name + ".mlir")
        with open(src, "w") as f:
            f.write(kernels + main_func(name, nb, data, outs))
        emulated = run(["disc-opt", "--disc-gpu-emulate-launches",
                        "--canonicalize", src])
        llvm = run(["mlir-opt"] + LOWER, emulated)
        out = run(["mlir-runner", "-e", "main", "-entry-point-result=void",
                   "-shared-libs=" + libs], llvm)
        printed = re.findall(r"data =\s*\[([^\]]*)\]", out)
        if len(printed) != len(outs):
            sys.exit(f"{name}: expected {len(outs)} outputs, got:\n{out}")
        expected = ref(data, nb)
        for k, ((t, size), text, want) in enumerate(
                zip(outs, printed, expected)):
            values = text.replace("\n", " ").split(",")
            bits = np.array([int(v) for v in values],
                            dtype=np.int64).astype(np.uint32)
            got = bits.view(np.float32) if t == "f32" else bits.view(np.int32)
            want = np.asarray(want, dtype=got.dtype).reshape(-1)
            if got.shape != want.shape or not np.array_equal(
                    got.view(np.uint32), want.view(np.uint32)):
                bad = np.nonzero(got != want)[0][:8]
                sys.exit(f"{name}: output {k} differs at {bad.tolist()}: "
                         f"got {got[bad].tolist()}, want {want[bad].tolist()}")
        print(f"{name}: exact ({sum(s for _, s in outs)} values)")


if __name__ == "__main__":
    main()

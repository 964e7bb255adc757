#!/usr/bin/python3
"""Training on variable sequence lengths: DISC compiled once with dynamic
shapes against DISC compiled per length, PyTorch eager, and DISC under a
memory limit (docs/training.md).

Trains the Llama-style decoder LM of examples/models/train_models.py
(`disc-compile --train --loss loss --optimizer sgd`) for --steps steps at
batch --batch on sequence lengths drawn from a long-tailed distribution
(--seed, default 2: round(exp(N(log 20, 1.1))) clamped to [8,
--max-len]; most short, a few long). Every configuration starts from the
same initial parameters and sees the same tokens and targets at each step:

  dynamic   one `disc-compile` with dynamic batch and seq; the compile time
            is counted once. --remat-max-ops (default 32, the compiler's
            12) lets a remat candidate be recomputed through up to that
            many ops: the attention probabilities from the projections.
  static    one `disc-compile --dim seq=T --dim batch=B` per distinct length
            T; each compile's time is counted (at the first step of its
            length). The parameter folder saved by one length's model loads
            into the next one's (same state names).
  torch     PyTorch eager in float32: autograd and torch.optim.SGD (same lr).
  limited   the dynamic model under `disc-run --memory-limit BYTES`, BYTES =
            --limit-frac (0.5) of the largest unconstrained peak of the
            dynamic steps, the same for every step.

DISC steps are one `disc-run` each (`--load-params` the previous step's
folder, `--save-params` this one's), since `--steps N` repeats one input.
Step time is the report's `latency_ms` (the run in the session: no process
start, no parameter files); peak bytes are the report's `peak_bytes`: bytes
the step allocates and holds at once (activations, gradients, the updated
parameters and the outputs; the state and the inputs held before the step
are not counted, docs/runtime-api.md "Training state").

PyTorch step time is the wall time of zero_grad(set_to_none=True), forward,
backward and SGD step. Its peak is measured the same way as DISC's: the step
is run once more on a copy of the model under torch.profiler (CPU,
profile_memory=True); every `[memory]` record of its Kineto results is
one allocation (+bytes) or free (-bytes) of the CPU allocator; the records
in time order give the allocated-bytes timeline relative to the step's
start (gradients set to None first, so they count as they are allocated;
the parameters and the inputs already live are not counted), and the peak
is the maximum of its running sum. The profiled copy's time is not used.
torch.optim.SGD updates the parameters in place, where the DISC step
returns the updated parameters in new buffers (counted in its peak).

Everything runs on one core (--cpu, os.sched_setaffinity, inherited by the
disc-compile and disc-run processes), `disc-run --threads 1`,
`disc-compile --compile-jobs=1`, torch.set_num_threads(1).

Checks (exit 1 when one fails; --no-check only prints them):
  * each step: dynamic peak <= 1.02 x static peak and <= PyTorch's peak;
  * each step: DISC loss within rtol 1e-3 of PyTorch's; the limited run's
    loss bit-identical to the unlimited one's;
  * total limited step time <= 1.3 x total dynamic step time;
  * dynamic total (compile + steps) < static total (compiles + steps).

    /usr/bin/python3 benchmarks/train_table.py --bin-dir build/bin \\
        --work-dir /tmp/disc-train-table [--steps 20] [--batch 2] \\
        [--max-len 256] [--d 256 --layers 4 --ffn 704 --heads 4] [--cpu 1]

The default size, 3,344,640 parameters, is the "few million" of the
BladeDISC++ setting; `--d 64 --layers 2 --ffn 176` is the e2e tests'
133,440-parameter model.
"""
import argparse
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "examples", "models"))
import train_models  # noqa: E402


def draw_lengths(steps, max_len, seed):
    """`steps` sequence lengths, long-tailed: lognormal (median 20, sigma
    1.1), rounded, clamped to [8, max_len]."""
    rng = np.random.default_rng(seed)
    x = np.exp(rng.normal(math.log(20.0), 1.1, steps))
    return [int(min(max(round(v), 8), max_len)) for v in x]


def run(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r, time.perf_counter() - t0


def compile_model(args, onnx, so, extra):
    cmd = [os.path.join(args.bin_dir, "disc-compile"), onnx, "-o", so,
           "--train", "--loss", "loss", "--optimizer", "sgd",
           "--lr", repr(args.lr), "--compile-jobs=1"] + extra
    r, secs = run(cmd)
    if r.returncode != 0:
        sys.exit(f"disc-compile failed ({r.returncode}): {' '.join(cmd)}\n"
                 f"{r.stdout}{r.stderr}")
    return secs


def disc_step(args, so, feed, load, out_dir, limit=None):
    """One training step with disc-run; returns (report, loss bytes, loss),
    or (the error message, None, None) when a memory limit is below the
    step's minimum reachable peak (exit 3)."""
    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    cmd = [os.path.join(args.bin_dir, "disc-run"), so, "--threads", "1",
           "--output-dir", out_dir, "--save-params",
           os.path.join(out_dir, "params"),
           "--report", os.path.join(out_dir, "report.json")]
    if load:
        cmd += ["--load-params", load]
    if limit:
        cmd += ["--memory-limit", str(limit)]
    for name, path in feed.items():
        cmd += ["--input", f"{name}={path}"]
    r, _ = run(cmd)
    if r.returncode == 3 and limit:
        return r.stderr.strip(), None, None
    if r.returncode != 0:
        sys.exit(f"disc-run failed ({r.returncode}): {' '.join(cmd)}\n"
                 f"{r.stdout}{r.stderr}")
    with open(os.path.join(out_dir, "report.json")) as f:
        rep = json.load(f)
    loss = np.load(os.path.join(out_dir, "loss.npy"))
    return rep, loss.tobytes(), float(loss)


def torch_peak(torch, model, lr, tokens, targets):
    """Peak bytes of one step on a copy of `model` (see the docstring)."""
    from torch.profiler import ProfilerActivity, profile

    m = copy.deepcopy(model)
    opt = torch.optim.SGD(m.parameters(), lr=lr)
    opt.zero_grad(set_to_none=True)
    with profile(activities=[ProfilerActivity.CPU],
                 profile_memory=True) as prof:
        loss = train_models.loss_of(m(tokens, targets))
        loss.backward()
        opt.step()
    # The allocator's records (the profiler's FunctionEvents attribute
    # them to ops, with parents counting their children's).
    records = [(e.start_us(), e.nbytes())
               for e in prof.profiler.kineto_results.events()
               if e.name() == "[memory]"]
    records.sort(key=lambda rec: rec[0])  # stable: ties keep record order
    cur = peak = 0
    for _, delta in records:
        cur += delta
        peak = max(peak, cur)
    return peak


def fmt_ms(x):
    return f"{x:.1f}"


def fmt_mb(x):
    return f"{x / 2**20:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--limit-frac", type=float, default=0.5)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=704)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--remat-max-ops", type=int, default=32,
                    help="the dynamic compile's --remat-max-ops")
    ap.add_argument("--cpu", type=int, default=1,
                    help="the core everything runs on (-1: no pinning)")
    ap.add_argument("--json", help="also write the rows as JSON")
    ap.add_argument("--no-check", action="store_true",
                    help="print the checks without failing")
    args = ap.parse_args()

    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})
    import torch
    torch.set_num_threads(1)

    size = dict(d=args.d, layers=args.layers, ffn=args.ffn, heads=args.heads)
    tag = f"llama_d{args.d}_l{args.layers}_f{args.ffn}_h{args.heads}"
    work = os.path.join(args.work_dir, tag)
    os.makedirs(work, exist_ok=True)
    onnx = os.path.join(work, "model.onnx")
    os.environ["DISC_TRAIN_LLAMA_SIZE"] = ",".join(
        f"{k}={v}" for k, v in size.items())
    train_models.export("llama", onnx)
    n_params = sum(p.numel() for p in train_models.build_llama(**size)
                   .parameters())

    lengths = draw_lengths(args.steps, args.max_len, args.seed)
    print(f"model: {tag}, {n_params} parameters; batch {args.batch}; "
          f"{args.steps} steps; lr {args.lr}")
    print(f"lengths: {lengths}")
    print(f"distinct lengths: {len(set(lengths))}")
    rng = np.random.default_rng(args.seed + 1)
    feeds = []
    for i, t in enumerate(lengths):
        feed = {}
        for name in ("tokens", "targets"):
            path = os.path.join(work, f"step{i}.{name}.npy")
            np.save(path, rng.integers(0, 256, (args.batch, t))
                    .astype(np.int64))
            feed[name] = path
        feeds.append(feed)

    rows = [dict(step=i + 1, T=t) for i, t in enumerate(lengths)]

    # 1. Dynamic: one compile.
    dyn_so = os.path.join(work, "dynamic.so")
    dyn_compile = compile_model(
        args, onnx, dyn_so, [f"--remat-max-ops={args.remat_max_ops}"])
    load = None
    for i, feed in enumerate(feeds):
        out = os.path.join(work, f"dyn.step{i}")
        rep, raw, loss = disc_step(args, dyn_so, feed, load, out)
        rows[i].update(dyn_ms=rep["latency_ms"], dyn_peak=rep["peak_bytes"],
                       dyn_min=rep.get("minimum_peak_bytes"),
                       dyn_loss=loss, dyn_raw=raw)
        load = os.path.join(out, "params")

    # 2. Static: one compile per distinct length.
    static_so, static_compile = {}, 0.0
    load = None
    for i, feed in enumerate(feeds):
        t = lengths[i]
        secs = 0.0
        if t not in static_so:
            static_so[t] = os.path.join(work, f"static_T{t}.so")
            secs = compile_model(args, onnx, static_so[t],
                                 ["--dim", f"seq={t}",
                                  "--dim", f"batch={args.batch}"])
            static_compile += secs
        out = os.path.join(work, f"static.step{i}")
        rep, raw, loss = disc_step(args, static_so[t], feed, load, out)
        rows[i].update(st_compile=secs, st_ms=rep["latency_ms"],
                       st_peak=rep["peak_bytes"], st_loss=loss)
        load = os.path.join(out, "params")

    # 3. PyTorch eager.
    model = train_models.build_llama(**size)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    for i, feed in enumerate(feeds):
        tokens = torch.from_numpy(np.load(feed["tokens"]))
        targets = torch.from_numpy(np.load(feed["targets"]))
        peak = torch_peak(torch, model, args.lr, tokens, targets)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = train_models.loss_of(model(tokens, targets))
        loss.backward()
        opt.step()
        ms = (time.perf_counter() - t0) * 1e3
        rows[i].update(pt_ms=ms, pt_peak=peak, pt_loss=float(loss))

    # 4. Dynamic under a memory limit.
    limit = int(args.limit_frac * max(r["dyn_peak"] for r in rows))
    load = None
    for i, feed in enumerate(feeds):
        out = os.path.join(work, f"lim.step{i}")
        rep, raw, loss = disc_step(args, dyn_so, feed, load, out, limit)
        if raw is None:
            # Below this step's minimum: the step does not run; the chain
            # goes on from the unlimited run's parameters.
            print(f"limited step {i + 1} (T={lengths[i]}): {rep}")
            rows[i].update(lim_ms=float("nan"), lim_peak=0, lim_ev=0,
                           lim_loss=float("nan"), lim_same=False,
                           lim_failed=True)
            load = os.path.join(work, f"dyn.step{i}", "params")
            continue
        rows[i].update(lim_ms=rep["latency_ms"], lim_peak=rep["peak_bytes"],
                       lim_ev=rep.get("evictions", 0), lim_loss=loss,
                       lim_same=raw == rows[i]["dyn_raw"], lim_failed=False)
        load = os.path.join(out, "params")

    # The table.
    print()
    longest = max(rows, key=lambda r: r["dyn_peak"])
    print(f"memory limit of the limited run: {limit} bytes "
          f"({fmt_mb(limit)} MiB, {args.limit_frac:g} x the largest dynamic "
          f"peak, {longest['dyn_peak']} bytes at T={longest['T']}, whose "
          f"minimum reachable peak is {longest['dyn_min']} bytes)")
    print()
    print("| step | T | dyn ms | dyn peak MiB | dyn loss | static compile s "
          "| static ms | static peak MiB | torch ms | torch peak MiB "
          "| torch loss | limited ms | limited peak MiB | evictions "
          "| limited loss |")
    print("|" + "---|" * 15)
    for r in rows:
        print(f"| {r['step']} | {r['T']} | {fmt_ms(r['dyn_ms'])} "
              f"| {fmt_mb(r['dyn_peak'])} | {r['dyn_loss']:.5f} "
              f"| {r['st_compile']:.1f} | {fmt_ms(r['st_ms'])} "
              f"| {fmt_mb(r['st_peak'])} | {fmt_ms(r['pt_ms'])} "
              f"| {fmt_mb(r['pt_peak'])} | {r['pt_loss']:.5f} "
              f"| {fmt_ms(r['lim_ms'])} | {fmt_mb(r['lim_peak'])} "
              f"| {r['lim_ev']} | {r['lim_loss']:.5f}"
              f"{'' if r['lim_same'] or r['lim_failed'] else ' (differs)'}"
              f"{' (exit 3)' if r['lim_failed'] else ''} |")
    tot = {k: sum(r[k] for r in rows)
           for k in ("dyn_ms", "st_ms", "pt_ms", "lim_ev")}
    ran = [r for r in rows if not r["lim_failed"]]
    tot["lim_ms"] = sum(r["lim_ms"] for r in ran)
    tot["dyn_ran_ms"] = sum(r["dyn_ms"] for r in ran)
    mx = {k: max([0] + [r[k] for r in rows])
          for k in ("dyn_peak", "st_peak", "pt_peak", "lim_peak")}
    print(f"| total | | {fmt_ms(tot['dyn_ms'])} | max {fmt_mb(mx['dyn_peak'])}"
          f" | | {static_compile:.1f} | {fmt_ms(tot['st_ms'])} "
          f"| max {fmt_mb(mx['st_peak'])} | {fmt_ms(tot['pt_ms'])} "
          f"| max {fmt_mb(mx['pt_peak'])} | | {fmt_ms(tot['lim_ms'])} "
          f"| max {fmt_mb(mx['lim_peak'])} | {tot['lim_ev']} | |")
    dyn_total = dyn_compile + tot["dyn_ms"] / 1e3
    st_total = static_compile + tot["st_ms"] / 1e3
    print()
    print(f"dynamic: 1 compile {dyn_compile:.1f} s + steps "
          f"{tot['dyn_ms'] / 1e3:.2f} s = {dyn_total:.1f} s")
    print(f"static: {len(static_so)} compiles {static_compile:.1f} s + steps "
          f"{tot['st_ms'] / 1e3:.2f} s = {st_total:.1f} s")
    print(f"torch: steps {tot['pt_ms'] / 1e3:.2f} s")

    # The checks.
    checks = []

    def claim(ok, text):
        checks.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {text}")

    print()
    for r in rows:
        s = f"step {r['step']} (T={r['T']}): "
        claim(r["dyn_peak"] <= 1.02 * r["st_peak"],
              s + f"dynamic peak {r['dyn_peak']} <= 1.02 x static peak "
              f"{r['st_peak']} ({r['dyn_peak'] / r['st_peak']:.3f})")
        claim(r["dyn_peak"] <= r["pt_peak"],
              s + f"dynamic peak {r['dyn_peak']} <= PyTorch peak "
              f"{r['pt_peak']} ({r['dyn_peak'] / r['pt_peak']:.3f})")
        claim(math.isclose(r["dyn_loss"], r["pt_loss"], rel_tol=1e-3),
              s + f"DISC loss {r['dyn_loss']:.6f} ~ PyTorch loss "
              f"{r['pt_loss']:.6f} (rtol 1e-3)")
        claim(r["lim_same"], s + "limited loss bit-identical to the "
              "unlimited one")
    claim(len(ran) == len(rows),
          f"limited run: {len(ran)}/{len(rows)} steps ran under the limit")
    claim(tot["lim_ms"] <= 1.3 * tot["dyn_ran_ms"],
          f"total limited step time {fmt_ms(tot['lim_ms'])} ms <= 1.3 x "
          f"unlimited {fmt_ms(tot['dyn_ran_ms'])} ms over the same steps "
          f"({tot['lim_ms'] / max(tot['dyn_ran_ms'], 1e-9):.2f}x)")
    claim(dyn_total < st_total,
          f"dynamic total {dyn_total:.1f} s < static total {st_total:.1f} s")
    failed = checks.count(False)
    print(f"{len(checks) - failed}/{len(checks)} checks hold")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(lengths=lengths, limit=limit,
                           dyn_compile_s=dyn_compile,
                           static_compile_s=static_compile,
                           rows=[{k: v for k, v in r.items() if k != "dyn_raw"}
                                 for r in rows]), f, indent=1)
    return 1 if failed and not args.no_check else 0


if __name__ == "__main__":
    sys.exit(main())

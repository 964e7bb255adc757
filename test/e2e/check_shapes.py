#!/usr/bin/python3
"""`disc-compile --emit=shapes` on the demo models (ctest e2e-shapes-*).

Exports the model (cached, no reference outputs) and checks that no dim is
left unknown and that the expected symbolic shapes appear:
  transformer: attention scores [batch*4, seq, seq] (heads folded into the
               batch dim by PyTorch's MHA) and the head-averaged weights
               [batch, seq, seq] (from the [batch, 4, seq, seq] view);
  resnet18:    the last feature map as conv arithmetic over H and W;
  gpt_decoder: causal attention [batch, 4, seq, seq] through Range/Where;
  gpt_train_step: attention [batch, 2, seq, seq], one-hot embedding
               gradients ([batch*seq, 64], [seq, 64]) and static updated
               weights.
Exit 0 ok, 1 check failed, 2 export/usage failure.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "examples", "models")

EXPECT = {
    "transformer": [
        r"\[batch\*4, seq, seq\]",
        r"disc\.dot_general.*\[batch\*4, seq, 32\]",
        r"input tokens\s+\[batch, seq\]",
    ],
    "gpt_decoder": [
        r"disc\.dot_general.*\[batch, 4, seq, seq\]",
        r"disc\.compare.*\[seq, seq\]",
        r"disc\.select.*\[batch, 4, seq, seq\]",
    ],
    # The training step: one-hot embedding gradients over batch*seq and
    # seq rows reduce to the static [64, 32] tables.
    "gpt_train_step": [
        r"disc\.dot_general.*\[batch, 2, seq, seq\]",
        r"disc\.compare.*\[batch\*seq, 64\]",
        r"disc\.compare.*\[seq, 64\]",
        r"disc\.dot_general.*\[64, 32\]",
        r"disc\.sub.*\[128, 32\]",
    ],
    "resnet18": [
        r"\[N, 512, \(\(\(\(\(H - 1\) floordiv 2\) floordiv 2\) floordiv 2\) "
        r"floordiv 2\) floordiv 2 \+ 1, \(\(\(\(\(W - 1\) floordiv 2\) "
        r"floordiv 2\) floordiv 2\) floordiv 2\) floordiv 2 \+ 1\]",
        r"\[N, 1000\]",
    ],
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work-dir", required=True)
    p.add_argument("model", choices=sorted(EXPECT))
    a = p.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    onnx_path = os.path.join(a.work_dir, a.model + ".onnx")
    if not os.path.exists(onnx_path):
        script = os.path.join(MODELS, "export_%s.py" % a.model)
        r = subprocess.run(["/usr/bin/python3", script, "--out-dir",
                            a.work_dir, "--no-refs"], capture_output=True,
                           text=True)
        if r.returncode != 0 or not os.path.exists(onnx_path):
            print(r.stdout + r.stderr)
            return 2
    r = subprocess.run([os.path.join(a.bin_dir, "disc-compile"), onnx_path,
                        "--emit=shapes", "-o", "-"], capture_output=True,
                       text=True, timeout=600)
    out = r.stdout
    print(out[-4000:])
    if r.returncode != 0:
        print(r.stderr)
        return 1
    ok = True
    m = re.search(r"summary: (\d+) values, (\d+) unknown dims", out)
    if not m or m.group(2) != "0":
        print("FAIL: unknown dims (or no summary line)")
        ok = False
    for pat in EXPECT[a.model]:
        if not re.search(pat, out):
            print("FAIL: no line matches %r" % pat)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

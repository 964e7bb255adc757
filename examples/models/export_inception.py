#!/usr/bin/python3
"""Exports a small Inception-style network (two blocks of four branches whose
1x1 heads are all computed before the branch reductions; random init, seed
0) to ONNX opset 17 with dynamic N, H, W on input `input` (output `output`,
dynamic N), and writes PyTorch reference outputs for each --shapes entry.
The memory-schedule example of docs/memory.md.

    /usr/bin/python3 export_inception.py --out-dir OUT --shapes 1x3x32x32 2x3x48x64
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("inception"))

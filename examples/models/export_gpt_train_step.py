#!/usr/bin/python3
"""Exports one SGD training step of a small GPT-style decoder (vocabulary 64,
width 32, 2 heads, 2 pre-LayerNorm blocks, learned positions up to seq 64)
as ONE ONNX opset 17 graph: forward pass, cross-entropy loss, hand-written
backward (gpt_train_step.py) and the update new_p = p - 0.5 * grad.
Inputs `tokens` and `targets` int64 [batch, seq] (dynamic batch and seq,
seq <= 64), then the 32 parameters (float32, static shapes); outputs `loss`
(scalar) and `new_<param>` for each parameter. The export and every
reference case assert that the hand-written gradients match torch.autograd
(rtol 1e-4); the reference outputs come from torch.autograd.

    /usr/bin/python3 export_gpt_train_step.py --out-dir OUT --shapes 2x16 4x7 3x64
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("gpt_train_step"))

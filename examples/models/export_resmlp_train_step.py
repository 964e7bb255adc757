#!/usr/bin/python3
"""Exports one SGD training step of a residual MLP (x [batch, seq, 32] ->
width 64 -> 8 residual blocks h + tanh(h @ w1 + b1) @ w2 + b2 with hidden
width 256 -> a linear head of width 16, squared error against
y [batch, seq, 16] summed over features, averaged over positions) as ONE
ONNX opset 17 graph: forward pass, loss, hand-written backward
(resmlp_train_step.py) and the update new_p = p - 0.5 * grad. Inputs `x` and
`y` float32 (dynamic batch and seq), then the 34 parameters (float32, static
shapes); outputs `loss` (scalar) and `new_<param>` for each parameter. The
export and every reference case assert that the hand-written gradients
match torch.autograd (rtol 1e-4); the reference outputs come from
torch.autograd.

    /usr/bin/python3 export_resmlp_train_step.py --out-dir OUT --shapes 2x16 3x77 4x512
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("resmlp_train_step"))

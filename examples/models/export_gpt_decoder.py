#!/usr/bin/python3
"""Exports a small GPT-style decoder (Embedding(100, 64) + learned positions,
2 pre-LayerNorm blocks with 4-head causal self-attention and a GELU MLP,
Linear(64, 100); random init, seed 0) to ONNX opset 17. The causal mask is
built from the run-time seq (Shape, Range, LessOrEqual, Where). Input
`tokens` int64 [batch, seq] (seq <= 512), output `logits` [batch, seq, 100],
both with dynamic `batch` and `seq`. Writes PyTorch reference outputs for
each --shapes entry (batch x seq).

    /usr/bin/python3 export_gpt_decoder.py --out-dir OUT --shapes 1x16 2x77 3x1
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("gpt_decoder"))

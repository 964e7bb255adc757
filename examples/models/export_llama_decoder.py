#!/usr/bin/python3
"""Exports a small Llama-style decoder (Embedding(256, 64), 2 blocks of
RMSNorm -> 4-head causal self-attention with rotary position embeddings ->
RMSNorm -> SwiGLU MLP of width 176, final RMSNorm, Linear(64, 256) without
bias; random init, seed 0) to ONNX opset 17, with the mean cross-entropy
against `targets`. The rotary positions come from torch.arange over the
run-time seq (Shape, Gather, Cast, Range) and the causal mask from
torch.triu over torch.full((seq, seq), -inf) (ConstantOfShape, Trilu).
Inputs `tokens` and `targets` int64 [batch, seq]; outputs `logits`
[batch, seq, 256] and `loss` (scalar), with dynamic `batch` and `seq`.
Writes PyTorch reference outputs for each --shapes entry (batch x seq).

    /usr/bin/python3 export_llama_decoder.py --out-dir OUT --shapes 1x16 2x33 3x64
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("llama_decoder"))

#!/usr/bin/python3
"""Exports a small Transformer encoder (Embedding(1000, 128) + 2 x
TransformerEncoderLayer(d_model 128, nhead 4, ffn 256, dropout 0,
batch_first) + Linear(128, 1000); random init, seed 0) to ONNX opset 17.
Input `tokens` int64 [batch, seq], output `logits` [batch, seq, 1000], both
with dynamic `batch` and `seq`. Writes PyTorch reference outputs for each
--shapes entry (batch x seq).

    /usr/bin/python3 export_transformer.py --out-dir OUT --shapes 1x16 2x77
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("transformer"))

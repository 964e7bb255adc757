#!/usr/bin/python3
"""Exports torchvision ShuffleNet V2 x0.5 (random init, seed 0, BatchNorm statistics
calibrated on a fixed random batch, eval mode) to ONNX opset 17 with dynamic
N, H, W on input `input` (output `output` [N, 1000]), and writes PyTorch
reference outputs for each --shapes entry.

    /usr/bin/python3 export_shufflenet_v2.py --out-dir OUT --shapes 1x3x96x96 2x3x128x112
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("shufflenet_v2"))

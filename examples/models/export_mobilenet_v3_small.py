#!/usr/bin/python3
"""Exports torchvision MobileNetV3-Small (random init, seed 0, eval mode) to
ONNX opset 17 with dynamic N, H, W on input `input` (output `output`,
dynamic N), and writes PyTorch reference outputs for each --shapes entry.

    /usr/bin/python3 export_mobilenet_v3_small.py --out-dir OUT --shapes 1x3x96x96 1x3x224x224
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("mobilenet_v3_small"))

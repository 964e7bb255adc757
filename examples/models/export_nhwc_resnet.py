#!/usr/bin/python3
"""Exports a small ResNet-like network on an NHWC input in the form tf2onnx
gives TensorFlow models (every Conv between Transposes, BatchNorm as Mul
and Add, residual adds in NHWC; random init, seed 0) to ONNX opset 17 with
dynamic N, H, W on input `input` [N, H, W, 3] (output `output` [N, 10]),
and writes PyTorch reference outputs for each --shapes entry.

    /usr/bin/python3 export_nhwc_resnet.py --out-dir OUT --shapes 1x32x32x3 2x24x40x3
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("nhwc_resnet"))

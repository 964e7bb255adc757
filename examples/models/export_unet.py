#!/usr/bin/python3
"""Exports a small U-Net (three levels of Conv-BN-ReLU blocks, 16/32/64
channels and a 128-channel bottleneck; MaxPool down, ConvTranspose2d 2x2
stride 2 up, encoder features concatenated on the way up; 1x1 conv head with
2 classes; random init, seed 0, calibrated BatchNorm, eval mode) to ONNX
opset 17 with dynamic N, H, W on input `input` and output `output`
[N, 2, H, W]. H and W must be multiples of 8. Writes PyTorch reference
outputs for each --shapes entry.

    /usr/bin/python3 export_unet.py --out-dir OUT --shapes 1x3x64x64 2x3x48x80
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    sys.exit(disc_models.main("unet"))

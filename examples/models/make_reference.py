#!/usr/bin/python3
"""Writes deterministic inputs and PyTorch reference outputs for a demo model
without re-exporting it (the model is rebuilt from the same seed, so the
references match the exported ONNX file). The reference is always PyTorch,
never the ONNX graph itself.

    /usr/bin/python3 make_reference.py MODEL --out-dir OUT --shapes S [S ...]

MODEL is one of: resnet18, transformer, gpt_decoder, mobilenet_v2, unet,
inception, gpt_train_step, mlp_train_step, llama_decoder,
resmlp_train_step.
Rewrites OUT/MODEL.json.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import disc_models  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in disc_models.MODELS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(disc_models.MODELS)}}} "
                 "--out-dir OUT --shapes S [S ...]")
    sys.exit(disc_models.main(sys.argv[1], sys.argv[2:], export=False))

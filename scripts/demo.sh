#!/usr/bin/env bash
# DISC demo: builds the compiler, exports two models with dynamic input
# dimensions (ResNet-18 with dynamic N/H/W, a Transformer encoder with
# dynamic batch/seq), compiles each ONCE, runs each at two different input
# shapes, compares with PyTorch, and prints:
#
#   model | input shapes | compile time (s) | latency (ms, median) |
#   peak memory (MiB) | max abs err | max rel err | status
#
# Exits non-zero if any comparison fails. Environment: BUILD_DIR (default:
# build), NINJA_JOBS, DEMO_REPEAT (default: 3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
PYTHON=/usr/bin/python3

BUILD_DIR="$BUILD_DIR" scripts/build.sh

DEMO_DIR="$BUILD_DIR/demo"
mkdir -p "$DEMO_DIR"

# Export (skipped when build/demo is newer than the export scripts), compile
# once, run at both shapes with --compare, print the table.
"$PYTHON" test/e2e/run_model.py \
  --bin-dir "$BUILD_DIR/bin" \
  --work-dir "$DEMO_DIR" \
  --rtol 1e-3 --atol 1e-4 \
  --repeat "${DEMO_REPEAT:-3}" \
  --summary-json "$DEMO_DIR/summary.json" \
  resnet18 transformer

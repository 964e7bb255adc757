#!/usr/bin/env bash
# Builds DISC and runs every test through ctest: lit+FileCheck (compiler),
# GoogleTest (runtime, analyses), ONNX backend conformance, end-to-end models.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh -R lit          # extra arguments go to ctest
#
# Environment: BUILD_DIR (default: build), CTEST_JOBS (default: 2),
# NINJA_JOBS (default: ninja's own choice).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
CTEST_JOBS="${CTEST_JOBS:-2}"

scripts/bootstrap.sh

cmake -G Ninja -S . -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit

ninja_args=()
if [ -n "${NINJA_JOBS:-}" ]; then ninja_args+=(-j "$NINJA_JOBS"); fi
ninja -C "$BUILD_DIR" "${ninja_args[@]}"

# The ONNX conformance test parallelises internally and claims all ctest
# slots (PROCESSORS), so -j2 does not oversubscribe a 2-core machine.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$CTEST_JOBS" "$@"

#!/usr/bin/env bash
# Installs missing packages and builds DISC with Ninja (shared by demo.sh and
# test.sh). Environment: BUILD_DIR (default: build), NINJA_JOBS (default:
# ninja's own choice), DISC_WERROR (ON: warnings are errors; CI sets it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"

scripts/bootstrap.sh

cmake -G Ninja -S . -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release \
  -DDISC_WERROR="${DISC_WERROR:-OFF}" \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit

ninja_args=()
if [ -n "${NINJA_JOBS:-}" ]; then ninja_args+=(-j "$NINJA_JOBS"); fi
ninja -C "$BUILD_DIR" "${ninja_args[@]}"

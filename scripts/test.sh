#!/usr/bin/env bash
# Builds DISC and runs every test through ctest: lit+FileCheck (compiler),
# GoogleTest (runtime, analyses), ONNX backend conformance, end-to-end models,
# then the runtime under ASan/UBSan (scripts/sanitize.sh --runtime-only).
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

BUILD_DIR="$BUILD_DIR" scripts/build.sh

# The ONNX conformance test parallelises internally and claims all ctest
# slots (PROCESSORS), so -j2 does not oversubscribe a 2-core machine.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$CTEST_JOBS" "$@"

# Sanitizer slice (docs/reliability.md): a runtime-only ASan/UBSan build
# (clang-22, no compiler) runs the runtime tests and the fuzz regressions,
# about 2 minutes on 2 cores. Skipped when ctest arguments are given or with
# DISC_CI_SANITIZE=0; the full label is scripts/sanitize.sh.
if [ $# -eq 0 ] && [ "${DISC_CI_SANITIZE:-1}" != 0 ]; then
  SAN_BUILD_DIR="$BUILD_DIR-asan-rt" CTEST_JOBS="$CTEST_JOBS" \
    scripts/sanitize.sh --runtime-only
fi

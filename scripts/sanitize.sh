#!/usr/bin/env bash
# Builds DISC with AddressSanitizer + UndefinedBehaviorSanitizer (clang-22,
# -DDISC_SANITIZE=address,undefined) and runs the ctest label "sanitize":
# the runtime tests, the fuzz regressions, the dynamic edge-case tests
# (e2e-dyn-*) and a subset of the ONNX conformance suite, with the models
# compiled ASan-instrumented (docs/reliability.md).
#
#   scripts/sanitize.sh                  # compiler + runtime (long: a full build)
#   scripts/sanitize.sh --runtime-only   # DISC_BUILD_COMPILER=OFF: runtime
#                                        # tests + fuzz regressions (CI slice)
#   scripts/sanitize.sh -R e2e-dyn-      # extra arguments go to ctest
#
# Environment: SAN_BUILD_DIR (default: build-asan, or build-asan-rt with
# --runtime-only), NINJA_JOBS (default: 2), CTEST_JOBS (default: 1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNTIME_ONLY=0
if [ "${1:-}" = "--runtime-only" ]; then RUNTIME_ONLY=1; shift; fi
if [ $RUNTIME_ONLY = 1 ]; then
  SAN_BUILD_DIR="${SAN_BUILD_DIR:-build-asan-rt}"
  COMPILER=OFF
else
  SAN_BUILD_DIR="${SAN_BUILD_DIR:-build-asan}"
  COMPILER=ON
fi
NINJA_JOBS="${NINJA_JOBS:-2}"
CTEST_JOBS="${CTEST_JOBS:-1}"

scripts/bootstrap.sh
if [ ! -f "$SAN_BUILD_DIR/build.ninja" ]; then
  CC=/usr/lib/llvm-22/bin/clang CXX=/usr/lib/llvm-22/bin/clang++ \
    cmake -G Ninja -S . -B "$SAN_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_FLAGS=-gline-tables-only -DCMAKE_CXX_FLAGS=-gline-tables-only \
      -DDISC_SANITIZE=address,undefined -DDISC_BUILD_COMPILER=$COMPILER \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
ninja -C "$SAN_BUILD_DIR" -j "$NINJA_JOBS"

# Any report fails the test: UBSan aborts (-fno-sanitize-recover=all), ASan
# and LeakSanitizer exit non-zero. allocator_may_return_null: a huge request
# is the runtime's ResourceExhausted, not an ASan abort.
# allow_user_poisoning=0: LLVM's headers poison BumpPtrAllocator slabs when
# compiled with ASan, but Debian's libLLVM/libMLIR are not instrumented and
# never unpoison them; without it every MLIR context start is a false
# use-after-poison report.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:allow_user_poisoning=0:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$SAN_BUILD_DIR" -L sanitize --output-on-failure \
  -j"$CTEST_JOBS" "$@"

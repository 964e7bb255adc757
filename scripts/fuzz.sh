#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-22 (ASan + UBSan) and runs each for
# a bounded time. Crashes land in $WORK/<target>/crash-* with a reproducer
# command in the log; docs/reliability.md says how to turn one into a
# regression test.
#
#   scripts/fuzz.sh                        # every target, 600 s each
#   scripts/fuzz.sh -t 60 tensor_io        # one target, 60 s
#
# Targets: tensor_io input_binding onnx_importer compiled_models.
# Environment: FUZZ_BUILD_DIR (default: build-fuzz), BUILD_DIR (the regular
# build whose disc-compile compiles the fuzzed models; default: build),
# FUZZ_WORK (default: $FUZZ_BUILD_DIR/fuzz-work), NINJA_JOBS (default: 2),
# FUZZ_NICE (default: 19), FUZZ_RSS_MB (default: 2048).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
FUZZ_BUILD_DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
BUILD_DIR="${BUILD_DIR:-build}"
WORK="${FUZZ_WORK:-$FUZZ_BUILD_DIR/fuzz-work}"
NINJA_JOBS="${NINJA_JOBS:-2}"
NICE="${FUZZ_NICE:-19}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
SECONDS_EACH=600
ALL_TARGETS=(tensor_io input_binding onnx_importer compiled_models)

while getopts "t:h" opt; do
  case "$opt" in
    t) SECONDS_EACH="$OPTARG" ;;
    *) sed -n '2,15p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then TARGETS=("${ALL_TARGETS[@]}"); fi

scripts/bootstrap.sh
if [ ! -f "$FUZZ_BUILD_DIR/build.ninja" ]; then
  CC=/usr/lib/llvm-22/bin/clang CXX=/usr/lib/llvm-22/bin/clang++ \
    cmake -G Ninja -S . -B "$FUZZ_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DDISC_BUILD_FUZZERS=ON -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
build_targets=()
for t in "${TARGETS[@]}"; do build_targets+=("fuzz_$t"); done
nice -n "$NICE" ninja -C "$FUZZ_BUILD_DIR" -j "$NINJA_JOBS" "${build_targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$WORK"
status=0
for t in "${TARGETS[@]}"; do
  dir="$WORK/$t"
  mkdir -p "$dir/corpus"
  cp -n test/fuzz/corpus/"$t"/* "$dir/corpus/" 2>/dev/null || true
  extra=()
  case "$t" in
    onnx_importer)
      # Every model of the ONNX backend node tests is a seed.
      for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
        n="$(basename "$(dirname "$m")")"
        [ -f "$dir/corpus/$n.onnx" ] || cp "$m" "$dir/corpus/$n.onnx"
      done
      extra+=(-max_len=65536)
      ;;
    compiled_models)
      # The small models, compiled once with ASan and libFuzzer coverage.
      BUILD_DIR="$BUILD_DIR" scripts/build.sh >/dev/null
      mkdir -p "$dir/models"
      /usr/bin/python3 test/fuzz/make_models.py "$dir/models"
      for m in "$dir"/models/*.onnx; do
        so="${m%.onnx}.so"
        [ -f "$so" ] || nice -n "$NICE" "$BUILD_DIR/bin/disc-compile" "$m" \
          --sanitize=address,fuzzer-no-link -o "$so"
      done
      export DISC_FUZZ_MODELS="$dir/models"
      ;;
  esac
  log="$WORK/$t.log"
  echo "fuzz: $t for ${SECONDS_EACH}s (log: $log)"
  rc=0
  nice -n "$NICE" "$FUZZ_BUILD_DIR/bin/fuzz/fuzz_$t" "$dir/corpus" \
    -max_total_time="$SECONDS_EACH" -rss_limit_mb="$RSS_MB" -timeout=60 \
    -print_final_stats=1 -artifact_prefix="$dir/" "${extra[@]}" \
    >"$log" 2>&1 || rc=$?
  summary="$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1 || true)"
  execs="$(grep -E 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)"
  crashes="$(ls "$dir" | grep -cE '^(crash|leak|timeout|oom)-' || true)"
  echo "fuzz: $t rc=$rc executions=${execs:-?} artifacts=$crashes last: $summary"
  if [ "$rc" != 0 ]; then status=1; fi
done
exit $status

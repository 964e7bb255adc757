#!/usr/bin/env bash
# GPU checks of the CUDA target (docs/cuda.md), for a machine with an NVIDIA
# GPU and its driver: builds DISC, then runs the CUDA runtime's unit tests,
# the compile checks, and every model compiled for this GPU through disc-run
# against its stored ONNX reference outputs. Prints one line per check and
# "N passed, M failed". Exits 0 when all passed, 1 when some failed, 2 when
# there is no GPU (nvidia-smi finds none) or the build fails.
#
# Environment: BUILD_DIR (default: build), NINJA_JOBS, GPU_ARCH (default:
# from nvidia-smi's compute capability, e.g. sm_90).
#
# Not yet here (later steps of the CUDA work): the e2e demo models (they
# need Gather's run-time checks and shape tensors on the device), cuBLAS/
# cuDNN library calls, the memory-limit table with eviction and offload.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "gpu-check: no CUDA device (nvidia-smi finds no GPU); run this on a machine with an NVIDIA GPU and its driver" >&2
  exit 2
fi
if [ -z "${GPU_ARCH:-}" ]; then
  cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')"
  GPU_ARCH="sm_${cap}"
fi
echo "gpu-check: $(nvidia-smi -L | head -1), --gpu-arch=$GPU_ARCH"

if ! BUILD_DIR="$BUILD_DIR" scripts/build.sh >"$BUILD_DIR.gpu-check.log" 2>&1; then
  echo "gpu-check: build failed (see $BUILD_DIR.gpu-check.log)" >&2
  exit 2
fi

passed=0
failed=0
check() { # NAME COMMAND...
  local name="$1"
  shift
  if "$@" >"$BUILD_DIR/gpu-check.$name.log" 2>&1; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name (log: $BUILD_DIR/gpu-check.$name.log)"
    failed=$((failed + 1))
  fi
}

BIN="$BUILD_DIR/bin"
WORK="$BUILD_DIR/gpu-check"
mkdir -p "$WORK"

# The CUDA runtime against the substitute driver, then the real one.
check runtime-unit ctest --test-dir "$BUILD_DIR" -R "CudaDevice|CudaSession|NoCudaDriver" -j1
check cuda-compile ctest --test-dir "$BUILD_DIR" -R "^cuda-compile$" -j1

# ONNX node models: compiled once with every dim dynamic, run on the GPU at
# each stored test case, compared with the stored outputs.
NODE=/usr/share/libonnx-testdata/data/node
for t in test_add test_add_bcast test_exp test_relu test_sigmoid test_tanh \
  test_softmax_axis_1 test_layer_normalization_3d_axis2_epsilon \
  test_reduce_sum_default_axes_keepdims_example test_reduce_mean_default_axes_keepdims_example; do
  [ -d "$NODE/$t" ] || continue
  so="$WORK/$t.so"
  run_case() {
    "$BIN/disc-compile" "$NODE/$t/model.onnx" --target=cuda --gpu-arch="$GPU_ARCH" \
      --force-dynamic -o "$so" || return 1
    for d in "$NODE/$t"/test_data_set_*; do
      local args=() f
      for f in "$d"/input_*.pb; do
        args+=(--input "#$(basename "$f" .pb | sed 's/input_//')=$f")
      done
      for f in "$d"/output_*.pb; do
        args+=(--compare "#$(basename "$f" .pb | sed 's/output_//')=$f")
      done
      "$BIN/disc-run" "$so" "${args[@]}" --rtol 1e-4 --atol 1e-5 || return 1
    done
  }
  check "$t" run_case
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# GPU checks of the CUDA target (docs/cuda.md). Compiles ONNX node models
# and the e2e demo models for one GPU architecture, runs each on the GPU
# with disc-run at every stored or e2e shape, compares with the ONNX or
# PyTorch reference outputs, prints one line per case, the memory-limit
# table (limit, measured and predicted peak device bytes, evictions,
# slowdown), the roofline table (each e2e model's latency and device time
# against the sum of its kernels' roofline times at the H200's peaks,
# DIR/roofline.json), the bandwidth table (fused LayerNorm, Softmax and
# elementwise kernels over 128 MiB, timed with CUDA events,
# DIR/bandwidth.json) and "N passed, M failed". The work is in
# test/cuda/gpu_check.py.
#
#   scripts/gpu-check.sh                 build, prepare and run here (a GPU
#                                        machine with the build toolchain)
#   scripts/gpu-check.sh --prepare DIR   build and prepare DIR only (any
#                                        machine with the toolchain; no GPU)
#   scripts/gpu-check.sh --run DIR       run a prepared DIR (a GPU machine;
#                                        needs bash, python3 and the driver)
#
# DIR holds disc-run, the runtime and the libraries they load (not glibc,
# libstdc++ or the CUDA driver), the compiled models, inputs and references,
# so a GPU machine without LLVM, oneDNN or PyTorch can run it.
#
# Environment: BUILD_DIR (default: build), NINJA_JOBS, GPU_ARCH (default:
# from nvidia-smi's compute capability, else sm_90), SKIP_BUILD=1 to use
# the existing build, COUNT_LAUNCHES=1 to count launches and syncs per run
# on the substitute driver while preparing (test/cuda/count_launches.py;
# compiles the e2e models once more).
#
# Exit codes: 0 all passed, 1 some failed, 2 no CUDA device (nvidia-smi
# finds none), a failed build or preparation, or bad usage.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}"
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

mode=all
dir="$BUILD_DIR/gpu-check"
case "${1:-}" in
  --prepare) mode=prepare; dir="${2:?--prepare DIR}" ;;
  --run) mode=run; dir="${2:?--run DIR}" ;;
  "") ;;
  *) echo "usage: scripts/gpu-check.sh [--prepare DIR | --run DIR]" >&2; exit 2 ;;
esac

have_gpu() {
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU
}

if [ "$mode" != prepare ] && ! have_gpu; then
  echo "gpu-check: no CUDA device (nvidia-smi finds no GPU); run this on a machine with an NVIDIA GPU and its driver, or prepare a folder here with --prepare DIR and run it there with --run DIR" >&2
  exit 2
fi

if [ "$mode" != run ]; then
  if [ -z "${GPU_ARCH:-}" ]; then
    GPU_ARCH=sm_90
    if have_gpu; then
      cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')"
      GPU_ARCH="sm_${cap}"
    fi
  fi
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    echo "gpu-check: building DISC in $BUILD_DIR"
    if ! BUILD_DIR="$BUILD_DIR" scripts/build.sh >"$BUILD_DIR.gpu-check.log" 2>&1; then
      echo "gpu-check: build failed (see $BUILD_DIR.gpu-check.log)" >&2
      exit 2
    fi
  fi
  echo "gpu-check: compiling for --gpu-arch=$GPU_ARCH into $dir"
  counts=()
  fake="$BUILD_DIR/test/unittests/fixtures/fake_libcuda.so"
  if [ "${COUNT_LAUNCHES:-0}" = 1 ] && [ -f "$fake" ]; then
    counts=(--fake-driver "$fake")
  fi
  "$PY" test/cuda/gpu_check.py prepare --bin-dir "$BUILD_DIR/bin" \
    --e2e-dir "$BUILD_DIR/test/e2e/models" --out "$dir" --arch "$GPU_ARCH" \
    ${counts[@]+"${counts[@]}"} || exit 2
fi

if [ "$mode" != prepare ]; then
  exec "$PY" test/cuda/gpu_check.py run "$dir"
fi

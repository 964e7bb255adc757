#!/usr/bin/env bash
# Installs every Debian package DISC needs to build, test and run its demo.
# Idempotent: packages already present are skipped; apt-get runs only when
# something is missing. Debian 12 (bookworm) with LLVM/MLIR 22 from Debian.
set -euo pipefail

PACKAGES=(
  # Build toolchain.
  cmake ninja-build ccache g++ pkg-config
  # LLVM/MLIR 22 (dylibs, headers, tblgen, FileCheck, lit).
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # ONNX frontend: protobuf parsing, checker, and the backend test suite.
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  # Symbolic shape solver.
  libz3-dev
  # Unit tests.
  libgtest-dev libgmock-dev
  # Benchmarks (disc-solver-bench).
  libbenchmark-dev
  # Runtime: signature JSON parsing.
  nlohmann-json3-dev
  # Install tests (nm, readelf, c++filt) and Debian packages (cpack -G DEB).
  binutils dpkg-dev file
  # Runtime: oneDNN library calls (MatMul, Conv).
  libdnnl-dev
  # Fuzzing (libFuzzer) and sanitizer builds (scripts/fuzz.sh,
  # scripts/sanitize.sh); sanitized model wrappers are compiled by clang-22.
  clang-22 libclang-rt-22-dev
  # Model export and reference values (PyTorch 1.13, NumPy, ONNX 1.12).
  python3 python3-numpy python3-torch python3-torchvision python3-onnx
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Installs every Debian package DISC needs to build, test and run its demo.
# Idempotent: packages already present are skipped; apt-get runs only when
# something is missing. Debian 12 (bookworm) with LLVM/MLIR 22 from Debian.
set -euo pipefail

PACKAGES=(
  # Build toolchain.
  cmake ninja-build ccache g++ pkg-config
  # Formatting check (scripts/check-format.sh, run by CI).
  clang-format
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
  # Runtime: oneDNN library calls (MatMul, Conv). Debian's dnnl-config.cmake
  # calls find_package(OpenCL REQUIRED) (runtime/CMakeLists.txt's
  # find_package(dnnl)), but libdnnl-dev only *recommends* the OpenCL headers
  # and libOpenCL.so, and this script installs without recommends.
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  # Fuzzing (libFuzzer) and sanitizer builds (scripts/fuzz.sh,
  # scripts/sanitize.sh); sanitized model wrappers are compiled by clang-22.
  clang-22 libclang-rt-22-dev
  # Model export and reference values (PyTorch 1.13, NumPy, ONNX 1.12).
  python3 python3-numpy python3-torch python3-torchvision python3-onnx
  # The disc Python module (python/, pybind11) and its tests (pytest).
  pybind11-dev python3-dev python3-pytest
  # Docs: the memory-timeline plot rendered to PNG (rsvg-convert,
  # docs/memory.md "Timeline").
  librsvg2-bin
)

# `bootstrap.sh --list` prints the package list, one per line (read by
# scripts/check-deps.sh).
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

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

echo "bootstrap: ${#missing[@]} of ${#PACKAGES[@]} packages missing, installing:"
printf '  %s\n' "${missing[@]}"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get update -qq; then
  echo "bootstrap: error: apt-get update failed" >&2
  exit 1
fi

# A package without an installation candidate would make apt-get refuse the
# whole list with one line among its output; name it here instead.
unavailable=()
for p in "${missing[@]}"; do
  cand="$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')"
  if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then unavailable+=("$p"); fi
done
if [ ${#unavailable[@]} -ne 0 ]; then
  echo "bootstrap: error: no installation candidate for: ${unavailable[*]}" >&2
  exit 1
fi

if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
  # Find which package fails on its own (dependency conflicts, download or
  # maintainer-script errors).
  failed=()
  for p in "${missing[@]}"; do
    if ! $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1; then
      failed+=("$p")
    fi
  done
  echo "bootstrap: error: apt-get could not install: ${failed[*]:-(the list as a whole)}" >&2
  exit 1
fi

still=()
for p in "${missing[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    still+=("$p")
  fi
done
if [ ${#still[@]} -ne 0 ]; then
  echo "bootstrap: error: not installed after apt-get: ${still[*]}" >&2
  exit 1
fi
echo "bootstrap: installed ${#missing[@]} packages"

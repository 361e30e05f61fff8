#!/usr/bin/env bash
# Installs the Debian packages tp-mlir needs and configures + builds build/.
# Idempotent: on a machine that has every package it does not touch apt (no
# network); re-running only rebuilds what changed.
#   scripts/setup.sh [--bench]
#   --bench: also the packages the benchmarks need (bench/README.md); the
#   benchmark scripts install nothing and name this command when one is missing.
#   BUILD_DIR (default build), JOBS (default nproc) override the defaults.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BENCH=0
for arg in "$@"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    *) echo "usage: scripts/setup.sh [--bench]" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools clang-22 lld-22
  ninja-build cmake python3-numpy python3-pytest nlohmann-json3-dev
  libopenblas-dev libopenmpi-dev openmpi-bin libgtest-dev liblld-22-dev
  libclang-rt-22-dev  # ASan, UBSan and libFuzzer runtimes (scripts/asan.sh)
  clang-format-22     # scripts/format.sh (.clang-format)
  g++-12  # nvcc's host compiler (test/Cuda/device/gpu_bundle.sh, test/Cuda/device-script.test)
  # PyTorch: the independent reference the generation tests compare ids
  # with (test/*/generate.test, device-script.test), and the baseline of
  # bench/cpu/cpu_forward.sh and generate.sh.
  python3-torch
)
BENCH_PACKAGES=(
  linux-perf valgrind  # the profilers of bench/compile/profile_tp_shard.sh
)
if ((BENCH)); then PACKAGES+=("${BENCH_PACKAGES[@]}"); fi
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  [[ $status == ii* ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo for apt-get" >&2; exit 1; }
    SUDO=sudo
  fi
  # The apt sources must carry LLVM/MLIR 22 (the distribution's, or
  # apt.llvm.org added beforehand; see README.md).
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} Debian packages present"
fi

if [[ ! -f $BUILD_DIR/CMakeCache.txt || ! -f $BUILD_DIR/build.ninja ]]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_ENABLE_LLD=ON -DCMAKE_BUILD_TYPE=Release
fi
# An existing build/ re-runs cmake itself when a CMakeLists.txt changed.
ninja -C "$BUILD_DIR" -j "$JOBS"

#!/usr/bin/env bash
# The one test command: set-up + build, then six suites
#   lit       /usr/lib/llvm-22/bin/lit -sv build/test
#   docs      docs/generated/ matches what ODS generates
#   format    the C and C++ sources are clang-format-22 clean (scripts/format.sh)
#   pytest    python/tests
#   consumer  install to a temporary prefix, build examples/consumer against
#             it with find_package(TPMLIR), run it
#   asan      scripts/asan.sh: a second build, build-asan/, with ASan and
#             UBSan, the lit suite on it, then the tp-shard fuzzer on 30,000 inputs
#             (FUZZ_TIME; docs/testing.md)
# and a final line "N passed, M failed" over the suites. Exit 0 iff all pass.
#   BUILD_DIR (default build), JOBS (default nproc; the asan build too).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

passed=() failed=()
step() { echo; echo "=== $* ==="; }
summary() {
  echo
  echo "=== summary ==="
  ((${#passed[@]})) && echo "passed: ${passed[*]}"
  ((${#failed[@]})) && echo "failed: ${failed[*]}"
  echo "${#passed[@]} passed, ${#failed[@]} failed"
  ((${#failed[@]} == 0))
}

step "setup + build"
if ! BUILD_DIR=$BUILD_DIR JOBS=$JOBS scripts/setup.sh || ! ninja -C "$BUILD_DIR" -j "$JOBS"; then
  echo "test: set-up or build failed; no suite can run" >&2
  failed=(lit docs format pytest consumer asan)
  summary; exit 1
fi

step "lit"
if /usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test"; then passed+=(lit); else failed+=(lit); fi

step "docs"
if scripts/gen-docs.sh --check; then passed+=(docs); else failed+=(docs); fi

step "format"
if scripts/format.sh --check; then passed+=(format); else failed+=(format); fi

step "pytest"
if PYTHONPATH=python /usr/bin/python3 -m pytest -q python/tests; then
  passed+=(pytest); else failed+=(pytest); fi

step "install + consumer"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tp-mlir-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
consumer() {
  cmake --install "$BUILD_DIR" --prefix "$TMP/prefix" >"$TMP/install.log" ||
    { cat "$TMP/install.log"; return 1; }
  echo "installed to $TMP/prefix"
  cmake -G Ninja -S examples/consumer -B "$TMP/consumer" \
    -DCMAKE_PREFIX_PATH="$TMP/prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld &&
    ninja -C "$TMP/consumer" -j "$JOBS" &&
    "$TMP/consumer/tp-consumer"
}
if consumer; then passed+=(consumer); else failed+=(consumer); fi

# Last: the longest, and its own build does not touch $BUILD_DIR.
step "asan"
if JOBS=$JOBS scripts/asan.sh; then passed+=(asan); else failed+=(asan); fi

summary

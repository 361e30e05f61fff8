#!/usr/bin/env bash
# The sanitizer suite (scripts/test.sh's "asan"): a second build, build-asan/,
# configured like build/ (scripts/setup.sh) plus ASan and UBSan (every
# UBSan finding fatal) and the libFuzzer target, then
#   lit   the whole lit suite against it (test/lit.cfg.py makes any sanitizer
#         report fail its test; the runtime's gtests run from lit,
#         test/Runtime/unittests.test)
#   fuzz  scripts/fuzz.sh on FUZZ_RUNS inputs (default 30000, about a minute),
#         then scripts/fuzz.sh tprt-loader on FUZZ_LOADER_RUNS (default
#         300000, under a minute), each stopping after FUZZ_TIME seconds
#         (default 300; 0 skips both). A count, not a time: with the fixed
#         seed CI then tries the same inputs on a fast machine and a slow
#         one, so a finding does not come and go.
# Exit 0 iff all pass. Needs scripts/setup.sh's packages (libclang-rt-22-dev
# for the sanitizer and libFuzzer runtimes).
#   ASAN_BUILD_DIR (default build-asan), JOBS (default nproc), FUZZ_TIME.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${ASAN_BUILD_DIR:-build-asan}
JOBS=${JOBS:-$(nproc)}
FUZZ_TIME=${FUZZ_TIME:-300}
FUZZ_RUNS=${FUZZ_RUNS:-30000}
FUZZ_LOADER_RUNS=${FUZZ_LOADER_RUNS:-300000}

if [[ ! -f /usr/lib/llvm-22/lib/clang/22/lib/linux/libclang_rt.asan-x86_64.a ]]; then
  echo "asan: no clang-22 sanitizer runtimes (scripts/setup.sh installs libclang-rt-22-dev)" >&2
  exit 1
fi
# Release (-O3 -gline-tables-only with the sanitizers): the lit suite runs
# the compiled models, which a -O0 runtime would slow down for nothing.
# Executables link the static ASan runtime (clang's default) and export it,
# so the sanitized shared objects (libtprt, the fake models) need no
# -shared-libasan; LLVM's CMake leaves out -Wl,-z,defs in a sanitizer build.
if [[ ! -f $BUILD/CMakeCache.txt || ! -f $BUILD/build.ninja ]]; then
  cmake -G Ninja -S . -B "$BUILD" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_ENABLE_LLD=ON -DCMAKE_BUILD_TYPE=Release \
    "-DLLVM_USE_SANITIZER=Address;Undefined" -DTP_ENABLE_FUZZER=ON || exit 1
fi
ninja -C "$BUILD" -j "$JOBS" || { echo "asan: build failed" >&2; exit 1; }

status=0
echo "--- asan: lit"
/usr/lib/llvm-22/bin/lit -sv "$BUILD/test" || status=1
if ((FUZZ_TIME > 0)); then
  echo "--- asan: fuzz (${FUZZ_RUNS} inputs, at most ${FUZZ_TIME} s)"
  ASAN_BUILD_DIR=$BUILD scripts/fuzz.sh "$FUZZ_TIME" -runs="$FUZZ_RUNS" || status=1
  echo "--- asan: fuzz the loader (${FUZZ_LOADER_RUNS} inputs, at most ${FUZZ_TIME} s)"
  ASAN_BUILD_DIR=$BUILD scripts/fuzz.sh tprt-loader "$FUZZ_TIME" \
    -runs="$FUZZ_LOADER_RUNS" || status=1
fi
exit $status

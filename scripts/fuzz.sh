#!/usr/bin/env bash
# Runs one of the libFuzzer targets of test/fuzz, under ASan and UBSan, for a
# bounded time, from a build configured by scripts/asan.sh:
#   scripts/fuzz.sh [tp-shard|tprt-loader] [SECONDS] [LIBFUZZER_FLAG...]
#   tp-shard     (the default) parse, tp-import (if the input says so),
#                tp-shard, CPU lowering; its seeds are
#                every .mlir file under test/, each `// -----` chunk of a
#                -split-input-file test its own seed (the fuzzer parses one
#                module), with test/fuzz/tp-shard/mlir.dict;
#   tprt-loader  tp-run's readers of .npy, .safetensors and a manifest's
#                weights; its seeds are test/fuzz/tprt-loader/seeds.py's.
# SECONDS defaults to 60. The seeds are written at run time to a temporary
# directory, where new inputs go too: nothing is kept but the crashes, in
# $FUZZ_ARTIFACTS (default build-asan/fuzz/), which libFuzzer names
# crash-<sha1> (leak-, timeout-, oom- likewise).
# Exit 0 iff the run ends without a finding; libFuzzer's last lines give the
# executions (stat::number_of_executed_units) and coverage (cov:, ft:).
#   ASAN_BUILD_DIR (default build-asan) names the build; FUZZ_SEED (default
#   1) the seed: a fixed one makes CI's run the same inputs every time, so a
#   finding there is not luck of the day. PYTHON (default /usr/bin/python3,
#   with numpy) writes the loader's seeds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TARGET=tp-shard
case "${1:-}" in
  tp-shard|tprt-loader) TARGET=$1; shift;;
esac
BUILD=${ASAN_BUILD_DIR:-build-asan}
SECONDS_TO_RUN=${1:-60}
shift $(($# > 0 ? 1 : 0))
FUZZER=$BUILD/bin/$TARGET-fuzzer
[[ -x $FUZZER ]] || { echo "fuzz: $FUZZER missing (scripts/asan.sh builds it)" >&2; exit 1; }
ARTIFACTS=${FUZZ_ARTIFACTS:-$BUILD/fuzz}
mkdir -p "$ARTIFACTS"

CORPUS=$(mktemp -d "${TMPDIR:-/tmp}/tp-fuzz-corpus.XXXXXX")
trap 'rm -rf "$CORPUS"' EXIT
FLAGS=()
if [[ $TARGET == tp-shard ]]; then
  find test -name '*.mlir' -print0 | sort -z |
    while IFS= read -r -d '' file; do
      awk -v out="$CORPUS/$(echo "$file" | tr / _)" '
        /^\/\/ -----/ { close(out "." n+0); n++; next }
        { print > (out "." n+0) }' "$file"
    done
  echo "fuzz: $(ls "$CORPUS" | wc -l) seeds from $(find test -name '*.mlir' | wc -l) files"
  FLAGS+=(-dict=test/fuzz/tp-shard/mlir.dict)
else
  "${PYTHON:-/usr/bin/python3}" test/fuzz/tprt-loader/seeds.py "$CORPUS"
  echo "fuzz: $(ls "$CORPUS" | wc -l) seeds from test/fuzz/tprt-loader/seeds.py"
fi

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}
# -timeout: the largest seed takes well under a second; a minute is a hang.
set -x
"$FUZZER" "$CORPUS" "${FLAGS[@]}" \
  -seed="${FUZZ_SEED:-1}" -max_total_time="$SECONDS_TO_RUN" -timeout=60 \
  -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/" "$@"

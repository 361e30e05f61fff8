#!/usr/bin/env bash
# Runs tp-shard-fuzzer (test/fuzz: parse, tp-shard, CPU lowering under ASan
# and UBSan) for a bounded time, from a build configured by scripts/asan.sh.
#   scripts/fuzz.sh [SECONDS] [LIBFUZZER_FLAG...]      (default 60 s)
# The seed corpus is every .mlir file under test/, each `// -----` chunk of a
# -split-input-file test its own seed (the fuzzer parses one module), written
# at run time to a temporary directory, where new inputs go too: nothing is
# kept but the crashes, in $FUZZ_ARTIFACTS (default build-asan/fuzz/),
# which libFuzzer names crash-<sha1> (leak-, timeout-, oom- likewise).
# Exit 0 iff the run ends without a finding; libFuzzer's last lines give the
# executions (stat::number_of_executed_units) and coverage (cov:, ft:).
#   ASAN_BUILD_DIR (default build-asan) names the build; FUZZ_SEED (default
#   1) the seed: a fixed one makes CI's run the same inputs every time, so a
#   finding there is not luck of the day.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${ASAN_BUILD_DIR:-build-asan}
SECONDS_TO_RUN=${1:-60}
shift $(($# > 0 ? 1 : 0))
FUZZER=$BUILD/bin/tp-shard-fuzzer
[[ -x $FUZZER ]] || { echo "fuzz: $FUZZER missing (scripts/asan.sh builds it)" >&2; exit 1; }
ARTIFACTS=${FUZZ_ARTIFACTS:-$BUILD/fuzz}
mkdir -p "$ARTIFACTS"

CORPUS=$(mktemp -d "${TMPDIR:-/tmp}/tp-fuzz-corpus.XXXXXX")
trap 'rm -rf "$CORPUS"' EXIT
find test -name '*.mlir' -print0 | sort -z |
  while IFS= read -r -d '' file; do
    awk -v out="$CORPUS/$(echo "$file" | tr / _)" '
      /^\/\/ -----/ { close(out "." n+0); n++; next }
      { print > (out "." n+0) }' "$file"
  done
echo "fuzz: $(ls "$CORPUS" | wc -l) seeds from $(find test -name '*.mlir' | wc -l) files"

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}
# -timeout: the largest seed takes well under a second; a minute is a hang.
set -x
"$FUZZER" "$CORPUS" -dict=test/fuzz/mlir.dict \
  -seed="${FUZZ_SEED:-1}" -max_total_time="$SECONDS_TO_RUN" -timeout=60 \
  -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/" "$@"

#!/usr/bin/env bash
# A ragged batch: prompts of different lengths served as one batch
# (tpmlir.build --ragged, tp-run --prompt once per length) against each
# prompt served alone, on one core (tp 1), GPT-2-small shapes (12 layers,
# fp32, vocabulary 50257 padded to 50304, the benchmark weights of
# bench/cpu/generate_inputs.py), STEPS new ids per sequence, greedy. Three
# runs per round:
#   ragged  batch 8, --ragged --chunked-prefill: the 8 prompts (LENGTHS)
#           left-padded to the longest, one generation
#   alone   batch 1, --chunked-prefill: each prompt in its own generation,
#           one after the other (the time is their sum)
#   equal   batch 8 without --ragged, 8 prompts of the longest length: what
#           the padding's masks and per-sequence positions cost the step
# Each round runs them in an order rotated by one. Every sequence's ids in
# the ragged run must equal its run alone, else the script stops. The table
# takes the median over rounds of the time to the first ids, of the decode
# step and of the whole generation (first ids + steps), and each round's
# ratios, and writes them with the command, date, machine and load to
# docs/bench-ragged.md.
#
#   bench/cpu/ragged.sh     (R=3 STEPS=32 CHUNK=32 LENGTHS="40 52 64 76 88 100 112 128"; DOC=- to print only)
#
# CHUNK is at most the shortest prompt, so that each prompt alone runs as
# @prefill and @extend chunks too, not one @decode per token.
#
# Environment: R rounds, STEPS new ids, CHUNK (@prefill's tokens), LENGTHS
# (the prompts', 8 of them), WORK (/tmp/tp-bench-ragged), PYTHON
# (/usr/bin/python3), NO_BUILD=1 to use build/ as it is. Needs what
# scripts/setup.sh installs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CMDLINE="bench/cpu/ragged.sh${R:+ (R=$R)}${STEPS:+ (STEPS=$STEPS)}${CHUNK:+ (CHUNK=$CHUNK)}${LENGTHS:+ (LENGTHS=\"$LENGTHS\")}"
R="${R:-3}" STEPS="${STEPS:-32}" CHUNK="${CHUNK:-32}" LENGTHS="${LENGTHS:-40 52 64 76 88 100 112 128}"
WORK="${WORK:-/tmp/tp-bench-ragged}"
DOC="${DOC:-$ROOT/docs/bench-ragged.md}"
PYTHON="${PYTHON:-/usr/bin/python3}"
for v in R STEPS CHUNK; do
  case "${!v}" in ''|*[!0-9]*|0) echo "error: $v must be a positive integer" >&2; exit 2;; esac
done
read -r -a LENS <<<"$LENGTHS"
[ "${#LENS[@]}" = 8 ] || { echo "error: LENGTHS must hold 8 prompt lengths" >&2; exit 2; }
LONGEST=0
for n in "${LENS[@]}"; do
  case "$n" in ''|*[!0-9]*|0) echo "error: LENGTHS must be positive integers" >&2; exit 2;; esac
  [ "$n" -gt "$LONGEST" ] && LONGEST=$n
done
command -v mpirun >/dev/null 2>&1 || { echo "error: mpirun missing: run scripts/setup.sh" >&2; exit 1; }
[ -n "${NO_BUILD:-}" ] || ninja -C "$ROOT/build" tp-compile tp-run >&2
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
CORES="$(nproc)"  # before OMP_NUM_THREADS, which nproc reads
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TPRT_BLAS_THREADS=1
START_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
START_DATE="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
# Caches for the longest prompt, its padded last chunk and the new ids.
SHAPE=(--layers 12 --vocab 50257 --pad-vocab 128 --generate $((LONGEST + CHUNK + STEPS)))

KEY="$( (cat "$ROOT"/python/tpmlir/*.py "$HERE/generate_inputs.py" "$ROOT/build/bin/tp-compile"
         echo "${SHAPE[*]} $CHUNK $LENGTHS") | sha256sum | cut -c1-16)"
M="$WORK/$KEY"
mkdir -p "$M"
if [ ! -f "$M/done" ]; then
  echo "# building the weights, the prompts and the three models in $M" >&2
  "$PYTHON" "$HERE/generate_inputs.py" "${SHAPE[@]}" --seq 8 --steps 1 --batch 1 \
    --weights "$M/w.safetensors" --prompt "$M/unused.npy" --expected "$M/unused.ids.npy" >&2
  "$PYTHON" - "$M" "$LONGEST" $LENGTHS <<'PY'
import sys
import numpy as np
m, longest, lengths = sys.argv[1], int(sys.argv[2]), [int(n) for n in sys.argv[3:]]
rng = np.random.default_rng(5)
for b, n in enumerate(lengths):
    np.save(f"{m}/p{b}.npy", rng.integers(0, 50257, (1, n)).astype(np.int64))
np.save(f"{m}/equal_prompt.npy", rng.integers(0, 50257, (8, longest)).astype(np.int64))
PY
  for build in "ragged --batch 8 --ragged" "alone --batch 1" "equal --batch 8"; do
    set -- $build
    name=$1; shift
    "$PYTHON" -m tpmlir.build --preset gpt2_small "${SHAPE[@]}" --seq "$CHUNK" --chunked-prefill "$@" \
      -o "$M/$name.mlir"
    "$ROOT/build/bin/tp-compile" "$M/$name.mlir" --tp-size 1 -o "$M/$name.so" 2>/dev/null
  done
  touch "$M/done"
fi

run() {  # NAME OUT PROMPT...: one generation, its report in OUT.json
  local name=$1 out=$2 prompts=()
  shift 2
  for p in "$@"; do prompts+=(--prompt "$p"); done
  mpirun --allow-run-as-root -np 1 "$ROOT/build/bin/tp-run" "$M/$name.so" --weights "$M/w.safetensors" \
    "${prompts[@]}" --generate "$STEPS" --ignore-eos --output "$out.npy" --report-json "$out.json" --quiet
}

RUNS="$M/runs.txt"
: >"$RUNS"
ORDER=(ragged alone equal)
for r in $(seq "$R"); do
  for k in 0 1 2; do
    name="${ORDER[$(((k + r) % 3))]}"
    case "$name" in
      ragged) run ragged "$M/ragged" "$M"/p{0..7}.npy ;;
      alone) for b in $(seq 0 7); do run alone "$M/alone$b" "$M/p$b.npy"; done ;;
      equal) run equal "$M/equal" "$M/equal_prompt.npy" ;;
    esac
    "$PYTHON" - "$M" "$name" "$r" >>"$RUNS" <<'PY'
import json, sys
import numpy as np
m, name, r = sys.argv[1:]
outs = [f"{m}/alone{b}" for b in range(8)] if name == "alone" else [f"{m}/{name}"]
reports = [json.load(open(o + ".json")) for o in outs]
if name == "ragged":
    got = np.load(f"{m}/ragged.npy")
    for b in range(8):
        alone = f"{m}/alone{b}.npy"
        try:
            want = np.load(alone)
        except FileNotFoundError:
            continue  # the first round's alone runs come after this one
        if not np.array_equal(got[b:b + 1], want):
            sys.exit(f"sequence {b}: the ragged batch's ids {got[b].tolist()} are not its own "
                     f"run's {want[0].tolist()}")
ttft = sum(x["ttft_s"] for x in reports)
step = sum(x["decode_step_s"] for x in reports)
total = sum(x["ttft_s"] + x["decode_step_s"] * x["decode_steps"] for x in reports)
tokens = sum(x["batch"] * (x["decode_steps"] + 1) for x in reports)
print(r, name, ttft, step, total, tokens)
PY
  done
done
# The first round's ragged run may have come before the runs alone: check it
# now against them.
"$PYTHON" - "$M" <<'PY'
import sys
import numpy as np
m = sys.argv[1]
got = np.load(f"{m}/ragged.npy")
for b in range(8):
    want = np.load(f"{m}/alone{b}.npy")
    if not np.array_equal(got[b:b + 1], want):
        sys.exit(f"sequence {b}: the ragged batch's ids {got[b].tolist()} are not its own run's {want[0].tolist()}")
print(f"# the ragged batch's ids equal each sequence's own run ({len(set(got.ravel().tolist()))} distinct ids)",
      file=sys.stderr)
PY

TABLE="$("$PYTHON" - "$RUNS" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
by = {}
for r, name, ttft, step, total, tokens in rows:
    by.setdefault(name, {})[r] = (float(ttft), float(step), float(total), int(tokens))
def med(name, k):
    return statistics.median(v[k] for v in by[name].values())
def ratio(a, b, k):
    return statistics.median(by[b][r][k] / by[a][r][k] for r in by[a])
what = {"ragged": "8 prompts, one batch of 8 (`--ragged`)",
        "alone": "the 8 prompts one at a time (batch 1; sums)",
        "equal": "8 prompts of the longest length, batch of 8 (not ragged)"}
print("| run | what | first ids, ms | decode step, ms | generation, s | new ids/s | ragged's speed, x |")
print("|---|---|---:|---:|---:|---:|---:|")
for n in ("ragged", "alone", "equal"):
    tokens = next(iter(by[n].values()))[3]
    print(f"| {n} | {what[n]} | {med(n, 0) * 1e3:.0f} | {med(n, 1) * 1e3:.1f} | {med(n, 2):.2f} | "
          f"{tokens / med(n, 2):.0f} | {ratio('ragged', n, 2):.2f} |")
PY
)"
echo "$TABLE"
[ "$DOC" = - ] && exit 0
cat >"$DOC" <<DOC
# A ragged batch against its prompts one at a time

Generated by \`$CMDLINE\` on $START_DATE ($(hostname), $CORES cores, load averages
$START_LOAD before, $(cut -d' ' -f1-3 /proc/loadavg) after).

GPT-2-small shapes (12 layers, fp32, vocabulary 50257 padded to 50304), caches of
$((LONGEST + CHUNK + STEPS)) positions, tp 1 on one core, @prefill of $CHUNK tokens and
\`--chunked-prefill\`, $STEPS new ids per sequence (greedy, \`--ignore-eos\`). Prompts of
$LENGTHS random ids. "ragged": one generation of the 8 as a batch, built \`--ragged\`, the
shorter ones left-padded to $LONGEST; "alone": each prompt in its own generation at batch 1,
one after the other (their times summed); "equal": a batch of 8 prompts of $LONGEST ids built
without \`--ragged\` (what the padding costs the step). Medians over $R rounds (each in a
rotated order) of \`tp-run --report-json\`'s time to the first ids (\`ttft_s\`), the median
decode step (\`decode_step_s\`), and the generation (first ids + steps x step); "new ids/s"
counts every sequence's; "ragged's speed" is each round's generation time over the ragged
run's. Every sequence's ids in the ragged batch equal its run alone.

$TABLE
DOC
echo "wrote $DOC" >&2

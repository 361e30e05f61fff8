#!/usr/bin/env bash
# Chunked prefill: the time to the first new token of a prompt longer than
# the model's @prefill, on one core (tp 1), GPT-2-small shapes (12 layers,
# fp32, vocabulary 50257 padded to 50304, the benchmark weights of
# bench/cpu/generate_inputs.py), batch 1. Three builds of one model:
#   whole    --seq PROMPT: one @prefill over the whole prompt (the best case,
#            when every prompt has that length)
#   chunked  --seq CHUNK --chunked-prefill: @prefill over the first CHUNK
#            tokens, then @extend chunks of CHUNK (the last padded, told
#            how many of its tokens are the prompt's)
#   stepped  --seq CHUNK: @prefill, then one @decode per remaining token
# With WINDOW=N every layer sees its last N positions only, its caches rings
# of N rows (Mistral's, Gemma's sliding windows).
# Each round runs the three in an order rotated by one; every run's ids must
# equal numpy's reference (generate_inputs.py: one prefill over the prompt),
# else the script stops. The table takes the median time to first token
# over rounds and the ratios in the same rounds, and writes them with the
# command, date, machine and load to docs/bench-chunked-prefill.md.
#
#   bench/cpu/chunked_prefill.sh      (R=3 PROMPT=500 CHUNK=64; DOC=- to print only)
#   WINDOW=256 bench/cpu/chunked_prefill.sh   (docs/bench-chunked-prefill-rings.md)
#
# Environment: R rounds (3), PROMPT tokens (500), CHUNK tokens (64), WORK
# (/tmp/tp-bench-chunked-prefill), PYTHON (/usr/bin/python3), NO_BUILD=1 to
# use build/ as it is. Needs what scripts/setup.sh installs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CMDLINE="${WINDOW:+WINDOW=$WINDOW }bench/cpu/chunked_prefill.sh${R:+ (R=$R)}${PROMPT:+ (PROMPT=$PROMPT)}${CHUNK:+ (CHUNK=$CHUNK)}"
R="${R:-3}" PROMPT="${PROMPT:-500}" CHUNK="${CHUNK:-64}" STEPS=2 WINDOW="${WINDOW:-0}"
WORK="${WORK:-/tmp/tp-bench-chunked-prefill}"
DOC="${DOC:-$ROOT/docs/bench-chunked-prefill$([ "$WINDOW" = 0 ] || echo -rings).md}"
PYTHON="${PYTHON:-/usr/bin/python3}"
for v in R PROMPT CHUNK; do
  case "${!v}" in ''|*[!0-9]*|0) echo "error: $v must be a positive integer" >&2; exit 2;; esac
done
case "$WINDOW" in *[!0-9]*) echo "error: WINDOW must be a number of positions" >&2; exit 2;; esac
[ "$CHUNK" -lt "$PROMPT" ] || { echo "error: CHUNK must be shorter than PROMPT" >&2; exit 2; }
command -v mpirun >/dev/null 2>&1 || { echo "error: mpirun missing: run scripts/setup.sh" >&2; exit 1; }
[ -n "${NO_BUILD:-}" ] || ninja -C "$ROOT/build" tp-compile tp-run >&2
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
CORES="$(nproc)"  # before OMP_NUM_THREADS, which nproc reads
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TPRT_BLAS_THREADS=1
START_LOAD="$(cut -d' ' -f1-3 /proc/loadavg)"
START_DATE="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
# Caches with rows for a padded last chunk too (a model serving more
# positions than this prompt).
SHAPE=(--layers 12 --vocab 50257 --pad-vocab 128 --generate $((PROMPT + CHUNK + STEPS)))
WINDOWED=()
[ "$WINDOW" = 0 ] || WINDOWED=(--sliding-window "$WINDOW")

KEY="$( (cat "$ROOT"/python/tpmlir/*.py "$HERE/generate_inputs.py" "$ROOT/build/bin/tp-compile"
         echo "${SHAPE[*]} $PROMPT $CHUNK $WINDOW") | sha256sum | cut -c1-16)"
M="$WORK/$KEY"
mkdir -p "$M"
if [ ! -f "$M/done" ]; then
  echo "# building the weights, prompt, expected ids and the three models in $M" >&2
  "$PYTHON" "$HERE/generate_inputs.py" "${SHAPE[@]}" "${WINDOWED[@]}" --seq "$PROMPT" --steps "$STEPS" --batch 1 \
    --weights "$M/w.safetensors" --prompt "$M/p.npy" --expected "$M/ids.npy" >&2
  for build in "whole --seq $PROMPT" "chunked --seq $CHUNK --chunked-prefill" "stepped --seq $CHUNK"; do
    set -- $build
    name=$1; shift
    "$PYTHON" -m tpmlir.build --preset gpt2_small "${SHAPE[@]}" "$@" -o "$M/$name.mlir" \
      ${WINDOWED[@]:+"${WINDOWED[@]}" --sliding-layers "$(seq -s, 0 11)"}
    "$ROOT/build/bin/tp-compile" "$M/$name.mlir" --tp-size 1 -o "$M/$name.so" 2>/dev/null
  done
  touch "$M/done"
fi

RUNS="$M/runs.txt"
: >"$RUNS"
ORDER=(whole chunked stepped)
for r in $(seq "$R"); do
  for k in 0 1 2; do
    name="${ORDER[$(((k + r) % 3))]}"
    mpirun --allow-run-as-root -np 1 "$ROOT/build/bin/tp-run" "$M/$name.so" --weights "$M/w.safetensors" \
      --prompt "$M/p.npy" --generate "$STEPS" --ignore-eos --output "$M/$name.npy" \
      --report-json "$M/$name.json" --quiet
    "$PYTHON" - "$M" "$name" "$r" >>"$RUNS" <<'PY'
import json, sys
import numpy as np
m, name, r = sys.argv[1:]
got, want = np.load(f"{m}/{name}.npy"), np.load(f"{m}/ids.npy")
if not np.array_equal(got, want):
    sys.exit(f"{name}: ids {got.tolist()} are not numpy's {want.tolist()}")
report = json.load(open(f"{m}/{name}.json"))
calls = report["prompt_calls"]
print(r, name, report["ttft_s"], calls["prefill"], calls["extend"], calls["decode"])
PY
  done
done

LAST="the last padded, told how many of its tokens are the prompt's"
TABLE="$("$PYTHON" - "$RUNS" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
ttft = {}
for r, name, s, *calls in rows:
    ttft.setdefault(name, {})[r] = float(s)
    ttft[name + " calls"] = calls
med = {n: statistics.median(v.values()) for n, v in ttft.items() if not n.endswith("calls")}
def ratio(a, b):
    return statistics.median(ttft[a][r] / ttft[b][r] for r in ttft[a])
print("| build | prompt calls (@prefill, @extend, @decode) | first token, ms | vs chunked |")
print("|---|---|---:|---:|")
for n in ("whole", "chunked", "stepped"):
    p, e, d = ttft[n + " calls"]
    print(f"| {n} | {p}, {e}, {d} | {med[n] * 1e3:.0f} | {ratio(n, 'chunked'):.2f}x |")
PY
)"
echo "$TABLE"
[ "$DOC" = - ] && exit 0
cat >"$DOC" <<DOC
# Chunked prefill: time to the first token of a long prompt

Generated by \`$CMDLINE\` on $START_DATE ($(hostname), $CORES cores, load averages
$START_LOAD before, $(cut -d' ' -f1-3 /proc/loadavg) after).

GPT-2-small shapes (12 layers, fp32, vocabulary 50257 padded to 50304$([ "$WINDOW" = 0 ] || echo ", every layer
seeing its last $WINDOW positions only: ring caches of $WINDOW rows")), caches of $((PROMPT + CHUNK + STEPS)) positions, tp 1 on one core,
batch 1, a prompt of $PROMPT random ids; the median over $R rounds of the time from the first
call to the first new id (\`tp-run --report-json\`'s \`ttft_s\`), and of each round's ratio to
the chunked build. "whole": built with \`--seq $PROMPT\`, one @prefill; "chunked": \`--seq
$CHUNK --chunked-prefill\`, @prefill and @extend chunks of $CHUNK ($LAST); "stepped": \`--seq $CHUNK\`, one @decode per token past the first $CHUNK. Every
run's ids are numpy's (one prefill over the whole prompt).

$TABLE
DOC
echo "wrote $DOC" >&2

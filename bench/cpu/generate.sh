#!/usr/bin/env bash
# CPU generation benchmark: greedy decoding with a KV cache, the compiled model
# (tp-run --generate) at tp 1 and tp 2 against PyTorch eager on one thread and
# against the memory-bandwidth bound measured on this machine in the same run.
#
#   bench/cpu/generate.sh            (R=3 by default; R=1 for a quick run; see Environment)
#
# Model: GPT-2-small shapes, 12 layers, fp32 (--preset gpt2_small: d 768, 12
# heads, ffn 3072, learned positions, LM head tied to the embedding), GPT-2's
# vocabulary of 50257 in the checkpoint, padded by the graph to 50304
# (--pad-vocab 128, as Megatron-LM and nanoGPT pad it: 50257 does not divide
# between 2 ranks; tp-run pads the checkpoint's rows with zeros), a
# cache of S_max 256 positions, a prompt of 128 random ids, 128 new tokens
# (one prefill, 127 decode steps), batch 1 and 8. The checkpoint, prompts
# and expected ids come from bench/cpu/generate_inputs.py (tpmlir's random
# weights, the embedding scaled by 0.1 so the continuation varies; numpy's
# reference.generate for the ids), the graph from python -m tpmlir.build
# --generate; tp-compile for tp 1 and tp 2. Cached in $WORK, keyed by the
# sha256 of python/tpmlir/*.py and generate_inputs.py (model files) and of
# the tp-compile binary (the .so files).
#
# Each round runs, in an order rotated by one every round:
#   tpN-bB   mpirun -np N tp-run m.bB.N.so --prompt pB.npy --generate 128 (one BLAS thread
#            per rank; N = 1, 2); skipped, and reported missing, when this tp-run has no --generate
#   torch-bB bench/cpu/torch_generate.py (torch.set_num_threads(1), OMP/OPENBLAS_NUM_THREADS=1)
#   bw       bench/cpu/read_bw (C, clang-22 -O3 -march=native): one core reading 1 GiB, with
#            huge pages and with 4 KiB pages, then two copies at once (one per core, as the
#            2 ranks run) for the per-core bandwidth at tp 2
# Each tp-2 run is bracketed by two read_bw copies at once (512 MiB, 5 passes,
# huge pages) just before and just after it: this VM's host gives its two
# cores either twice one core's bandwidth or about 1.2x it, and flips between
# the two within seconds; the report compares each tp-2 run with what its
# cores got around it.
# and once, before the rounds, bench/cpu/fma_peak.c: one core's multiply-add peak (the
# arithmetic a batch-8 step needs at that rate is in the report's notes).
# Correctness gates: every run's ids equal the expected ones token for token
# (torch_generate.py checks its own before writing any number; the tp-run
# runs of round 1 go through bench/cpu/generate_check.py, which also checks the
# all-reduces per decode step: 27, the embedding lookup, 2 per layer and the
# argmax's 2; at tp 1 they are calls over one rank, as in cpu_forward.sh).
# A failed gate stops the script.
# Each run's decode step is the median over its steps; the table takes the
# median over rounds. The bound: bandwidth / bytes a decode step must read (the
# weights it streams + the KV cache up to the position; bench/cpu/generate_report.py).
# Prints a markdown table and writes it, with command, date, machine, versions,
# load averages, targets and verdicts, to docs/bench-generate.md (overwritten).
#
# Environment:
#   R        rounds                                       (default 3)
#   BATCHES  batch sizes                                  (default "1 8")
#   WORK     cache + raw results directory                (default /tmp/tp-bench-generate)
#   DOC      report file; "-" to skip writing it          (default docs/bench-generate.md)
#   PYTHON   python with numpy and torch                  (default /usr/bin/python3)
#   CC       C compiler for read_bw.c                     (default clang-22)
#   NO_BUILD 1: use build/ as it is (no ninja run; without tp-run the compiled rows are skipped)
# Needs what scripts/setup.sh installs (PyTorch included); it checks, installs nothing, and
# builds only tp-compile and tp-run.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CMDLINE="bench/cpu/generate.sh${*:+ $*}${R:+ (R=$R)}${BATCHES:+ (BATCHES=\"$BATCHES\")}"
R="${R:-3}"
BATCHES="${BATCHES:-1 8}"
WORK="${WORK:-/tmp/tp-bench-generate}"
DOC="${DOC:-$ROOT/docs/bench-generate.md}"
PYTHON="${PYTHON:-/usr/bin/python3}"
CC="${CC:-clang-22}"
TP_COMPILE="$ROOT/build/bin/tp-compile"
TP_RUN="$ROOT/build/bin/tp-run"
VOCAB=50257 PAD_VOCAB=128 SMAX=256 SEQ=128 STEPS=128 LAYERS=12
SHAPE_ARGS=(--layers "$LAYERS" --vocab "$VOCAB" --pad-vocab "$PAD_VOCAB" --generate "$SMAX" --seq "$SEQ")
BW_MIB=1024 BW_PASSES=10
case "$R" in ''|*[!0-9]*|0) echo "error: R must be a positive integer" >&2; exit 2;; esac
for b in $BATCHES; do
  case "$b" in *[!0-9]*|0) echo "error: BATCHES must be positive integers" >&2; exit 2;; esac
done
need() { echo "error: $1: run scripts/setup.sh" >&2; exit 1; }
[ -n "${NO_BUILD:-}" ] || [ -f "$ROOT/build/build.ninja" ] || need "no build/ ($ROOT/build/build.ninja)"
command -v mpirun >/dev/null 2>&1 || need "mpirun (openmpi-bin) missing"
command -v "$CC" >/dev/null 2>&1 || need "$CC (clang-22) missing"
"$PYTHON" -c "import numpy" 2>/dev/null || need "$PYTHON cannot import numpy (python3-numpy)"
"$PYTHON" -c "import torch" 2>/dev/null || need "$PYTHON cannot import torch (python3-torch)"
if [ -z "${NO_BUILD:-}" ]; then
  ninja -C "$ROOT/build" tp-compile tp-run >&2
  [ -x "$TP_RUN" ] || { echo "error: $TP_RUN missing: ninja -C build tp-run" >&2; exit 1; }
fi

export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TPRT_BLAS_THREADS=1
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
log() { echo "# $*" >&2; }

START_LOAD="$(loadavg)"
START_DATE="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"

# The compiled part needs tp-run --generate (issue 12, item 5); without it the
# PyTorch and bandwidth parts still run and the report says what is missing.
HAVE_GEN=1
[ -x "$TP_RUN" ] && [ -x "$TP_COMPILE" ] && "$TP_RUN" --help 2>&1 | grep -q -- '--generate' || HAVE_GEN=0
[ "$HAVE_GEN" = 1 ] || log "$TP_RUN is missing or has no --generate: the compiled rows are skipped"

# --- 1. model files, .so and read_bw, cached ----------------------------------
mkdir -p "$WORK"
MODEL_KEY="$( (cat "$ROOT"/python/tpmlir/*.py "$HERE/generate_inputs.py"; echo "${SHAPE_ARGS[*]} $STEPS") \
  | sha256sum | cut -c1-16)"
M="$WORK/model-$MODEL_KEY"
mkdir -p "$M"
for b in $BATCHES; do
  [ -f "$M/done-b$b" ] && continue
  log "building the model, weights, prompt and expected ids (batch $b) in $M"
  wflag=(); [ -f "$M/w.safetensors" ] || wflag=(--weights "$M/w.safetensors")
  "$PYTHON" "$HERE/generate_inputs.py" "${SHAPE_ARGS[@]}" --steps "$STEPS" --batch "$b" "${wflag[@]}" \
    --prompt "$M/p$b.npy" --expected "$M/ids$b.npy" --json "$M/info$b.json" >&2
  "$PYTHON" -m tpmlir.build --preset gpt2_small "${SHAPE_ARGS[@]}" --batch "$b" -o "$M/m$b.mlir"
  touch "$M/done-b$b"
done
[ -f "$M/w.safetensors" ] || { echo "error: $M/w.safetensors missing; rm -rf $M" >&2; exit 1; }

BW="$WORK/read_bw-$( (cat "$HERE/read_bw.c"; "$CC" --version | head -1) | sha256sum | cut -c1-16)"
[ -x "$BW" ] || "$CC" -O3 -march=native -ffast-math -o "$BW" "$HERE/read_bw.c"
# One core's multiply-add peak, on this CPU's widest vectors and on AVX2's (OpenBLAS's
# Haswell kernels); x86 only for the second.
FMA="$WORK/fma_peak-$( (cat "$HERE/fma_peak.c"; "$CC" --version | head -1) | sha256sum | cut -c1-16)"
[ -x "$FMA-native" ] || "$CC" -O2 -march=native -o "$FMA-native" "$HERE/fma_peak.c"
[ -x "$FMA-avx2" ] || "$CC" -O2 -march=haswell -o "$FMA-avx2" "$HERE/fma_peak.c" 2>/dev/null || true

COMPILE_NOTE=""
SDIR=""
if [ "$HAVE_GEN" = 1 ]; then
  for i in $(seq 60); do  # tp-compile may be relinked by a concurrent build: wait until it runs
    "$TP_COMPILE" --version >/dev/null 2>&1 && break
    [ "$i" = 1 ] && log "waiting for $TP_COMPILE to become runnable..."
    sleep 5
  done
  SO_KEY="$( (echo "$MODEL_KEY"; cat "$TP_COMPILE") | sha256sum | cut -c1-16)"
  SDIR="$WORK/so-$SO_KEY"
  mkdir -p "$SDIR"
  for b in $BATCHES; do
    for tp in 1 2; do
      if [ ! -f "$SDIR/m.b$b.$tp.so" ]; then
        log "tp-compile batch $b --tp-size $tp"
        t0=$(date +%s.%N)
        "$TP_COMPILE" "$M/m$b.mlir" --tp-size "$tp" -o "$SDIR/m.b$b.$tp.so.tmp"
        mv "$SDIR/m.b$b.$tp.so.tmp" "$SDIR/m.b$b.$tp.so"
        COMPILE_NOTE+="batch $b tp $tp compiled in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s; "
      else
        COMPILE_NOTE+="batch $b tp $tp cached; "
      fi
    done
  done
fi

RUN="$WORK/run-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RUN"
log "results in $RUN"
for w in native avx2; do
  if [ -x "$FMA-$w" ]; then "$FMA-$w" "$RUN/fma-$w.json" >&2; fi
done

pair() {  # pair OUT: two read_bw copies at once, one per core (OUT-a.json, OUT-b.json)
  "$BW" 512 5 huge "$1-a.json" >/dev/null &
  local pid=$!
  "$BW" 512 5 huge "$1-b.json" >/dev/null
  wait "$pid"
}

measure() {  # measure KIND ROUND
  local kind=$1 r=$2 out="$RUN/r$2-$1"
  echo "$kind $r $(loadavg)" >> "$RUN/loadavg.txt"
  case "$kind" in
    tp*)
      local n=${kind%%-*}; n=${n#tp}
      local b=${kind##*-b}
      [ "$n" = 1 ] || pair "$out-pair0"
      "${MPIRUN[@]}" -np "$n" "$TP_RUN" "$SDIR/m.b$b.$n.so" --weights "$M/w.safetensors" \
        --prompt "$M/p$b.npy" --generate "$STEPS" --warmup 1 --iters 1 --output "$out.ids.npy" \
        --report-json "$out.json" > "$out.txt"
      [ "$n" = 1 ] || pair "$out-pair1"
      if [ "$r" = 1 ]; then
        "$PYTHON" "$HERE/generate_check.py" "$out.ids.npy" "$M/ids$b.npy" --report "$out.json" \
          --all-reduces "$(( 2 * LAYERS + 3 ))" | tee "$RUN/check-$kind.txt" >&2
      fi ;;
    torch-b*)
      local b=${kind#torch-b}
      "$PYTHON" "$HERE/torch_generate.py" "${SHAPE_ARGS[@]}" --steps "$STEPS" --batch "$b" \
        --weights "$M/w.safetensors" --prompt "$M/p$b.npy" --expected "$M/ids$b.npy" \
        --warmup 1 --iters 1 --json "$out.json" >&2 ;;
    bw)
      "$BW" "$BW_MIB" "$BW_PASSES" huge "$out-1-huge.json" >&2
      "$BW" "$BW_MIB" "$BW_PASSES" 4k "$out-1-4k.json" >&2
      for pages in huge 4k; do
        "$BW" "$BW_MIB" "$BW_PASSES" "$pages" "$out-2a-$pages.json" >&2 &
        local pid=$!
        "$BW" "$BW_MIB" "$BW_PASSES" "$pages" "$out-2b-$pages.json" >&2
        wait "$pid"
      done ;;
  esac
}

# --- 2. interleaved rounds -------------------------------------------------------
KINDS=(bw)
for b in $BATCHES; do
  KINDS+=("torch-b$b")
  [ "$HAVE_GEN" = 1 ] && KINDS+=("tp1-b$b" "tp2-b$b")
done
for r in $(seq "$R"); do
  order=()
  for i in "${!KINDS[@]}"; do order+=("${KINDS[$(( (i + r - 1) % ${#KINDS[@]} ))]}"); done
  log "round $r/$R: ${order[*]} (load $(loadavg))"
  for kind in "${order[@]}"; do measure "$kind" "$r"; done
done

# --- 3. report --------------------------------------------------------------------
"$PYTHON" "$HERE/generate_report.py" --run "$RUN" --model-dir "$M" --rounds "$R" --batches "$BATCHES" \
  --have-generate "$HAVE_GEN" --command "$CMDLINE" --date "$START_DATE" --start-load "$START_LOAD" \
  --end-load "$(loadavg)" --compile-note "${COMPILE_NOTE%; }" --tp-compile "$TP_COMPILE" \
  --tp-run "$TP_RUN" --cc "$CC" --root "$ROOT" --doc "$DOC" \
  --layers "$LAYERS" --vocab "$VOCAB" --pad-vocab "$PAD_VOCAB" --generate "$SMAX" --seq "$SEQ" --steps "$STEPS"

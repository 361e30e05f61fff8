#!/usr/bin/env bash
# CPU forward-pass benchmark: the compiled model at tp 1 and tp 2 against
# PyTorch eager and numpy on one thread, GPT-2-small shapes, on this machine.
#
#   bench/cpu/cpu_forward.sh            (R=3 ITERS=10 by default; see Environment)
#
# Model: python -m tpmlir.build --preset gpt2_small --layers 12 --seq 128
# (d 768, 12 heads, ffn 3072, fused QKV, LayerNorm, tanh GeLU, biases, causal,
# fp32, batch 1, random weights seed 0), with its safetensors checkpoint, input
# and numpy reference; tp-compile for tp 1 and tp 2. Both are cached in
# $WORK, keyed by the sha256 of python/tpmlir/*.py (model files) and of the
# tp-compile binary (the .so).
#
# Correctness gates (before any timing is used): the tp 1 and tp 2 outputs of
# round 1 against ref.npy (python -m tpmlir.compare, rtol 1e-4, 24 all-reduces);
# torch_forward.py and numpy_forward.py check theirs before they time.
#
# Then R rounds; each round runs, in an order rotated by one every round:
#   tp1    mpirun -np 1 tp-run m.1.so --warmup 1 --iters ITERS  (OPENBLAS_NUM_THREADS=1)
#   tp2    mpirun -np 2 tp-run m.2.so --warmup 1 --iters ITERS  (one BLAS thread per rank)
#   torch  bench/cpu/torch_forward.py   (torch.set_num_threads(1), OMP/OPENBLAS_NUM_THREADS=1)
#   numpy  bench/cpu/numpy_forward.py   (tpmlir.reference.forward, OPENBLAS_NUM_THREADS=1)
#   sgemm  bench/cpu/sgemm_rate.py --tp 1, then two concurrent --tp 2 (one per core, as the ranks run)
# Each run's own median over its iterations; the table takes the median over rounds.
# Last, one untimed tp 1 and tp 2 run under bench/cpu/rss_sample.py splits the
# resident memory into anonymous (heap) and file-backed (mmap'ed checkpoint, libraries).
# Prints a markdown table and writes it, with command, date, machine, versions,
# load averages and the targets, to docs/bench-cpu.md (overwritten).
#
# Environment:
#   R       rounds                                   (default 3)
#   ITERS   timed forward passes per run             (default 10)
#   WORK    cache + raw results directory            (default /tmp/tp-bench-cpu)
#   DOC     report file; "-" to skip writing it      (default docs/bench-cpu.md)
#   PYTHON  python with numpy and torch              (default /usr/bin/python3)
# Needs scripts/setup.sh --bench (PyTorch); it checks, installs nothing, and
# builds only tp-compile and tp-run.
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are passed through untouched and recorded.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CMDLINE="bench/cpu/cpu_forward.sh${*:+ $*}${R:+ (R=$R)}${ITERS:+ (ITERS=$ITERS)}"
R="${R:-3}"
ITERS="${ITERS:-10}"
WORK="${WORK:-/tmp/tp-bench-cpu}"
DOC="${DOC:-$ROOT/docs/bench-cpu.md}"
PYTHON="${PYTHON:-/usr/bin/python3}"
TP_COMPILE="$ROOT/build/bin/tp-compile"
TP_RUN="$ROOT/build/bin/tp-run"
MODEL_ARGS=(--preset gpt2_small --layers 12 --seq 128)
for v in "$R" "$ITERS"; do
  case "$v" in ''|*[!0-9]*|0) echo "error: R and ITERS must be positive integers" >&2; exit 2;; esac
done
# Installs nothing: the packages come from scripts/setup.sh --bench (PyTorch for
# the comparison), build/ from scripts/setup.sh; only the two tools are brought
# up to date here.
need() { echo "error: $1: run scripts/setup.sh --bench" >&2; exit 1; }
[ -f "$ROOT/build/build.ninja" ] || need "no build/ ($ROOT/build/build.ninja)"
command -v mpirun >/dev/null 2>&1 || need "mpirun (openmpi-bin) missing"
"$PYTHON" -c "import numpy" 2>/dev/null || need "$PYTHON cannot import numpy (python3-numpy)"
"$PYTHON" -c "import torch" 2>/dev/null || need "$PYTHON cannot import torch (python3-torch)"
ninja -C "$ROOT/build" tp-compile tp-run >&2
[ -x "$TP_RUN" ] || { echo "error: $TP_RUN missing: ninja -C build tp-run" >&2; exit 1; }

export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TPRT_BLAS_THREADS=1
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
log() { echo "# $*" >&2; }

START_LOAD="$(loadavg)"
START_DATE="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"

# --- 1. model files and .so, cached -----------------------------------------
mkdir -p "$WORK"
MODEL_KEY="$( (cat "$ROOT"/python/tpmlir/*.py; echo "${MODEL_ARGS[*]}") | sha256sum | cut -c1-16)"
MDIR="$WORK/model-$MODEL_KEY"
if [ ! -f "$MDIR/done" ]; then
  log "building the model, weights, input and numpy reference in $MDIR"
  rm -rf "$MDIR"; mkdir -p "$MDIR"
  "$PYTHON" -m tpmlir.build "${MODEL_ARGS[@]}" -o "$MDIR/m.mlir" --weights "$MDIR/w.safetensors" \
    --input "$MDIR/x.npy" --expected "$MDIR/ref.npy"
  touch "$MDIR/done"
else
  log "model files cached: $MDIR"
fi
# tp-compile may be relinked by a concurrent build: wait until it runs.
for i in $(seq 60); do
  "$TP_COMPILE" --version >/dev/null 2>&1 && break
  [ "$i" = 1 ] && log "waiting for $TP_COMPILE to become runnable..."
  sleep 5
done
SO_KEY="$( (echo "$MODEL_KEY"; cat "$TP_COMPILE") | sha256sum | cut -c1-16)"
SDIR="$WORK/so-$SO_KEY"
mkdir -p "$SDIR"
COMPILE_NOTE=""
for tp in 1 2; do
  if [ ! -f "$SDIR/m.$tp.so" ]; then
    log "tp-compile --tp-size $tp"
    t0=$(date +%s.%N)
    "$TP_COMPILE" "$MDIR/m.mlir" --tp-size "$tp" -o "$SDIR/m.$tp.so.tmp"
    mv "$SDIR/m.$tp.so.tmp" "$SDIR/m.$tp.so"
    COMPILE_NOTE+="tp $tp compiled in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s; "
  else
    COMPILE_NOTE+="tp $tp cached; "
  fi
done

RUN="$WORK/run-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RUN"
log "results in $RUN"
M="$MDIR"
FWD_ARGS=("${MODEL_ARGS[@]}" --weights "$M/w.safetensors" --input "$M/x.npy" --expected "$M/ref.npy")

measure() {  # measure KIND ROUND
  local kind=$1 r=$2 out="$RUN/r$2-$1"
  echo "$kind $r $(loadavg)" >> "$RUN/loadavg.txt"
  case "$kind" in
    tp1|tp2)
      local n=${kind#tp}
      "${MPIRUN[@]}" -np "$n" "$TP_RUN" "$SDIR/m.$n.so" --weights "$M/w.safetensors" \
        --input "$M/x.npy" --output "$out.y.npy" --warmup 1 --iters "$ITERS" \
        --report-json "$out.json" > "$out.txt"
      if [ "$r" = 1 ]; then
        "$PYTHON" -m tpmlir.compare "$out.y.npy" "$M/ref.npy" --report "$out.json" \
          --all-reduces 24 | tee "$RUN/compare-$kind.txt" >&2
      fi ;;
    torch) "$PYTHON" "$HERE/torch_forward.py" "${FWD_ARGS[@]}" --iters "$ITERS" --json "$out.json" >&2 ;;
    numpy) "$PYTHON" "$HERE/numpy_forward.py" "${FWD_ARGS[@]}" --iters "$ITERS" --json "$out.json" >&2 ;;
    sgemm)
      "$PYTHON" "$HERE/sgemm_rate.py" --tp 1 --json "$out-1.json" > "$out-1.txt"
      "$PYTHON" "$HERE/sgemm_rate.py" --tp 2 --json "$out-2a.json" > "$out-2a.txt" &
      local pid=$!
      "$PYTHON" "$HERE/sgemm_rate.py" --tp 2 --json "$out-2b.json" > "$out-2b.txt"
      wait "$pid" ;;
  esac
}

# --- 2./3. interleaved rounds ------------------------------------------------
KINDS=(tp1 tp2 torch numpy sgemm)
for r in $(seq "$R"); do
  order=()
  for i in "${!KINDS[@]}"; do order+=("${KINDS[$(( (i + r - 1) % ${#KINDS[@]} ))]}"); done
  log "round $r/$R: ${order[*]} (load $(loadavg))"
  for kind in "${order[@]}"; do measure "$kind" "$r"; done
done

# --- 4. resident memory split (untimed) --------------------------------------
for n in 1 2; do
  "$PYTHON" "$HERE/rss_sample.py" --json "$RUN/rss-tp$n.json" -- "${MPIRUN[@]}" -np "$n" "$TP_RUN" \
    "$SDIR/m.$n.so" --weights "$M/w.safetensors" --input "$M/x.npy" --warmup 1 --iters 2 --quiet
done

# --- 5. report ---------------------------------------------------------------
"$PYTHON" "$HERE/cpu_forward_report.py" --run "$RUN" --rounds "$R" --iters "$ITERS" \
  --command "$CMDLINE" --date "$START_DATE" --start-load "$START_LOAD" --end-load "$(loadavg)" \
  --compile-note "${COMPILE_NOTE%; }" --tp-compile "$TP_COMPILE" --root "$ROOT" --doc "$DOC"

#!/usr/bin/env bash
# The front ends' BERT-base graphs (../shared/external: torch-mlir's FX
# torchmlir_fx_bert_base.tp.mlir and buddy-mlir's TOSA buddy_bert_base_tosa.mlir)
# compiled at tp 1 with tp-fold-broadcast-into-matmul off (before) and on
# (after), both timed in the same run: forward time, tokens/s and the GEMM
# share of the forward pass (tp-run's report), and their ratios.
#
#   bench/cpu/bert_linears.sh [MODEL.mlir...]   (R=3 ITERS=5 by default)
#
# Writes docs/bench-bert-linears.md (DOC=- to skip). Details: bert_linears.py.
# Environment: R rounds, ITERS forward passes per run, JOBS ninja jobs for
# bringing tp-compile and tp-run up to date, WORK raw results
# (default /tmp/tp-bench-bert), DOC, PYTHON (default /usr/bin/python3).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
EXTERNAL="$ROOT/../shared/external"
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=("$EXTERNAL/torchmlir_fx_bert_base.tp.mlir" "$EXTERNAL/buddy_bert_base_tosa.mlir")
CMDLINE="bench/cpu/bert_linears.sh${*:+ $*}${R:+ (R=$R)}${ITERS:+ (ITERS=$ITERS)}"
PYTHON="${PYTHON:-/usr/bin/python3}"
for m in "${MODELS[@]}"; do
  [ -f "$m" ] || { echo "error: no $m (../shared/external)" >&2; exit 1; }
done
[ -f "$ROOT/build/build.ninja" ] || { echo "error: no build/: run scripts/setup.sh" >&2; exit 1; }
command -v mpirun >/dev/null 2>&1 || { echo "error: mpirun missing: run scripts/setup.sh" >&2; exit 1; }
ninja -C "$ROOT/build" ${JOBS:+-j "$JOBS"} tp-compile tp-run >/dev/null
PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" "$HERE/bert_linears.py" \
  "${MODELS[@]/#/--model=}" --root "$ROOT" --work "${WORK:-/tmp/tp-bench-bert}" \
  --doc "${DOC:-$ROOT/docs/bench-bert-linears.md}" --cmdline "$CMDLINE" \
  --rounds "${R:-3}" --iters "${ITERS:-5}"

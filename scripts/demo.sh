#!/usr/bin/env bash
# The main job, end to end on a fresh machine: build a GPT-2-small-shaped
# model (d 768, 12 heads, ffn 3072, fused QKV, LayerNorm, GeLU, biases) with
# random weights, shard it for TP ranks (explain trace), check the sharding
# numerically with the equivalence oracle, compile it for 1 and TP ranks,
# run both with mpirun, and compare them with each other and with numpy.
#   LAYERS (default 2), SEQ (default 32), TP (default 2) override the model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
LAYERS=${LAYERS:-2} SEQ=${SEQ:-32} TP=${TP:-2}
scripts/setup.sh >/dev/null

OUT=$(mktemp -d "${TMPDIR:-/tmp}/tp-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
export PYTHONPATH=$ROOT/python
PY=/usr/bin/python3
BIN=$ROOT/build/bin
LLVM=/usr/lib/llvm-22
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)

$PY -m tpmlir.build --preset gpt2_small --layers "$LAYERS" --seq "$SEQ" \
  -o "$OUT/model.mlir" --weights "$OUT/model.safetensors" \
  --input "$OUT/x.npy" --expected "$OUT/ref.npy"
echo "== model: GPT-2-small shapes, $LAYERS layers, $SEQ tokens, random weights"

echo "== tp-shard for $TP ranks (explain trace)"
"$BIN/tp-opt" "$OUT/model.mlir" --tp-shard="tp-size=$TP explain=true" \
  -o "$OUT/sharded.mlir"
grep -o 'tensor<[0-9x]*xf32> {tp.name = "h.0[^}]*}' "$OUT/sharded.mlir" | sed 's/^/   /'

echo "== equivalence oracle: original vs $TP emulated ranks, JIT-compiled"
"$BIN/tp-opt" "$OUT/model.mlir" --tp-test-equivalence="tp-size=$TP" |
  $LLVM/bin/mlir-opt --one-shot-bufferize=bufferize-function-boundaries \
    --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
    --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm \
    --convert-math-to-libm --convert-vector-to-llvm --convert-arith-to-llvm \
    --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts |
  $LLVM/bin/mlir-runner -e main -entry-point-result=void \
    -shared-libs=$LLVM/lib/libmlir_c_runner_utils.so | tee "$OUT/equiv.txt"
grep -q '^EQUIVALENT' "$OUT/equiv.txt"

for n in 1 "$TP"; do
  echo "== tp-compile --tp-size $n, then mpirun -np $n tp-run"
  "$BIN/tp-compile" "$OUT/model.mlir" --tp-size "$n" -o "$OUT/model.$n.so"
  "${MPIRUN[@]}" -np "$n" "$BIN/tp-run" "$OUT/model.$n.so" \
    --weights "$OUT/model.safetensors" --input "$OUT/x.npy" \
    --output "$OUT/y.$n.npy" --iters 5
done

echo "== results"
$PY -m tpmlir.compare "$OUT/y.1.npy" "$OUT/ref.npy" | sed 's/^/   unsharded vs numpy:      /'
$PY -m tpmlir.compare "$OUT/y.$TP.npy" "$OUT/ref.npy" | sed "s/^/   $TP ranks vs numpy:        /"
$PY -m tpmlir.compare "$OUT/y.$TP.npy" "$OUT/y.1.npy" | sed "s/^/   $TP ranks vs unsharded:    /"

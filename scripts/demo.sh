#!/usr/bin/env bash
# The main job, end to end on a fresh machine: build a GPT-2-small-shaped
# model (d 768, 12 heads, ffn 3072, fused QKV, LayerNorm, GeLU, biases) with
# the python builders, shard it for TP ranks, print the explain trace, and
# check numerically that the per-rank program computes the original.
#   LAYERS (default 2), SEQ (default 8), TP (default 2) override the model.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LAYERS=${LAYERS:-2} SEQ=${SEQ:-8} TP=${TP:-2}
scripts/setup.sh >/dev/null

OUT=$(mktemp -d "${TMPDIR:-/tmp}/tp-demo.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
export PYTHONPATH=$PWD/python
/usr/bin/python3 -m tpmlir.build --preset gpt2_small --layers "$LAYERS" \
  --seq "$SEQ" -o "$OUT/model.mlir"
echo "== model: GPT-2-small shapes, $LAYERS layers, $SEQ tokens -> $OUT/model.mlir"

echo "== tp-shard for $TP ranks (explain trace)"
build/bin/tp-opt "$OUT/model.mlir" --tp-shard="tp-size=$TP explain=true" \
  -o "$OUT/sharded.mlir"
echo "== per-rank program: $(grep -c 'tp.all_reduce' "$OUT/sharded.mlir") all-reduces for $LAYERS layers"
grep -o 'tensor<[0-9x]*xf32> {tp.name = "h.0[^}]*}' "$OUT/sharded.mlir" | sed 's/^/   /'

echo "== equivalence: original vs $TP emulated ranks on the same random inputs"
LLVM=/usr/lib/llvm-22
build/bin/tp-opt "$OUT/model.mlir" --tp-test-equivalence="tp-size=$TP" |
  $LLVM/bin/mlir-opt --one-shot-bufferize=bufferize-function-boundaries \
    --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata \
    --lower-affine --finalize-memref-to-llvm --convert-math-to-llvm \
    --convert-math-to-libm --convert-vector-to-llvm --convert-arith-to-llvm \
    --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts |
  $LLVM/bin/mlir-runner -e main -entry-point-result=void \
    -shared-libs=$LLVM/lib/libmlir_c_runner_utils.so | tee "$OUT/equiv.txt"
grep -q '^EQUIVALENT' "$OUT/equiv.txt"

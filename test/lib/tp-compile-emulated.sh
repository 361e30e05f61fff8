#!/usr/bin/env bash
# tp-compile with the cuda pipeline's host emulation (test only): shards
# with tp-opt, lowers with tp-test-lower-cuda-emulated (test/lib), links
# with tp-compile --from=lowered. The options are tp-compile's that the
# tests use.
#   tp-compile-emulated.sh BIN_DIR MODEL.mlir [--backend cuda|cpu]
#       [--tp-size N] [--allow-fallback] [--dtype f32|bf16]
#       [--stack-weights=true|false] -o OUT.so
# Weights are stacked (tp-stack-weights) as tp-compile does: by default on
# cuda only.
set -euo pipefail
bin=$1 model=$2
shift 2
backend=cuda tp=1 fallback=false dtype=f32 out= stack=
while (($#)); do
  case $1 in
    --backend) backend=$2; shift 2 ;;
    --tp-size) tp=$2; shift 2 ;;
    --allow-fallback) fallback=true; shift ;;
    --dtype) dtype=$2; shift 2 ;;
    --stack-weights=*) stack=${1#*=}; shift ;;
    -o) out=$2; shift 2 ;;
    *) echo "tp-compile-emulated: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ -n $out ]] || { echo "tp-compile-emulated: no -o" >&2; exit 2; }
lowered=$(mktemp "${TMPDIR:-/tmp}/tp-emulated.XXXXXX.mlir")
trap 'rm -f "$lowered"' EXIT
[[ -n $stack ]] || { [[ $backend == cuda ]] && stack=true || stack=false; }
stacking=()
[[ $stack == true ]] && stacking=(--tp-stack-weights)
"$bin/tp-opt" "$model" --tp-shard="tp-size=$tp allow-fallback=$fallback" "${stacking[@]}" \
  --tp-model-manifest="backend=$backend" \
  --tp-test-lower-cuda-emulated="runtime=$backend dtype=$dtype" \
  --tp-model-interface --tp-roll-repeated-calls -o "$lowered"
"$bin/tp-compile" "$lowered" --from=lowered --backend "$backend" -o "$out"

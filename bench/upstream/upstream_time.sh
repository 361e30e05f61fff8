#!/usr/bin/env bash
# Compile-time of upstream MLIR's generic sharding machinery on N transformer
# blocks (the upstream half of the tp-opt compile-time benchmark).
#
#   bench/upstream/upstream_time.sh [N ...]          default N: 12 48 96
#
# For each N: generate the blocks with bench/upstream/gen_upstream_blocks.py (not timed),
# check once that the pipeline succeeds and count the collectives, then run
#   mlir-opt --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))"
#            --mlir-timing -o /dev/null
# REPS times and report medians of the in-process pass times (from
# --mlir-timing) and of the process wall time.  A "noop" run (parse + print,
# no passes) is timed too, so wall - noop is the cost the passes add.
#
# Environment:
#   MLIR_OPT   mlir-opt binary      (default /usr/lib/llvm-22/bin/mlir-opt)
#   PYTHON     python interpreter   (default /usr/bin/python3)
#   REPS       repetitions per N    (default 5)
#   GEN_ARGS   extra generator args (e.g. "--attention bmm --tp 4")
#   KEEP       if set, keep the generated/partitioned files in this directory
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MLIR_OPT="${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}"
PYTHON="${PYTHON:-/usr/bin/python3}"
REPS="${REPS:-5}"
GEN_ARGS="${GEN_ARGS:-}"
PIPELINE='builtin.module(func.func(sharding-propagation,shard-partition))'

if [ "$#" -eq 0 ]; then set -- 12 48 96; fi
if [ -n "${KEEP:-}" ]; then WORK="$KEEP"; mkdir -p "$WORK"; else
  WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT; fi

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"; exit}
  if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
now_ns() { date +%s%N; }
# seconds value of a named row of the --mlir-timing report, in ms
timing_ms() { awk -v n="$2" '$NF==n && $1 ~ /^[0-9.]+$/ {printf "%.3f\n", $1*1000; exit}' "$1"; }

echo "# mlir-opt: $("$MLIR_OPT" --version | awk '/LLVM version/ {print $NF}')  reps=$REPS  gen args: --blocks N ${GEN_ARGS}"
echo "# pipeline: $PIPELINE"
printf '%6s %9s %9s %9s %10s %9s %9s %9s %10s %10s %8s\n' \
  N prop_ms part_ms pass_ms pass/blk parse_ms wall_ms noop_ms wall/blk Δwall/blk ar/blk
for N in "$@"; do
  in="$WORK/upstream_$N.mlir"; out="$WORK/upstream_$N.partitioned.mlir"
  # shellcheck disable=SC2086
  "$PYTHON" "$HERE/gen_upstream_blocks.py" --blocks "$N" $GEN_ARGS > "$in"
  # correctness gate + collective counts (untimed)
  "$MLIR_OPT" --pass-pipeline="$PIPELINE" "$in" -o "$out"
  ar=$(grep -c '= shard.all_reduce' "$out" || true)
  ag=$(grep -c '= shard.all_gather' "$out" || true)
  as=$(grep -c '= shard.all_slice' "$out" || true)
  if [ "$ag" != 0 ] || [ "$as" != 0 ]; then
    echo "warning: N=$N has $ag all_gather / $as all_slice (expected none)" >&2; fi
  : > "$WORK/prop"; : > "$WORK/part"; : > "$WORK/parse"; : > "$WORK/wall"; : > "$WORK/noop"
  for _ in $(seq "$REPS"); do
    t0=$(now_ns)
    "$MLIR_OPT" --pass-pipeline="$PIPELINE" --mlir-timing "$in" -o /dev/null 2> "$WORK/t.txt"
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b-a)/1e6}' >> "$WORK/wall"
    timing_ms "$WORK/t.txt" ShardingPropagation >> "$WORK/prop"
    timing_ms "$WORK/t.txt" Partition >> "$WORK/part"
    timing_ms "$WORK/t.txt" Parser >> "$WORK/parse"
    t0=$(now_ns)
    "$MLIR_OPT" "$in" -o /dev/null
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b-a)/1e6}' >> "$WORK/noop"
  done
  prop=$(median < "$WORK/prop"); part=$(median < "$WORK/part")
  parse=$(median < "$WORK/parse"); wall=$(median < "$WORK/wall"); noop=$(median < "$WORK/noop")
  awk -v N="$N" -v pr="$prop" -v pa="$part" -v ps="$parse" -v w="$wall" -v no="$noop" -v ar="$ar" 'BEGIN {
    printf "%6d %9.2f %9.2f %9.2f %10.3f %9.2f %9.2f %9.2f %10.3f %10.3f %8.2f\n",
      N, pr, pa, pr+pa, (pr+pa)/N, ps, w, no, w/N, (w-no)/N, ar/N }'
done
echo "# pass = ShardingPropagation + Partition (in-process, --mlir-timing); wall = whole mlir-opt process"
echo "# (parse + passes + print to /dev/null); noop = same file, no passes; ar/blk = shard.all_reduce per block"

#!/usr/bin/env bash
# Run every probe through the upstream pipeline and show what upstream says.
#   bench/upstream/probes/run.sh
# Probes that upstream refuses print their diagnostics; accepted ones print
# the partitioned function signature and the shard ops left in the output.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
MLIR_OPT="${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}"
PIPELINE='builtin.module(func.func(sharding-propagation,shard-partition))'
for f in *.mlir; do
  echo "=== $f"
  out=$("$MLIR_OPT" --pass-pipeline="$PIPELINE" "$f" 2>&1); rc=$?
  if [ $rc -ne 0 ]; then
    echo "$out" | grep -E 'error:' | sort -u
  else
    echo "$out" | grep -E 'func.func|= shard\.' | sed 's/^ *//'
  fi
  echo "rc=$rc"
done

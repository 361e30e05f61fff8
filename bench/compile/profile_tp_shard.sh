#!/usr/bin/env bash
# Where does `tp-opt --tp-shard` spend its time?  CPU profile on N GPT-2-small blocks.
#
#   bench/compile/profile_tp_shard.sh [N [TOP]]        default N=96, TOP=25
#
# Generates the blocks with the python builders (d 768, 12 heads, seq 128, fused
# QKV, LayerNorm, GeLU, biases), then profiles
#   tp-opt --tp-shard=tp-size=2 blocks.mlir -o /dev/null
# RUNS times in one recording, and prints the TOP symbols:
#   1. inside the pass only (samples whose call stack contains
#      TPShardPass::runOnOperation; this matches the TPShard line of
#      --mlir-timing): by self time, then by inclusive time;
#   2. the whole process (parse + verify + pass + print), by self time.
#
# Uses `perf record --call-graph dwarf` + `perf report`/`perf script` (linux-perf,
# from scripts/setup.sh --bench; nothing is installed here).  If perf is
# missing or cannot record on this machine (no perf_event access), falls back to
# `valgrind --tool=callgrind --toggle-collect=<the pass>` + `callgrind_annotate`
# (slower: ~50x; one run).
#
# Environment:
#   TP_OPT    tp-opt binary                      (default build/bin/tp-opt)
#   PYTHON    python interpreter                 (default /usr/bin/python3)
#   RUNS      tp-opt runs in the perf recording  (default 5)
#   FREQ      perf sampling frequency, Hz        (default 4000)
#   PROFILER  perf | callgrind                   (default: perf if it works)
#   KEEP      if set, keep input, perf.data / callgrind.out in this directory
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
N="${1:-96}"; TOP="${2:-25}"
case "$N$TOP" in ''|*[!0-9]*) echo "usage: $0 [N [TOP]]" >&2; exit 2;; esac
TP_OPT="${TP_OPT:-$ROOT/build/bin/tp-opt}"
PYTHON="${PYTHON:-/usr/bin/python3}"
RUNS="${RUNS:-5}"; FREQ="${FREQ:-4000}"
PASS_SYM='TPShardPass::runOnOperation'
if [ -n "${KEEP:-}" ]; then WORK="$KEEP"; mkdir -p "$WORK"; else
  WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT; fi

# tp-opt may be relinked by a concurrent build: wait until it runs, then
# profile a private copy so a relink cannot change it under us.
for i in $(seq 60); do
  if [ -x "$TP_OPT" ] && "$TP_OPT" --version >/dev/null 2>&1; then break; fi
  [ "$i" = 60 ] && { echo "error: $TP_OPT is not runnable" >&2; exit 1; }
  sleep 5
done
cp "$TP_OPT" "$WORK/tp-opt"; BIN="$WORK/tp-opt"

IN="$WORK/blocks_$N.mlir"
PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m tpmlir.build \
  --preset gpt2_small --d-model 768 --heads 12 --seq 128 --layers "$N" -o "$IN"
"$BIN" --tp-shard=tp-size=2 --mlir-timing "$IN" -o /dev/null 2> "$WORK/timing.txt"
echo "# tp-opt --tp-shard=tp-size=2 on $N blocks; one run's --mlir-timing:"
grep -E 'Parser|TPShard|Output|Total' "$WORK/timing.txt" | sed 's/^/#   /'

perf_works() {
  command -v perf >/dev/null 2>&1 || return 1
  perf record -q -o "$WORK/probe.data" -- true >/dev/null 2>&1 || return 1
}
PROFILER="${PROFILER:-}"
if [ -z "$PROFILER" ]; then
  command -v perf >/dev/null 2>&1 \
    || echo "# perf missing (linux-perf: scripts/setup.sh --bench): trying callgrind" >&2
  if perf_works; then PROFILER=perf; else PROFILER=callgrind; fi
fi

if [ "$PROFILER" = perf ]; then
  echo "# profiler: perf $(perf --version | awk '{print $3}'), -F $FREQ, --call-graph dwarf, $RUNS runs"
  perf record -q -F "$FREQ" --call-graph dwarf,32768 -o "$WORK/perf.data" -- \
    bash -c 'for _ in $(seq "$1"); do "$2" --tp-shard=tp-size=2 "$3" -o /dev/null; done' \
    _ "$RUNS" "$BIN" "$IN" 2> "$WORK/perf-record.log" || { cat "$WORK/perf-record.log" >&2; exit 1; }
  perf script -i "$WORK/perf.data" -F period,ip,sym --no-inline 2>/dev/null > "$WORK/perf.txt"
  "$PYTHON" - "$WORK/perf.txt" "$PASS_SYM" "$TOP" <<'EOF'
import sys
from collections import Counter
path, pass_sym, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
samples, stack, period = [], [], 0
def flush():
    if stack or period:
        samples.append((period, stack[:]))
for line in open(path, errors="replace"):
    if not line.strip():
        flush(); stack.clear(); period = 0; continue
    if line.startswith("\t"):
        parts = line.strip().split(None, 1)
        stack.append(parts[1] if len(parts) > 1 else "[unknown]")
    else:
        period = int(line.split()[0]) if line.split() else 1
flush()
total = sum(p for p, _ in samples)
in_pass = [(p, s) for p, s in samples if any(pass_sym in f for f in s)]
pt = sum(p for p, _ in in_pass)
self_c, incl_c, whole = Counter(), Counter(), Counter()
for p, s in samples:
    whole[s[0] if s else "[unknown]"] += p
for p, s in in_pass:
    self_c[s[0]] += p
    # inclusive: each distinct frame above the pass entry (the pass's callees)
    k = next(i for i, f in enumerate(s) if pass_sym in f)
    for f in set(s[:k + 1]):
        incl_c[f] += p
def short(n, w=150):
    return n if len(n) <= w else n[:w - 3] + "..."
def show(title, c, denom, label):
    print(f"\n## {title}")
    print(f"{'%':>6}  symbol   (% of {label})")
    for sym, p in c.most_common(top):
        print(f"{100.0 * p / denom:6.2f}  {short(sym)}")
print(f"# samples: {len(samples)}; inside the pass: {len(in_pass)} "
      f"({100.0 * pt / max(total, 1):.1f}% of the process; stacks are dwarf-unwound, "
      f"a truncated stack is counted outside the pass)")
if pt:
    show(f"top {top} symbols inside --tp-shard, self time", self_c, pt, "pass time")
    show(f"top {top} symbols inside --tp-shard, inclusive time", incl_c, pt, "pass time")
show(f"top {top} symbols, whole tp-opt process (parse + verify + pass + print), self time",
     whole, max(total, 1), "process time")
EOF
else
  command -v valgrind >/dev/null 2>&1 \
    || { echo "error: neither perf nor valgrind usable: run scripts/setup.sh --bench" >&2; exit 1; }
  echo "# profiler: valgrind --tool=callgrind (instructions), collection limited to $PASS_SYM, 1 run"
  valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.out" \
    --toggle-collect="*$PASS_SYM*" \
    "$BIN" --tp-shard=tp-size=2 "$IN" -o /dev/null 2> "$WORK/valgrind.log" ||
    { tail -20 "$WORK/valgrind.log" >&2; exit 1; }
  echo; echo "## top $TOP symbols inside --tp-shard, self (exclusive) instructions"
  callgrind_annotate --inclusive=no "$WORK/callgrind.out" 2>/dev/null |
    grep -E '^ *[0-9,]+ \(' | head -n "$((TOP + 1))" | cut -c1-170
  echo; echo "## top $TOP symbols inside --tp-shard, inclusive instructions"
  callgrind_annotate --inclusive=yes "$WORK/callgrind.out" 2>/dev/null |
    grep -E '^ *[0-9,]+ \(' | head -n "$((TOP + 1))" | cut -c1-170
fi

#!/usr/bin/env bash
# Compile-time benchmark: tp-opt --tp-shard vs. upstream MLIR's generic sharding
# (sharding-propagation + shard-partition) on N GPT-2-small transformer blocks.
#
#   bench/compile/compile_time.sh [N ...]            default N: 12 48 96
#
# For each N, generate (untimed):
#   ours      python -m tpmlir.build --preset gpt2_small --layers N --seq 128
#             (d 768, 12 heads, ffn 3072, fused QKV, LayerNorm, GeLU, biases, unannotated)
#   upstream  bench/upstream/gen_upstream_blocks.py --blocks N --d 768 --heads 12 --seq 128 --tp 2
#             (same shapes, in the form upstream accepts; see bench/upstream/README.md)
# Run each tool once as a correctness gate and require 2 all-reduces per block
# (tp.all_reduce / shard.all_reduce).  Then run, REPS times, interleaved
# (rep r: for every N, ours then upstream; the order flips on every rep so
# neither tool always runs second):
#   tp-opt   --tp-shard=tp-size=2 --mlir-timing                       -> "TPShard" line
#   mlir-opt --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))"
#            --mlir-timing                                            -> "ShardingPropagation" + "Partition"
# Only the in-process pass wall time is used (no parse, print or process start-up).
# Prints a markdown table of medians and writes it, with the command line,
# date, nproc and tool versions, to docs/bench-compile-time.md (overwritten).
#
# Environment:
#   REPS      repetitions per tool and N           (default 7)
#   TP_OPT    tp-opt binary                        (default build/bin/tp-opt)
#   MLIR_OPT  upstream mlir-opt                    (default mlir-opt-22, else /usr/lib/llvm-22/bin/mlir-opt)
#   PYTHON    python interpreter                   (default /usr/bin/python3)
#   DOC       report file; "-" to skip writing it  (default docs/bench-compile-time.md)
#   KEEP      if set, keep inputs/outputs/raw timings in this directory
# Needs only bash, coreutils, awk, grep and python3 (stdlib), and what
# scripts/setup.sh installs and builds; it installs nothing itself.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CMDLINE="bench/compile/compile_time.sh${*:+ $*}"
REPS="${REPS:-7}"
TP_OPT_GIVEN="${TP_OPT:-}"
TP_OPT="${TP_OPT:-$ROOT/build/bin/tp-opt}"
if [ -z "${MLIR_OPT:-}" ]; then
  if command -v mlir-opt-22 >/dev/null 2>&1; then MLIR_OPT=mlir-opt-22
  else MLIR_OPT=/usr/lib/llvm-22/bin/mlir-opt; fi
fi
PYTHON="${PYTHON:-/usr/bin/python3}"
DOC="${DOC:-$ROOT/docs/bench-compile-time.md}"
PIPELINE='builtin.module(func.func(sharding-propagation,shard-partition))'
TP=2

# Installs nothing (scripts/setup.sh does): without TP_OPT, only tp-opt is
# brought up to date.
if [ -z "${TP_OPT_GIVEN:-}" ]; then
  [ -f "$ROOT/build/build.ninja" ] \
    || { echo "error: no build/ ($ROOT/build/build.ninja): run scripts/setup.sh" >&2; exit 1; }
  ninja -C "$ROOT/build" tp-opt >&2
fi

if [ "$#" -eq 0 ]; then set -- 12 48 96; fi
for N in "$@"; do
  case "$N" in ''|*[!0-9]*|0) echo "error: N must be a positive integer, got '$N'" >&2; exit 2;; esac
done
if [ -n "${KEEP:-}" ]; then WORK="$KEEP"; mkdir -p "$WORK"; else
  WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT; fi

# tp-opt may be relinked by a concurrent build: wait until it runs.
wait_tp_opt() {
  local i
  for i in $(seq 60); do
    if [ -x "$TP_OPT" ] && "$TP_OPT" --version >/dev/null 2>&1; then return 0; fi
    [ "$i" = 1 ] && echo "# waiting for $TP_OPT to become runnable..." >&2
    sleep 5
  done
  echo "error: $TP_OPT is not runnable" >&2; exit 1
}
bin_id() { stat -c '%Y %s' "$1" 2>/dev/null || echo missing; }
# run a tool, retrying (after waiting) if tp-opt was mid-relink
run_tp() {
  local try
  for try in 1 2 3; do
    if "$TP_OPT" "$@"; then return 0; fi
    echo "# tp-opt failed (try $try), waiting and retrying" >&2; sleep 5; wait_tp_opt
  done
  return 1
}
# seconds value of a named row of a --mlir-timing (text, list) report, in ms
timing_ms() { awk -v n="$2" '$NF==n && $1 ~ /^[0-9.]+$/ {printf "%.3f\n", $1*1000; f=1; exit}
                             END {if (!f) print "nan"}' "$1"; }

command -v "$MLIR_OPT" >/dev/null 2>&1 \
  || { echo "error: $MLIR_OPT not found (mlir-22-tools): run scripts/setup.sh" >&2; exit 1; }
wait_tp_opt
TP_ID0="$(bin_id "$TP_OPT")"

# ---------------------------------------------------------------- generate + gate
RAW="$WORK/raw.tsv"; : > "$RAW"          # N  rep  tool  pass_ms
GATE="$WORK/gate.tsv"; : > "$GATE"       # N  ours_ar  upstream_ar  ours_other  upstream_other
fail=0
for N in "$@"; do
  ours="$WORK/ours_$N.mlir"; ups="$WORK/upstream_$N.mlir"
  PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m tpmlir.build \
    --preset gpt2_small --d-model 768 --heads 12 --seq 128 --layers "$N" -o "$ours"
  "$PYTHON" "$ROOT/bench/upstream/gen_upstream_blocks.py" --blocks "$N" --d 768 --heads 12 --seq 128 \
    --tp "$TP" > "$ups"
  run_tp --tp-shard="tp-size=$TP" "$ours" -o "$WORK/ours_$N.out.mlir"
  "$MLIR_OPT" --pass-pipeline="$PIPELINE" "$ups" -o "$WORK/upstream_$N.out.mlir"
  oar=$(grep -c '= tp\.all_reduce' "$WORK/ours_$N.out.mlir" || true)
  uar=$(grep -c '= shard\.all_reduce' "$WORK/upstream_$N.out.mlir" || true)
  oother=$(grep -cE '= tp\.(all_gather|reduce_scatter|all_to_all)' "$WORK/ours_$N.out.mlir" || true)
  uother=$(grep -cE '= shard\.(all_gather|all_slice|all_to_all|reduce_scatter)' "$WORK/upstream_$N.out.mlir" || true)
  printf '%s\t%s\t%s\t%s\t%s\n' "$N" "$oar" "$uar" "$oother" "$uother" >> "$GATE"
  if [ "$oar" != $((2 * N)) ]; then echo "FAIL: N=$N tp-opt has $oar tp.all_reduce, expected $((2 * N))" >&2; fail=1; fi
  if [ "$uar" != $((2 * N)) ]; then echo "FAIL: N=$N upstream has $uar shard.all_reduce, expected $((2 * N))" >&2; fail=1; fi
done

# ---------------------------------------------------------------- timed, interleaved
# $1 = N, $2 = rep, $3 = "" (default: MLIR's post-pass verifier on) or "_nv" (--verify-each=false)
run_ours() {
  local v=true; [ "$3" = _nv ] && v=false
  run_tp --tp-shard="tp-size=$TP" --verify-each="$v" --mlir-timing "$WORK/ours_$1.mlir" -o /dev/null 2> "$WORK/t.txt"
  printf '%s\t%s\tours%s\t%s\n' "$1" "$2" "$3" "$(timing_ms "$WORK/t.txt" TPShard)" >> "$RAW"
}
run_upstream() {
  local v=true p q; [ "$3" = _nv ] && v=false
  "$MLIR_OPT" --pass-pipeline="$PIPELINE" --verify-each="$v" --mlir-timing "$WORK/upstream_$1.mlir" -o /dev/null 2> "$WORK/t.txt"
  p=$(timing_ms "$WORK/t.txt" ShardingPropagation); q=$(timing_ms "$WORK/t.txt" Partition)
  printf '%s\t%s\tupstream%s\t%s\n' "$1" "$2" "$3" "$(awk -v a="$p" -v b="$q" 'BEGIN {printf "%.3f", a+b}')" >> "$RAW"
}
# one untimed warm-up of each (page cache, dynamic loader)
run_ours "$1" 0 ""; run_upstream "$1" 0 ""
for r in $(seq "$REPS"); do
  for N in "$@"; do
    if [ $((r % 2)) = 1 ]; then
      run_ours "$N" "$r" ""; run_upstream "$N" "$r" ""; run_ours "$N" "$r" _nv; run_upstream "$N" "$r" _nv
    else
      run_upstream "$N" "$r" _nv; run_ours "$N" "$r" _nv; run_upstream "$N" "$r" ""; run_ours "$N" "$r" ""
    fi
  done
done
TP_ID1="$(bin_id "$TP_OPT")"
if [ "$TP_ID0" != "$TP_ID1" ]; then
  echo "warning: $TP_OPT changed during the run ($TP_ID0 -> $TP_ID1); rerun for clean numbers" >&2
fi

# ---------------------------------------------------------------- report
git_rev="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ]; then git_rev="$git_rev (dirty tree)"; fi
export BENCH_CMDLINE="$CMDLINE" BENCH_REPS="$REPS" BENCH_DATE="$(date -u '+%Y-%m-%d %H:%M:%S UTC')" \
  BENCH_NPROC="$(nproc)" BENCH_CPU="$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)" \
  BENCH_TPOPT="${TP_OPT#"$ROOT"/}" BENCH_TPOPT_VER="$("$TP_OPT" --version 2>&1 | awk '/LLVM version/ {print $NF; exit}')" \
  BENCH_TPOPT_BIN="$(date -u -d "@$(stat -c %Y "$TP_OPT")" '+%Y-%m-%d %H:%M UTC'), $(sha256sum "$TP_OPT" | cut -c1-12)" \
  BENCH_MLIROPT="$(command -v "$MLIR_OPT")" BENCH_MLIROPT_VER="$("$MLIR_OPT" --version 2>&1 | awk '/LLVM version/ {print $NF; exit}')" \
  BENCH_PY="$("$PYTHON" --version 2>&1)" BENCH_GIT="$git_rev" BENCH_DOC="$DOC" BENCH_PIPELINE="$PIPELINE" \
  BENCH_BINCHANGED="$([ "$TP_ID0" != "$TP_ID1" ] && echo 1 || echo 0)" BENCH_FAIL="$fail"
"$PYTHON" - "$RAW" "$GATE" <<'EOF'
import os, statistics as st, sys
from collections import defaultdict

raw, gate = sys.argv[1], sys.argv[2]
t = defaultdict(dict)            # (N, tool) -> {rep: ms}
for line in open(raw):
    n, rep, tool, ms = line.split("\t")
    if int(rep) > 0 and ms.strip() != "nan":
        t[(int(n), tool)][int(rep)] = float(ms)
g = {}
for line in open(gate):
    n, oar, uar, oo, uo = line.split()
    g[int(n)] = (int(oar), int(uar), int(oo), int(uo))
Ns = sorted(g)
E = os.environ

rows, summary = [], {}
base = None
for n in Ns:
    o, u = t[(n, "ours")], t[(n, "upstream")]
    mo, mu = st.median(o.values()), st.median(u.values())
    # speed-up: median over repetitions of the paired ratio upstream/ours
    # (each pair ran back to back, so load drift cancels)
    sp = st.median(u[r] / o[r] for r in o if r in u and o[r] > 0)
    if base is None:
        base = (mo / n, mu / n)
    lin_o, lin_u = (mo / n) / base[0], (mu / n) / base[1]
    oar, uar, oo, uo = g[n]
    spread = f"{min(o.values()):.1f}–{max(o.values()):.1f} / {min(u.values()):.1f}–{max(u.values()):.1f}"
    rows.append(f"| {n} | {mo:.1f} | {mo/n:.3f} | {mu:.1f} | {mu/n:.3f} | {sp:.2f}x | "
                f"{lin_o:.2f} | {lin_u:.2f} | {oar/n:g} / {uar/n:g} | {spread} |")
    summary[n] = (mo / n, sp, lin_o)

# same runs with --verify-each=false: the passes alone, without MLIR's post-pass verifier
rows_nv, base_nv = [], None
for n in Ns:
    o, u = t[(n, "ours_nv")], t[(n, "upstream_nv")]
    if not o or not u:
        continue
    mo, mu = st.median(o.values()), st.median(u.values())
    sp = st.median(u[r] / o[r] for r in o if r in u and o[r] > 0)
    if base_nv is None:
        base_nv = (mo / n, mu / n)
    mv = st.median(t[(n, "ours")].values())
    rows_nv.append(f"| {n} | {mo:.1f} | {mo/n:.3f} | {mu:.1f} | {mu/n:.3f} | {sp:.2f}x | "
                   f"{(mo/n)/base_nv[0]:.2f} | {(mu/n)/base_nv[1]:.2f} | {mv-mo:.1f} |")
table_nv = ("| N | tp-shard ms | ms/block | upstream ms | ms/block | speed-up | "
            "linearity tp-shard | linearity upstream | verifier ms in tp-shard |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows_nv))

hdr = ("| N | tp-shard ms (median) | ms/block | upstream ms (median) | ms/block | "
       "speed-up (upstream/ours) | linearity tp-shard | linearity upstream | "
       "all-reduce/block ours / upstream | min–max ms ours / upstream |\n"
       "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
table = hdr + "\n" + "\n".join(rows)

worst_blk = max(v[0] for v in summary.values())
worst_sp = min(v[1] for v in summary.values())
worst_lin = max(v[2] for v in summary.values())
def ok(c): return "met" if c else "NOT met"
targets = (
    "| target | measured (worst over N) | verdict |\n|---|---|---|\n"
    f"| tp-shard ≤ 0.4 ms/block (in-process pass time) | {worst_blk:.3f} ms/block | {ok(worst_blk <= 0.4)} |\n"
    f"| ≥ 3x faster than upstream per block | {worst_sp:.2f}x | {ok(worst_sp >= 3.0)} |\n"
    f"| cost linear in blocks (ms/block at N ÷ ms/block at N={Ns[0]}, tolerance ≤ 1.20) | {worst_lin:.2f} | {ok(worst_lin <= 1.20)} |")
notes = []
if E["BENCH_FAIL"] != "0":
    notes.append("**Correctness gate failed**: some output does not have 2 all-reduces per block (see stderr).")
if E["BENCH_BINCHANGED"] == "1":
    notes.append("**Warning**: tp-opt changed on disk during the run; rerun for clean numbers.")
for n in Ns:
    if g[n][2] or g[n][3]:
        notes.append(f"N={n}: other collectives present (ours {g[n][2]}, upstream {g[n][3]}).")

print(table)
print()
print("Same runs, --verify-each=false (pass logic only, without MLIR's post-pass verifier):")
print()
print(table_nv)
print()
print(targets)
for x in notes:
    print(x)

if E["BENCH_DOC"] != "-":
    with open(E["BENCH_DOC"], "w") as f:
        f.write(f"""# Compile time: `tp-opt --tp-shard` vs. upstream MLIR sharding

Generated by `bench/compile/compile_time.sh` (overwritten on every run; do not edit by hand).

- command: `{E['BENCH_CMDLINE']}` (REPS={E['BENCH_REPS']})
- date: {E['BENCH_DATE']}
- machine: `nproc` = {E['BENCH_NPROC']}{', ' + E['BENCH_CPU'] if E['BENCH_CPU'] else ''}
- tp-opt: `{E['BENCH_TPOPT']}` (LLVM/MLIR {E['BENCH_TPOPT_VER']}; binary {E['BENCH_TPOPT_BIN']}; source tree {E['BENCH_GIT']})
- upstream: `{E['BENCH_MLIROPT']}` (LLVM/MLIR {E['BENCH_MLIROPT_VER']})
- python: {E['BENCH_PY']}

## What is measured

Both tools get N chained GPT-2-small blocks (d 768, 12 heads, ffn 3072, seq 128, f32,
LayerNorm, GeLU, biases), tp = 2:

- **ours**: `python -m tpmlir.build --preset gpt2_small --layers N --seq 128` (unannotated
  linalg, fused QKV + reshapes, `linalg.softmax`), run through
  `tp-opt --tp-shard=tp-size=2 --mlir-timing`. Time = the `TPShard` line.
- **upstream**: `bench/upstream/gen_upstream_blocks.py --blocks N --d 768 --heads 12 --seq 128 --tp 2`
  (the reshape-free, weight-annotated form upstream accepts; see `bench/upstream/README.md`), run through
  `mlir-opt --pass-pipeline="{E['BENCH_PIPELINE']}" --mlir-timing`.
  Time = `ShardingPropagation` + `Partition`.

Times are in-process pass wall times from `--mlir-timing` (resolution 0.1 ms): no parsing,
printing or process start-up. Each cell is the median of REPS runs. The two tools run
back to back for each N and repetition (the order flips every repetition), so both see the
same machine load. Speed-up is the median of the per-repetition ratios upstream/ours
(equal to the per-block ratio, since N is the same). Linearity is ms/block at N divided by
ms/block at the smallest N (1.00 = perfectly linear). Before timing, each output is checked
for 2 all-reduces per block (`tp.all_reduce` / `shard.all_reduce`).

## Results

{table}

### Without the post-pass verifier

`--mlir-timing` charges each pass with MLIR's verifier run that follows it (`--verify-each`,
on by default in both tools; upstream runs it twice, once per pass). The same runs repeated with
`--verify-each=false` give the cost of the pass logic alone. The last column is the tp-shard
median above minus the one here, i.e. the verifier's part.

{table_nv}

## Targets

Judged on the main table (the `TPShard` line as `--mlir-timing` reports it, verifier included).

{targets}
""")
        for x in notes:
            f.write("\n" + x + "\n")
    print(f"\n(wrote {E['BENCH_DOC']})")
sys.exit(1 if E["BENCH_FAIL"] != "0" else 0)
EOF

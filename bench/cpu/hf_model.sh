#!/usr/bin/env bash
# A published model's shape as people download it, end to end on the CPU:
# a Hugging Face directory (Qwen3-0.6B's or Gemma 3 1B's config.json and
# generation_config.json, random weights in BF16 in two shards with their
# index), built by
# `tpmlir.build --hf-config`, compiled by tp-compile for tp 1 and tp 2, run by
# `tp-run --weights DIR --generate` against PyTorch eager with a KV cache
# (python/tpmlir/torch_reference.py on one thread).
#
#   bench/cpu/hf_model.sh                                   (Qwen3-0.6B, R=3; see Environment)
#   MODEL=gemma3_1b PROMPT=520 STEPS=24 bench/cpu/hf_model.sh  (Gemma 3 1B, past its windows of 512)
#   MODEL=gemma3_1b PROMPT=520 STEPS=24 SMAX=4096 ...       (caches of 4096 positions, rings of 512)
#
# Inputs (bench/cpu/hf_model_inputs.py, cached in $WORK by the sha256 of
# python/tpmlir/*.py and of that script): the directory, a prompt of PROMPT
# random ids, batch 1, and numpy's reference ids for STEPS new tokens. Each
# round runs tp 1, tp 2 and PyTorch in an order rotated by one every round;
# each run's ids must equal numpy's token for token (tp-run with
# --ignore-eos: a random model's ids may hit an end id; torch_generate.py
# checks its own), else the script stops. Records per run: load (+ the
# checks), slice (each rank's part of the checkpoint widened from BF16 and laid
# out), time to first token, decode step (median of the run's steps), weights
# KV caches and peak RSS per rank; the table takes the median over rounds, and writes
# it with the command, date, machine and load averages to docs/bench-hf-model.md.
#
# Environment:
#   MODEL    qwen3_0_6b or gemma3_1b (hf_model_inputs.py) (default qwen3_0_6b)
#   R        rounds                                   (default 3)
#   PROMPT   prompt length                            (default 16)
#   STEPS    new tokens                               (default 32)
#   SMAX     the positions the caches serve            (default PROMPT + STEPS)
#   WORK     cache + raw results directory            (default /tmp/tp-bench-hf-model-MODEL)
#   DOC      report file; "-" to skip writing it      (default docs/bench-hf-model.md,
#            docs/bench-hf-model-gemma3-1b.md for gemma3_1b)
#   PYTHON   python with numpy and torch              (default /usr/bin/python3)
#   NO_BUILD 1: use build/ as it is (no ninja run)
# Needs what scripts/setup.sh installs (PyTorch included), about 1.2 GB in
# $WORK and 6 GB of memory (Gemma 3 1B: 2 GB and 12 GB); it checks, installs
# nothing, and builds only tp-compile and tp-run.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
R="${R:-3}" PROMPT="${PROMPT:-16}" STEPS="${STEPS:-32}" MODEL_NAME="${MODEL:-qwen3_0_6b}"
SMAX="${SMAX:-$((PROMPT + STEPS))}"
[ "$R" -ge 1 ] 2>/dev/null || { echo "error: R must be a positive count, not '$R'" >&2; exit 1; }
[ "$SMAX" -ge $((PROMPT + STEPS - 1)) ] 2>/dev/null ||
  { echo "error: SMAX must be at least PROMPT + STEPS - 1 = $((PROMPT + STEPS - 1)), not '$SMAX'" >&2; exit 1; }
case $MODEL_NAME in
  qwen3_0_6b) DEFAULT_DOC="$ROOT/docs/bench-hf-model.md" ;;
  gemma3_1b) DEFAULT_DOC="$ROOT/docs/bench-hf-model-gemma3-1b.md" ;;
  *) echo "error: MODEL must be qwen3_0_6b or gemma3_1b, not '$MODEL_NAME'" >&2; exit 1 ;;
esac
WORK="${WORK:-/tmp/tp-bench-hf-model-$MODEL_NAME}" DOC="${DOC:-$DEFAULT_DOC}"
PYTHON="${PYTHON:-/usr/bin/python3}"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 TPRT_BLAS_THREADS=1
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
need() { echo "error: $*" >&2; exit 1; }
"$PYTHON" -c "import numpy, torch" 2>/dev/null || need "$PYTHON lacks numpy or torch (scripts/setup.sh)"
command -v mpirun >/dev/null 2>&1 || need "mpirun (openmpi-bin) missing"
[ -n "${NO_BUILD:-}" ] || ninja -C "$ROOT/build" tp-compile tp-run >&2
TP_COMPILE="$ROOT/build/bin/tp-compile" TP_RUN="$ROOT/build/bin/tp-run"

mkdir -p "$WORK"
KEY=$(cat "$ROOT"/python/tpmlir/*.py "$HERE/hf_model_inputs.py" | sha256sum | cut -c1-16)-$MODEL_NAME-$PROMPT-$STEPS
MODEL_DIR="$WORK/model-$KEY"
if [ ! -f "$MODEL_DIR/expected.npy" ]; then
  rm -rf "$WORK"/model-*
  "$PYTHON" "$HERE/hf_model_inputs.py" "$MODEL_DIR" --model "$MODEL_NAME" --prompt "$PROMPT" --steps "$STEPS" >&2
fi
"$PYTHON" -m tpmlir.build --hf-config "$MODEL_DIR" --generate "$SMAX" \
  --seq "$PROMPT" --batch 1 -o "$WORK/m.mlir"
for tp in 1 2; do
  t0=$(date +%s.%N)
  "$TP_COMPILE" "$WORK/m.mlir" --tp-size $tp -o "$WORK/m.$tp.so"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b-a}' > "$WORK/compile_s.$tp"
done

rm -f "$WORK"/run-*.json
run() {  # run NAME ROUND
  local out="$WORK/run-$1-$2.json"
  case $1 in
    tp1|tp2)
      "${MPIRUN[@]}" -np "${1#tp}" "$TP_RUN" "$WORK/m.${1#tp}.so" --weights "$MODEL_DIR" \
        --prompt "$MODEL_DIR/prompt.npy" --generate "$STEPS" --ignore-eos --output "$WORK/ids.npy" \
        --report-json "$out" --quiet || need "$1, round $2: tp-run failed"
      "$PYTHON" "$ROOT/test/Integration/Inputs/same_ids.py" "$MODEL_DIR/expected.npy" "$WORK/ids.npy" >&2 \
        || need "$1, round $2: the ids differ from numpy's" ;;
    torch)
      "$PYTHON" "$HERE/torch_generate.py" --model-dir "$MODEL_DIR" --prompt "$MODEL_DIR/prompt.npy" \
        --expected "$MODEL_DIR/expected.npy" --steps "$STEPS" --warmup 0 --json "$out" >&2 \
        || need "torch, round $2: failed" ;;
  esac
}
NAMES=(tp1 tp2 torch)
for ((r = 1; r <= R; ++r)); do
  for ((k = 0; k < ${#NAMES[@]}; ++k)); do
    run "${NAMES[$(((k + r - 1) % ${#NAMES[@]}))]}" "$r"
  done
done

"$PYTHON" - "$WORK" "$MODEL_DIR" "$DOC" "$MODEL_NAME" "$R" "$PROMPT" "$STEPS" "$SMAX" <<'PY'
import glob, json, os, platform, statistics, subprocess, sys, time
work, model, doc, model_name, rounds, prompt, steps, smax = sys.argv[1:5] + [int(v) for v in sys.argv[5:]]
config = json.load(open(os.path.join(model, "config.json")))
runs = {name: [json.load(open(p)) for p in sorted(glob.glob(f"{work}/run-{name}-*.json"))]
        for name in ("tp1", "tp2", "torch")}
med = lambda name, key: statistics.median(r[key] for r in runs[name])
span = lambda name, key, scale: "–".join(f"{scale * v:.1f}" for v in
                                         (min(r[key] for r in runs[name]), max(r[key] for r in runs[name])))
torch_step = med("torch", "decode_step_s")
gib = lambda mib: f"{mib * 2**20 / 1e9:.2f}"
head_mib = config["vocab_size"] * config["hidden_size"] * 4 / 2**20
rows = []
for tp in (1, 2):
    name = f"tp{tp}"
    step = statistics.median(r["decode_step_s"] for r in runs[name])
    compile_s = open(f"{work}/compile_s.{tp}").read().strip()
    rows.append(f"| compiled, tp {tp} (`tp-run --weights DIR --generate`) | {compile_s} | "
                f"{1e3 * med(name, 'load_validate_s'):.0f} | {1e3 * med(name, 'slice_s'):.0f} | "
                f"{1e3 * med(name, 'ttft_s'):.0f} | {1e3 * step:.1f} ({span(name, 'decode_step_s', 1e3)}) | "
                f"{1 / step:.2f} | {torch_step / step:.2f}x | {med(name, 'weights_mib_per_rank'):.0f} | "
                f"{med(name, 'cache_mib_per_rank'):.1f} | {med(name, 'peak_rss_mib'):.0f} |")
rows.append(f"| PyTorch {runs['torch'][0]['torch']} eager, KV cache, 1 thread (`torch_generate.py --model-dir`) | | | | "
            f"{1e3 * med('torch', 'ttft_s'):.0f} | {1e3 * torch_step:.1f} ({span('torch', 'decode_step_s', 1e3)}) | "
            f"{1 / torch_step:.2f} | 1.00x | | | |")
shape = (f"{config['num_hidden_layers']} layers, hidden {config['hidden_size']}, "
         f"{config['num_attention_heads']} heads of {config.get('head_dim', 128)} on {config['num_key_value_heads']} kv heads, "
         f"ffn {config['intermediate_size']}, vocabulary {config['vocab_size']}, tied head")
text = f"""# A Hugging Face model directory end to end on the CPU: {config['architectures'][0]}

Generated by `{"" if model_name == "qwen3_0_6b" else f"MODEL={model_name} "}{"" if prompt == 16 else f"PROMPT={prompt} "}{"" if steps == 32 else f"STEPS={steps} "}{"" if smax == prompt + steps else f"SMAX={smax} "}bench/cpu/hf_model.sh (R={rounds})` on {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} ({platform.node()}, {os.cpu_count()} cores, load averages {' '.join(f'{v:.2f}' for v in os.getloadavg())}).

Model: {open(os.path.join(model, "description.txt")).read().format(shape=shape)}, random weights stored in BF16 in two shards with `model.safetensors.index.json`, `generation_config.json` with the end ids {json.load(open(os.path.join(model, 'generation_config.json')))['eos_token_id']} (`bench/cpu/hf_model_inputs.py`). `python -m tpmlir.build --hf-config DIR --generate {smax} --seq {prompt} --batch 1`, `tp-compile --tp-size 1|2`, `mpirun -np N tp-run m.so --weights DIR --prompt prompt.npy --generate {steps} --ignore-eos` (fp32 compute: tp-run widens each rank's part of the BF16 checkpoint). Batch 1, a prompt of {prompt} random ids, {steps} new tokens, greedy; one BLAS thread per rank. Each number but the compile time (one) is the median over {rounds} interleaved rounds (the decode step: each run's median over its steps; in brackets the range over rounds). tp 2 is two ranks, one core each, against PyTorch on one thread.

Correctness: every run's ids equal numpy's `reference.generate` (over the same BF16 values widened) token for token; PyTorch's too (`torch_generate.py` checks before it writes a number).

| implementation | compile (s) | load + checks (ms) | slice (ms) | time to first token (ms) | decode step (ms) | decode tokens/s | vs PyTorch | weights per rank (MiB) | KV caches per rank (MiB) | peak RSS per rank (MiB) |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
""" + "\n".join(rows) + f"""

"Slice" is each rank reading its part of the checkpoint (the file's pages, from the page cache after the first run), widening BF16 to f32 and laying the GEMM weights out in panels. The decode step reads every weight once (fp32: {gib(med('tp1', 'weights_mib_per_rank'))} GB at tp 1, the tied head's {gib(head_mib)} GB included; about half per rank at tp 2), so it is bound by memory bandwidth as in `docs/bench-generate.md`.
"""
print(text)
if doc != "-":
    open(doc, "w").write(text)
PY

#!/usr/bin/env bash
# The cuda backend on one NVIDIA GPU, end to end, in one command (< 8 min on
# one H200 with build/ already configured; the first build adds its time):
#
#   bench/gpu_check.sh
#
#  1. build: cmake picks up CUDA (/usr/local/cuda) and NCCL; the cuda targets
#     must exist (tprt_cuda, tp-run-cuda, tprt-cuda-unittests);
#  2. the GPU must be usable (nvidia-smi -L) and lit's `cuda` feature on:
#     lit test/Cuda must PASS every test, none UNSUPPORTED (runtime unit tests
#     on the GPU, tiny GPT-2 and Llama at tp 1 through NCCL with one rank,
#     against numpy and against the CPU backend's output);
#  3. the same tiny models once more here, printing the comparisons;
#  4. benchmarks at tp 1, batch 1, 128 tokens:
#       GPT-2-small, 12 layers (d 768, 12 heads, ffn 3072), fp32 (TF32 off);
#       a stack of LLAMA_LAYERS (default 2) Llama-7B-shaped layers (d 4096,
#       32 heads, 32 kv heads, ffn 11008, RMSNorm, SwiGLU, RoPE), fp32 and
#       tp-compile --dtype bf16 (bf16 GEMM operands, fp32 accumulation);
#     each: tp-run-cuda --warmup 3 --iters 20 (tokens/s, GEMM rate inside the
#     model from cuBLAS events), output vs numpy (rtol 1e-3; bf16 3e-2); one extra pass
#     with TPRT_GEMM_LOG records its cuBLAS calls, which bench/gemm_peak.cu
#     replays alone (best of two algorithms, same input type) for the best
#     rate on these shapes; PyTorch eager on the GPU (bench/torch_forward_gpu.py, fp32 and
#     bf16) when torch with CUDA is installed;
#  5. writes docs/bench-gpu.md (DOC=- to skip) with the command and numbers.
# Exits non-zero at the first failed check.
#
# Environment: BUILD (default build), SKIP_BUILD=1 (use $BUILD as it is),
# WORK (default /tmp/tp-gpu-check),
# DOC (default docs/bench-gpu.md), PYTHON (default /usr/bin/python3),
# LLAMA_LAYERS (default 2), ITERS (default 20).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
WORK="${WORK:-/tmp/tp-gpu-check}"
DOC="${DOC:-$ROOT/docs/bench-gpu.md}"
PYTHON="${PYTHON:-/usr/bin/python3}"
LLAMA_LAYERS="${LLAMA_LAYERS:-2}"
ITERS="${ITERS:-20}"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
LIT="${LIT:-/usr/lib/llvm-22/bin/lit}"
MPIRUN=(timeout 600 mpirun --allow-run-as-root --oversubscribe)
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$CUDA_HOME/bin:$PATH"
T0=$(date +%s)
log() { echo "# [$(( $(date +%s) - T0 )) s] $*" >&2; }
die() { echo "gpu_check: FAILED: $*" >&2; exit 1; }
mkdir -p "$WORK"

# --- 0. a GPU ----------------------------------------------------------------
nvidia-smi -L > "$WORK/gpus.txt" 2>&1 || die "nvidia-smi -L failed: $(cat "$WORK/gpus.txt")"
grep -q "^GPU " "$WORK/gpus.txt" || die "no GPU listed by nvidia-smi -L"
GPU_NAME="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
log "GPU: $GPU_NAME"

# --- 1. build ------------------------------------------------------------------
if [ "${SKIP_BUILD:-0}" = 1 ]; then
  log "SKIP_BUILD=1: using the binaries in $BUILD as they are"
elif [ -f "$BUILD/build.ninja" ]; then
  cmake "$BUILD" > "$WORK/cmake.txt"   # re-run: finds CUDA if it was added since
else
  BUILD_DIR="$BUILD" "$ROOT/scripts/setup.sh" >&2
fi
grep -q "TP_HAVE_CUDA:INTERNAL=ON" "$BUILD/CMakeCache.txt" \
  || die "CMake did not find CUDA + NCCL (see 'cuda backend' / 'skipped' in cmake's output)"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  log "building"
  ninja -C "$BUILD" >&2
fi
for f in bin/tp-compile bin/tp-run bin/tp-run-cuda lib/libtprt_cuda.so \
         runtime/cuda/test/tprt-cuda-unittests runtime/cuda/test/tprt-cuda-probe \
         test/lit.site.cfg.py; do
  [ -e "$BUILD/$f" ] || die "$BUILD/$f is missing"
done
"$BUILD/runtime/cuda/test/tprt-cuda-probe" >&2 || die "the CUDA runtime sees no usable GPU"
TP_COMPILE="$BUILD/bin/tp-compile"
TP_RUN="$BUILD/bin/tp-run"
TP_RUN_CUDA="$BUILD/bin/tp-run-cuda"

# --- 2. the cuda-gated lit tests ------------------------------------------------
log "lit test/Cuda"
"$LIT" -v "$BUILD/test/Cuda" 2>&1 | tee "$WORK/lit.txt" >&2 || die "lit test/Cuda failed"
! grep -q "^UNSUPPORTED" "$WORK/lit.txt" || die "some cuda tests were UNSUPPORTED: lit does not see the GPU"
grep -q "^PASS: .*gpu-e2e.test" "$WORK/lit.txt" || die "gpu-e2e.test did not pass"

# --- 3. tiny models, GPU vs CPU backend -------------------------------------------
compile_run() {  # compile_run NAME BACKEND MODEL_DIR [tp-run args...]
  local name=$1 backend=$2 dir=$3; shift 3
  local run="$TP_RUN"; [ "$backend" = cuda ] && run="$TP_RUN_CUDA"
  [ -f "$dir/m.$backend.so" ] || "$TP_COMPILE" "$dir/m.mlir" --backend "$backend" --tp-size 1 -o "$dir/m.$backend.so"
  "${MPIRUN[@]}" -np 1 "$run" "$dir/m.$backend.so" --weights "$dir/w.safetensors" \
    --input "$dir/x.npy" --output "$dir/y.$backend.npy" "$@"
}
build_model() {  # build_model DIR ARGS...
  local dir=$1; shift
  if [ ! -f "$dir/done" ]; then
    mkdir -p "$dir"
    "$PYTHON" -m tpmlir.build "$@" -o "$dir/m.mlir" --weights "$dir/w.safetensors" \
      --input "$dir/x.npy" --expected "$dir/ref.npy"
    touch "$dir/done"
  fi
}
for model in tiny_gpt2 tiny_llama; do
  dir="$WORK/$model"
  build_model "$dir" --preset "$model" --layers 2
  compile_run "$model" cpu "$dir" --quiet
  compile_run "$model" cuda "$dir" --quiet --report-json "$dir/report.json"
  "$PYTHON" -m tpmlir.compare "$dir/y.cuda.npy" "$dir/ref.npy" --report "$dir/report.json" \
    --all-reduces 4 | tee "$WORK/compare-$model-ref.txt" >&2 || die "$model: GPU vs numpy"
  "$PYTHON" -m tpmlir.compare "$dir/y.cuda.npy" "$dir/y.cpu.npy" \
    | tee "$WORK/compare-$model-cpu.txt" >&2 || die "$model: GPU vs CPU backend"
done

# --- 4. benchmarks ------------------------------------------------------------------
log "building gemm_peak"
nvcc -O2 -arch=sm_90 -ccbin g++-12 "$HERE/gemm_peak.cu" -lcublas -o "$WORK/gemm_peak"
HAVE_TORCH=0
"$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null && HAVE_TORCH=1
bench_model() {  # bench_model NAME MODEL_DIR DTYPE ALL_REDUCES BUILD_ARGS...
  local name=$1 mdir="$WORK/$2" dtype=$3 ars=$4; shift 4
  local dir="$WORK/$name" rtol=1e-3
  [ "$dtype" = bf16 ] && rtol=3e-2
  mkdir -p "$dir"
  log "$name: model files"
  build_model "$mdir" "$@"
  for f in m.mlir w.safetensors x.npy ref.npy; do ln -sf "$mdir/$f" "$dir/$f"; done
  log "$name: tp-compile --backend cuda --dtype $dtype"
  local t0; t0=$(date +%s.%N)
  rm -f "$dir/m.cuda.so"
  "$TP_COMPILE" "$dir/m.mlir" --backend cuda --dtype "$dtype" --tp-size 1 -o "$dir/m.cuda.so"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b-a}' > "$dir/compile_s.txt"
  log "$name: tp-run-cuda"
  "${MPIRUN[@]}" -np 1 "$TP_RUN_CUDA" "$dir/m.cuda.so" --weights "$dir/w.safetensors" \
    --input "$dir/x.npy" --output "$dir/y.cuda.npy" --warmup 3 --iters "$ITERS" \
    --report-json "$dir/report.json" | tee "$dir/report.txt" >&2
  "$PYTHON" -m tpmlir.compare "$dir/y.cuda.npy" "$dir/ref.npy" --rtol "$rtol" \
    --report "$dir/report.json" --all-reduces "$ars" | tee "$dir/compare.txt" >&2 \
    || die "$name: GPU output vs numpy"
  log "$name: cuBLAS calls alone (gemm_peak)"
  rm -f "$dir/gemms.txt"
  TPRT_GEMM_LOG="$dir/gemms.txt" "${MPIRUN[@]}" -x TPRT_GEMM_LOG -np 1 "$TP_RUN_CUDA" \
    "$dir/m.cuda.so" --weights "$dir/w.safetensors" --input "$dir/x.npy" \
    --warmup 0 --iters 1 --quiet
  "$WORK/gemm_peak" "$dir/gemms.txt" --json "$dir/gemm_peak.json" | tail -3 >&2
  echo "$dtype" > "$dir/dtype.txt"
  if [ "$HAVE_TORCH" = 1 ]; then
    log "$name: PyTorch eager ($dtype)"
    "$PYTHON" "$HERE/torch_forward_gpu.py" "$@" --weights "$dir/w.safetensors" \
      --input "$dir/x.npy" --expected "$dir/ref.npy" --dtype "$dtype" \
      --iters "$ITERS" --json "$dir/torch.json" >&2 || die "$name: torch ($dtype)"
  fi
}
LLAMA_ARGS=(--preset llama_like --layers "$LLAMA_LAYERS" --seq 128 --d-model 4096 --heads 32
            --kv-heads 32 --ffn 11008)
bench_model gpt2_small gpt2_small.model f32 24 --preset gpt2_small --layers 12 --seq 128
bench_model llama7b llama7b.model f32 $((2 * LLAMA_LAYERS)) "${LLAMA_ARGS[@]}"
bench_model llama7b_bf16 llama7b.model bf16 $((2 * LLAMA_LAYERS)) "${LLAMA_ARGS[@]}"

# --- 5. report -------------------------------------------------------------------------
log "report"
"$PYTHON" - "$WORK" "$DOC" "$GPU_NAME" "$LLAMA_LAYERS" "$ITERS" <<'PY'
import json, os, subprocess, sys, datetime
work, doc, gpu, llama_layers, iters = sys.argv[1:6]
def load(p):
    try:
        with open(p) as f: return json.load(f)
    except OSError: return None
rows = []
for name, label in (("gpt2_small", "GPT-2-small, 12 layers"),
                    ("llama7b", f"Llama-7B-shaped, {llama_layers} layers"),
                    ("llama7b_bf16", f"Llama-7B-shaped, {llama_layers} layers")):
    d = os.path.join(work, name)
    r, peak, torch_run = (load(f"{d}/report.json"), load(f"{d}/gemm_peak.json"),
                          load(f"{d}/torch.json"))
    dtype = open(f"{d}/dtype.txt").read().strip()
    g = r["gemm"]
    inside = g["gflops"] / 1e3
    best = peak["same_dtype_tflops"]
    compare = open(f"{d}/compare.txt").read().strip()
    rows.append(f"| {label} | {dtype} | {r['tokens_per_s']:.0f} | {r['forward_s']['median']*1e3:.3f} | "
                f"{g['share_of_forward']*100:.0f}% | {inside:.2f} | {best:.2f} | "
                f"{inside / best * 100:.0f}% | "
                + (f"{torch_run['tokens_per_s']:.0f}" if torch_run else "n/a")
                + f" | {open(f'{d}/compile_s.txt').read().strip()} s |")
    rows.append(f"|  |  | {compare} ||||||||")
text = f"""# GPU benchmark (cuda backend, tp 1)

Command: `bench/gpu_check.sh` (LLAMA_LAYERS={llama_layers}, ITERS={iters}), {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC.
GPU: {gpu}. fp32 activations; GEMMs fp32 (cuBLAS, TF32 off) or bf16 operands with fp32
accumulation (`tp-compile --dtype bf16`); batch 1, 128 tokens, random weights.

| model | GEMM dtype | tokens/s | forward ms (median) | GEMM share | GEMM TFLOP/s in model | best cuBLAS TFLOP/s, same calls | ratio | PyTorch eager tokens/s (same dtype) | compile |
|---|---|---|---|---|---|---|---|---|---|
""" + "\n".join(rows) + """

- GEMM rate in the model: the runtime's cuBLAS calls timed with CUDA events (tp-run-cuda's report);
  best: the same calls (TPRT_GEMM_LOG) replayed alone by bench/gemm_peak.cu, best of
  CUBLAS_GEMM_DEFAULT and DEFAULT_TENSOR_OP, in the same input type, weighted by their count.
- bf16: the GEMM time excludes the kernels that round each operand to bf16 (weights included,
  every forward pass); they are in the forward time.
- Every check before the numbers passed: lit test/Cuda (unit tests, tiny GPT-2/Llama vs numpy and vs
  the CPU backend), the outputs above vs numpy.
"""
if doc != "-":
    with open(doc, "w") as f: f.write(text)
print(text)
PY
log "done"

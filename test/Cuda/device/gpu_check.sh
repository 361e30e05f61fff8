#!/usr/bin/env bash
# The cuda backend on one NVIDIA GPU, end to end, in one command on the GPU
# machine, from the folder test/Cuda/device/gpu_bundle.sh prepared on a machine without
# one (that GPU machine has CUDA, cuBLAS, NCCL, Python with numpy and torch,
# and nothing to build LLVM/MLIR code with, and no registry: docs/gpu.md):
#
#   test/Cuda/device/gpu_bundle.sh                       # here: compile, collect (~1 min)
#   test/Cuda/device/gpu_check.sh                        # there, with gpu-bundle/ carried
#
#  0. the bundle, a Python with numpy, cuBLAS/cuBLASLt/NCCL on that machine
#     (ldconfig, the CUDA toolkit, Python's nvidia packages); every binary in
#     the bundle must resolve all its libraries (ldd);
#  1. a GPU the CUDA runtime can use (tprt-cuda-probe);
#  2. the runtime's GPU unit tests (cuBLAS GEMMs for every operand layout,
#     batches, NCCL with one rank, counters, device memory);
#  3. tiny GPT-2 (4 layers) and Llama (2 layers) at tp 1 through NCCL with one
#     rank: vs numpy (and the all-reduce count), vs the CPU backend's output
#     computed when the bundle was made; Llama with bf16 GEMMs within 2% of
#     numpy and not within 1e-4 (the bf16 path was taken); Llama with its
#     weights inline (constants the runtime uploads); a model compiled for
#     tp 2 refused by a one-GPU world; tiny GPT-2 and Llama under
#     compute-sanitizer's memcheck (3c), where it can check the device;
#  3a. torch-mlir's BERT-tiny and BERT-base (../shared/external, when the
#     bundle was made beside it) at tp 1 vs the CPU backend's output, on
#     arguments made here that equal the bundle machine's;
#  3b. generation (tp-run-cuda --generate): tiny GPT-2 (tied head) and Llama
#     (GQA, RoPE) from Hugging Face directories, and a Llama with a
#     vocabulary of 1024 (a split argmax), batch 2, prompt 8, 16 new ids equal
#     to the numpy reference's; tiny Llama's generation under memcheck too,
#     the vocabulary-1024 one's under racecheck and synccheck (the row kernels);
#  4. benchmarks at tp 1, batch 1, 128 tokens (weights, input and numpy
#     reference made here by tpmlir.build with the bundle's arguments):
#       GPT-2-small, 12 layers, fp32 (TF32 off);
#       2 Llama-7B-shaped layers (d 4096, 32 heads, ffn 11008, RMSNorm,
#       SwiGLU, RoPE), fp32 and bf16 GEMMs (the bundle's GPT2_ARGS, LLAMA_ARGS);
#     each: tp-run-cuda --warmup 3 --iters ITERS (tokens/s, the GEMM rate
#     inside the model from cuBLAS events), output vs numpy (rtol 1e-3; bf16
#     3e-2); one pass with TPRT_GEMM_LOG records its cuBLAS calls, which
#     gemm_peak replays alone for the best rate on these shapes; PyTorch
#     eager on the GPU (bench/gpu/torch_forward_gpu.py) when torch sees the GPU;
#  4b. generation benchmark, when time is left before DEADLINE: a
#     Llama-7B-shaped model (the bundle's GEN_ARGS: 2 layers, vocabulary
#     32000), prompt 128, 128 new tokens, batch 1, fp32 and bf16 GEMMs: time
#     to first token and decode tokens/s (tp-run-cuda --generate, --warmup 1
#     --iters GEN_ITERS), against the HBM bound (the bytes of the weights a
#     decode step reads over the bandwidth bench/gpu/hbm_bandwidth.py measures
#     with device-to-device copies, and over the nominal 4.8 TB/s) and
#     PyTorch eager with a KV cache (bench/gpu/torch_generate_gpu.py, whose
#     fp32 ids must equal tp-run-cuda's); the fp32 model again built with
#     --decode-attention masked, run plainly and with --cuda-graph (which
#     must replay its decode steps unless REPLAY=0), and the bf16 one with
#     --cuda-graph, also built with --cuda-row-kernels=false and with
#     --stack-weights=false (controls: what each gives, in the same run);
#  4c. the same fp32 and bf16 models generating 16 ids with each kernel timed
#     alone (TPRT_KERNEL_LOG), summed per kernel (bench/gpu/kernel_times.py),
#     and their cuBLAS calls replayed with operands out of L2 (gemm_peak
#     --cold: cublasGemmEx against cublasLt's best algorithm);
#  5. writes docs/bench-gpu.md (DOC=- to skip).
# Stops at once when step 0 or 1 fails; a failed check after that is
# recorded and the run goes on (one device run then shows every failure and
# the numbers that could still be measured); it exits non-zero at the end,
# with a line per failed check. With the device tool's $OUT set, the log goes
# there as it is written (a run killed at the tool's limit still returns it),
# and the report (once made) and the comparisons are copied there at the end.
#
# Environment: BUNDLE (default gpu-bundle), WORK (default /tmp/tp-gpu-check),
# DOC (default docs/bench-gpu.md), PYTHON (default: the first of python3,
# /usr/bin/python3 that has numpy), ITERS (default 20), GEN_ITERS (default 3
# generations timed, after one), STEP_TIMEOUT
# (default 240 s for each command on the GPU), DEADLINE (default 420 s: no
# benchmark starts later, so the run ends inside the device call's 480 s),
# TPRT_COMM_TIMEOUT_S, GEN_TIMEOUT (default 120 s for each generation
# command), TORCH_GEN_DEVICE (default cuda; cpu runs the PyTorch generation on
# the host: test/Cuda/device-script.test), COMPUTE_SANITIZER (default: the one
# on PATH or in /usr/local/cuda), MEMCHECK=0 (skip memcheck), CORPUS=0
# (skip step 3a), REPLAY=0 (the --cuda-graph run need not replay: the host
# stand-ins cannot).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
BUNDLE="$(cd "${BUNDLE:-$ROOT/gpu-bundle}" 2>/dev/null && pwd)" \
  || { echo "gpu_check: FAILED: no bundle at ${BUNDLE:-$ROOT/gpu-bundle}: run test/Cuda/device/gpu_bundle.sh first" >&2; exit 1; }
WORK="${WORK:-/tmp/tp-gpu-check}"
DOC="${DOC:-$ROOT/docs/bench-gpu.md}"
ITERS="${ITERS:-20}"
GEN_ITERS="${GEN_ITERS:-3}"
# Where torch_generate_gpu.py runs: cuda when torch sees the GPU (cpu: the
# script's test, without a GPU).
TORCH_GEN_DEVICE="${TORCH_GEN_DEVICE:-cuda}"
# Each generation command takes seconds: a hang there must not eat the
# benchmarks' time.
GEN_TIMEOUT="${GEN_TIMEOUT:-120}"
STEP_TIMEOUT="${STEP_TIMEOUT:-240}"
DEADLINE="${DEADLINE:-420}"
B="$BUNDLE/bin"
T0=$(date +%s)
mkdir -p "$WORK"
LOG="$WORK/gpu_check.log"
TEE_TO=("$LOG")
[ -n "${OUT:-}" ] && [ -d "$OUT" ] && TEE_TO+=("$OUT/gpu_check.log")
exec 3>&1 4>&2 > >(tee "${TEE_TO[@]}") 2>&1
TEE_PID=$!
REPORTED=0
log() { echo "# [$(( $(date +%s) - T0 )) s] $*"; }
die() { echo "gpu_check: FAILED: $*"; exit 1; }
save_out() {  # what comes back through the device tool
  # Let tee write the last lines (the failure, if any) before copying.
  exec 1>&3 2>&4
  wait "$TEE_PID" 2>/dev/null || true
  [ -n "${OUT:-}" ] && [ -d "$OUT" ] || return 0
  # Only this run's report: the checkout has an older one at $DOC.
  if [ "$DOC" != - ] && [ "$REPORTED" = 1 ]; then cp "$DOC" "$OUT/" 2>/dev/null || true; fi
  (cd "$WORK" && tar czf "$OUT/gpu-check-work.tgz" --exclude='*.safetensors' \
     --exclude='*.npy' --exclude='*.so' . 2>/dev/null) || true
}
trap save_out EXIT
cat "$BUNDLE/BUNDLE.txt"
chmod +x "$B"/* 2>/dev/null || true

# --- 0. Python, CUDA libraries, Open MPI, the bundle's binaries --------------
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for p in python3 /usr/bin/python3; do
    if "$p" -c "import numpy" 2>/dev/null; then PYTHON="$(command -v "$p")"; break; fi
  done
fi
[ -n "$PYTHON" ] || die "no python3 with numpy"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
log "python: $PYTHON (numpy $("$PYTHON" -c 'import numpy; print(numpy.__version__)'))"

find_lib() {  # the folder holding shared library $1 on this machine
  local hit
  hit="$(ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n {print $NF; exit}')"
  [ -n "$hit" ] && { dirname "$hit"; return; }
  local site; site="$("$PYTHON" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)"
  for d in ${CUDA_HOME:-/usr/local/cuda}/lib64 ${CUDA_HOME:-/usr/local/cuda}/lib \
           /usr/local/cuda/targets/x86_64-linux/lib $site; do
    hit="$(find "$d" -name "$1" -print -quit 2>/dev/null || true)"
    [ -n "$hit" ] && { dirname "$hit"; return; }
  done
  hit="$(find /usr/local /opt /usr/lib -name "$1" -print -quit 2>/dev/null || true)"
  if [ -n "$hit" ]; then dirname "$hit"; fi
}
CUDA_DIRS=""
for lib in libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  dir="$(find_lib "$lib")"
  [ -n "$dir" ] || die "$lib not found on this machine (ldconfig, CUDA toolkit, Python's nvidia packages)"
  log "$lib: $dir"
  case ":$CUDA_DIRS:" in *":$dir:"*) ;; *) CUDA_DIRS="$CUDA_DIRS:$dir" ;; esac
done
# The bundle's libraries first (libcudart 13.0 with them), then the machine's
# cuBLAS and NCCL. Open MPI and PMIx find their plugins and help files in the
# bundle, not at the Debian paths they were built for.
export LD_LIBRARY_PATH="$BUNDLE/lib$CUDA_DIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PMIX="$BUNDLE/ompi/usr/lib/x86_64-linux-gnu/pmix2"
export OPAL_PREFIX="$BUNDLE/ompi/usr" PMIX_PREFIX="$PMIX" PMIX_LIBDIR="$PMIX/lib" \
  PMIX_PKGLIBDIR="$PMIX/lib/pmix" PMIX_DATADIR="$PMIX/share" PMIX_PKGDATADIR="$PMIX/share/pmix"
# Debian's /etc/openmpi/openmpi-mca-params.conf, which the bundle lacks.
export OMPI_MCA_btl_base_warn_component_unused=0 OMPI_MCA_mtl='^ofi' \
  OMPI_MCA_btl='^uct,openib,ofi' OMPI_MCA_pml='^ucx' OMPI_MCA_osc='^ucx,pt2pt'
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
missing="$(for f in "$B"/* "$BUNDLE"/lib/* "$BUNDLE"/models/*/*.so; do
             ldd "$f" 2>&1 | sed -n "s|^\s*\(.*not found\)|$f: \1|p"
           done)"
[ -z "$missing" ] || die "libraries missing on this machine:
$missing"
MPIRUN=(timeout "$STEP_TIMEOUT" "$B/mpirun" --oversubscribe)
MPIRUN_GEN=(timeout "$GEN_TIMEOUT" "$B/mpirun" --oversubscribe)
TP_RUN_CUDA="$B/tp-run-cuda"

# --- 1. a GPU ------------------------------------------------------------------------
GPU_NAME="unknown"
if command -v nvidia-smi >/dev/null; then
  GPU_NAME="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
              2>/dev/null | head -1 || true)"
fi
log "GPU: $GPU_NAME"
"$B/tprt-cuda-probe" || die "the CUDA runtime sees no usable GPU"

# --- 2. the runtime's unit tests --------------------------------------------------------
# From here on a failed check is recorded and the run goes on, so that one
# device run shows every failure and whatever numbers can still be had; the
# script exits non-zero at the end.
FAILED=()
failed() {  # one line each, for the summary and the report
  local what; what="$(printf '%s' "$*" | tr '\n' ' ' | head -c 300)"
  echo "gpu_check: CHECK FAILED: $what"; FAILED+=("$what")
}
log "tprt-cuda-unittests"
rc=0
"${MPIRUN[@]}" -np 1 "$B/tprt-cuda-unittests" --gtest_color=no > "$WORK/unittests.txt" 2>&1 || rc=$?
cat "$WORK/unittests.txt"
if [ "$rc" != 0 ] || grep -q "^\[  FAILED  \]" "$WORK/unittests.txt" \
   || ! grep -q "^\[  PASSED  \] [1-9][0-9]* tests" "$WORK/unittests.txt"; then
  failed "GPU unit tests (exit $rc)"
fi

# --- 3. tiny models: GPU vs numpy, vs the CPU backend -----------------------------------
compare() { "$PYTHON" -m tpmlir.compare "$@"; }
run_tiny() {  # run_tiny MODEL SO OUT [tp-run args]
  local d="$BUNDLE/models/$1" so=$2 out=$3; shift 3
  "${MPIRUN[@]}" -np 1 "$TP_RUN_CUDA" "$d/$so" --weights "$d/w.safetensors" \
    --input "$d/x.npy" --output "$out" --quiet "$@"
}
for model in tiny_gpt2:8 tiny_llama:4; do
  name=${model%:*} ars=${model#*:} d="$BUNDLE/models/${model%:*}"
  log "$name"
  run_tiny "$name" m.cuda.so "$WORK/$name.npy" --report-json "$WORK/$name.json" \
    || { failed "$name: tp-run-cuda"; continue; }
  compare "$WORK/$name.npy" "$d/ref.npy" --report "$WORK/$name.json" --all-reduces "$ars" \
    | tee "$WORK/compare-$name-ref.txt" || failed "$name: GPU vs numpy"
  compare "$WORK/$name.npy" "$d/y.cpu.npy" | tee "$WORK/compare-$name-cpu.txt" \
    || failed "$name: GPU vs the CPU backend"
done
log "tiny_llama, bf16 GEMMs"
if run_tiny tiny_llama m.bf16.so "$WORK/tiny_llama.bf16.npy"; then
  compare "$WORK/tiny_llama.bf16.npy" "$BUNDLE/models/tiny_llama/ref.npy" --rtol 2e-2 \
    || failed "tiny_llama bf16: not within 2% of numpy"
  ! compare "$WORK/tiny_llama.bf16.npy" "$BUNDLE/models/tiny_llama/ref.npy" --rtol 1e-4 >/dev/null \
    || failed "tiny_llama bf16: within 1e-4 of numpy: were the GEMMs bf16?"
else
  failed "tiny_llama bf16: tp-run-cuda"
fi
log "tiny_llama, weights inline (constants uploaded by the runtime)"
if "${MPIRUN[@]}" -np 1 "$TP_RUN_CUDA" "$BUNDLE/models/tiny_llama/m.inline.so" \
     --input "$BUNDLE/models/tiny_llama/x.npy" --output "$WORK/tiny_llama.inline.npy" --quiet; then
  compare "$WORK/tiny_llama.inline.npy" "$BUNDLE/models/tiny_llama/ref.npy" \
    || failed "tiny_llama, weights inline: GPU vs numpy"
else
  failed "tiny_llama, weights inline: tp-run-cuda"
fi
log "a tp-2 model on a one-GPU world"
if run_tiny tiny_gpt2 m.cuda2.so "$WORK/refused.npy" > "$WORK/refused.txt" 2>&1; then
  failed "tp-run-cuda ran a tp-2 model with one rank"
fi
grep "world size 1 but .* was compiled for tp 2" "$WORK/refused.txt" \
  || failed "the tp-2 refusal's message: $(cat "$WORK/refused.txt")"

# --- 3a. corpus graphs: torch-mlir's BERTs vs the CPU backend ---------------------------
# Arguments made here from the manifest (corpus_e2e.py --portable: the values the bundle's
# machine made for the CPU backend's output, whatever this numpy is).
for name in corpus_bert_tiny corpus_bert_base; do
  d="$BUNDLE/models/$name"
  [ "${CORPUS:-1}" = 0 ] && { log "$name skipped (CORPUS=0)"; continue; }
  [ -f "$d/manifest.json" ] || { log "$name: not in the bundle (made without ../shared/external)"; continue; }
  log "$name ($(cat "$d/source"))"
  inputs=()
  mapfile -t flags < "$d/argument_flags"
  if "$PYTHON" "$ROOT/test/Integration/Inputs/corpus_e2e.py" arguments "$d/manifest.json" \
       "$WORK/$name" --portable "${flags[@]}"; then
    while read -r n; do inputs+=(--input "$n=$WORK/$name.$n.npy"); done < "$WORK/$name.inputs"
    if "${MPIRUN[@]}" -np 1 "$TP_RUN_CUDA" "$d/m.cuda.so" --weights "$WORK/$name.safetensors" \
         "${inputs[@]}" --output "$WORK/$name.npy" --quiet; then
      compare "$WORK/$name.npy" "$d/y.cpu.npy" | tee "$WORK/compare-$name-cpu.txt" \
        || failed "$name: GPU vs the CPU backend"
    else
      failed "$name: tp-run-cuda"
    fi
  else
    failed "$name: its arguments"
  fi
  rm -f "$WORK/$name.safetensors"
done

# --- 3b. generation: tp-run-cuda --generate vs the numpy reference -----------------------
same_ids() { "$PYTHON" "$ROOT/test/Integration/Inputs/same_ids.py" "$@"; }
for name in gen_gpt2 gen_llama gen_llama_bf16 gen_qwen3 gen_phi3 gen_gemma2 gen_gemma3 gen_llama1k; do
  d="$BUNDLE/models/$name"
  rm -f "$WORK/$name.ids.npy" "$WORK/compare-$name.txt"
  [ -f "$d/steps" ] || { failed "$name: not in the bundle (an older gpu_bundle.sh?)"; continue; }
  log "$name: tp-run-cuda --generate $(cat "$d/steps")"
  if "${MPIRUN_GEN[@]}" -np 1 "$TP_RUN_CUDA" "$d/m.cuda.so" --weights "$d/hf/model.safetensors" \
       --prompt "$d/prompt.npy" --generate "$(cat "$d/steps")" --output "$WORK/$name.ids.npy" \
       --report-json "$WORK/$name.json"; then
    same_ids "$d/ids.npy" "$WORK/$name.ids.npy" | tee "$WORK/compare-$name.txt" \
      || failed "$name: the generated ids differ from numpy's"
  else
    failed "$name: tp-run-cuda --generate"
  fi
done

# --- 3c. the generated kernels under compute-sanitizer -----------------------------------
# memcheck: out-of-bounds and misaligned accesses of our kernels (API errors are cuBLAS's
# own probing and not reported). racecheck and synccheck: the row kernels (tp-row-kernels:
# a block per row, stages apart by barriers, gpu.all_reduce through shared memory) must have
# no shared-memory hazard and no barrier some threads miss; gen_llama1k's generation runs
# them all (RMSNorm, softmax, the argmax over 1024 ids on 1024 threads). Skipped where the
# sanitizer is missing or cannot check the device (MEMCHECK=0 skips it too).
CS="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}"
[ -z "$CS" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && CS=/usr/local/cuda/bin/compute-sanitizer
if [ "${MEMCHECK:-1}" = 0 ] || [ -z "$CS" ]; then
  log "memcheck skipped (MEMCHECK=${MEMCHECK:-1}, compute-sanitizer: ${CS:-none})"
else
  sanitize() {  # sanitize TOOL NAME TP-RUN-CUDA ARGS...; 1 when the sanitizer cannot check the device
    local tool=$1 name=$2 out="$WORK/$1-$2.txt"; shift 2
    log "$name under compute-sanitizer $tool"
    "${MPIRUN[@]}" -np 1 "$CS" --tool "$tool" --report-api-errors no --print-limit 10 \
      "$TP_RUN_CUDA" "$@" --quiet > "$out" 2>&1 || true
    grep -E "^========= (Invalid|ERROR SUMMARY|RACE SUMMARY|Error|Barrier|Race)" "$out" | head -12 || true
    if grep -qE "Device not supported|Failed to initialize|No CUDA-capable" "$out"; then
      log "compute-sanitizer cannot check this device: $tool skipped"; rm -f "$out"; return 1
    fi
    # racecheck counts hazards in a RACE SUMMARY line, the others errors in an ERROR one.
    { grep -qE "(ERROR|RACE) SUMMARY: 0 " "$out" && ! grep -qE "(ERROR|RACE) SUMMARY: [1-9]" "$out"; } \
      || failed "$name: compute-sanitizer $tool"
  }
  can=1
  for name in tiny_gpt2 tiny_llama; do
    d="$BUNDLE/models/$name"
    sanitize memcheck "$name" "$d/m.cuda.so" --weights "$d/w.safetensors" --input "$d/x.npy" \
      --warmup 0 --iters 1 || { can=0; break; }
  done
  if [ "$can" = 1 ]; then
    d="$BUNDLE/models/gen_llama"
    sanitize memcheck gen_llama "$d/m.cuda.so" --weights "$d/hf/model.safetensors" \
      --prompt "$d/prompt.npy" --generate 4 || true
    d="$BUNDLE/models/gen_llama1k"
    for tool in racecheck synccheck; do
      sanitize "$tool" gen_llama1k "$d/m.cuda.so" --weights "$d/hf/model.safetensors" \
        --prompt "$d/prompt.npy" --generate 2 || true
    done
  fi
fi

# --- 4. benchmarks -----------------------------------------------------------------------
HAVE_TORCH=0
"$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null && HAVE_TORCH=1
bench_model() {  # bench_model NAME MODEL DTYPE
  local name=$1 m="$BUNDLE/models/$2" dtype=$3
  local dir="$WORK/$name" data="$WORK/$2.data" rtol=1e-3
  [ "$dtype" = bf16 ] && rtol=3e-2
  # Afresh: a file left by an earlier run must not stand in for a failed step.
  rm -rf "$dir" && mkdir -p "$dir"
  if (( $(date +%s) - T0 >= DEADLINE )); then
    failed "$name: not run, past DEADLINE (${DEADLINE} s)"; return 0
  fi
  local args; mapfile -t args < "$m/build_args" || { failed "$name: $m/build_args"; return 0; }
  # Two all-reduces per layer (--layers N in the arguments).
  local ars; ars=$(( 2 * $(sed -n '/^--layers$/{n;p}' "$m/build_args") ))
  if [ ! -f "$data/done" ]; then
    log "$2: weights, input, numpy reference"
    mkdir -p "$data"
    "$PYTHON" -m tpmlir.build "${args[@]}" -o "$data/m.mlir" --weights "$data/w.safetensors" \
      --input "$data/x.npy" --expected "$data/ref.npy" \
      || { failed "$name: weights and reference (tpmlir.build)"; return 0; }
    touch "$data/done"
  fi
  cp "$m/compile_s.${variant:+$variant.}$dtype" "$dir/compile_s.txt" || true
  echo "$dtype" > "$dir/dtype.txt"
  log "$name: tp-run-cuda"
  if "${MPIRUN[@]}" -np 1 "$TP_RUN_CUDA" "$m/m.$dtype.so" --weights "$data/w.safetensors" \
       --input "$data/x.npy" --output "$dir/y.npy" --warmup 3 --iters "$ITERS" \
       --report-json "$dir/report.json" | tee "$dir/report.txt"; then
    compare "$dir/y.npy" "$data/ref.npy" --rtol "$rtol" --report "$dir/report.json" \
      --all-reduces "$ars" | tee "$dir/compare.txt" || failed "$name: GPU output vs numpy"
    log "$name: its cuBLAS calls alone (gemm_peak)"
    rm -f "$dir/gemms.txt"
    TPRT_GEMM_LOG="$dir/gemms.txt" "${MPIRUN[@]}" -x TPRT_GEMM_LOG -np 1 "$TP_RUN_CUDA" \
      "$m/m.$dtype.so" --weights "$data/w.safetensors" --input "$data/x.npy" \
      --warmup 0 --iters 1 --quiet || failed "$name: tp-run-cuda with TPRT_GEMM_LOG"
    timeout "$STEP_TIMEOUT" "$B/gemm_peak" "$dir/gemms.txt" --json "$dir/gemm_peak.json" \
      | tail -3 || failed "$name: gemm_peak"
  else
    rm -f "$dir/report.json"
    failed "$name: tp-run-cuda"
  fi
  if [ "$HAVE_TORCH" = 1 ] && (( $(date +%s) - T0 < DEADLINE )); then
    log "$name: PyTorch eager ($dtype)"
    timeout "$STEP_TIMEOUT" "$PYTHON" "$ROOT/bench/gpu/torch_forward_gpu.py" "${args[@]}" \
      --weights "$data/w.safetensors" --input "$data/x.npy" --expected "$data/ref.npy" \
      --dtype "$dtype" --iters "$ITERS" --json "$dir/torch.json" || failed "$name: torch ($dtype)"
  fi
}
bench_model gpt2_small gpt2_small f32
bench_model llama7b llama7b f32
bench_model llama7b_bf16 llama7b bf16

# --- 4b. generation benchmark ----------------------------------------------------------
ids_agree() {  # ids_agree A.npy B.npy: how many new ids agree; exit 1 when any differs
  "$PYTHON" - "$1" "$2" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
if a.shape != b.shape:
    sys.exit(f"ids {list(a.shape)} and {list(b.shape)}")
differ = np.nonzero((a != b).any(axis=0))[0]
if len(differ):
    sys.exit(f"the first {differ[0]} of {a.shape[1]} new ids agree")
print(f"all {a.shape[1]} new ids agree ({len(np.unique(a))} distinct)")
PY
}
rm -f "$WORK/hbm.json"
if [ "$HAVE_TORCH" = 1 ] && (( $(date +%s) - T0 < DEADLINE )); then
  log "HBM bandwidth (device-to-device copies, PyTorch)"
  timeout "$GEN_TIMEOUT" "$PYTHON" "$ROOT/bench/gpu/hbm_bandwidth.py" --json "$WORK/hbm.json" \
    || failed "hbm_bandwidth.py"
fi
gen_bench() {  # gen_bench NAME DTYPE [VARIANT [TP-RUN FLAGS...]]: the bundle's gen_llama7b (m.VARIANT.DTYPE.so)
  local name=$1 dtype=$2 variant=${3:-} m="$BUNDLE/models/gen_llama7b" data="$WORK/gen_llama7b.data"
  local dir="$WORK/$1" steps so="$m/m.${3:+$3.}$2.so"
  shift $(( $# < 3 ? $# : 3 ))
  rm -rf "$dir" && mkdir -p "$dir"
  [ -f "$m/steps" ] || { failed "$name: not in the bundle (an older gpu_bundle.sh?)"; return 0; }
  steps=$(cat "$m/steps")
  if (( $(date +%s) - T0 >= DEADLINE )); then
    failed "$name: not run, past DEADLINE (${DEADLINE} s)"; return 0
  fi
  local args; mapfile -t args < "$m/build_args" || { failed "$name: $m/build_args"; return 0; }
  if [ ! -f "$data/done" ]; then
    log "gen_llama7b: weights and prompt"
    mkdir -p "$data"
    timeout "$STEP_TIMEOUT" "$PYTHON" -m tpmlir.build "${args[@]}" -o "$data/m.mlir" \
      --weights "$data/w.safetensors" --input "$data/prompt.npy" \
      || { failed "$name: weights and prompt (tpmlir.build)"; return 0; }
    touch "$data/done"
  fi
  cp "$m/compile_s.${variant:+$variant.}$dtype" "$dir/compile_s.txt" || true
  echo "$dtype" > "$dir/dtype.txt"
  log "$name: tp-run-cuda --generate $steps"
  [ -f "$so" ] || { failed "$name: $so not in the bundle (an older gpu_bundle.sh?)"; return 0; }
  if ! "${MPIRUN_GEN[@]}" -np 1 "$TP_RUN_CUDA" "$so" --weights "$data/w.safetensors" \
       --prompt "$data/prompt.npy" --generate "$steps" --warmup 1 --iters "$GEN_ITERS" "$@" \
       --output "$dir/ids.npy" --report-json "$dir/report.json" | tee "$dir/report.txt"; then
    rm -f "$dir/report.json" "$dir/ids.npy"
    failed "$name: tp-run-cuda --generate"
  fi
  # --cuda-graph: the decode steps must have been replayed.
  if [ "$*" = --cuda-graph ] && [ "${REPLAY:-1}" = 1 ] && [ -f "$dir/report.json" ] \
     && ! "$PYTHON" -c 'import json, sys; g = json.load(open(sys.argv[1]))["cuda_graph"]; sys.exit(g["replayed_calls"] == 0)' \
          "$dir/report.json"; then
    failed "$name: no decode step replayed as a CUDA graph ($(grep 'cuda graph' "$dir/report.txt"))"
  fi
  # A variant of the same model and dtype: PyTorch's run is the plain one's.
  if [ -n "$variant" ]; then
    local plain="$WORK/gen_llama7b"
    if [ "$dtype" = bf16 ]; then plain+=_bf16; fi
    cp "$plain/torch.json" "$plain/torch_ids.npy" "$dir/" 2>/dev/null || true
  elif { [ "$HAVE_TORCH" = 1 ] || [ "$TORCH_GEN_DEVICE" = cpu ]; } \
     && (( $(date +%s) - T0 < DEADLINE )); then
    log "$name: PyTorch eager with a KV cache ($dtype, $TORCH_GEN_DEVICE)"
    timeout "$GEN_TIMEOUT" "$PYTHON" "$ROOT/bench/gpu/torch_generate_gpu.py" --device "$TORCH_GEN_DEVICE" \
      --weights "$data/w.safetensors" --prompt "$data/prompt.npy" --steps "$steps" \
      --dtype "$dtype" --iters "$GEN_ITERS" --json "$dir/torch.json" --ids "$dir/torch_ids.npy" \
      -- "${args[@]}" || failed "$name: torch_generate_gpu.py ($dtype)"
  fi
  # fp32: the same ids as PyTorch's, token for token; bf16 only says how far they agree.
  if [ -f "$dir/ids.npy" ] && [ -f "$dir/torch_ids.npy" ]; then
    local agree
    if agree=$(ids_agree "$dir/torch_ids.npy" "$dir/ids.npy" 2>&1); then
      echo "ids vs PyTorch's: $agree" | tee "$dir/ids.txt"
    else
      echo "ids vs PyTorch's: $agree" | tee "$dir/ids.txt"
      [ "$dtype" = bf16 ] || failed "$name: ids differ from PyTorch's ($agree)"
    fi
  fi
}
echo "$GEN_ITERS" > "$WORK/gen_iters.txt"
gen_bench gen_llama7b f32
gen_bench gen_llama7b_masked f32 masked
gen_bench gen_llama7b_graph f32 masked --cuda-graph
gen_bench gen_llama7b_bf16 bf16
gen_bench gen_llama7b_bf16_graph bf16 masked --cuda-graph
gen_bench gen_llama7b_bf16_graph_rows0 bf16 masked_rows0 --cuda-graph
gen_bench gen_llama7b_bf16_graph_stack0 bf16 masked_stack0 --cuda-graph

# --- 4c. where a decode step's time goes ---------------------------------------------------
# Each kernel of a short generation timed alone (TPRT_KERNEL_LOG), summed per
# kernel by bench/gpu/kernel_times.py: kernels/NAME.txt (and .json) in the work folder.
kernel_profile() {  # kernel_profile NAME DTYPE: the bundle's gen_llama7b (m.DTYPE.so)
  local name=$1 so="$BUNDLE/models/gen_llama7b/m.$2.so" data="$WORK/gen_llama7b.data"
  local dir="$WORK/kernels"
  mkdir -p "$dir"
  if [ ! -f "$data/done" ] || (( $(date +%s) - T0 >= DEADLINE )); then
    log "$name: kernel profile not run (no weights, or past DEADLINE)"; return 0
  fi
  log "$name: each kernel timed alone (TPRT_KERNEL_LOG), 16 new ids"
  rm -f "$dir/$name.gemms.txt"
  if TPRT_KERNEL_LOG="$dir/$name.log" TPRT_GEMM_LOG="$dir/$name.gemms.txt" "${MPIRUN_GEN[@]}" \
       -np 1 -x TPRT_KERNEL_LOG -x TPRT_GEMM_LOG "$TP_RUN_CUDA" "$so" \
       --weights "$data/w.safetensors" --prompt "$data/prompt.npy" --generate 16 \
       --warmup 0 --iters 1 --output "$dir/$name.ids.npy" > "$dir/$name.run.txt"; then
    "$PYTHON" "$ROOT/bench/gpu/kernel_times.py" "$dir/$name.log" --json "$dir/$name.json" \
      | tee "$dir/$name.txt" || failed "$name: kernel_times.py"
    log "$name: its cuBLAS calls with cold operands (gemm_peak --cold; 15 decode steps)"
    timeout "$STEP_TIMEOUT" "$B/gemm_peak" "$dir/$name.gemms.txt" --cold \
      | tee "$dir/$name.gemms-cold.txt" || failed "$name: gemm_peak --cold"
  else
    cat "$dir/$name.run.txt"; failed "$name: tp-run-cuda with TPRT_KERNEL_LOG"
  fi
}
kernel_profile gen_llama7b f32
kernel_profile gen_llama7b_bf16 bf16

# --- 5. report -------------------------------------------------------------------------
log "report"
printf '%s\n' "${FAILED[@]}" > "$WORK/failed.txt"
if "$PYTHON" "$ROOT/bench/gpu/gpu_report.py" "$WORK" "$DOC" "$GPU_NAME" "$ITERS" "$BUNDLE"; then
  REPORTED=1
else
  failed "the report (gpu_report.py)"
fi
log "done"
for f in "${FAILED[@]}"; do echo "gpu_check: FAILED: $f"; done
[ "${#FAILED[@]}" -eq 0 ]

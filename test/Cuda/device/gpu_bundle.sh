#!/usr/bin/env bash
# Prepares, on a machine without a GPU, everything test/Cuda/device/gpu_check.sh needs on
# the GPU machine, in one folder (default gpu-bundle/, git-ignored):
#
#   test/Cuda/device/gpu_bundle.sh            # then, on the GPU machine: test/Cuda/device/gpu_check.sh
#
# Why: the GPU machine lent to this project (docs/gpu.md, "Running on the GPU
# machine") has CUDA, cuBLAS, NCCL and Python with numpy and torch, but no
# LLVM/MLIR, no Open MPI and no package registry, so nothing can be built or
# installed there. The models are compiled here (tp-compile runs ptxas: the
# cubins are sm_90 machine code) and carried with the launcher, the runtime
# and Open MPI's run-time files:
#
#   bin/      tp-run-cuda, tprt-cuda-unittests, tprt-cuda-probe, gemm_peak
#             (bench/gpu/gemm_peak.cu by nvcc), mpirun (Open MPI's orterun)
#   lib/      libtprt_cuda.so, libcudart.so.13 and every shared library these
#             and Open MPI need beyond glibc, libstdc++/libgcc_s and the CUDA
#             libraries the GPU machine has (cuBLAS, cuBLASLt, NCCL, driver)
#   ompi/     Open MPI's and PMIx's plugins and help files under their Debian
#             paths, found there through OPAL_PREFIX / PMIX_INSTALL_PREFIX
#   models/   each with its MLIR (m.mlir; a corpus graph's file name in
#             `source`: the graph stays here). tiny_gpt2, tiny_llama: .so files
#             (cuda; bf16 GEMMs; tp 2 for the refusal), weights, input, numpy
#             reference and the CPU backend's output computed here;
#             gpt2_small, llama7b: cuda .so files (m.f32.so, m.bf16.so), their
#             compile times and tpmlir.build arguments (build_args: their
#             weights are GBs, made there);
#             gen_gpt2, gen_llama, gen_llama1k: generating models (@prefill,
#             @decode, KV caches; docs/generation.md), cuda .so at tp 1, their
#             random weights (hf/model.safetensors), a prompt and the numpy
#             reference's new ids (prompt.npy, ids.npy, steps);
#             gen_llama7b: a generating Llama-7B-shaped model (m.f32.so,
#               m.masked.f32.so and m.masked.bf16.so with
#               --decode-attention masked, m.bf16.so), its build_args and
#               steps (weights made there)
#             corpus_bert_tiny, corpus_bert_base (when ../shared/external
#               is here): cuda .so at tp 1, the manifest, the flags of the
#               arguments made there and the cpu backend's output on them
#   BUNDLE.txt  the commit, the date and the sizes
#
# Environment: BUILD (default build), SKIP_BUILD=1 (use $BUILD as it is),
# BUNDLE (default gpu-bundle), GPT2_ARGS and LLAMA_ARGS (tpmlir.build
# arguments of the benchmark models; defaults: GPT-2-small with 12 layers, 2
# Llama-7B-shaped layers, 128 tokens), GEN_ARGS and GEN_STEPS (the generation
# benchmark: tpmlir.build arguments and new tokens; default 2 Llama-7B-shaped
# layers, vocabulary 32000, prompt 128, caches of 256, 128 new tokens),
# MAX_MB (default 56: the device tool carries at most 64 MiB with the working
# tree), PYTHON (default /usr/bin/python3), PYTHON_DLOPEN (default $PYTHON:
# the command that loads a model's shared object, the ASan runtime first in
# a sanitizer build).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
BUILD="${BUILD:-$ROOT/build}"
BUNDLE="${BUNDLE:-$ROOT/gpu-bundle}"
read -r -a GPT2_ARGS <<<"${GPT2_ARGS:---preset gpt2_small --layers 12 --seq 128}"
read -r -a LLAMA_ARGS <<<"${LLAMA_ARGS:---preset llama_like --layers 2 --seq 128 --d-model 4096 --heads 32 --kv-heads 32 --ffn 11008}"
read -r -a GEN_ARGS <<<"${GEN_ARGS:---preset llama_like --layers 2 --d-model 4096 --heads 32 --kv-heads 32 --ffn 11008 --vocab 32000 --seq 128 --generate 256 --names hf_llama}"
GEN_STEPS="${GEN_STEPS:-128}"
MAX_MB="${MAX_MB:-56}"
PYTHON="${PYTHON:-/usr/bin/python3}"
read -r -a PYTHON_DLOPEN <<<"${PYTHON_DLOPEN:-$PYTHON}"
MPIRUN=(timeout 300 mpirun --allow-run-as-root --oversubscribe)
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
die() { echo "gpu_bundle: FAILED: $*" >&2; exit 1; }
log() { echo "# gpu_bundle: $*" >&2; }

grep -q "TP_HAVE_CUDA:INTERNAL=ON" "$BUILD/CMakeCache.txt" 2>/dev/null \
  || die "$BUILD was not configured with the cuda backend (scripts/setup.sh with CUDA at /usr/local/cuda)"
CUDA_ROOT="$(sed -n 's/^TP_CUDA_TOOLKIT_ROOT:INTERNAL=//p' "$BUILD/CMakeCache.txt")"
[ "${SKIP_BUILD:-0}" = 1 ] || ninja -C "$BUILD" >&2
# Replace only an earlier bundle (or nothing).
if [ -e "$BUNDLE" ] && [ ! -f "$BUNDLE/BUNDLE.txt" ]; then
  die "$BUNDLE exists and is not a bundle (no BUNDLE.txt): not replacing it"
fi
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE"/{bin,lib,ompi,models}

# --- launcher, runtime, tests, GEMM replay ------------------------------------
cp "$BUILD/bin/tp-run-cuda" "$BUILD/runtime/cuda/test/tprt-cuda-unittests" \
   "$BUILD/runtime/cuda/test/tprt-cuda-probe" "$BUNDLE/bin/"
cp "$BUILD/lib/libtprt_cuda.so" "$BUNDLE/lib/"
log "nvcc bench/gpu/gemm_peak.cu"
"$CUDA_ROOT/bin/nvcc" -O2 -arch=sm_90 -ccbin g++-12 "$ROOT/bench/gpu/gemm_peak.cu" -lcublas -lcublasLt \
  -o "$BUNDLE/bin/gemm_peak"

# --- Open MPI: mpirun, plugins, help files (relocated with OPAL_PREFIX) --------
MULTIARCH=usr/lib/x86_64-linux-gnu
cp -L "$(readlink -f "$(command -v orterun)")" "$BUNDLE/bin/mpirun"
mkdir -p "$BUNDLE/ompi/$MULTIARCH" "$BUNDLE/ompi/usr/share"
cp -rL "/$MULTIARCH/openmpi" "/$MULTIARCH/pmix2" "$BUNDLE/ompi/$MULTIARCH/"
rm -rf "$BUNDLE/ompi/$MULTIARCH/openmpi/include" "$BUNDLE/ompi/$MULTIARCH/pmix2/include" \
       "$BUNDLE/ompi/$MULTIARCH"/*/lib/*.a
cp -rL /usr/share/openmpi "$BUNDLE/ompi/usr/share/"

# --- models ------------------------------------------------------------------------
compile() { "$BUILD/bin/tp-compile" "$@"; }
tiny() {  # tiny NAME LAYERS: everything, weights included, with the CPU output
  local name=$1 layers=$2 d="$BUNDLE/models/$1"
  mkdir -p "$d"
  "$PYTHON" -m tpmlir.build --preset "$name" --layers "$layers" -o "$d/m.mlir" \
    --weights "$d/w.safetensors" --input "$d/x.npy" --expected "$d/ref.npy"
  compile "$d/m.mlir" --backend cuda --tp-size 1 -o "$d/m.cuda.so"
  compile "$d/m.mlir" --backend cpu --tp-size 1 -o "$d/m.cpu.so"
  "${MPIRUN[@]}" -np 1 "$BUILD/bin/tp-run" "$d/m.cpu.so" --weights "$d/w.safetensors" \
    --input "$d/x.npy" --output "$d/y.cpu.npy" --quiet
  rm "$d/m.cpu.so"
}
log "tiny models (and their CPU backend outputs)"
tiny tiny_gpt2 4
tiny tiny_llama 2
compile "$BUNDLE/models/tiny_gpt2/m.mlir" --backend cuda --tp-size 2 -o "$BUNDLE/models/tiny_gpt2/m.cuda2.so"
compile "$BUNDLE/models/tiny_llama/m.mlir" --backend cuda --dtype bf16 --tp-size 1 \
  -o "$BUNDLE/models/tiny_llama/m.bf16.so"
# The same weights inline, as torch-mlir emits them: read from device copies.
"$PYTHON" -m tpmlir.build --preset tiny_llama --layers 2 --inline-weights \
  -o "$BUNDLE/models/tiny_llama/m.inline.mlir"
compile "$BUNDLE/models/tiny_llama/m.inline.mlir" --backend cuda --tp-size 1 \
  -o "$BUNDLE/models/tiny_llama/m.inline.so"

bench_model() {  # bench_model NAME DTYPES BUILD_ARGS...: the .so files and the arguments
  local name=$1 dtypes=$2 d="$BUNDLE/models/$1"; shift 2
  mkdir -p "$d"
  printf '%s\n' "$@" > "$d/build_args"
  "$PYTHON" -m tpmlir.build "$@" -o "$d/m.mlir"
  for dtype in $dtypes; do
    log "$name: tp-compile --backend cuda --dtype $dtype"
    local t0; t0=$(date +%s.%N)
    compile "$d/m.mlir" --backend cuda --dtype "$dtype" --tp-size 1 -o "$d/m.$dtype.so"
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b-a}' > "$d/compile_s.$dtype"
  done
}
bench_model gpt2_small f32 "${GPT2_ARGS[@]}"
bench_model llama7b "f32 bf16" "${LLAMA_ARGS[@]}"

# --- generation ----------------------------------------------------------------------
# Correctness: batch 2, prompt 8, caches of 32, the numpy reference's 16 new
# ids. Hugging Face directories with random weights (hf_generation.py; 2
# layers, vocabulary 96): GPT-2 with its head tied to an embedding scaled by
# 0.1, so that the ids vary; Llama with GQA and RoPE, and its checkpoint
# stored in BF16; Qwen3 (heads of 32 over a hidden size of 64, q_norm and
# k_norm); Phi-3 (q|k|v and gate|up fused); Gemma 2 (norms around the
# attention and the MLP, capped scores and logits, GeGLU); Gemma 3 (a
# sliding window of 4 on layer 0, two RoPE bases). And a Llama with a vocabulary of
# 1024, whose argmax is a split reduction (from 512 elements), as the
# benchmark's 32000 is.
gen_tiny() {  # gen_tiny NAME FAMILY [FLOATS] | gen_tiny NAME -- TPMLIR_BUILD_ARGS...
  local d="$BUNDLE/models/$1"; shift
  mkdir -p "$d/hf"
  if [ "$1" = -- ]; then
    shift
    "$PYTHON" -m tpmlir.build "$@" --generate 32 --seq 8 --batch 2 -o "$d/m.mlir" \
      --weights "$d/hf/model.safetensors" --input "$d/prompt.npy" --expected "$d/ids.npy" --steps 16
  else
    "$PYTHON" "$ROOT/test/Integration/Inputs/hf_generation.py" model "$d/hf" "$1" 32 96 "${2:-F32}"
    "$PYTHON" -m tpmlir.build --hf-config "$d/hf/config.json" --generate 32 --seq 8 --batch 2 \
      -o "$d/m.mlir" --input "$d/prompt.npy" --expected "$d/ids.npy" --steps 16
  fi
  echo 16 > "$d/steps"
  compile "$d/m.mlir" --backend cuda --tp-size 1 -o "$d/m.cuda.so"
}
log "generating models"
gen_tiny gen_gpt2 gpt2
gen_tiny gen_llama llama
gen_tiny gen_llama_bf16 llama BF16
gen_tiny gen_qwen3 qwen3
gen_tiny gen_phi3 phi3
gen_tiny gen_gemma2 gemma2
gen_tiny gen_gemma3 gemma3
gen_tiny gen_llama1k -- --preset tiny_llama --layers 2 --vocab 1024 --names hf_llama
# The benchmark: GEN_STEPS new tokens after a prompt of --seq (weights and
# prompt made there).
bench_model gen_llama7b "f32 bf16" "${GEN_ARGS[@]}"
echo "$GEN_STEPS" > "$BUNDLE/models/gen_llama7b/steps"
# The same model with a decode step of static shapes whose kernels load the
# position themselves: the host reads no device memory within a step.
"$PYTHON" -m tpmlir.build "${GEN_ARGS[@]}" --decode-attention masked \
  -o "$BUNDLE/models/gen_llama7b/m.masked.mlir"
# masked_rows0: bf16 without tp-row-kernels, to compare in the same run (and
# to tell whether the row kernels are what fails where a check does);
# masked_stack0: bf16 with a GEMM per weight (no tp-stack-weights), likewise.
for variant in masked.f32 masked.bf16 masked_rows0.bf16 masked_stack0.bf16; do
  dtype=${variant#*.} flags=()
  [ "${variant%.*}" = masked_rows0 ] && flags=(--cuda-row-kernels=false)
  [ "${variant%.*}" = masked_stack0 ] && flags=(--stack-weights=false)
  log "gen_llama7b, --decode-attention masked: tp-compile --backend cuda --dtype $dtype ${flags[*]}"
  t0=$(date +%s.%N)
  compile "$BUNDLE/models/gen_llama7b/m.masked.mlir" --backend cuda --dtype "$dtype" --tp-size 1 \
    "${flags[@]}" -o "$BUNDLE/models/gen_llama7b/m.$variant.so"
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b-a}' \
    > "$BUNDLE/models/gen_llama7b/compile_s.$variant"
done

# --- corpus graphs (../shared/external, SOURCES.md there; skipped without it) ---------
# torch-mlir's BERTs as the cuda backend compiles them: BERT-tiny reads an
# i64 constant (its position ids) from device memory, BERT-base writes a
# scalar by a kernel of one thread (a loop-less op). Their arguments are
# made there (BERT-base's weights are 440 MB) by corpus_e2e.py --portable,
# whose values do not depend on numpy's version, from the manifest saved
# here; the cpu backend's output on the same values is made here. The graphs
# themselves stay here.
EXTERNAL="$ROOT/../shared/external"
CORPUS_E2E="$ROOT/test/Integration/Inputs/corpus_e2e.py"
corpus() {  # corpus NAME FILE ARGUMENT-FLAGS...
  local d="$BUNDLE/models/$1" f="$EXTERNAL/$2" w n inputs=(); shift 2
  w="$(mktemp -d)"
  mkdir -p "$d"
  printf '%s\n' "${f##*/}" > "$d/source"
  printf '%s\n' "$@" > "$d/argument_flags"
  compile "$f" --backend cuda --tp-size 1 -o "$d/m.cuda.so"
  compile "$f" --backend cpu --tp-size 1 -o "$w/m.cpu.so"
  "${PYTHON_DLOPEN[@]}" "$CORPUS_E2E" manifest "$d/m.cuda.so" > "$d/manifest.json"
  "$PYTHON" "$CORPUS_E2E" arguments "$d/manifest.json" "$w/a" --portable "$@"
  while read -r n; do inputs+=(--input "$n=$w/a.$n.npy"); done < "$w/a.inputs"
  "${MPIRUN[@]}" -np 1 "$BUILD/bin/tp-run" "$w/m.cpu.so" --weights "$w/a.safetensors" \
    "${inputs[@]}" --output "$d/y.cpu.npy" --quiet
  rm -rf "$w"
}
if [ -d "$EXTERNAL" ]; then
  log "corpus graphs (and their CPU backend outputs)"
  corpus corpus_bert_tiny torchmlir_ts_bert_tiny.tp.mlir --ids-below 1000
  corpus corpus_bert_base torchmlir_fx_bert_base.tp.mlir --ids-below 2
else
  log "no $EXTERNAL: the corpus graphs are left out"
fi

# --- shared libraries beyond glibc and the GPU machine's CUDA ---------------------
log "shared libraries"
"$PYTHON" - "$BUNDLE" <<'PY'
import os, shutil, subprocess, sys
bundle = sys.argv[1]
# On every Linux system (glibc, the C++ runtime python and torch use) or
# provided by the GPU machine's CUDA installation (cudart is carried: small).
skip = {"linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6",
        "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
        "libresolv.so.2", "libstdc++.so.6", "libgcc_s.so.1", "libcuda.so.1",
        "libcublas.so.13", "libcublasLt.so.13", "libnccl.so.2"}
def elf(p):
    with open(p, "rb") as f:
        return f.read(4) == b"\x7fELF"
todo = [os.path.join(d, f) for d, _, fs in os.walk(bundle) for f in fs]
todo = [p for p in todo if os.path.isfile(p) and elf(p)]
seen, lib = set(), os.path.join(bundle, "lib")
while todo:
    out = subprocess.run(["ldd", todo.pop()], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        name = os.path.basename(parts[0]) if parts else ""
        if not name or name in skip or name in seen:
            continue
        seen.add(name)
        if "not found" in line:
            sys.exit(f"gpu_bundle: {name} not found here (ldd)")
        if len(parts) >= 3 and parts[1] == "=>":
            dest = os.path.join(lib, name)
            if not os.path.exists(dest):
                shutil.copy(os.path.realpath(parts[2]), dest)
            todo.append(dest)
print(f"# gpu_bundle: {len(seen)} libraries", file=sys.stderr)
PY

# --- what it is, and whether it travels --------------------------------------------
MB=$(du -sm "$BUNDLE" | cut -f1)
{
  echo "tp-mlir GPU bundle for test/Cuda/device/gpu_check.sh"
  echo "commit: $(git -C "$ROOT" rev-parse HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . ':!docs' || echo ' (with uncommitted changes)')"
  echo "made: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n)"
  echo "size: $MB MB"
  (cd "$BUNDLE" && du -sm bin lib ompi models/*)
} > "$BUNDLE/BUNDLE.txt"
cat "$BUNDLE/BUNDLE.txt" >&2
[ "$MB" -le "$MAX_MB" ] || die "$BUNDLE is $MB MB, over MAX_MB=$MAX_MB (the device tool carries 64 MiB in all)"
log "ready: carry '${BUNDLE#"$ROOT"/}' and run test/Cuda/device/gpu_check.sh on the GPU machine"

"""docs/bench-gpu.md from test/Cuda/device/gpu_check.sh's work folder.

    python3 bench/gpu/gpu_report.py WORK DOC GPU ITERS BUNDLE

WORK holds one folder per benchmark (gpt2_small, llama7b, llama7b_bf16) with
tp-run-cuda's report.json, gemm_peak.json, torch.json (when PyTorch ran),
compare.txt, dtype.txt and compile_s.txt (a file is missing where its step
failed), and failed.txt, the checks that failed; the generation benchmark's
folders (gen_llama7b, gen_llama7b_bf16: tp-run-cuda --generate's
report.json, torch.json from torch_generate_gpu.py, ids.txt) and hbm.json
(hbm_bandwidth.py); compare-gen_*.txt, the tiny generations; BUNDLE is
test/Cuda/device/gpu_bundle.sh's folder (BUNDLE.txt, models/*/build_args). DOC '-'
prints only.
"""
from __future__ import annotations

import datetime
import json
import os
import sys

import numpy as np


def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return None


def _read(path, default="n/a"):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


BENCHES = (("gpt2_small", "gpt2_small", "GPT-2-small"),
           ("llama7b", "llama7b", "Llama-7B-shaped"),
           ("llama7b_bf16", "llama7b", "Llama-7B-shaped"))


def _build_args(bundle: str, model: str) -> list[str]:
    return _read(os.path.join(bundle, "models", model, "build_args")).split()


def rows(work: str, bundle: str) -> list[str]:
    out = []
    for name, model, base in BENCHES:
        args = _build_args(bundle, model)
        layers = args[args.index("--layers") + 1] if "--layers" in args else "?"
        label = f"{base}, {layers} layers"
        d = os.path.join(work, name)
        run, peak, torch_run = (_load(f"{d}/report.json"), _load(f"{d}/gemm_peak.json"),
                                _load(f"{d}/torch.json"))
        torch_tps = f"{torch_run['tokens_per_s']:.0f}" if torch_run else "n/a"
        if run is None:
            out.append(f"| {label} | {_read(f'{d}/dtype.txt')} | failed (gpu_check.log) "
                       f"|||||| {torch_tps} | {_read(f'{d}/compile_s.txt')} s |")
            continue
        g = run["gemm"]
        inside = g["gflops"] / 1e3
        best = f"{peak['same_dtype_tflops']:.2f}" if peak else "n/a"
        ratio = f"{inside / peak['same_dtype_tflops'] * 100:.0f}%" if peak else "n/a"
        out.append(f"| {label} | {_read(f'{d}/dtype.txt')} | {run['tokens_per_s']:.0f} | "
                   f"{run['forward_s']['median'] * 1e3:.3f} | {g['share_of_forward'] * 100:.0f}% | "
                   f"{inside:.2f} | {best} | {ratio} | {torch_tps} | "
                   f"{_read(f'{d}/compile_s.txt')} s |")
        compare = _read(f'{d}/compare.txt').replace("|", "\\|")  # max|diff|: not a cell
        out.append(f"|  |  | {compare} ||||||||")
    return out


# (folder, model, variant): the masked decode step reads nothing on the host.
GEN_BENCHES = (("gen_llama7b", "Llama-7B-shaped", ""),
               ("gen_llama7b_masked", "Llama-7B-shaped", ", `--decode-attention masked`"),
               ("gen_llama7b_graph", "Llama-7B-shaped", ", masked, `tp-run-cuda --cuda-graph`"),
               ("gen_llama7b_bf16", "Llama-7B-shaped", ""),
               ("gen_llama7b_bf16_graph", "Llama-7B-shaped", ", masked, `tp-run-cuda --cuda-graph`"),
               ("gen_llama7b_bf16_graph_rows0", "Llama-7B-shaped",
                ", masked, `--cuda-graph`, `tp-compile --cuda-row-kernels=false`"),
               ("gen_llama7b_bf16_graph_stack0", "Llama-7B-shaped",
                ", masked, `--cuda-graph`, `tp-compile --stack-weights=false`"))
NOMINAL_GBS = 4800.0  # H200 HBM3e, NVIDIA's datasheet


def _gen_config(bundle: str):
    """The generation benchmark's ModelConfig (its tpmlir.build arguments), or None."""
    try:
        from tpmlir.build import _parser, config_from_args
        return config_from_args(_parser().parse_args(_build_args(bundle, "gen_llama7b")))
    except (ImportError, SystemExit, ValueError, OSError):
        return None


def _read_bytes(cfg, dtype: str) -> float:
    """Bytes of the weights a decode step reads (tp 1), from the model's
    shapes: every weight once, bf16 (2 bytes) where tp-compile --dtype bf16
    stores it so (the matrices only GEMMs read), else fp32, but the tables of
    which one row is looked up (an untied embedding, learned positions).
    Not tp-run's weights_mib_per_rank, which counts the resident buffers: the
    LM head twice when @prefill keeps it whole and @decode cuts it."""
    from tpmlir.params import param_specs
    total = 0
    for name, shape in param_specs(cfg):
        if (name == "wte.weight" and not cfg.tie_embeddings) or name == "wpe.weight" \
                or name.startswith("rope."):
            continue
        bf16 = dtype == "bf16" and len(shape) == 2 and name != "wte.weight"
        total += int(np.prod(shape)) * (2 if bf16 else 4)
    return float(total)


def gen_rows(work: str, bundle: str, hbm) -> tuple[list[str], str]:
    """The generation benchmark's table rows and the line above them."""
    cfg = _gen_config(bundle)
    measured = hbm["copy_gbs"] if hbm else None
    out, shape = [], ""
    for name, base, variant in GEN_BENCHES:
        d = os.path.join(work, name)
        if not os.path.isdir(d):
            continue
        label = (f"{base}, {cfg.layers} layers, vocabulary {cfg.vocab}" if cfg else base) + variant
        dtype = _read(f"{d}/dtype.txt")
        run, torch_run = _load(f"{d}/report.json"), _load(f"{d}/torch.json")
        torch_cells = (f"{torch_run['ttft_s'] * 1e3:.2f} | {torch_run['decode_tokens_per_s']:.0f}"
                       if torch_run else "n/a | n/a")
        ids = _read(f"{d}/ids.txt").replace("ids vs PyTorch's: ", "").replace("|", "\\|")
        if run is None:
            out.append(f"| {label} | {dtype} | failed (gpu_check.log) |||||||| {torch_cells} | | {ids} |")
            continue
        shape = (f"Batch {run['batch']}, prompt {run['prompt_tokens']} tokens, {run['new_tokens']} "
                 f"new tokens")
        graph = run.get("cuda_graph")
        if graph:  # whether the graph ran, in the model's cell
            label += (f" ({graph['replayed_calls']} of {graph['decode_calls']} steps replayed)"
                      if not graph["why_not"] else
                      f" (graph not used: {graph['why_not'].replace('|', '/')})")
        tps = run["decode_tokens_per_s"]
        read = _read_bytes(cfg, dtype) if cfg else None
        bound = measured * 1e9 / read if measured and read else None
        nominal = NOMINAL_GBS * 1e9 / read if read else None
        vs_torch = f"{tps / torch_run['decode_tokens_per_s']:.2f}x" if torch_run else "n/a"
        out.append(f"| {label} | {dtype} | {run['ttft_s'] * 1e3:.2f} | {run['decode_step_s'] * 1e3:.3f} | "
                   f"{tps:.0f} | {f'{read / 2**20:.1f}' if read else 'n/a'} "
                   f"(+{run['cache_mib_per_rank']:.1f} cache; {run['weights_mib_per_rank']:.1f} resident) | "
                   f"{f'{bound:.0f}' if bound else 'n/a'} | "
                   f"{f'{tps / bound * 100:.0f}%' if bound else 'n/a'} | "
                   f"{f'{nominal:.0f}' if nominal else 'n/a'} | "
                   f"{f'{tps / nominal * 100:.0f}%' if nominal else 'n/a'} | {torch_cells} | {vs_torch} | {ids} |")
    if not out:
        return [], ""
    bw = (f"{measured:.0f} GB/s measured on this GPU (bench/gpu/hbm_bandwidth.py: device-to-device "
          f"copies of {hbm['bytes'] // 2**20} MiB, bytes read + written over the time; a sum reads "
          f"{hbm['read_sum_gbs']:.0f} GB/s)" if measured else
          "not measured (PyTorch did not see the GPU)")
    return out, (f"{shape or 'Every run failed'}. Memory bandwidth: {bw}; nominal "
                 f"{NOMINAL_GBS / 1e3:.1f} TB/s (the H200's datasheet, not measured)")


def main(argv: list[str]) -> int:
    work, doc, gpu, iters, bundle = argv
    failed = [line for line in _read(os.path.join(work, "failed.txt"), "").splitlines() if line]
    def sanitized(tool: str) -> list[str]:
        return sorted(f[len(tool) + 1:-len(".txt")] for f in os.listdir(work)
                      if f.startswith(tool + "-") and f.endswith(".txt"))
    memchecked = sanitized("memcheck")
    memcheck = (f"compute-sanitizer memcheck of {', '.join(memchecked)} (one forward pass each"
                + ("; gen_llama: a generation of 4 ids" if "gen_llama" in memchecked else "") + "), "
                if memchecked else "")
    for tool in ("racecheck", "synccheck"):
        if sanitized(tool):
            memcheck += f"{tool} of {', '.join(sanitized(tool))} (a generation of 2 ids), "
    tiny_gen = [_read(os.path.join(work, f"compare-{n}.txt"), "")
                for n in ("gen_gpt2", "gen_llama", "gen_llama1k")]
    tiny_gen = ("tiny GPT-2 and Llama (vocabulary 96, and 1024) generating the numpy reference's ids "
                f"with tp-run-cuda --generate ({tiny_gen[0].replace('same ids: ', '')} each), "
                if all(tiny_gen) else "")
    corpus = [n for n in ("corpus_bert_tiny", "corpus_bert_base")
              if _read(os.path.join(work, f"compare-{n}-cpu.txt"), "")]
    corpus = ("torch-mlir's " + " and ".join(n.replace("corpus_bert_", "BERT-") for n in corpus)
              + " (../shared/external) vs the CPU backend's output, " if corpus else "")
    gen_lines, gen_note = gen_rows(work, bundle, _load(os.path.join(work, "hbm.json")))
    checks = ("Every check passed: the runtime's GPU unit tests, tiny GPT-2 and Llama vs numpy and vs "
              "the CPU backend's output (Llama also in bf16 and with its weights inline), the tp-2 "
              "model refused on one GPU, " + corpus + tiny_gen + memcheck
              + ("the outputs above vs numpy and the fp32 generation's ids vs PyTorch's."
                 if os.path.exists(os.path.join(work, "gen_llama7b", "ids.txt"))
                 else "and the outputs above vs numpy.") if not failed else
              "**Checks that FAILED** (see gpu_check.log): " + "; ".join(failed) + ".")
    made = [line for line in _read(os.path.join(bundle, "BUNDLE.txt")).splitlines()
            if line.startswith(("commit:", "made:"))]
    models = "\n".join(f"- {model}: `python3 -m tpmlir.build {' '.join(_build_args(bundle, model))}`"
                       for model in dict.fromkeys(m for _, m, _ in BENCHES))
    text = f"""# GPU benchmark (cuda backend, tp 1)

Commands: `test/Cuda/device/gpu_bundle.sh` on a machine without a GPU, then on the GPU machine
`test/Cuda/device/gpu_check.sh` (ITERS={iters}), {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC.
Bundle: {"; ".join(made) or "n/a"}.
GPU: {gpu}. fp32 activations; GEMMs fp32 (cuBLAS, TF32 off) or bf16 operands with fp32
accumulation (`tp-compile --dtype bf16`); batch 1; shapes below.

| model | GEMM dtype | tokens/s | forward ms (median) | GEMM share | GEMM TFLOP/s in model | best cuBLAS TFLOP/s, same calls | ratio | PyTorch eager tokens/s (same dtype) | compile (here) |
|---|---|---|---|---|---|---|---|---|---|
""" + "\n".join(rows(work, bundle)) + f"""

Models (random weights made on the GPU machine):
{models}

- GEMM rate in the model: the runtime's cuBLAS calls timed with CUDA events (tp-run-cuda's report);
  best: the same calls (TPRT_GEMM_LOG) replayed alone by bench/gpu/gemm_peak.cu, best of
  CUBLAS_GEMM_DEFAULT and DEFAULT_TENSOR_OP, in the same input type, weighted by their count.
- A ratio above 100% (small GEMMs, such as GPT-2-small's attention at 128 tokens) means the
  replay is bound by launches: its back-to-back calls of a ~15 us GEMM wait for the host between
  calls, while in the model the GPU runs behind the host and the events time execution only.
- bf16: weights only GEMMs read are stored in bf16 (converted once when uploaded); the GEMM
  time excludes the kernels that round the other operands (activations) to bf16 in every
  forward pass; they are in the forward time.
- {checks}
"""
    if gen_lines:
        text += f"""
## Generation (`tp-run-cuda --generate`, tp 1)

{gen_note}.

| model | GEMM dtype | first token ms | decode step ms (median) | decode tokens/s | weights read per step, MiB | HBM bound tokens/s (measured bandwidth) | of bound | bound at nominal 4.8 TB/s | of nominal | PyTorch eager first token ms | PyTorch eager decode tokens/s | vs PyTorch | ids vs PyTorch's (same dtype) |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
""" + "\n".join(gen_lines) + f"""

Model (random weights made on the GPU machine):
- gen_llama7b: `python3 -m tpmlir.build {' '.join(_build_args(bundle, 'gen_llama7b'))}`

- tp-run-cuda: medians over {_read(os.path.join(work, "gen_iters.txt"), "the timed")} generations after
  one; first token: the prefill and its id on the host; decode step: every step after it, each a
  launch per kernel (in the `--cuda-graph` rows: the step replayed as one CUDA graph) and the
  next id copied to the host.
- Weights read per step: every weight once as stored (bf16: the matrices only GEMMs read, at 2
  bytes; norms and the embedding fp32) but the embedding table, of which one row is looked up,
  computed from the shapes; the bound is those bytes over the bandwidth. The cache is read whole
  every step (masked positions too): listed apart, not in the bound. Resident: tp-run-cuda's
  weights_mib_per_rank, which counts the LM head twice when @prefill keeps it whole and @decode
  cuts it (two buffers: the functions share a weight only when its cut agrees).
- PyTorch eager: python/tpmlir/torch_reference.py's Llama (written from Hugging Face's, its cache
  grown by concatenation) on the GPU by bench/gpu/torch_generate_gpu.py, TF32 off; bf16: weights
  and activations in bf16. Each new id copied to the host, as tp-run-cuda does.
"""
    if doc != "-":
        with open(doc, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

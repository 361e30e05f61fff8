"""docs/bench-gpu.md from test/Cuda/device/gpu_check.sh's work folder.

    python3 bench/gpu/gpu_report.py WORK DOC GPU ITERS BUNDLE

WORK holds one folder per benchmark (gpt2_small, llama7b, llama7b_bf16) with
tp-run-cuda's report.json, gemm_peak.json, torch.json (when PyTorch ran),
compare.txt, dtype.txt and compile_s.txt (a file is missing where its step
failed), and failed.txt, the checks that failed; BUNDLE is
test/Cuda/device/gpu_bundle.sh's folder (BUNDLE.txt, models/*/build_args). DOC '-'
prints only.
"""
from __future__ import annotations

import datetime
import json
import os
import sys


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


def main(argv: list[str]) -> int:
    work, doc, gpu, iters, bundle = argv
    failed = [line for line in _read(os.path.join(work, "failed.txt"), "").splitlines() if line]
    memchecked = sorted(f[len("memcheck-"):-len(".txt")] for f in os.listdir(work)
                        if f.startswith("memcheck-") and f.endswith(".txt"))
    memcheck = (f"compute-sanitizer memcheck of {', '.join(memchecked)} (one forward pass each), "
                if memchecked else "")
    checks = ("Every check passed: the runtime's GPU unit tests, tiny GPT-2 and Llama vs numpy and vs "
              "the CPU backend's output (Llama also in bf16 and with its weights inline), the tp-2 "
              "model refused on one GPU, " + memcheck + "and the outputs above vs numpy." if not failed else
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
    if doc != "-":
        with open(doc, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

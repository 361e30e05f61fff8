"""PyTorch eager generation with a KV cache on the GPU: tpmlir.torch_reference's model.

    PYTHONPATH=python python3 bench/gpu/torch_generate_gpu.py --weights w.safetensors \
        --prompt prompt.npy --steps 128 [--dtype f32|bf16] [--warmup 1] [--iters 3] \
        [--json out.json] [--ids ids.npy] [--device cuda] -- TPMLIR_BUILD_ARGS...

The model is the one `python -m tpmlir.build TPMLIR_BUILD_ARGS` describes (a
generating model under Hugging Face names, `--names hf_llama` or
`--hf-config`), run by python/tpmlir/torch_reference.py (written from
Hugging Face's LlamaForCausalLM / GPT2LMHeadModel, independent of the
builder), its cache growing by concatenation as `transformers` does. fp32 with
TF32 off (as tp-run-cuda's GEMMs); bf16: weights and activations bf16 (RoPE's
tables cast to bf16), fp32 accumulation inside cuBLAS. Greedy, one sequence
batch as the prompt gives; each new id is copied to the host before the next
step, as tp-run does. Times: the first token (prefill and its argmax, from the
prompt's upload to the id on the host) and each decode step, like
`tp-run --generate`'s report: ttft_s the median over the timed generations,
decode_step_s the median over all their decode steps. Writes the new ids of the
last generation (--ids). Exits 2 when the device is not there.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cpu"))  # benchlib
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from benchlib import generate_stats, write_json  # noqa: E402
from tpmlir import hf, torch_reference  # noqa: E402
from tpmlir.build import _parser, config_from_args  # noqa: E402
from tpmlir.checkpoint import load_safetensors  # noqa: E402


class _Llama(torch_reference.Llama):
    """RoPE's cos/sin (computed in fp32) in the activations' dtype, so that
    bf16 keys and queries stay bf16 (Hugging Face casts them the same way)."""

    def _rope(self, x, cos, sin):
        return super()._rope(x, cos.to(x.dtype), sin.to(x.dtype))


def _model(config: dict, state: dict, device: str, dtype):
    if config["model_type"] in torch_reference.LLAMA_TYPES:
        model = _Llama(config, state)
        model.inv_freq = model.inv_freq.to(device)
    else:
        model = torch_reference.load(config, state)
    model.w = {k: v.to(device, dtype) for k, v in model.w.items()}
    return model


def _sync(device: str):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


@torch.inference_mode()
def generate(model, prompt: np.ndarray, steps: int, device: str):
    """New ids [B, steps], the first token's time and each decode step's."""
    _sync(device)
    t0 = time.perf_counter()
    ids = torch.as_tensor(prompt).to(device)
    logits, past = model.forward(ids, None)
    ids = torch.argmax(logits[:, -1], dim=-1, keepdim=True)
    out = [ids.cpu()]  # waits for the GPU
    ttft = time.perf_counter() - t0
    step_s = []
    for _ in range(steps - 1):
        t = time.perf_counter()
        logits, past = model.forward(ids, past)
        ids = torch.argmax(logits[:, -1], dim=-1, keepdim=True)
        out.append(ids.cpu())
        step_s.append(time.perf_counter() - t)
    return torch.cat(out, dim=1).numpy(), ttft, step_s


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    build_args = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True)
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json")
    ap.add_argument("--ids")
    args = ap.parse_args(own)
    device = args.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("torch_generate_gpu: torch has no CUDA device")
        return 2
    cfg = config_from_args(_parser().parse_args(build_args))
    if cfg.names not in ("hf_llama", "hf_gpt2"):
        print(f"torch_generate_gpu: names={cfg.names!r}: build the model with --names hf_llama "
              "(or --hf-config) so that its checkpoint is a Hugging Face state dict")
        return 1
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if hasattr(torch, "set_default_device"):  # torch >= 2: arange, masks on the GPU
            torch.set_default_device(device)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    model = _model(hf.hf_config(cfg), load_safetensors(args.weights), device, dtype)
    prompt = np.load(args.prompt)
    ttfts, steps = [], []
    for i in range(args.warmup + args.iters):
        ids, ttft, step_s = generate(model, prompt, args.steps, device)
        if i >= args.warmup:
            ttfts.append(ttft)
            steps.extend(step_s)
    if not steps:
        print("torch_generate_gpu: --steps 1 has no decode step to time")
        return 2
    result = {"impl": "torch-eager-generate", "dtype": args.dtype, "torch": torch.__version__,
              "device": torch.cuda.get_device_name() if device.startswith("cuda") else device,
              "batch": int(prompt.shape[0]), "prompt_tokens": int(prompt.shape[1]),
              "new_tokens": args.steps, "iters": args.iters,
              **generate_stats(ttfts, steps, int(prompt.shape[0])),
              "decode_step_min_s": min(steps)}
    ttft, step = result["ttft_s"], result["decode_step_s"]
    print(f"torch_generate_gpu: {args.dtype}, prompt {prompt.shape[1]}, {args.steps} new: "
          f"first token {ttft * 1e3:.3f} ms, decode step {step * 1e3:.3f} ms "
          f"({result['decode_tokens_per_s']:.1f} tokens/s per sequence)")
    if args.ids:
        np.save(args.ids, ids.astype(np.int64))
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Greedy generation in PyTorch eager with a KV cache, timed on one thread.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=python /usr/bin/python3 \
        bench/cpu/torch_generate.py --batch 1 --weights w.safetensors \
        --prompt prompt.npy --expected ids.npy [--iters 1] [--json out.json]
    ... bench/cpu/torch_generate.py --model-dir DIR --steps K --prompt prompt.npy \
        --expected ids.npy

The model is python/tpmlir/torch_reference.py's GPT2 (written from Hugging
Face's GPT2LMHeadModel, independent of the builder and of the numpy
reference), over the checkpoint of bench/cpu/generate_inputs.py renamed to
Hugging Face's names; or, with --model-dir, the model of a Hugging Face
directory (its config.json and checkpoint, BF16 widened to float32:
bench/cpu/hf_model_inputs.py), the batch and prompt length the prompt's. Its cache is transformers' default one: K and V per
layer grown by torch.cat every step. As transformers' generate() does, only
the last position goes through the LM head (logits_to_keep=1).

A generation: the prompt [B, S] through the model (prefill) and the argmax of
the last position: the time to first token; then --steps - 1 decode steps, each
one token per sequence and its argmax, each timed. --warmup untimed short
generations (4 new tokens), then --iters timed ones; every timed generation's
ids must equal --expected, else it exits 1 and writes nothing. Writes JSON:
ttft_s (median over iterations), decode_step_s (median over every decode step
of every iteration, and all of them), decode_tokens_per_s (per sequence:
1 / median step) and decode_tokens_per_s_batch (B / median step).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from benchlib import generate_stats, write_json  # noqa: E402
from generate_inputs import add_model_args, model_config  # noqa: E402
from tpmlir import hf, torch_reference  # noqa: E402
from tpmlir.checkpoint import load_model_dir, load_safetensors, read_json  # noqa: E402

WARMUP_TOKENS = 4


@torch.inference_mode()
def generate(model, prompt: torch.Tensor, steps: int):
    """New ids [B, steps], the time to first token and each decode step's time."""
    start = time.perf_counter()
    logits, past = model.forward(prompt, None, logits_to_keep=1)
    ids = torch.argmax(logits[:, -1], dim=-1, keepdim=True)
    ttft = time.perf_counter() - start
    out, step_s = [ids], []
    for _ in range(steps - 1):
        start = time.perf_counter()
        logits, past = model.forward(ids, past, logits_to_keep=1)
        ids = torch.argmax(logits[:, -1], dim=-1, keepdim=True)
        step_s.append(time.perf_counter() - start)
        out.append(ids)
    return torch.cat(out, dim=1).numpy(), ttft, step_s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_model_args(ap)
    ap.add_argument("--weights")
    ap.add_argument("--model-dir", help="a Hugging Face model directory (instead of the model args and --weights)")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    if args.steps < 2 or args.iters < 1 or args.warmup < 0:
        ap.error("--steps must be at least 2 (one decode step), --iters at least 1")
    if (args.weights is None) == (args.model_dir is None):
        ap.error("give --weights (GPT-2-small shapes) or --model-dir")
    torch.set_num_threads(args.threads)
    prompt_np = np.load(args.prompt)
    expected = np.load(args.expected)
    if args.model_dir:
        batch, seq = prompt_np.shape
        model = torch_reference.load(read_json(os.path.join(args.model_dir, "config.json")),
                                     load_model_dir(args.model_dir))
    else:
        cfg = model_config(args)
        batch, seq = cfg.batch, cfg.seq
        twin = cfg.replace(names="hf_gpt2")  # the same model under Hugging Face's names
        arrays = load_safetensors(args.weights)
        model = torch_reference.load(hf.hf_config(twin), hf.to_checkpoint(twin, arrays))
    if prompt_np.shape != (batch, seq) or expected.shape != (batch, args.steps):
        print(f"torch_generate: prompt {prompt_np.shape} / expected {expected.shape} do not match "
              f"batch {batch}, prompt {seq}, {args.steps} steps")
        return 1
    prompt = torch.from_numpy(prompt_np.astype(np.int64))

    for _ in range(args.warmup):
        generate(model, prompt, min(WARMUP_TOKENS, args.steps))
    ttfts, steps = [], []
    for it in range(args.iters):
        ids, ttft, step_s = generate(model, prompt, args.steps)
        if not np.array_equal(ids, expected):
            bad = np.argwhere(ids != expected)[0]
            print(f"torch_generate: MISMATCH in iteration {it + 1}: sequence {bad[0]}, new token "
                  f"{bad[1]}: {ids[bad[0], bad[1]]} instead of {expected[bad[0], bad[1]]}")
            return 1
        ttfts.append(ttft)
        steps.extend(step_s)

    result = {"impl": "torch", "torch": torch.__version__, "numpy": np.__version__,
              "python": platform.python_version(), "threads": torch.get_num_threads(),
              "batch": batch, "prompt": seq, "new_tokens": args.steps, "iters": args.iters,
              "ids_equal_expected": True, **generate_stats(ttfts, steps, batch)}
    med = result["decode_step_s"]
    print(f"torch_generate: OK ids equal; batch {batch}: TTFT {result['ttft_s'] * 1e3:.1f} ms, "
          f"decode step {med * 1e3:.2f} ms median ({len(steps)} steps), "
          f"{result['decode_tokens_per_s']:.2f} tokens/s per sequence, "
          f"{result['decode_tokens_per_s_batch']:.2f} for the batch ({torch.get_num_threads()} thread)")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

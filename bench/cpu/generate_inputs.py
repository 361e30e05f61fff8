"""The generation benchmark's checkpoint, prompt and expected ids.

    PYTHONPATH=python /usr/bin/python3 bench/cpu/generate_inputs.py --batch 8 \
        [--sliding-window N] [--weights w.safetensors] --prompt prompt.npy --expected ids.npy [--json info.json]

GPT-2-small shapes (`--preset gpt2_small`, 12 layers) as a generating model:
vocabulary --vocab, cache --generate positions, a prompt of --seq random ids
per sequence and --steps new ids. The same weights as `python -m tpmlir.build
... --weights` writes (reference.random_weights, seed 0), except that the
tied embedding is scaled by 0.1, as python/tests/test_generate.py does: on
unit-scale embeddings the tied head predicts one token again and again (the
128 new ids would all be equal, and a wrong cache could go unnoticed); scaled,
the continuation changes token several times. The prompt is
reference.random_input(cfg, 1) (what tpmlir.build writes for the same batch),
the expected ids reference.generate's (numpy, independent of PyTorch and of
the compiled code). --json records the ids' variety and the smallest margin of
the best logit over the second along the way (ids compared across
implementations mean something only when it is well above their rounding).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from benchlib import write_json  # noqa: E402  (this folder)
from tpmlir import reference  # noqa: E402
from tpmlir.builder import describe  # noqa: E402
from tpmlir.checkpoint import save_safetensors  # noqa: E402
from tpmlir.config import preset  # noqa: E402
from tpmlir.hf import to_checkpoint  # noqa: E402

EMBEDDING_SCALE = 0.1


def add_model_args(ap: argparse.ArgumentParser) -> None:
    """The model's shape, shared with torch_generate.py."""
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--pad-vocab", type=int, default=0,
                    help="the graph's vocabulary padded to a multiple of this (the checkpoint's is not)")
    ap.add_argument("--generate", type=int, default=256, help="S_max, the cache's positions")
    ap.add_argument("--seq", type=int, default=128, help="prompt length")
    ap.add_argument("--steps", type=int, default=128, help="new tokens")
    ap.add_argument("--batch", type=int, default=1)


def model_config(args):
    window = getattr(args, "sliding_window", 0)  # generate_inputs.py's own option
    return preset("gpt2_small", layers=args.layers, vocab=args.vocab, pad_vocab=args.pad_vocab,
                  generate=args.generate, seq=args.seq, batch=args.batch, sliding_window=window,
                  sliding_layers=tuple(range(args.layers)) if window else ())


def weights(cfg) -> dict:
    w = reference.random_weights(cfg, 0)
    w["wte.weight"] = w["wte.weight"] * np.float32(EMBEDDING_SCALE)
    return w


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_model_args(ap)
    ap.add_argument("--sliding-window", type=int, default=0,
                    help="every layer sees its last N positions only (a ring cache of N rows)")
    ap.add_argument("--weights")
    ap.add_argument("--prompt", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    cfg = model_config(args)
    w = weights(cfg)
    if args.weights:
        save_safetensors(args.weights, to_checkpoint(cfg, w),
                         {"config": describe(cfg), "note": f"wte scaled by {EMBEDDING_SCALE}"})
    prompt = reference.random_input(cfg, 1)
    ids, logits = reference.generate(cfg, w, prompt, args.steps)
    np.save(args.prompt, prompt)
    np.save(args.expected, ids)
    top = np.sort(logits, axis=-1)
    gap = top[..., -1] - top[..., -2]
    info = {"batch": cfg.batch, "steps": args.steps, "distinct_ids": [len(set(r.tolist())) for r in ids],
            "min_top2_gap": float(gap.min()), "max_abs_logit": float(np.abs(logits[np.isfinite(logits)]).max())}  # not the padded -inf
    print(f"generate_inputs: batch {cfg.batch}, {args.steps} new ids, distinct per sequence "
          f"{info['distinct_ids']}, smallest top-2 logit gap {info['min_top2_gap']:.3g} "
          f"(max |logit| {info['max_abs_logit']:.3g})")
    write_json(args.json, info)
    return 0


if __name__ == "__main__":
    sys.exit(main())

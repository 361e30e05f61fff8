"""The model's forward pass in PyTorch eager, timed on one thread.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=python /usr/bin/python3 \
        bench/cpu/torch_forward.py --preset gpt2_small --layers 12 --seq 128 \
        --weights w.safetensors --input x.npy --expected ref.npy [--iters 10] [--json out.json]

Mirrors python/tpmlir/reference.py op for op (pre-norm blocks, same weight
layout, tanh GeLU, -1e9 causal mask), written the way a PyTorch GPT-2 is
written in eager mode (HF-style Conv1D: torch.addmm with [in, out] weights,
F.layer_norm, F.gelu(approximate="tanh")). Loads the weights from the same
safetensors file, checks the output against the numpy reference (max |diff|
<= rtol * max |ref|, rtol 1e-4) and only then times the forward pass:
--warmup untimed passes, then --iters timed ones; prints and writes JSON with
the median time and tokens/s. Exits 1 on a mismatch.
"""
from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from benchlib import (add_forward_args, forward_stats, relative_error,  # noqa: E402
                      time_calls, write_json)
from tpmlir.checkpoint import load_safetensors  # noqa: E402
from tpmlir.config import PRESETS, preset  # noqa: E402
from tpmlir.params import input_shape, param_specs  # noqa: E402

MASK_VALUE = -1e9


def _linear(cfg, w, name, x):
    """x [..., K] -> [..., N]; weights [K, N] (in_out) or [N, K] (out_in)."""
    weight = w[f"{name}.weight"]
    if cfg.weight_layout == "out_in":
        weight = weight.t()
    shape = x.shape[:-1] + (weight.shape[1],)
    x2 = x.reshape(-1, x.shape[-1])
    if cfg.bias:
        y = torch.addmm(w[f"{name}.bias"], x2, weight)
    else:
        y = torch.mm(x2, weight)
    return y.view(shape)


def _norm(cfg, w, name, x):
    if cfg.norm == "rmsnorm":
        ms = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(ms + cfg.eps) * w[f"{name}.weight"]
    return F.layer_norm(x, (cfg.d_model,), w[f"{name}.weight"], w[f"{name}.bias"], cfg.eps)


def _rope(x, cos, sin):
    half = x.shape[-1] // 2
    rot = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos[None, :, None, :] + rot * sin[None, :, None, :]


def _attention(cfg, w, i, x, mask):
    b, s = x.shape[:2]
    h, kvh, dh = cfg.heads, cfg.kv_heads, cfg.head_dim
    p = f"h.{i}.attn"
    if cfg.qkv == "fused":
        qkv = _linear(cfg, w, f"{p}.qkv", x).view(b, s, 3, h, dh)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    else:
        q = _linear(cfg, w, f"{p}.q", x).view(b, s, h, dh)
        k = _linear(cfg, w, f"{p}.k", x).view(b, s, kvh, dh)
        v = _linear(cfg, w, f"{p}.v", x).view(b, s, kvh, dh)
    if cfg.rope:
        q, k = _rope(q, w["rope.cos"], w["rope.sin"]), _rope(k, w["rope.cos"], w["rope.sin"])
    if cfg.group > 1:
        k = k.repeat_interleave(cfg.group, dim=2)
        v = v.repeat_interleave(cfg.group, dim=2)
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, H, S, Dh]
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(dh))
    if mask is not None:
        scores = scores.masked_fill(mask, MASK_VALUE)
    ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
    ctx = ctx.transpose(1, 2).reshape(b, s, h * dh)
    return _linear(cfg, w, f"{p}.out", ctx)


def _mlp(cfg, w, i, x):
    p = f"h.{i}.mlp"
    up = _linear(cfg, w, f"{p}.up", x)
    if cfg.activation == "swiglu":
        act = F.silu(_linear(cfg, w, f"{p}.gate", x)) * up
    else:
        act = F.gelu(up, approximate="tanh")
    return _linear(cfg, w, f"{p}.down", act)


def forward(cfg, w, x):
    mask = None
    if cfg.causal:
        mask = torch.triu(torch.ones(cfg.seq, cfg.seq, dtype=torch.bool), diagonal=1)
    h = x
    for i in range(cfg.layers):
        h = h + _attention(cfg, w, i, _norm(cfg, w, f"h.{i}.ln_1", h), mask)
        h = h + _mlp(cfg, w, i, _norm(cfg, w, f"h.{i}.ln_2", h))
    return h


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_forward_args(ap, PRESETS, iters=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    torch.set_num_threads(args.threads)
    cfg = preset(args.preset, layers=args.layers, seq=args.seq, batch=args.batch)
    arrays = load_safetensors(args.weights)
    names = [n for n, _ in param_specs(cfg)]
    w = {n: torch.from_numpy(arrays[n]) for n in names}
    for n, shape in param_specs(cfg):
        if tuple(w[n].shape) != shape:
            print(f"torch_forward: {n} has shape {tuple(w[n].shape)}, expected {shape}")
            return 1
    x_np = np.load(args.input)
    if tuple(x_np.shape) != input_shape(cfg):
        print(f"torch_forward: input shape {x_np.shape}, expected {input_shape(cfg)}")
        return 1
    x = torch.from_numpy(x_np)
    ref = np.load(args.expected)

    with torch.inference_mode():
        y = forward(cfg, w, x).numpy()
        rel = relative_error(y, ref)
        ok = bool(np.all(np.isfinite(y)) and rel <= args.rtol)
        if not ok:
            print(f"torch_forward: MISMATCH relative {rel:.3g} > rtol {args.rtol:g}")
            return 1
        times = time_calls(lambda: forward(cfg, w, x), args.warmup, args.iters)

    tokens = cfg.batch * cfg.seq
    stats = forward_stats(times, tokens)
    med = stats["forward_s"]["median"]
    result = {"impl": "torch", "torch": torch.__version__, "threads": torch.get_num_threads(),
              "rel_err": rel, "rtol": args.rtol, "ok": ok, "tokens": tokens, **stats}
    print(f"torch_forward: OK relative {rel:.3g}; median {med * 1e3:.3f} ms, "
          f"{tokens / med:.1f} tokens/s ({args.iters} iters, {torch.get_num_threads()} thread)")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Writes the weights, input and numpy reference of tm-attention.mlir.

Usage: tm_attention_ref.py PREFIX  ->  PREFIX.safetensors, PREFIX.x.npy,
PREFIX.ref.npy. Each attention is softmax(q k^T * scale + mask) v over
heads of 4, as TMTensor's AttentionOp defines it: a row whose every key is
masked gives 0.
"""
import sys

import numpy as np

from tpmlir.checkpoint import save_safetensors


def attention(x, wq, wk, wv, wo, scale, mask):
    heads = lambda t: t.reshape(8, 4, 4).transpose(1, 0, 2)
    q, k, v = heads(x @ wq), heads(x @ wk), heads(x @ wv)
    s = q @ k.transpose(0, 2, 1) * scale + mask
    m = s.max(-1, keepdims=True)
    live = m > -np.inf
    p = np.where(live, np.exp(s - np.where(live, m, 0)), 0)
    z = p.sum(-1, keepdims=True)
    p = np.where(live, p / np.where(live, z, 1), 0)
    return (p @ v).transpose(1, 0, 2).reshape(8, 16) @ wo


def main(prefix):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    w = {f"w{p}{layer}": rng.standard_normal((16, 16), dtype=np.float32) / 4
         for layer in (1, 2) for p in "qkvo"}
    i, j = np.indices((8, 8))
    causal = np.where((i >= j) & (i != 3), 0, -np.inf).astype(np.float32)
    band = np.where((i + j) % 3 != 0, 0, -np.inf).astype(np.float32)
    h = attention(x, *(w[f"w{p}1"] for p in "qkvo"), 1 / np.sqrt(4), causal)
    y = attention(h, *(w[f"w{p}2"] for p in "qkvo"), 0.3, band)
    save_safetensors(f"{prefix}.safetensors", w)
    np.save(f"{prefix}.x.npy", x)
    np.save(f"{prefix}.ref.npy", y.astype(np.float32))


if __name__ == "__main__":
    main(sys.argv[1])

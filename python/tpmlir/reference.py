"""Numpy forward pass: the numeric oracle for the builder and the sharded program.

It follows the emitted IR op for op (same weight layout, same GeLU/SiLU
formulas, same -1e9 mask) and computes in float32 like the MLIR does.
"""
from __future__ import annotations

import numpy as np

from .config import ModelConfig
from .params import input_name, input_shape, param_specs

MASK_VALUE = np.float32(-1e9)


def rope_tables(cfg: ModelConfig, base: float = 10000.0) -> tuple[np.ndarray, np.ndarray]:
    """rotate_half style cos/sin tables [S, Dh] (each frequency used for both halves)."""
    dh = cfg.head_dim
    inv_freq = 1.0 / base ** (np.arange(0, dh, 2, dtype=np.float64) / dh)
    angles = np.outer(np.arange(cfg.seq, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=-1)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def random_weights(cfg: ModelConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Float32 weights with the builder's argument shapes, scaled to keep activations O(1)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name, shape in param_specs(cfg):
        if name.startswith("rope."):
            continue
        if name == "wte.weight":  # embedding rows: O(1) hidden states
            w = rng.standard_normal(shape)
        elif name.endswith(".weight") and len(shape) == 1:  # norm scale
            w = 1.0 + 0.1 * rng.standard_normal(shape)
        elif len(shape) == 1:  # bias
            w = 0.1 * rng.standard_normal(shape)
        else:
            fan_in = shape[0] if cfg.weight_layout == "in_out" else shape[1]
            w = rng.standard_normal(shape) / np.sqrt(fan_in)
        out[name] = w.astype(np.float32)
    if cfg.rope:
        out["rope.cos"], out["rope.sin"] = rope_tables(cfg)
    return out


def random_input(cfg: ModelConfig, seed: int = 1) -> np.ndarray:
    """Hidden states, or for a whole model token ids over the whole vocabulary."""
    rng = np.random.default_rng(seed)
    if cfg.vocab:
        return rng.integers(0, cfg.vocab, input_shape(cfg), dtype=np.int64)
    return rng.standard_normal(input_shape(cfg)).astype(np.float32)


def _f(v) -> np.float32:
    return np.float32(v)


def _linear(cfg: ModelConfig, w: dict, name: str, x: np.ndarray) -> np.ndarray:
    weight = w[f"{name}.weight"]
    if cfg.weight_layout == "out_in":
        weight = weight.T
    y = x @ weight
    if cfg.bias:
        y = y + w[f"{name}.bias"]
    return y


def _norm(cfg: ModelConfig, w: dict, name: str, x: np.ndarray) -> np.ndarray:
    d, eps = _f(cfg.d_model), _f(cfg.eps)
    if cfg.norm == "rmsnorm":
        ms = np.sum(x * x, axis=-1, keepdims=True) / d
        return x / np.sqrt(ms + eps) * w[f"{name}.weight"]
    mean = np.sum(x, axis=-1, keepdims=True) / d
    var = np.sum((x - mean) ** 2, axis=-1, keepdims=True) / d
    return (x - mean) / np.sqrt(var + eps) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x: [B, S, NH, Dh]; cos/sin: [S, Dh]."""
    half = x.shape[-1] // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos[None, :, None, :] + rot * sin[None, :, None, :]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _attention(cfg: ModelConfig, w: dict, i: int, x: np.ndarray) -> np.ndarray:
    b, s = x.shape[:2]
    h, kvh, dh = cfg.heads, cfg.kv_heads, cfg.head_dim
    p = f"h.{i}.attn"
    if cfg.qkv == "fused":
        qkv = _linear(cfg, w, f"{p}.qkv", x).reshape(b, s, 3, h, dh)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    else:
        q = _linear(cfg, w, f"{p}.q", x).reshape(b, s, h, dh)
        k = _linear(cfg, w, f"{p}.k", x).reshape(b, s, kvh, dh)
        v = _linear(cfg, w, f"{p}.v", x).reshape(b, s, kvh, dh)
    if cfg.rope:
        q, k = _rope(q, w["rope.cos"], w["rope.sin"]), _rope(k, w["rope.cos"], w["rope.sin"])
    # kv head j serves query heads j*g .. j*g+g-1 (np.repeat, not np.tile).
    k, v = np.repeat(k, cfg.group, axis=2), np.repeat(v, cfg.group, axis=2)
    q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))  # [B, H, S, Dh]
    scores = (q @ k.transpose(0, 1, 3, 2)) * _f(1.0 / np.sqrt(dh))
    if cfg.causal:
        future = np.triu(np.ones((s, s), dtype=bool), k=1)
        scores = np.where(future, MASK_VALUE, scores)
    ctx = _softmax(scores) @ v  # [B, H, S, Dh]
    ctx = ctx.transpose(0, 2, 1, 3).reshape(b, s, h * dh)
    return _linear(cfg, w, f"{p}.out", ctx)


def _gelu(x: np.ndarray) -> np.ndarray:
    c = _f(np.sqrt(2.0 / np.pi))
    return x * _f(0.5) * (np.tanh((x + x * x * x * _f(0.044715)) * c) + _f(1.0))


def _mlp(cfg: ModelConfig, w: dict, i: int, x: np.ndarray) -> np.ndarray:
    p = f"h.{i}.mlp"
    up = _linear(cfg, w, f"{p}.up", x)
    if cfg.activation == "swiglu":
        gate = _linear(cfg, w, f"{p}.gate", x)
        act = gate / (_f(1.0) + np.exp(-gate)) * up
    else:
        act = _gelu(up)
    return _linear(cfg, w, f"{p}.down", act)


def forward(cfg: ModelConfig, weights: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """Same math as the function `build_mlir(cfg)` emits; returns [B, S, D] float32
    (logits [B, S, vocab] for a whole model)."""
    cfg.validate()
    expected = dict(param_specs(cfg))
    missing = sorted(set(expected) - set(weights))
    if missing:
        raise ValueError(f"missing weights: {', '.join(missing)}")
    for name, shape in expected.items():
        if tuple(weights[name].shape) != shape:
            raise ValueError(f"{name}: expected shape {shape}, got {tuple(weights[name].shape)}")
    if tuple(x.shape) != input_shape(cfg):
        raise ValueError(f"{input_name(cfg)}: expected shape {input_shape(cfg)}, got {tuple(x.shape)}")
    w = {k: np.asarray(v, dtype=np.float32) for k, v in weights.items()}
    h = w["wte.weight"][np.asarray(x)] if cfg.vocab else np.asarray(x, dtype=np.float32)
    for i in range(cfg.layers):
        h = h + _attention(cfg, w, i, _norm(cfg, w, f"h.{i}.ln_1", h))
        h = h + _mlp(cfg, w, i, _norm(cfg, w, f"h.{i}.ln_2", h))
    if cfg.vocab:
        h = _norm(cfg, w, "ln_f", h)
        h = h @ w["wte.weight"].T if cfg.tie_embeddings else _linear(cfg.replace(bias=False), w, "lm_head", h)
    return h.astype(np.float32)

"""The function signature both the builder and the reference derive from.

Keeping the (name, shape) list in one place is what stops the MLIR argument
order and the numpy weight dict from drifting apart.
"""
from __future__ import annotations

from .config import ModelConfig

Spec = tuple[str, tuple[int, ...]]


def input_shape(cfg: ModelConfig) -> tuple[int, ...]:
    """Hidden states [B, S, D], or token ids [B, S] for a whole model."""
    if cfg.vocab:
        return (cfg.batch, cfg.seq)
    return (cfg.batch, cfg.seq, cfg.d_model)


def input_name(cfg: ModelConfig) -> str:
    return "ids" if cfg.vocab else "x"


def output_shape(cfg: ModelConfig) -> tuple[int, int, int]:
    """Hidden states [B, S, D], or logits [B, S, vocab] for a whole model."""
    return (cfg.batch, cfg.seq, cfg.vocab or cfg.d_model)


def weight_shape(cfg: ModelConfig, k: int, n: int) -> tuple[int, int]:
    """Stored shape of a projection from k to n features."""
    return (k, n) if cfg.weight_layout == "in_out" else (n, k)


def _linear(cfg: ModelConfig, name: str, k: int, n: int, bias: bool) -> list[Spec]:
    specs = [(f"{name}.weight", weight_shape(cfg, k, n))]
    if bias:
        specs.append((f"{name}.bias", (n,)))
    return specs


def _norm(cfg: ModelConfig, name: str) -> list[Spec]:
    specs = [(f"{name}.weight", (cfg.d_model,))]
    if cfg.norm == "layernorm":
        specs.append((f"{name}.bias", (cfg.d_model,)))
    return specs


def layer_specs(cfg: ModelConfig, i: int) -> list[Spec]:
    d, f, b = cfg.d_model, cfg.ffn, cfg.bias
    q_width = cfg.heads * cfg.head_dim
    kv_width = cfg.kv_heads * cfg.head_dim
    p = f"h.{i}"
    specs = _norm(cfg, f"{p}.ln_1")
    if cfg.qkv == "fused":
        specs += _linear(cfg, f"{p}.attn.qkv", d, 3 * q_width, b)
    else:
        specs += _linear(cfg, f"{p}.attn.q", d, q_width, b)
        specs += _linear(cfg, f"{p}.attn.k", d, kv_width, b)
        specs += _linear(cfg, f"{p}.attn.v", d, kv_width, b)
    specs += _linear(cfg, f"{p}.attn.out", q_width, d, b)
    specs += _norm(cfg, f"{p}.ln_2")
    if cfg.activation == "swiglu":
        specs += _linear(cfg, f"{p}.mlp.gate", d, f, b)
    specs += _linear(cfg, f"{p}.mlp.up", d, f, b)
    specs += _linear(cfg, f"{p}.mlp.down", f, d, b)
    return specs


def param_specs(cfg: ModelConfig) -> list[Spec]:
    """Every weight argument, in function-argument order (after the input)."""
    specs = [("wte.weight", (cfg.vocab, cfg.d_model))] if cfg.vocab else []
    for i in range(cfg.layers):
        specs += layer_specs(cfg, i)
    if cfg.vocab:
        specs += _norm(cfg, "ln_f")
        if not cfg.tie_embeddings:
            specs += _linear(cfg, "lm_head", cfg.d_model, cfg.vocab, False)
    if cfg.rope:
        specs += [("rope.cos", (cfg.seq, cfg.head_dim)), ("rope.sin", (cfg.seq, cfg.head_dim))]
    return specs


def arg_specs(cfg: ModelConfig) -> list[Spec]:
    """All function arguments of @forward, input first."""
    return [(input_name(cfg), input_shape(cfg))] + param_specs(cfg)

"""Model configurations for the transformer builders.

A `ModelConfig` fixes every structural choice the builder and the numpy
reference make, so one config always means one graph.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

_CHOICES = {
    "norm": ("layernorm", "rmsnorm"),
    "activation": ("gelu", "swiglu"),
    "qkv": ("fused", "separate"),
    "weight_layout": ("in_out", "out_in"),
    "softmax": ("named", "generic"),
    "dtype": ("f32",),
}


@dataclass(frozen=True)
class ModelConfig:
    layers: int = 2
    d_model: int = 64
    heads: int = 4
    kv_heads: int | None = None  # None: same as heads (no GQA)
    ffn: int = 256
    norm: str = "layernorm"
    activation: str = "gelu"
    bias: bool = True
    qkv: str = "fused"
    # out_in: torch-style [out, in] weights, used through linalg.transpose.
    weight_layout: str = "in_out"
    rope: bool = False
    causal: bool = True
    softmax: str = "named"
    batch: int = 1
    seq: int = 8
    dtype: str = "f32"
    eps: float = 1e-5
    # 0: the blocks alone, hidden states [B, S, D] in and out. > 0: a whole
    # model, token ids [B, S] (i64) in, logits [B, S, vocab] out: a vocabulary
    # embedding `wte`, the blocks, a final norm `ln_f` and an LM head, which is
    # `wte` transposed when tie_embeddings (GPT-2), else `lm_head` (Llama).
    vocab: int = 0
    tie_embeddings: bool = True

    def __post_init__(self):
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        self.validate()

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def group(self) -> int:
        """Query heads per kv head (1 without GQA)."""
        return self.heads // self.kv_heads

    def replace(self, **changes) -> "ModelConfig":
        # A config without GQA should stay without GQA when only `heads` changes.
        if "heads" in changes and "kv_heads" not in changes and self.kv_heads == self.heads:
            changes["kv_heads"] = None
        return dataclasses.replace(self, **changes)

    def validate(self) -> None:
        for field, allowed in _CHOICES.items():
            value = getattr(self, field)
            if value not in allowed:
                raise ValueError(f"{field}={value!r} is not one of {', '.join(allowed)}")
        for field in ("layers", "d_model", "heads", "kv_heads", "ffn", "batch", "seq"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.d_model % self.heads:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by heads={self.heads}")
        if self.kv_heads > self.heads or self.heads % self.kv_heads:
            raise ValueError(
                f"heads={self.heads} must be a multiple of kv_heads={self.kv_heads}")
        if self.qkv == "fused" and self.kv_heads != self.heads:
            # The fused idiom reshapes to [B, S, 3, H, Dh]; that needs equal q/k/v widths.
            raise ValueError(
                f"qkv='fused' needs kv_heads == heads (got kv_heads={self.kv_heads}, "
                f"heads={self.heads}); use qkv='separate' for GQA")
        if self.rope and self.head_dim % 2:
            raise ValueError(f"rope needs an even head_dim, got {self.head_dim}")
        if isinstance(self.vocab, bool) or not isinstance(self.vocab, int) or self.vocab < 0:
            raise ValueError(f"vocab must be 0 or a positive integer, got {self.vocab!r}")
        if not self.eps > 0:
            raise ValueError(f"eps must be positive, got {self.eps!r}")


def gpt2_small(layers: int = 2, seq: int = 8, batch: int = 1, **overrides) -> ModelConfig:
    base = dict(layers=layers, seq=seq, batch=batch, d_model=768, heads=12, ffn=3072,
                norm="layernorm", activation="gelu", bias=True, qkv="fused",
                weight_layout="in_out", rope=False, causal=True)
    return ModelConfig(**{**base, **overrides})


def llama_like(layers: int = 2, seq: int = 8, batch: int = 1, **overrides) -> ModelConfig:
    base = dict(layers=layers, seq=seq, batch=batch, d_model=512, heads=8, kv_heads=4,
                ffn=1408, norm="rmsnorm", activation="swiglu", bias=False, qkv="separate",
                weight_layout="out_in", rope=True, causal=True, tie_embeddings=False)
    return ModelConfig(**{**base, **overrides})


def tiny_gpt2(layers: int = 2, seq: int = 4, batch: int = 1, **overrides) -> ModelConfig:
    return gpt2_small(layers, seq, batch, **{"d_model": 64, "heads": 4, "ffn": 256, **overrides})


def tiny_llama(layers: int = 2, seq: int = 4, batch: int = 1, **overrides) -> ModelConfig:
    return llama_like(layers, seq, batch,
                      **{"d_model": 64, "heads": 4, "kv_heads": 2, "ffn": 192, **overrides})


PRESETS = {
    "gpt2_small": gpt2_small,
    "llama_like": llama_like,
    "tiny_gpt2": tiny_gpt2,
    "tiny_llama": tiny_llama,
}


def preset(name: str, **overrides) -> ModelConfig:
    try:
        factory = PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None
    return factory(**overrides)

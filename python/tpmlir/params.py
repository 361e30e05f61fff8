"""The function signature both the builder and the reference derive from.

Keeping the (name, shape) list in one place is what stops the MLIR argument
order and the numpy weight dict from drifting apart.
"""
from __future__ import annotations

import re

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
    """Hidden states [B, S, D], or logits [B, S, vocab_rows] for a whole model."""
    return (cfg.batch, cfg.seq, cfg.vocab_rows or cfg.d_model)


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
    d, f, b, qb = cfg.d_model, cfg.ffn, cfg.bias, cfg.qkv_bias
    q_width = cfg.heads * cfg.head_dim
    kv_width = cfg.kv_heads * cfg.head_dim
    p = f"h.{i}"
    specs = _norm(cfg, f"{p}.ln_1")
    if cfg.qkv in ("fused", "sliced"):
        specs += _linear(cfg, f"{p}.attn.qkv", d, q_width + 2 * kv_width, qb)
    else:
        specs += _linear(cfg, f"{p}.attn.q", d, q_width, qb)
        specs += _linear(cfg, f"{p}.attn.k", d, kv_width, qb)
        specs += _linear(cfg, f"{p}.attn.v", d, kv_width, qb)
    if cfg.qk_norm:
        specs += [(f"{p}.attn.q_norm.weight", (cfg.head_dim,)), (f"{p}.attn.k_norm.weight", (cfg.head_dim,))]
    specs += _linear(cfg, f"{p}.attn.out", q_width, d, b)
    if cfg.post_norms:
        specs += _norm(cfg, f"{p}.ln_attn_out")
    specs += _norm(cfg, f"{p}.ln_2")
    if cfg.gate_up == "fused":
        specs += _linear(cfg, f"{p}.mlp.gate_up", d, 2 * f, b)
    else:
        if cfg.gated:
            specs += _linear(cfg, f"{p}.mlp.gate", d, f, b)
        specs += _linear(cfg, f"{p}.mlp.up", d, f, b)
    specs += _linear(cfg, f"{p}.mlp.down", f, d, b)
    if cfg.post_norms:
        specs += _norm(cfg, f"{p}.ln_mlp_out")
    return specs


def param_specs(cfg: ModelConfig) -> list[Spec]:
    """Every weight argument, in function-argument order (after the input)."""
    specs = [("wte.weight", (cfg.vocab_rows, cfg.d_model))] if cfg.vocab else []
    if cfg.positions:
        specs.append(("wpe.weight", (cfg.positions, cfg.d_model)))
    for i in range(cfg.layers):
        specs += layer_specs(cfg, i)
    if cfg.vocab:
        specs += _norm(cfg, "ln_f")
        if not cfg.tie_embeddings:
            specs += _linear(cfg, "lm_head", cfg.d_model, cfg.vocab_rows, False)
    if cfg.rope and not cfg.rope_tables_in_graph:
        specs += [("rope.cos", (cfg.seq, cfg.rope_dim)), ("rope.sin", (cfg.seq, cfg.rope_dim))]
    return specs


def checkpoint_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """The weights a padded vocabulary pads, by tpmlir name, with the shape
    a checkpoint holds them in: the graph takes them with zero rows after
    (pad_vocab); none without padding."""
    if cfg.vocab_rows == cfg.vocab:
        return {}
    shapes = {"wte.weight": (cfg.vocab, cfg.d_model)}
    if not cfg.tie_embeddings:
        shapes["lm_head.weight"] = weight_shape(cfg, cfg.d_model, cfg.vocab)
    return shapes


def packed_rows(cfg: ModelConfig) -> dict[str, tuple[int, tuple[int, ...]]]:
    """The weights a checkpoint packs as row blocks of one tensor, by tpmlir
    name: (their first row, the packed tensor's shape). qkv='packed': q, k
    and v (weights [out, in], and biases) one after the other in one qkv
    tensor, as Phi-3's qkv_proj holds them; none otherwise."""
    if cfg.qkv != "packed":
        return {}
    widths = [cfg.heads * cfg.head_dim] + [cfg.kv_heads * cfg.head_dim] * 2
    leaves = {"weight": (sum(widths), cfg.d_model)} | ({"bias": (sum(widths),)} if cfg.qkv_bias else {})
    out = {}
    for i in range(cfg.layers):
        for leaf, shape in leaves.items():
            for n, start in zip("qkv", (0, widths[0], widths[0] + widths[1])):
                out[f"h.{i}.attn.{n}.{leaf}"] = (start, shape)
    return out


def as_checkpoint(cfg: ModelConfig, weights: dict) -> dict:
    """`weights` (tpmlir names, the graph's shapes) as a checkpoint holds
    them: the padded rows cut off."""
    shapes = checkpoint_shapes(cfg)
    return {k: v[tuple(slice(0, n) for n in shapes[k])] if k in shapes else v for k, v in weights.items()}


def as_graph(cfg: ModelConfig, weights: dict) -> dict:
    """A checkpoint's weights (tpmlir names) in the graph's shapes: zero rows
    after a padded vocabulary's, as tp-run pads them (a table stored padded,
    as Megatron-LM stores one, is taken as it is)."""
    import numpy as np
    shapes, stored = dict(param_specs(cfg)), checkpoint_shapes(cfg)
    out = {}
    for k, v in weights.items():
        if k in stored and tuple(v.shape) != shapes[k]:  # stored padded: as it is
            if tuple(v.shape) != stored[k]:  # as tp-run, which pads only these
                raise ValueError(f"'{k}' is {tuple(v.shape)} in the checkpoint; the model takes "
                                 f"{stored[k]} (or {shapes[k]}, padded)")
            v = np.pad(v, [(0, full - n) for full, n in zip(shapes[k], v.shape)])
        out[k] = v
    return out


def arg_specs(cfg: ModelConfig) -> list[Spec]:
    """All function arguments of @forward, input first."""
    return [(input_name(cfg), input_shape(cfg))] + param_specs(cfg)


# -- generation: @prefill and @decode ------------------------------------------

# The integer inputs of a step: token ids, @decode's and @extend's position,
# @extend's count of its tokens that are the prompt's, and a ragged batch's
# left padding of each sequence.
STEP_INPUTS = ("ids", "pos", "valid", "padding")

def cache_shape(cfg: ModelConfig, layer: int) -> tuple[int, int, int, int]:
    """Layer `layer`'s K (or V) cache: [B, kv_heads, S_max, head_dim], or
    [B, kv_heads, W, head_dim] for a sliding window W < S_max (a ring)."""
    return (cfg.batch, cfg.kv_heads, cfg.cache_length(layer), cfg.head_dim)


def cache_specs(cfg: ModelConfig) -> list[Spec]:
    """The caches, K then V per layer, in argument (and result) order."""
    return [(f"cache.{i}.{kv}", cache_shape(cfg, i)) for i in range(cfg.layers) for kv in "kv"]


def function_arg_specs(cfg: ModelConfig, function: str) -> list[Spec]:
    """Arguments of @prefill (ids [B, S]), @decode (ids [B, 1], pos []) or
    @extend (ids [B, S], pos [], valid []: how many of the S are the
    prompt's, the rest padding): the inputs, the caches, then the weights.
    `pos` and `valid` are rank-0 i64 tensors. A ragged model's functions
    also take `padding` [B] (i64): how many of each sequence's first
    positions are padding (its prompt starts there: left padding)."""
    if function == "prefill":
        inputs = [("ids", (cfg.batch, cfg.seq))]
    elif function == "decode":
        inputs = [("ids", (cfg.batch, 1)), ("pos", ())]
    elif function == "extend" and cfg.chunked_prefill:
        inputs = [("ids", (cfg.batch, cfg.seq)), ("pos", ()), ("valid", ())]
    else:
        raise ValueError(f"no function {function!r}; a generating model has prefill and decode "
                         f"(and extend with chunked_prefill)")
    if cfg.ragged:
        inputs.append(("padding", (cfg.batch,)))
    return inputs + cache_specs(cfg) + param_specs(cfg)


def result_specs(cfg: ModelConfig) -> list[Spec]:
    """Results of @prefill and @decode: the next ids [B, 1] (i64), the last
    position's logits [B, 1, vocab] with keep_logits, then the caches."""
    specs = [("next_ids", (cfg.batch, 1))]
    if cfg.keep_logits:
        specs.append(("logits", (cfg.batch, 1, cfg.vocab_rows)))
    return specs + cache_specs(cfg)


# -- checkpoint names -----------------------------------------------------------

_HF_GPT2 = {"ln_1": "ln_1", "ln_2": "ln_2", "attn.qkv": "attn.c_attn", "attn.out": "attn.c_proj",
            "mlp.up": "mlp.c_fc", "mlp.down": "mlp.c_proj"}
_HF_LLAMA = {"ln_1": "input_layernorm", "ln_2": "post_attention_layernorm",
             "attn.q": "self_attn.q_proj", "attn.k": "self_attn.k_proj",
             "attn.v": "self_attn.v_proj", "attn.out": "self_attn.o_proj",
             "attn.q_norm": "self_attn.q_norm", "attn.k_norm": "self_attn.k_norm",
             "attn.qkv": "self_attn.qkv_proj", "mlp.gate_up": "mlp.gate_up_proj",  # Phi-3
             "mlp.gate": "mlp.gate_proj", "mlp.up": "mlp.up_proj", "mlp.down": "mlp.down_proj"}
# Gemma 2 norms the attention's and the MLP's outputs too, and names its
# four norms so: post_attention_layernorm is no longer the MLP's input norm.
_HF_GEMMA2 = {**_HF_LLAMA, "ln_attn_out": "post_attention_layernorm", "ln_2": "pre_feedforward_layernorm",
              "ln_mlp_out": "post_feedforward_layernorm"}


def checkpoint_name(cfg: ModelConfig, name: str) -> str:
    """The name the checkpoint gives weight `name` (tpmlir's own name): the
    same for names='tpmlir'; a Hugging Face GPT2LMHeadModel's or
    LlamaForCausalLM's (Qwen2, Qwen3, Mistral, Phi-3, Gemma 1 to 3) otherwise. The layouts
    already agree: GPT-2's Conv1D weights are [in, out] with q|k|v fused in
    c_attn (weight_layout in_out, qkv fused), Llama's Linear weights [out, in]
    (Phi-3's q|k|v in qkv_proj and gate|up in gate_up_proj). Weights a
    checkpoint packs (packed_rows) take the name of the tensor packing them."""
    if cfg.qkv == "packed":
        name = re.sub(r"\.attn\.[qkv]\.", ".attn.qkv.", name)
    if cfg.names == "tpmlir" or name == "lm_head.weight":
        return name
    prefix = cfg.name_prefix
    if cfg.names == "hf_gpt2":
        prefix = "transformer." if prefix is None else prefix
        table, layers, top = _HF_GPT2, "h", {"wte": "wte", "wpe": "wpe", "ln_f": "ln_f"}
    else:
        prefix = "model." if prefix is None else prefix
        table = _HF_GEMMA2 if cfg.post_norms else _HF_LLAMA
        layers, top = "layers", {"wte": "embed_tokens", "ln_f": "norm"}
    stem, leaf = name.rsplit(".", 1)
    if stem.startswith("h."):
        _, i, part = stem.split(".", 2)
        return f"{prefix}{layers}.{i}.{table[part]}.{leaf}"
    if stem not in top:  # rope.cos / rope.sin of a @forward: no checkpoint has them
        return name
    return f"{prefix}{top[stem]}.{leaf}"


def checkpoint_names(cfg: ModelConfig) -> dict[str, str]:
    """tpmlir name -> checkpoint name, for every weight of `cfg`."""
    return {name: checkpoint_name(cfg, name) for name, _ in param_specs(cfg)}

"""Hugging Face model directories: their config.json as a ModelConfig, their
checkpoint's names, and the config.json of a ModelConfig (for tests that
write such directories with random weights).

Two families: GPT-2 (`GPT2LMHeadModel`: Conv1D weights [in, out], q|k|v fused
in `c_attn`, learned positions, LM head tied to `wte`) and Llama
(`LlamaForCausalLM`, and Qwen2, Qwen3, Mistral, Phi-3 and Gemma 1 to 3,
which share its names: Linear weights [out, in], separate q/k/v with GQA,
RoPE, RMSNorm, SwiGLU or Gemma's GeGLU, sliding windows). The graph
takes the checkpoint's own names and layouts (params.checkpoint_name), so a
directory runs as it is.
"""
from __future__ import annotations

import math
import os

from .checkpoint import read_json, read_safetensors_names, read_weight_map
from .config import ModelConfig, rope_scaling_json
from .params import as_checkpoint, as_graph, checkpoint_names, packed_rows, param_specs

LLAMA_TYPES = ("llama", "qwen2", "qwen3", "mistral", "phi3")
GEMMA_TYPES = ("gemma", "gemma2", "gemma3_text")
MODEL_TYPES = ("gpt2",) + LLAMA_TYPES + GEMMA_TYPES + ("gemma3",)
# Gemma3TextConfig's defaults for what a Gemma 3 config may leave out (the
# text_config of Gemma 3 4B and larger, Gemma3ForConditionalGeneration, does).
_GEMMA3_TEXT = {"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                "num_attention_heads": 8, "num_key_value_heads": 4, "max_position_embeddings": 131072}
# Where Gemma3ForConditionalGeneration's checkpoints keep the text model's
# weights: the hub's files, then those transformers 4.52 and later save.
_GEMMA3_PREFIXES = ("language_model.model.", "model.language_model.")
# transformers' Qwen3Config takes head_dim 128 when its config.json has none.
_QWEN3_HEAD_DIM = 128
_GELU_TANH = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")


_REQUIRED = object()
_KINDS = {int: "a positive integer", float: "a positive number", bool: "true or false", str: "a string"}


def _get(hf: dict, key: str, kind: type, default=_REQUIRED):
    """hf[key], which must be a `kind` (int and float: a positive one);
    `default` when it is missing or null, if the field is optional."""
    value = hf.get(key)
    if value is None:
        if default is _REQUIRED:
            raise ValueError(f"{key!r} is {'null' if key in hf else 'missing'}")
        return default
    ok = (isinstance(value, (int, float) if kind is float else kind)
          and (kind is bool or not isinstance(value, bool)) and (kind not in (int, float) or value > 0))
    if not ok:
        raise ValueError(f"{key!r} must be {_KINDS[kind]}, not {value!r}")
    return float(value) if kind is float else value


def _unless_null(hf: dict, key: str, kind: type, default):
    """hf[key] as _get reads it, `default` when missing, but None when null
    (a config's way to say "none" where the family has a default)."""
    return _get(hf, key, kind, None) if key in hf else default


def _unsupported(model_type: str, what: str) -> ValueError:
    return ValueError(f"{model_type}: {what} is not supported")


def config_from_hf(hf: dict, prefix: str | None = None, path: str = "config.json",
                   generation: dict | None = None, **overrides) -> ModelConfig:
    """The ModelConfig of a Hugging Face config.json (a dict, read from
    `path`, which its errors name). `overrides` are ModelConfig fields (seq,
    batch, generate, keep_logits, layers, ...); `prefix` is the checkpoint's
    prefix of the transformer's weights (None: the family's). A generating
    model takes its end ids from `generation` (generation_config.json, as
    transformers' generate() does) or else from the config."""
    try:
        model_type = _get(hf, "model_type", str)
        if model_type == "gemma3":  # the text model of Gemma 3 4B and larger; the vision tower left out
            text = hf.get("text_config")
            if not isinstance(text, dict):
                raise ValueError(f"gemma3: 'text_config' must be an object, not {text!r}")
            hf = {**text, "model_type": "gemma3_text",
                  "eos_token_id": hf["eos_token_id"] if "eos_token_id" in hf else text.get("eos_token_id")}
            prefix = _GEMMA3_PREFIXES[0] if prefix is None else prefix
        if model_type == "gpt2":
            fields, limit = _gpt2(hf), _get(hf, "n_positions", int, None)
        elif model_type in LLAMA_TYPES:
            fields, limit = _llama(hf, model_type), _get(hf, "max_position_embeddings", int, None)
        elif model_type in GEMMA_TYPES + ("gemma3",):
            if model_type.startswith("gemma3"):
                hf = {**_GEMMA3_TEXT, **hf}
            fields, limit = _gemma(hf, hf["model_type"]), _get(hf, "max_position_embeddings", int, None)
        else:
            raise ValueError(f"model_type {model_type!r} is not one of {', '.join(MODEL_TYPES)}")
        if overrides.get("generate") and "eos_token_ids" not in overrides:
            fields["eos_token_ids"] = ids = _eos_token_ids(generation, hf)
            vocab = overrides.get("vocab") or fields["vocab"]
            if any(i >= vocab for i in ids):
                raise ValueError(f"its end ids {list(ids)} are not all in the vocabulary [0, {vocab}): "
                                 f"give --eos-token-ids (or '' for none)")
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    fields["name_prefix"] = prefix
    fields.update(overrides)
    if "sliding_layers" not in overrides:
        try:
            _keep_windows(fields, overrides)
        except ValueError as e:
            raise ValueError(f"{path}: {model_type}: {e}") from None
    cfg = ModelConfig(**fields)
    positions = max(cfg.seq, cfg.generate)
    if limit and positions > limit:
        raise ValueError(f"{path}: {model_type}: {positions} positions are more than the model's {limit}")
    return cfg


def _keep_windows(fields: dict, overrides: dict) -> None:
    """The config's sliding layers among those taken (--layers), in
    `fields`; none under --sliding-window 0, and no second RoPE base without
    them. A window asked for where none slides, or dropped where the sliding
    layers have a base of their own, is refused."""
    kept = tuple(i for i in fields.get("sliding_layers", ()) if i < fields["layers"])
    if overrides.get("sliding_window") and not kept:
        raise ValueError("--sliding-window needs --sliding-layers: the model slides none of its layers")
    if overrides.get("sliding_window") == 0 and kept and fields.get("rope_local_theta") \
            and "rope_local_theta" not in overrides:
        raise ValueError("its sliding layers have a RoPE base of their own; --sliding-window 0 would leave "
                         "them theirs, which no layer without a window has")
    fields["sliding_layers"] = kept if fields.get("sliding_window") else ()
    if not kept and "sliding_window" not in overrides:
        fields["sliding_window"] = 0
    if not fields["sliding_layers"] and "rope_local_theta" not in overrides:
        fields["rope_local_theta"] = 0.0


def _sliding(hf: dict, layers: int, default_window: int | None, pattern) -> dict:
    """sliding_window and sliding_layers: the config's layer_types when it
    has them ("sliding_attention" or "full_attention" per layer), else the
    layers for which pattern(i) holds; none without a window."""
    window = _unless_null(hf, "sliding_window", int, default_window)
    if not window:
        return dict(sliding_window=0, sliding_layers=())
    types = hf.get("layer_types")
    if types is not None:
        if not (isinstance(types, list) and len(types) == layers
                and set(types) <= {"sliding_attention", "full_attention"}):
            raise ValueError(f"'layer_types' must list {layers} of 'sliding_attention' or "
                             f"'full_attention', not {types!r}")
        chosen = tuple(i for i, t in enumerate(types) if t == "sliding_attention")
    else:
        chosen = tuple(i for i in range(layers) if pattern(i))
    return dict(sliding_window=window, sliding_layers=chosen)


def _eos_token_ids(generation: dict | None, hf: dict) -> tuple[int, ...]:
    """eos_token_id of generation_config.json, or of config.json when there
    is none (as transformers' generate() takes them): an id, a list of them
    (Llama 3 Instruct's three) or null."""
    source = hf if generation is None else generation
    ids = source.get("eos_token_id")
    ids = [] if ids is None else ids if isinstance(ids, list) else [ids]
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids):
        where = "generation_config.json's" if source is generation else "its"
        raise ValueError(f"{where} eos_token_id must be an id or a list of ids, not {source['eos_token_id']!r}")
    return tuple(ids)


def _gpt2(hf: dict) -> dict:
    act = _get(hf, "activation_function", str, "gelu_new")
    if act not in _GELU_TANH:
        raise _unsupported("gpt2", f"activation_function {act!r} (the builder's GeLU is the tanh one)")
    for flag in ("scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"):
        if _get(hf, flag, bool, False):
            raise _unsupported("gpt2", flag)
    if not _get(hf, "scale_attn_weights", bool, True):
        raise _unsupported("gpt2", "scale_attn_weights false")
    if not _get(hf, "tie_word_embeddings", bool, True):
        raise _unsupported("gpt2", "an LM head apart from wte (tie_word_embeddings false)")
    d = _get(hf, "n_embd", int)
    return dict(names="hf_gpt2", layers=_get(hf, "n_layer", int), d_model=d, heads=_get(hf, "n_head", int),
                ffn=_get(hf, "n_inner", int, 4 * d), norm="layernorm", activation="gelu", bias=True,
                qkv="fused", weight_layout="in_out", rope=False, causal=True,
                eps=_get(hf, "layer_norm_epsilon", float, 1e-5), vocab=_get(hf, "vocab_size", int),
                positions=_get(hf, "n_positions", int, 1024), tie_embeddings=True)


def _llama(hf: dict, model_type: str) -> dict:
    act = _get(hf, "hidden_act", str, "silu")
    if act != "silu":
        raise _unsupported(model_type, f"hidden_act {act!r}")
    rope = _rope(hf, model_type, 10000.0)
    if _get(hf, "use_sliding_window", bool, False):
        raise _unsupported(model_type, "use_sliding_window")
    d, heads = _get(hf, "hidden_size", int), _get(hf, "num_attention_heads", int)
    kv_heads = _get(hf, "num_key_value_heads", int, heads)
    head_dim = _get(hf, "head_dim", int, _QWEN3_HEAD_DIM if model_type == "qwen3" else None)
    # transformers' RoPE rotates int(head_dim * partial_rotary_factor) features.
    factor = rope.pop("partial_rotary_factor", None)
    rotary = int((head_dim or d // heads) * factor) if factor else 0
    if factor and (rotary < 2 or rotary % 2):
        raise ValueError(f"{model_type}: partial_rotary_factor {factor:g} rotates {rotary} features of a head, "
                         f"not an even number above 0")
    fused = model_type == "phi3"  # q|k|v and gate|up each one weight
    if model_type == "qwen2":  # biases on q, k and v only
        bias, qkv_bias = False, True
    elif model_type == "qwen3":  # attention_bias would bias o_proj too, not the MLP
        if _get(hf, "attention_bias", bool, False):
            raise _unsupported(model_type, "attention_bias")
        bias = qkv_bias = False
    elif fused:  # Phi-3: no biases
        bias = qkv_bias = False
    else:
        attn, mlp = _get(hf, "attention_bias", bool, False), _get(hf, "mlp_bias", bool, False)
        if attn != mlp:
            raise _unsupported(model_type, f"attention_bias={attn} with mlp_bias={mlp}")
        bias = qkv_bias = bool(attn)
    layers = _get(hf, "num_hidden_layers", int)
    # Mistral's and Phi-3's every layer attends to its last sliding_window
    # positions (Qwen2's only with use_sliding_window, refused above).
    sliding = (_sliding(hf, layers, 4096 if model_type == "mistral" else None, lambda i: True)
               if model_type in ("mistral", "phi3") else {})
    return dict(**sliding, names="hf_llama", layers=layers, d_model=d, heads=heads,
                kv_heads=kv_heads, head_dim=head_dim, rotary_dim=rotary,
                qk_norm=model_type == "qwen3", ffn=_get(hf, "intermediate_size", int),
                # Fewer kv heads than heads (Phi-3-medium, Phi-4-mini): q, k and v
                # sections of unequal widths, which no cut of equal blocks takes,
                # so the graph takes them apart and the loader reads their rows.
                qkv=("fused" if kv_heads == heads else "packed") if fused else "separate",
                gate_up="fused" if fused else "separate",
                norm="rmsnorm", activation="swiglu", bias=bias, qkv_bias=qkv_bias,
                weight_layout="out_in", rope=True, **rope, causal=True, eps=_get(hf, "rms_norm_eps", float, 1e-6), vocab=_get(hf, "vocab_size", int),
                tie_embeddings=_get(hf, "tie_word_embeddings", bool, False))


def _caps(hf: dict, attn: float, final: float) -> dict:
    """Gemma's caps of the scores and the logits: the family's default when
    missing, none (0) when null."""
    return dict(attn_softcap=_unless_null(hf, "attn_logit_softcapping", float, attn) or 0.0,
                logit_softcap=_unless_null(hf, "final_logit_softcapping", float, final) or 0.0)


def _longrope(hf: dict, scaling: dict) -> dict:
    """longrope's original positions and factor as transformers 4.4x's
    _compute_longrope_parameters takes them: a config's own
    original_max_position_embeddings (Phi-3's) wins, the factor then its
    max_position_embeddings over that; else the object's original positions
    (or max_position_embeddings) and its factor (or, as transformers 5
    reads one without, max_position_embeddings over the original).
    Phi-3's older "su" is longrope."""
    out = dict(scaling)
    if out.get("type") == "su":
        out["type"] = "longrope"
    original = _get(hf, "original_max_position_embeddings", int, None)
    if original is not None:
        out["original_max_position_embeddings"] = original
        out["factor"] = _get(hf, "max_position_embeddings", int, original) / original
        return out
    longest = _get(hf, "max_position_embeddings", int)
    original = out.setdefault("original_max_position_embeddings", longest)
    if "factor" not in out and isinstance(original, int) and not isinstance(original, bool) and original > 0:
        out["factor"] = longest / original  # rope_scaling_json checks the rest
    return out


def _rope(hf: dict, model_type: str, theta: float, local_theta: float | None = None) -> dict:
    """rope_theta and rope_scaling (with local_theta, the default of the
    sliding layers' base: rope_local_theta too), as transformers 5 writes
    them (rope_parameters: one object, or one per layer type,
    full_attention and sliding_attention) or as before (rope_theta,
    rope_scaling, Gemma 3's rope_local_base_freq), which fill what
    rope_parameters leaves out; `theta`: the family's default base."""
    legacy_theta = _get(hf, "rope_theta", float, theta)
    legacy_local = None if local_theta is None else _get(hf, "rope_local_base_freq", float, local_theta)

    def one(params, default: float, where: str) -> tuple[float, str, float]:
        if not isinstance(params, dict):
            raise ValueError(f"{where} must be an object, not {params!r}")
        rotary = _get(params, "partial_rotary_factor", float, None) or _get(hf, "partial_rotary_factor", float, 1.0)
        # Phi-3's attention rotates part of a head (Phi-4-mini); others would
        # apply tables narrower than their heads.
        if rotary != 1.0 and (model_type != "phi3" or not 0 < rotary < 1):
            raise ValueError(f"partial_rotary_factor {rotary:g} (RoPE over part of a head) is not supported")
        scaling = {k: v for k, v in params.items() if k not in ("rope_theta", "partial_rotary_factor")}
        if scaling.get("rope_type", scaling.get("type")) in ("longrope", "su"):
            scaling = _longrope(hf, scaling)
        return _get(params, "rope_theta", float, default), rope_scaling_json(scaling), rotary

    try:
        params = hf.get("rope_parameters")
        local = None  # the sliding layers' (base, scaling), where the object gives them
        if params is None:
            full = (legacy_theta, *one(hf.get("rope_scaling") or {}, legacy_theta, "rope_scaling")[1:])
        else:
            if hf.get("rope_scaling") is not None:
                raise ValueError("rope_scaling and rope_parameters are both given; one says it all")
            if not isinstance(params, dict):
                raise ValueError(f"rope_parameters must be an object, not {params!r}")
            if {"full_attention", "sliding_attention"} & set(params):  # one per layer type
                full = one(params.get("full_attention", {}), legacy_theta, "rope_parameters.full_attention")
                local = one(params.get("sliding_attention", {}), legacy_local or legacy_theta,
                            "rope_parameters.sliding_attention")
                if local_theta is None and local != full:
                    raise ValueError("rope_parameters differ by layer type, which this family does not")
            elif local_theta is not None:  # as transformers 5's Gemma 3, which does not read it either
                raise ValueError("rope_parameters must be keyed by layer type (full_attention, "
                                 "sliding_attention)")
            else:
                full = one(params, legacy_theta, "rope_parameters")
        out = dict(rope_theta=full[0], rope_scaling=full[1])
        if full[2] != 1.0:
            out["partial_rotary_factor"] = full[2]
        if local_theta is not None:
            if local is None:
                local = (legacy_local, "")
            if local[1]:
                raise ValueError("a scaled RoPE on the sliding layers is not supported")
            out["rope_local_theta"] = local[0]
        return out
    except ValueError as e:
        raise ValueError(f"{model_type}: {e}") from None


def _gemma(hf: dict, model_type: str) -> dict:
    """Gemma (GemmaForCausalLM), Gemma 2 and Gemma 3's text model
    (Gemma3ForCausalLM): Llama's names and layouts, with norms scaling by
    1 + weight, the embedded rows times sqrt(hidden_size), GeLU (tanh)
    gating, a tied head. Gemma 2 adds a norm after the attention and after
    the MLP (pre_ and post_feedforward_layernorm), scores scaled by
    query_pre_attn_scalar, capped scores and logits, and a sliding window on
    every other layer; Gemma 3 drops the caps, norms each head of q and k
    (q_norm, k_norm), slides five layers of six, and gives those a RoPE base
    of their own (rope_local_base_freq). Defaults as transformers'
    GemmaConfig, Gemma2Config and Gemma3TextConfig."""
    # hidden_activation wins, as in transformers up to 4.47 (later ones read
    # hidden_act for Gemma 1): Gemma 1.0's configs say "gelu" (the exact
    # one) where the model was trained with the tanh one.
    act = _get(hf, "hidden_activation", str, None) or _get(hf, "hidden_act", str, "gelu_pytorch_tanh")
    if act not in _GELU_TANH:
        raise _unsupported(model_type, f"activation {act!r} (the builder's GeLU is the tanh one: "
                                       "a hidden_activation of gelu_pytorch_tanh says so)")
    for flag in ("attention_bias", "use_bidirectional_attention"):
        if _get(hf, flag, bool, False):
            raise _unsupported(model_type, flag)
    layers = _get(hf, "num_hidden_layers", int)
    fields = dict(names="hf_llama", layers=layers, d_model=_get(hf, "hidden_size", int),
                  heads=_get(hf, "num_attention_heads", int),
                  kv_heads=_get(hf, "num_key_value_heads", int, 16 if model_type == "gemma" else 4),
                  head_dim=_get(hf, "head_dim", int, 256), ffn=_get(hf, "intermediate_size", int),
                  norm="rmsnorm", norm_plus_one=True, embed_scale=True, activation="geglu", bias=False,
                  qkv="separate", gate_up="separate", weight_layout="out_in", rope=True,
                  causal=True, eps=_get(hf, "rms_norm_eps", float, 1e-6),
                  vocab=_get(hf, "vocab_size", int), tie_embeddings=_get(hf, "tie_word_embeddings", bool, True))
    if model_type == "gemma":
        return dict(fields, **_rope(hf, model_type, 10000.0))
    fields.update(post_norms=True, query_pre_attn_scalar=_get(hf, "query_pre_attn_scalar", float, 256.0))
    if model_type == "gemma2":
        return dict(fields, **_rope(hf, model_type, 10000.0), **_caps(hf, 50.0, 30.0),
                    **_sliding(hf, layers, 4096, lambda i: i % 2 == 0))
    pattern = _get(hf, "sliding_window_pattern", int, 6)
    sliding = _sliding(hf, layers, 4096, lambda i: (i + 1) % pattern != 0)
    if not sliding["sliding_window"]:  # its sliding layers' RoPE would stay apart
        raise _unsupported(model_type, "sliding_window null")
    return dict(fields, qk_norm=True, **_rope(hf, model_type, 1e6, 10000.0), **_caps(hf, 0.0, 0.0), **sliding)


def _rope_scaling_fields(cfg: ModelConfig) -> dict:
    """rope_scaling as a config.json holds it; longrope as Phi-3's do: the
    type and the two factor lists in the object, the original positions
    and those the factor stretches them to beside it."""
    scaling = cfg.rope_scaling_params
    if scaling.get("rope_type") != "longrope":
        return {"rope_scaling": scaling}
    original = scaling["original_max_position_embeddings"]
    if round(scaling["factor"] * original) != scaling["factor"] * original:
        raise ValueError(f"longrope factor {scaling['factor']} times {original} positions is no "
                         f"whole max_position_embeddings")
    out = {"rope_scaling": {"type": "longrope", "short_factor": scaling["short_factor"],
                            "long_factor": scaling["long_factor"]},
           "original_max_position_embeddings": original,
           "max_position_embeddings": round(scaling["factor"] * original)}
    if "attention_factor" in scaling:
        out["rope_scaling"]["attention_factor"] = scaling["attention_factor"]
    return out


def hf_config(cfg: ModelConfig, model_type: str | None = None) -> dict:
    """The config.json of `cfg` (names hf_gpt2 or hf_llama); model_type picks
    llama, qwen2, qwen3, mistral, phi3, gemma, gemma2 or gemma3_text for the
    Llama family (default, with norm_plus_one: gemma3_text with qk_norm,
    gemma2 with post_norms, else gemma; without: qwen3 with qk_norm, phi3
    with q|k|v fused, qwen2 when only q/k/v have biases, mistral with a
    sliding window, else llama)."""
    if cfg.names == "hf_gpt2":
        _check_no_gemma(cfg, "gpt2")
        if cfg.sliding_window:
            raise ValueError("gpt2 has no sliding window")
        return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": cfg.d_model,
                "n_head": cfg.heads, "n_layer": cfg.layers, "n_inner": cfg.ffn,
                "n_positions": cfg.positions, "vocab_size": cfg.vocab,
                "layer_norm_epsilon": cfg.eps, "activation_function": "gelu_new",
                "tie_word_embeddings": cfg.tie_embeddings}
    if cfg.names != "hf_llama":
        raise ValueError(f"names={cfg.names!r} has no Hugging Face config (hf_gpt2 or hf_llama)")
    if model_type == "gemma3":  # the text model inside Gemma3ForConditionalGeneration's config
        return {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
                "text_config": _gemma_config(cfg, "gemma3_text"),
                "vision_config": {"model_type": "siglip_vision_model"}}
    if model_type in GEMMA_TYPES or (model_type is None and cfg.norm_plus_one):
        return _gemma_config(cfg, model_type or ("gemma3_text" if cfg.qk_norm else "gemma2" if cfg.post_norms
                                                 else "gemma"))
    model_type = model_type or ("qwen3" if cfg.qk_norm else "phi3" if cfg.qkv in ("fused", "packed", "sliced")
                                else "qwen2" if cfg.qkv_bias and not cfg.bias
                                else "mistral" if cfg.sliding_window else "llama")
    _check_no_gemma(cfg, model_type)
    if cfg.activation != "swiglu":
        raise ValueError(f"{model_type} has SwiGLU, not {cfg.activation!r}")
    if cfg.qk_norm != (model_type == "qwen3"):
        raise ValueError(f"{model_type} needs qk_norm={model_type == 'qwen3'}")
    layouts = ({"fused", "packed", "sliced"}, {"fused"}) if model_type == "phi3" else ({"separate"}, {"separate"})
    if cfg.qkv not in layouts[0] or cfg.gate_up not in layouts[1]:
        raise ValueError(f"{model_type} needs qkv {' or '.join(map(repr, sorted(layouts[0])))} and "
                         f"gate_up {next(iter(layouts[1]))!r}")
    out = {"model_type": model_type,
           "architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
                              "qwen3": "Qwen3ForCausalLM", "mistral": "MistralForCausalLM",
                              "phi3": "Phi3ForCausalLM"}[model_type]],
           "hidden_size": cfg.d_model, "num_attention_heads": cfg.heads,
           "num_key_value_heads": cfg.kv_heads, "head_dim": cfg.head_dim, "num_hidden_layers": cfg.layers,
           "intermediate_size": cfg.ffn, "vocab_size": cfg.vocab, "rms_norm_eps": cfg.eps,
           "rope_theta": cfg.rope_theta, "max_position_embeddings": max(cfg.generate, cfg.seq, 2048),
           "hidden_act": "silu", "tie_word_embeddings": cfg.tie_embeddings}
    if cfg.rope_scaling:
        out.update(_rope_scaling_fields(cfg))
    if cfg.rotary_dim:
        if model_type != "phi3":
            raise ValueError(f"{model_type} has no partial_rotary_factor (rotary_dim={cfg.rotary_dim})")
        factor = cfg.rotary_dim / cfg.head_dim
        while int(cfg.head_dim * factor) < cfg.rotary_dim:  # the quotient rounded down
            factor = math.nextafter(factor, 1.0)
        out["partial_rotary_factor"] = factor
    if model_type in ("mistral", "phi3"):  # a window on every layer, or none
        if cfg.sliding_layers not in ((), tuple(range(cfg.layers))) or cfg.rope_local_theta:
            raise ValueError(f"{model_type} slides every layer or none, with one RoPE base")
        out["sliding_window"] = cfg.sliding_window or None
    elif cfg.sliding_window:
        raise ValueError(f"{model_type} has no sliding window")
    if model_type == "qwen2":
        if cfg.bias or not cfg.qkv_bias:
            raise ValueError("qwen2 has biases on q, k and v only (bias=False, qkv_bias=True)")
    elif model_type in ("qwen3", "phi3"):
        if cfg.bias or cfg.qkv_bias:
            raise ValueError(f"{model_type} is modelled without biases")
    elif cfg.bias != cfg.qkv_bias:
        raise ValueError(f"{model_type} has biases on every projection or none")
    else:
        out.update(attention_bias=cfg.bias, mlp_bias=cfg.bias)
    return out


def _check_no_gemma(cfg: ModelConfig, model_type: str) -> None:
    """A family's config.json without Gemma's fields, which it could not say."""
    gemma = [f for f in ("norm_plus_one", "embed_scale", "post_norms", "query_pre_attn_scalar", "attn_softcap",
                         "logit_softcap", "rope_local_theta") if getattr(cfg, f)]
    if gemma:
        raise ValueError(f"{model_type} has none of Gemma's {', '.join(gemma)}")


def _layer_types(cfg: ModelConfig) -> list[str]:
    return ["sliding_attention" if i in cfg.sliding_layers else "full_attention" for i in range(cfg.layers)]


def _gemma_config(cfg: ModelConfig, model_type: str) -> dict:
    first, third = model_type == "gemma", model_type == "gemma3_text"
    gemma = dict(norm_plus_one=True, embed_scale=True, activation="geglu", post_norms=not first, bias=False,
                 qkv_bias=False, qkv="separate", gate_up="separate", qk_norm=third, rotary_dim=0)
    if first:
        gemma.update(query_pre_attn_scalar=0.0, attn_softcap=0.0, logit_softcap=0.0, sliding_window=0)
    if not third:
        gemma.update(rope_local_theta=0.0)
    wrong = [f"{k}={v!r}" for k, v in gemma.items() if getattr(cfg, k) != v]
    if third and not (cfg.sliding_window and cfg.rope_local_theta):
        # (its sliding layers' base, unscaled: rope_local_base_freq)
        wrong.append("a sliding_window and rope_local_theta")
    if wrong:
        raise ValueError(f"{model_type} needs {', '.join(wrong)}")
    out = {"model_type": model_type,
           "architectures": [{"gemma": "GemmaForCausalLM", "gemma2": "Gemma2ForCausalLM",
                              "gemma3_text": "Gemma3ForCausalLM"}[model_type]],
           "hidden_size": cfg.d_model, "num_attention_heads": cfg.heads,
           "num_key_value_heads": cfg.kv_heads, "head_dim": cfg.head_dim, "num_hidden_layers": cfg.layers,
           "intermediate_size": cfg.ffn, "vocab_size": cfg.vocab, "rms_norm_eps": cfg.eps,
           "rope_theta": cfg.rope_theta, "max_position_embeddings": max(cfg.generate, cfg.seq, 2048),
           "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": cfg.tie_embeddings,
           "attention_bias": False}
    if cfg.rope_scaling:
        out.update(_rope_scaling_fields(cfg))
    if not first:
        out.update(query_pre_attn_scalar=cfg.query_pre_attn_scalar or cfg.head_dim,
                   attn_logit_softcapping=cfg.attn_softcap or None,
                   final_logit_softcapping=cfg.logit_softcap or None,
                   sliding_window=cfg.sliding_window or None, layer_types=_layer_types(cfg))
    if third:
        out["rope_local_base_freq"] = cfg.rope_local_theta
    return out


def checkpoint_files(model_dir: str) -> list[str]:
    """The safetensors files of a model directory: those its
    model.safetensors.index.json lists, else model.safetensors; [] if neither."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        files = sorted(set(read_weight_map(index).values()))
        return [os.path.join(model_dir, name) for name in files]
    single = os.path.join(model_dir, "model.safetensors")
    return [single] if os.path.exists(single) else []


def detect_prefix(model_type: str, names: set[str]) -> str | None:
    """The prefix the checkpoint gives the transformer's weights, read off
    its names: GPT-2 checkpoints saved from GPT2Model (the original ones)
    have none, those saved from GPT2LMHeadModel "transformer."."""
    family_prefix, probe = ("transformer.", "wte.weight") if model_type == "gpt2" else ("model.", "embed_tokens.weight")
    if model_type == "gemma3":
        return next((p for p in _GEMMA3_PREFIXES if p + probe in names), None)
    if family_prefix + probe in names:
        return family_prefix
    if probe in names:
        return ""
    return None


def read_config(path: str, **overrides) -> ModelConfig:
    """`--hf-config DIR/config.json`: the config, with the prefix of the
    checkpoint next to it when there is one and the end ids of the
    generation_config.json next to it (or of the config)."""
    hf = read_json(path)
    model_dir = os.path.dirname(os.path.abspath(path))
    generation_path = os.path.join(model_dir, "generation_config.json")
    generation = (read_json(generation_path) if overrides.get("generate") and os.path.exists(generation_path)
                  else None)
    files = checkpoint_files(model_dir)
    names: set[str] = set()
    for file in files:
        names |= set(read_safetensors_names(file))
    prefix = detect_prefix(hf.get("model_type"), names) if names else None
    cfg = config_from_hf(hf, prefix, path, generation, **overrides)
    if names:
        missing = sorted(set(checkpoint_names(cfg).values()) - names)
        if missing:
            raise ValueError(f"{path}: the checkpoint lacks {len(missing)} weight(s) of the model, "
                             f"e.g. {', '.join(missing[:3])}")
    return cfg


def to_checkpoint(cfg: ModelConfig, weights: dict) -> dict:
    """tpmlir-named weights -> the checkpoint's names and shapes (a padded
    vocabulary's rows cut off, packed weights one after the other)."""
    import numpy as np
    names, packed = checkpoint_names(cfg), packed_rows(cfg)
    out, parts = {}, {}
    for k, v in as_checkpoint(cfg, weights).items():
        if k in packed:
            parts.setdefault(names[k], []).append((packed[k][0], v))
        elif k in names:
            out[names[k]] = v
    for name, blocks in parts.items():
        out[name] = np.concatenate([v for _, v in sorted(blocks, key=lambda block: block[0])])
    return out


def from_checkpoint(cfg: ModelConfig, tensors: dict) -> dict:
    """A checkpoint's tensors -> the weights of `cfg` by tpmlir name (extra
    tensors, e.g. GPT-2's attention-mask buffers, are left out)."""
    names = checkpoint_names(cfg)
    missing = sorted(v for v in names.values() if v not in tensors)
    if missing:
        raise ValueError(f"the checkpoint lacks {', '.join(missing[:5])}")
    packed = packed_rows(cfg)
    shapes = dict(param_specs(cfg))

    def rows(k: str):
        start, stored = packed[k]
        tensor = tensors[names[k]]
        if tuple(tensor.shape) != stored:
            raise ValueError(f"'{names[k]}' is {tuple(tensor.shape)} in the checkpoint; the model packs "
                             f"its q, k and v in {stored}")
        return tensor[start:start + shapes[k][0]]
    return as_graph(cfg, {k: rows(k) if k in packed else tensors[v] for k, v in names.items()})

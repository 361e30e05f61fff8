"""Model configurations for the transformer builders.

A `ModelConfig` fixes every structural choice the builder and the numpy
reference make, so one config always means one graph.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass

_CHOICES = {
    "norm": ("layernorm", "rmsnorm"),
    "activation": ("gelu", "swiglu", "geglu"),
    "qkv": ("fused", "separate", "packed", "sliced"),
    "gate_up": ("separate", "fused"),
    "weight_layout": ("in_out", "out_in"),
    "names": ("tpmlir", "hf_gpt2", "hf_llama"),
    "softmax": ("named", "generic"),
    "dtype": ("f32",),
    "decode_attention": ("seen", "masked"),
}

# The RoPE scalings a model may carry (Hugging Face's rope_scaling "rope_type"),
# each with the fields its inverse frequencies read.
_ROPE_SCALING_FIELDS = {
    "linear": ("factor",),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    # Phi-3's: per-frequency factors, cos and sin scaled by an attention factor.
    "longrope": ("factor", "original_max_position_embeddings"),
}


def _positive_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0


def _positive_numbers(value) -> bool:
    return isinstance(value, list) and bool(value) and all(_positive_number(v) for v in value)


def rope_attention_factor(scaling: dict) -> float:
    """What longrope multiplies cos and sin by (1 for the other scalings):
    its attention_factor, or as transformers' _compute_longrope_parameters
    derives it from the factor, sqrt(1 + ln(factor) / ln(original max
    positions)) when the factor is above 1."""
    if scaling.get("rope_type") != "longrope":
        return 1.0
    if "attention_factor" in scaling:
        return float(scaling["attention_factor"])
    factor = scaling["factor"]
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(scaling["original_max_position_embeddings"]))


def rope_scaling_json(scaling) -> str:
    """Hugging Face's rope_scaling (a config.json's object) as
    ModelConfig.rope_scaling: JSON of the kind ("rope_type", or "type" as
    older configs say) and the fields that kind reads; "" for none (null, {}
    or "default"). A kind that changes more than the frequencies (yarn,
    dynamic) is refused. longrope's factor is the one its attention factor
    comes from (Phi-3: max_position_embeddings over the original, which
    hf.py puts in the object)."""
    if not scaling:
        return ""
    if not isinstance(scaling, dict):
        raise ValueError(f"rope_scaling must be an object, not {scaling!r}")
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "default":
        return ""
    if kind not in _ROPE_SCALING_FIELDS:
        raise ValueError(f"rope_scaling of type {kind!r} is not supported (only "
                         f"{', '.join(_ROPE_SCALING_FIELDS)})")
    out = {"rope_type": kind}
    given = ("attention_factor",) if kind == "longrope" and "attention_factor" in scaling else ()
    for field in _ROPE_SCALING_FIELDS[kind] + given:
        value = scaling.get(field)
        if not _positive_number(value):
            raise ValueError(f"rope_scaling {field!r} must be a positive number, not {value!r}")
        out[field] = value
    if kind == "longrope":
        for field in ("short_factor", "long_factor"):
            if not _positive_numbers(scaling.get(field)):
                raise ValueError(f"rope_scaling {field!r} must be a list of positive numbers, "
                                 f"not {scaling.get(field)!r}")
            out[field] = scaling[field]
        if len(out["short_factor"]) != len(out["long_factor"]):
            raise ValueError("rope_scaling short_factor and long_factor must be as long")
        if out["original_max_position_embeddings"] <= 1:  # the attention factor divides by its log
            raise ValueError("rope_scaling 'original_max_position_embeddings' must be more than 1")
    if kind == "llama3" and not out["high_freq_factor"] > out["low_freq_factor"]:
        raise ValueError(f"rope_scaling high_freq_factor ({out['high_freq_factor']}) must be "
                         f"more than low_freq_factor ({out['low_freq_factor']})")
    return json.dumps(out, sort_keys=True)


def _positive(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class ModelConfig:
    layers: int = 2
    d_model: int = 64
    heads: int = 4
    kv_heads: int | None = None  # None: same as heads (no GQA)
    # Each head's width; None: d_model // heads. Qwen3 and Mistral-Nemo set it
    # apart (q/k/v project to heads * head_dim, the output back to d_model).
    head_dim: int | None = None
    # RMSNorm over each head of q and of k, after the projection and before
    # RoPE, with weights [head_dim] (Qwen3's q_norm / k_norm).
    qk_norm: bool = False
    ffn: int = 256
    # A gated MLP's gate and up projections as two weights, or "fused": one
    # [.., 2 * ffn], the gate's columns first (Phi-3's gate_up_proj).
    gate_up: str = "separate"
    norm: str = "layernorm"
    # gelu: GeLU (tanh) of one up projection (GPT-2); swiglu: SiLU(gate) * up
    # (Llama); geglu: GeLU (tanh)(gate) * up (Gemma).
    activation: str = "gelu"
    bias: bool = True
    # q|k|v as one projection read in three equal blocks ("fused", GPT-2's
    # c_attn), as three ("separate"), or as three that a checkpoint packs as
    # row blocks of one [out, in] weight ("packed": Phi-3's qkv_proj with
    # fewer kv heads, whose unequal sections no cut of equal blocks takes;
    # the loader reads each its rows, tp.checkpoint_offset), or as one
    # [out, in] weight of q|k|v's rows whose result the graph slices into
    # sections of their widths ("sliced": a torch-mlir export of Phi-3's
    # qkv_proj; tp-import computes each from its rows).
    qkv: str = "fused"
    # out_in: torch-style [out, in] weights, used through linalg.transpose.
    weight_layout: str = "in_out"
    rope: bool = False
    # RoPE over the first rotary_dim features of each head only, the rest
    # passed as they are (Phi-4-mini's partial_rotary_factor 0.75); 0: all.
    rotary_dim: int = 0
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
    # Gemma's changes to the Llama block: RMSNorms that scale by 1 + weight
    # (its checkpoints store each scale less one), the embedded rows times
    # sqrt(d_model), and (Gemma 2) a norm on the attention's and the MLP's
    # outputs before each residual add, scores scaled by
    # query_pre_attn_scalar ** -0.5 (0: by head_dim's), and the attention
    # scores and the logits capped as cap * tanh(x / cap) (0: not capped).
    norm_plus_one: bool = False
    embed_scale: bool = False
    post_norms: bool = False
    query_pre_attn_scalar: float = 0.0
    attn_softcap: float = 0.0
    logit_softcap: float = 0.0
    # The fields below came with generation; `describe` prints them only when
    # they differ from these defaults, so older headers read the same.
    # > 0: a learned position table `wpe` [positions, D] added to the token
    # embedding (GPT-2). A generating model without RoPE gets one of
    # `generate` rows unless this says more.
    positions: int = 0
    rope_theta: float = 10000.0
    # RoPE's frequencies scaled as Hugging Face's rope_scaling says (Llama 3's
    # "llama3", "linear", Phi-3's "longrope"): that object as JSON; "" for none.
    rope_scaling: str = ""
    # > 0: the layers of sliding_layers attend to their last sliding_window
    # positions only, their own included (Mistral's every layer, Gemma 2's
    # every other one, five of Gemma 3's six).
    sliding_window: int = 0
    sliding_layers: tuple[int, ...] = ()
    # > 0: the RoPE base of the sliding layers, whose frequencies are not
    # scaled (Gemma 3's rope_local_base_freq); 0: the model's own.
    rope_local_theta: float = 0.0
    # Biases of the q/k/v projections; None: as `bias` (Qwen2: True, bias False).
    qkv_bias: bool | None = None
    # > 0: the cache length S_max of a generating model, emitted as
    # @prefill(ids [B, seq], caches) and @decode(ids [B, 1], pos, caches),
    # each returning the greedy next ids [B, 1] and the caches
    # [B, kv_heads, generate, head_dim] (a sliding layer's: a ring of its
    # window, cache_length) (docs/generation.md).
    generate: int = 0
    # Generation also returns the logits [B, 1, vocab] of the last position.
    keep_logits: bool = False
    # > 0: the vocabulary's rows padded to a multiple of this, as Megatron-LM
    # pads them (--make-vocab-size-divisible-by), so that the tp sizes that
    # divide the padded rows cut the embedding and the LM head (GPT-2's 50257
    # rows divide by none). The checkpoint keeps its `vocab` rows: the graph
    # says so (tp.checkpoint_shape) and tp-run pads them with zeros; the
    # padded positions' logits are -inf, so no argmax picks one.
    pad_vocab: int = 0
    # A generating model's end ids (a Hugging Face config's eos_token_id, one
    # or a list): tp-run stops a sequence at the first it gives unless told
    # other ones (--eos) or none (--ignore-eos). The graph carries them as
    # the module attribute tp.eos_token_ids.
    eos_token_ids: tuple[int, ...] = ()
    # What @decode's attention reads of the caches: "seen", the positions
    # [0, pos] (a slice of dynamic length pos + 1: a step reads only what it
    # attends to); "masked", all S_max positions with the ones past pos
    # masked (static shapes: no size depends on pos, as capturing a step in
    # a CUDA graph needs; the reads grow with S_max).
    decode_attention: str = "seen"
    # Also @extend(ids [B, seq], pos, valid, caches): the prompt's next seq
    # tokens at positions pos .. pos+seq-1 (the first `valid` of them the
    # prompt's, the rest padding) over the cache written before them, so
    # that a prompt longer than seq runs in chunks of seq rather than one
    # @decode per token past the first seq (execute.prompt_calls).
    chunked_prefill: bool = False
    # Prompts of different lengths in one batch: each function also takes
    # `padding` [B], the positions each sequence's prompt is left-padded by
    # (its tokens at positions padding[b] on, position p being its p -
    # padding[b]). No key of the padding is attended to, and each sequence
    # continues as it would alone.
    ragged: bool = False
    # The weights' names: tpmlir's own, or a Hugging Face checkpoint's
    # (GPT2LMHeadModel, LlamaForCausalLM / Qwen2ForCausalLM), see params.py.
    names: str = "tpmlir"
    # Prefix of the transformer's own weights in the checkpoint; None: the
    # family's ("transformer." for GPT-2, "model." for Llama). GPT-2
    # checkpoints saved from GPT2Model have none ("").
    name_prefix: str | None = None

    def __post_init__(self):
        if self.kv_heads is None:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.head_dim is None and _positive(self.heads) and _positive(self.d_model) \
                and self.d_model % self.heads == 0:
            object.__setattr__(self, "head_dim", self.d_model // self.heads)
        if self.qkv_bias is None:
            object.__setattr__(self, "qkv_bias", self.bias)
        if self.generate > 0 and self.vocab and not self.rope and not self.positions:
            object.__setattr__(self, "positions", self.generate)
        if self.rope_scaling:  # one spelling per scaling, so one config one graph
            object.__setattr__(self, "rope_scaling", rope_scaling_json(self.rope_scaling_params))
        self.validate()

    @property
    def rings(self) -> bool:
        """Whether a layer keeps a ring cache (a sliding window shorter than
        the positions served, cache_length)."""
        return any(self.cache_length(i) < self.generate for i in range(self.layers))

    @property
    def rope_dim(self) -> int:
        """The features of each head RoPE rotates: rotary_dim, or all."""
        return self.rotary_dim or self.head_dim

    @property
    def rope_tables_in_graph(self) -> bool:
        """RoPE's cos/sin tables computed in the graph (from the positions)
        rather than passed as the arguments rope.cos/rope.sin: in a generating
        model, under Hugging Face names (no checkpoint holds the tables), and
        with a second base for the sliding layers (one pair of arguments)."""
        return self.rope and (self.generate > 0 or self.names != "tpmlir" or bool(self.rope_local_theta))

    @property
    def vocab_rows(self) -> int:
        """The rows of the graph's embedding and LM head: `vocab` padded to a
        multiple of pad_vocab."""
        if not self.pad_vocab:
            return self.vocab
        return -(-self.vocab // self.pad_vocab) * self.pad_vocab

    @property
    def rope_scaling_params(self) -> dict:
        """rope_scaling as a dict ({} for none)."""
        if not self.rope_scaling:
            return {}
        try:
            return json.loads(self.rope_scaling)
        except ValueError:
            raise ValueError(f"rope_scaling must be a JSON object, got {self.rope_scaling!r}") from None

    @property
    def gated(self) -> bool:
        """An MLP of gate and up projections (swiglu, geglu)."""
        return self.activation != "gelu"

    @property
    def attn_scale(self) -> float:
        """What the attention scores are multiplied by."""
        return 1.0 / math.sqrt(self.query_pre_attn_scalar or self.head_dim)

    def window_of_layer(self, i: int) -> int:
        """The sliding window of layer i; 0 where it attends to every position."""
        return self.sliding_window if i in self.sliding_layers else 0

    def cache_length(self, i: int) -> int:
        """The positions layer i's cache holds: S_max, or a sliding layer's
        window when shorter, as a ring (position p in row p mod W): no
        query reads a key older than its window."""
        window = self.window_of_layer(i)
        return window if 0 < window < self.generate else self.generate

    def rope_of_layer(self, i: int) -> tuple[float, dict]:
        """Layer i's RoPE base and scaling (rope_scaling_params' form)."""
        if self.rope_local_theta and i in self.sliding_layers:
            return self.rope_local_theta, {}
        return self.rope_theta, self.rope_scaling_params

    @property
    def group(self) -> int:
        """Query heads per kv head (1 without GQA)."""
        return self.heads // self.kv_heads

    def replace(self, **changes) -> "ModelConfig":
        # A config without GQA should stay without GQA when only `heads` changes.
        if "heads" in changes and "kv_heads" not in changes and self.kv_heads == self.heads:
            changes["kv_heads"] = None
        # A head's width follows d_model / heads unless it was set apart.
        if ("heads" in changes or "d_model" in changes) and "head_dim" not in changes \
                and self.head_dim * self.heads == self.d_model:
            changes["head_dim"] = None
        # Likewise the q/k/v biases follow `bias` unless they were set apart.
        if "bias" in changes and "qkv_bias" not in changes and self.qkv_bias == self.bias:
            changes["qkv_bias"] = None
        return dataclasses.replace(self, **changes)

    def validate(self) -> None:
        for field, allowed in _CHOICES.items():
            value = getattr(self, field)
            if value not in allowed:
                raise ValueError(f"{field}={value!r} is not one of {', '.join(allowed)}")
        for field in ("layers", "d_model", "heads", "kv_heads", "ffn", "batch", "seq"):
            value = getattr(self, field)
            if not _positive(value):
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.head_dim is None:  # __post_init__ derives it when heads divide d_model
            raise ValueError(
                f"d_model={self.d_model} is not divisible by heads={self.heads}")
        if not _positive(self.head_dim):
            raise ValueError(f"head_dim must be a positive integer, got {self.head_dim!r}")
        if self.qk_norm and self.norm != "rmsnorm":
            raise ValueError("qk_norm is an RMSNorm (norm='rmsnorm')")
        if self.kv_heads > self.heads or self.heads % self.kv_heads:
            raise ValueError(
                f"heads={self.heads} must be a multiple of kv_heads={self.kv_heads}")
        if self.qkv == "fused" and self.kv_heads != self.heads:
            # The fused idiom reshapes to [B, S, 3, H, Dh]; that needs equal q/k/v widths.
            raise ValueError(
                f"qkv='fused' needs kv_heads == heads (got kv_heads={self.kv_heads}, "
                f"heads={self.heads}); use qkv='separate', 'packed' or 'sliced' for GQA")
        if self.qkv in ("packed", "sliced") and self.weight_layout != "out_in":
            raise ValueError(f"qkv={self.qkv!r} takes rows of [out, in] weights (weight_layout='out_in')")
        if self.gate_up == "fused" and not self.gated:
            raise ValueError("gate_up='fused' is an option of a gated activation (swiglu, geglu)")
        if self.norm_plus_one and self.norm != "rmsnorm":
            raise ValueError("norm_plus_one is an option of norm='rmsnorm'")
        if self.embed_scale and not self.vocab:
            raise ValueError("embed_scale needs a whole model (vocab > 0)")
        for field in ("query_pre_attn_scalar", "attn_softcap", "logit_softcap", "rope_local_theta"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"{field} must be 0 or a positive number, got {value!r}")
        if self.logit_softcap and not self.vocab:
            raise ValueError("logit_softcap needs a whole model (vocab > 0)")
        if self.rope and self.head_dim % 2:
            raise ValueError(f"rope needs an even head_dim, got {self.head_dim}")
        if self.rotary_dim and not (self.rope and isinstance(self.rotary_dim, int) and self.rotary_dim % 2 == 0
                                    and 0 < self.rotary_dim <= self.head_dim):
            raise ValueError(f"rotary_dim must be an even number of features of a head ({self.head_dim}) "
                             f"of a model with rope, got {self.rotary_dim!r}")
        if isinstance(self.vocab, bool) or not isinstance(self.vocab, int) or self.vocab < 0:
            raise ValueError(f"vocab must be 0 or a positive integer, got {self.vocab!r}")
        if not self.eps > 0:
            raise ValueError(f"eps must be positive, got {self.eps!r}")
        if not self.rope_theta > 0:
            raise ValueError(f"rope_theta must be positive, got {self.rope_theta!r}")
        if self.rope_scaling and not self.rope:
            raise ValueError("rope_scaling is an option of rope")
        rope_scaling_json(self.rope_scaling_params)
        scaling = self.rope_scaling_params
        if scaling.get("rope_type") == "longrope":
            if len(scaling["short_factor"]) != self.rope_dim // 2:
                raise ValueError(f"rope_scaling longrope has {len(scaling['short_factor'])} factors "
                                 f"for {self.rope_dim} rotated features of a head; it needs {self.rope_dim // 2}")
            positions, original = max(self.generate, self.seq), scaling["original_max_position_embeddings"]
            if positions > original:  # transformers then turns to long_factor for every position
                raise ValueError(f"rope_scaling longrope: {positions} positions pass "
                                 f"original_max_position_embeddings {original}, past which the "
                                 f"long factors apply to the whole sequence; serve {original} at most")
        if not _positive(self.sliding_window) and (self.sliding_window or self.sliding_layers):
            raise ValueError(f"sliding_window must be a positive integer with sliding_layers, "
                             f"got {self.sliding_window!r}")
        if self.sliding_window == 1 and self.generate:  # its ring of 1 row: never written in place
            raise ValueError("sliding_window 1 attends to each position alone; a generating model's "
                             "window has at least 2")
        if self.sliding_window and not (
                isinstance(self.sliding_layers, tuple) and self.sliding_layers
                and all(isinstance(i, int) and not isinstance(i, bool) for i in self.sliding_layers)
                and list(self.sliding_layers) == sorted(set(self.sliding_layers))
                and 0 <= self.sliding_layers[0] and self.sliding_layers[-1] < self.layers):
            raise ValueError(f"sliding_layers must be layers in [0, {self.layers}) in increasing order, "
                             f"got {self.sliding_layers!r}")
        if self.sliding_window and not self.causal:
            raise ValueError("sliding_window is an option of a causal model")
        if self.rope_local_theta and not (self.rope and self.sliding_layers):
            raise ValueError("rope_local_theta is an option of rope with sliding_layers")
        for field in ("positions", "generate", "pad_vocab"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{field} must be 0 or a positive integer, got {value!r}")
        if self.generate:
            if not self.vocab:
                raise ValueError("generate needs a whole model (vocab > 0)")
            if not self.causal:
                raise ValueError("generate needs a causal model")
            if self.seq > self.generate:
                raise ValueError(f"the prompt (seq={self.seq}) does not fit the cache "
                                 f"(generate={self.generate})")
        if self.positions and self.rope:
            raise ValueError("positions (a learned position table) and rope exclude each other")
        if self.positions and not self.vocab:
            raise ValueError("positions needs a whole model (vocab > 0)")
        if self.positions and self.positions < max(self.seq, self.generate):
            raise ValueError(f"positions={self.positions} is fewer than the "
                             f"{max(self.seq, self.generate)} positions the model reads")
        if self.pad_vocab and not self.vocab:
            raise ValueError("pad_vocab needs a whole model (vocab > 0)")
        if self.keep_logits and not self.generate:
            raise ValueError("keep_logits is an option of generate")
        if not isinstance(self.eos_token_ids, tuple) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < (self.vocab or i + 1)
                for i in self.eos_token_ids):
            raise ValueError(f"eos_token_ids must be a tuple of ids in the vocabulary [0, {self.vocab}), "
                             f"got {self.eos_token_ids!r}")
        if self.eos_token_ids and not self.generate:
            raise ValueError("eos_token_ids is an option of generate")
        if self.decode_attention != "seen" and not self.generate:
            raise ValueError("decode_attention is an option of generate")
        if self.chunked_prefill and not self.generate:
            raise ValueError("chunked_prefill is an option of generate")
        if self.ragged and not self.generate:
            raise ValueError("ragged is an option of generate")
        self._validate_names()

    def _validate_names(self) -> None:
        """Hugging Face names come with that family's layouts (params.py)."""
        need = {"hf_gpt2": dict(qkv="fused", weight_layout="in_out", norm="layernorm",
                                activation="gelu", rope=False, post_norms=False),
                "hf_llama": dict(weight_layout="out_in", norm="rmsnorm", positions=0)}.get(self.names, {})
        for field, value in need.items():
            if getattr(self, field) != value:
                raise ValueError(f"names={self.names!r} needs {field}={value!r}, "
                                 f"got {getattr(self, field)!r}")
        if self.names == "hf_gpt2" and not (self.vocab and self.bias and self.qkv_bias):
            raise ValueError("names='hf_gpt2' needs a whole model (vocab > 0) with biases")
        if self.names == "hf_gpt2" and self.head_dim * self.heads != self.d_model:
            raise ValueError("names='hf_gpt2' needs head_dim = d_model / heads (its config has no head_dim)")
        if self.names == "hf_llama" and not self.gated:
            raise ValueError("names='hf_llama' needs a gated activation (swiglu, geglu), "
                             f"got {self.activation!r}")
        if self.names == "hf_llama" and (self.qkv == "separate") != (self.gate_up == "separate"):
            raise ValueError("names='hf_llama' holds q|k|v and gate|up each in one weight (Phi-3) or "
                             f"neither, not qkv={self.qkv!r} with gate_up={self.gate_up!r}")
        if self.names == "hf_llama" and not self.vocab:
            raise ValueError("names='hf_llama' needs a whole model (vocab > 0)")
        if self.name_prefix is not None and self.names == "tpmlir":
            raise ValueError("name_prefix is an option of the Hugging Face names")


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

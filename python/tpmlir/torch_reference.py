"""Greedy generation with a KV cache in PyTorch, independent of the builder.

Written from the Hugging Face modelling code (GPT2LMHeadModel,
LlamaForCausalLM / Qwen2ForCausalLM, GemmaForCausalLM / Gemma2ForCausalLM /
Gemma3ForCausalLM), not from tpmlir's numpy reference: it
reads a Hugging Face config dict and a state dict under the checkpoint's own
names and layouts (GPT-2's Conv1D [in, out] with fused c_attn, Llama's Linear
[out, in]), and keeps its cache the way `transformers` does, K and V per layer
[B, kv_heads, T, Dh] growing by concatenation. Needs torch (Debian's 1.13
works); the tpmlir package does not import this module.

    model = load(hf_config, state_dict)
    ids, logits = greedy_generate(model, prompt, steps)

`forward(ids, past, logits_to_keep)` returns the logits of the last
`logits_to_keep` positions only (0: all of them), as `transformers`'
`logits_to_keep` does: generation needs the last one.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

LLAMA_TYPES = ("llama", "qwen2", "qwen3", "mistral", "phi3")


def _tensors(state: dict) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.asarray(v, dtype=np.float32)) for k, v in state.items()}


def _attend(q, k, v, past_len, scaling=None, softcap=None, window=None):
    """q [B, H, S, Dh] at positions past_len.., k/v [B, H, T, Dh] (T = past_len + S);
    the scores times `scaling` (None: divided by sqrt(Dh)), then capped at
    `softcap` as Gemma 2's eager_attention_forward caps them; a query sees
    the keys of its last `window` positions only (transformers'
    sliding_window_overlay: kv_idx > q_idx - sliding_window)."""
    s, t = q.shape[2], k.shape[2]
    if scaling is None:
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    else:
        scores = torch.matmul(q, k.transpose(2, 3)) * scaling
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    allowed = torch.ones(s, t, dtype=torch.bool).tril(diagonal=past_len)
    if window is not None:
        allowed &= torch.ones(s, t, dtype=torch.bool).triu(diagonal=past_len - window + 1)
    scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v


def _scaled_inv_freq(inv_freq: torch.Tensor, scaling: dict) -> torch.Tensor:
    """transformers' _compute_linear_scaling_rope_parameters and
    _compute_llama3_parameters (modeling_rope_utils.py)."""
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return inv_freq
    factor = scaling["factor"]
    if kind == "linear":
        return inv_freq / factor
    if kind != "llama3":
        raise ValueError(f"rope_scaling {kind!r} is not modelled here")
    low_freq_factor, high_freq_factor = scaling["low_freq_factor"], scaling["high_freq_factor"]
    old_context_len = scaling["original_max_position_embeddings"]
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def _longrope(config: dict, scaling: dict, base: float, dim: int):
    """transformers' _compute_longrope_parameters (4.4x): the short and the
    long inverse frequencies, the attention factor cos and sin are
    multiplied by, and the positions past which the long ones apply."""
    factor = scaling.get("factor")
    if config.get("original_max_position_embeddings"):  # Phi-3's
        original = config["original_max_position_embeddings"]
        factor = config["max_position_embeddings"] / original
    else:
        original = scaling.get("original_max_position_embeddings") or config["max_position_embeddings"]
        factor = factor or config["max_position_embeddings"] / original
    attention = scaling.get("attention_factor")
    if attention is None:
        attention = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    inv = [1.0 / (torch.tensor(scaling[f], dtype=torch.float32) * base ** shape)
           for f in ("short_factor", "long_factor")]
    return inv[0], inv[1], attention, original


def _rope_parameters(config: dict, layer_type: str) -> dict:
    """transformers 5's rope_parameters for the layers of `layer_type` ({}
    when the config has none)."""
    params = config.get("rope_parameters") or {}
    if "full_attention" in params or "sliding_attention" in params:
        return params.get(layer_type) or {}
    return params if layer_type == "full_attention" else {}


class GPT2:
    """GPT2LMHeadModel's forward with `past_key_values`."""

    def __init__(self, config: dict, state: dict):
        self.c = config
        w = _tensors(state)
        prefix = "transformer." if "transformer.wte.weight" in w else ""
        self.w = {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in w.items()}
        self.heads, self.eps = config["n_head"], config.get("layer_norm_epsilon", 1e-5)

    def _ln(self, x, name):
        return F.layer_norm(x, x.shape[-1:], self.w[f"{name}.weight"], self.w[f"{name}.bias"], self.eps)

    def _conv1d(self, x, name):  # transformers' Conv1D: x @ W + b, W [in, out]
        return torch.addmm(self.w[f"{name}.bias"], x.reshape(-1, x.shape[-1]),
                           self.w[f"{name}.weight"]).view(*x.shape[:-1], -1)

    def forward(self, ids: torch.Tensor, past: list | None, logits_to_keep: int = 0):
        b, s = ids.shape
        past_len = past[0][0].shape[2] if past else 0
        positions = torch.arange(past_len, past_len + s)
        h = self.w["wte.weight"][ids] + self.w["wpe.weight"][positions][None]
        d = h.shape[-1]
        dh = d // self.heads
        present = []
        for i in range(self.c["n_layer"]):
            p = f"h.{i}"
            q, k, v = self._conv1d(self._ln(h, f"{p}.ln_1"), f"{p}.attn.c_attn").split(d, dim=2)
            q, k, v = (t.view(b, s, self.heads, dh).permute(0, 2, 1, 3) for t in (q, k, v))
            if past:
                k, v = torch.cat([past[i][0], k], dim=2), torch.cat([past[i][1], v], dim=2)
            present.append((k, v))
            ctx = _attend(q, k, v, past_len).permute(0, 2, 1, 3).reshape(b, s, d)
            h = h + self._conv1d(ctx, f"{p}.attn.c_proj")
            up = F.gelu(self._conv1d(self._ln(h, f"{p}.ln_2"), f"{p}.mlp.c_fc"), approximate="tanh")
            h = h + self._conv1d(up, f"{p}.mlp.c_proj")
        logits = self._ln(h[:, -logits_to_keep:], "ln_f") @ self.w["wte.weight"].T
        return logits, present


class Llama:
    """LlamaForCausalLM's (and Qwen2's, Qwen3's, Mistral's) forward with
    `past_key_values`. Qwen3 normalizes each head of q and k (q_norm, k_norm,
    RMSNorm over head_dim) before RoPE. Phi-3 (Phi3ForCausalLM) projects q|k|v
    with one qkv_proj and gate|up with one gate_up_proj."""

    def __init__(self, config: dict, state: dict):
        self.c = config
        self.w = _tensors(state)
        self.heads = config["num_attention_heads"]
        self.kv_heads = config.get("num_key_value_heads") or self.heads
        self.eps = config.get("rms_norm_eps", 1e-6)
        # transformers' Qwen3Config takes 128 when the config has none.
        self.dh = config.get("head_dim") or (128 if config["model_type"] == "qwen3"
                                             else config["hidden_size"] // self.heads)
        # transformers 5 writes RoPE's fields in rope_parameters (per layer
        # type for Gemma 3), older versions as rope_theta and rope_scaling.
        params = _rope_parameters(config, "full_attention")
        theta = params.get("rope_theta", config.get("rope_theta", 10000.0))
        # Phi-3's partial_rotary_factor (Phi-4-mini): RoPE over the first
        # features of each head, the inverse frequencies over those alone
        # (read for every family here; tpmlir.hf refuses it outside Phi-3).
        self.rotary = int(self.dh * params.get("partial_rotary_factor", config.get("partial_rotary_factor", 1.0)))
        scaling = params or config.get("rope_scaling") or {}
        self.long_inv_freq, self.attention_scaling = None, 1.0
        if scaling.get("rope_type", scaling.get("type")) == "longrope":
            self.inv_freq, self.long_inv_freq, self.attention_scaling, self.original = _longrope(
                config, scaling, theta, self.rotary)
        else:
            self.inv_freq = _scaled_inv_freq(self._inv_freq(theta), scaling)
        # MistralConfig's default window is 4096; Phi-3's none.
        self.window = (config.get("sliding_window", 4096) if config["model_type"] == "mistral"
                       else config.get("sliding_window") if config["model_type"] == "phi3" else None)

    def _inv_freq(self, theta: float) -> torch.Tensor:
        return 1.0 / (theta ** (torch.arange(0, self.rotary, 2, dtype=torch.int64).float() / self.rotary))

    def _rms(self, x, name):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.w[f"{name}.weight"] * (x * torch.rsqrt(variance + self.eps))

    def _linear(self, x, name):
        return F.linear(x, self.w[f"{name}.weight"], self.w.get(f"{name}.bias"))

    def _rope(self, x, cos, sin):
        # transformers' Phi-3 apply_rotary_pos_emb: the first cos.shape[-1]
        # features rotated, the others passed.
        part, rest = x[..., :cos.shape[-1]], x[..., cos.shape[-1]:]
        half = part.shape[-1] // 2
        rotated = torch.cat([-part[..., half:], part[..., :half]], dim=-1)
        return torch.cat([part * cos + rotated * sin, rest], dim=-1)

    def _cached(self, q, k, v, cos, sin, past, i, present):
        """q, k, v [B, S, heads, Dh] as [B, heads, *, Dh], RoPE on q and k, and
        k and v after layer i's cached ones (the new cache appended to `present`)."""
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
        if past:
            k, v = torch.cat([past[i][0], k], dim=2), torch.cat([past[i][1], v], dim=2)
        present.append((k, v))
        return q, k, v

    def forward(self, ids: torch.Tensor, past: list | None, logits_to_keep: int = 0):
        b, s = ids.shape
        past_len = past[0][0].shape[2] if past else 0
        positions = torch.arange(past_len, past_len + s).float()
        if self.long_inv_freq is not None and past_len + s > self.original:
            # transformers' Phi-3 then runs the whole sequence again with the
            # long factors (prepare_inputs_for_generation drops the cache).
            raise NotImplementedError("longrope past original_max_position_embeddings is not modelled")
        freqs = positions[:, None] * self.inv_freq[None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        cos, sin = emb.cos() * self.attention_scaling, emb.sin() * self.attention_scaling
        h = self.w["model.embed_tokens.weight"][ids]
        group = self.heads // self.kv_heads
        present = []
        for i in range(self.c["num_hidden_layers"]):
            p = f"model.layers.{i}"
            x = self._rms(h, f"{p}.input_layernorm")
            if self.c["model_type"] == "phi3":
                qkv = self._linear(x, f"{p}.self_attn.qkv_proj")
                q_end, kv_width = self.heads * self.dh, self.kv_heads * self.dh
                q, k, v = qkv[..., :q_end], qkv[..., q_end:q_end + kv_width], qkv[..., q_end + kv_width:]
            else:
                q, k, v = (self._linear(x, f"{p}.self_attn.{n}_proj") for n in "qkv")
            q = q.view(b, s, self.heads, self.dh)
            k, v = (t.view(b, s, self.kv_heads, self.dh) for t in (k, v))
            if self.c["model_type"] == "qwen3":
                q, k = self._rms(q, f"{p}.self_attn.q_norm"), self._rms(k, f"{p}.self_attn.k_norm")
            q, k, v = self._cached(q, k, v, cos, sin, past, i, present)
            t = k.shape[2]
            k_all = k[:, :, None].expand(b, self.kv_heads, group, t, self.dh).reshape(b, self.heads, t, self.dh)
            v_all = v[:, :, None].expand(b, self.kv_heads, group, t, self.dh).reshape(b, self.heads, t, self.dh)
            ctx = _attend(q, k_all, v_all, past_len, window=self.window)
            ctx = ctx.transpose(1, 2).reshape(b, s, self.heads * self.dh)
            h = h + self._linear(ctx, f"{p}.self_attn.o_proj")
            x = self._rms(h, f"{p}.post_attention_layernorm")
            if self.c["model_type"] == "phi3":
                gate, up = self._linear(x, f"{p}.mlp.gate_up_proj").chunk(2, dim=-1)
            else:
                gate, up = self._linear(x, f"{p}.mlp.gate_proj"), self._linear(x, f"{p}.mlp.up_proj")
            h = h + self._linear(F.silu(gate) * up, f"{p}.mlp.down_proj")
        h = self._rms(h[:, -logits_to_keep:], "model.norm")
        head = self.w.get("lm_head.weight", self.w["model.embed_tokens.weight"])
        return h @ head.T, present


class Gemma(Llama):
    """GemmaForCausalLM's, Gemma2ForCausalLM's and Gemma3ForCausalLM's
    forward with `past_key_values`: RMSNorms that scale by 1 + weight in
    fp32, the embeddings times the normalizer sqrt(hidden_size),
    gelu_pytorch_tanh gating, a tied head. Gemma 2 and 3 norm the
    attention's and the MLP's outputs too, scale the scores by
    query_pre_attn_scalar ** -0.5, and slide a window over the layers
    layer_types says (Gemma 2: the even ones; Gemma 3: all but every
    sliding_window_pattern-th); Gemma 2 caps the scores and the logits
    (attn_logit_softcapping, final_logit_softcapping); Gemma 3 norms each
    head of q and k, and its sliding layers' RoPE has a base of its own
    (rope_local_base_freq), unscaled."""

    def __init__(self, config: dict, state: dict):
        kind = config["model_type"]
        defaults = {"gemma": {"head_dim": 256, "num_key_value_heads": 16},
                    "gemma2": {"head_dim": 256, "num_key_value_heads": 4, "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0,
                               "final_logit_softcapping": 30.0, "sliding_window": 4096},
                    "gemma3_text": {"head_dim": 256, "num_key_value_heads": 4, "query_pre_attn_scalar": 256,
                                    "sliding_window": 4096,
                                    "rope_theta": 1e6, "rope_local_base_freq": 10000.0,
                                    "sliding_window_pattern": 6}}[kind]
        config = {**defaults, **config}
        super().__init__(config, state)
        self.later = kind != "gemma"
        self.scaling = config["query_pre_attn_scalar"] ** -0.5 if self.later else self.dh ** -0.5
        self.attn_cap = config.get("attn_logit_softcapping")
        self.final_cap = config.get("final_logit_softcapping")
        layers = config["num_hidden_layers"]
        if "layer_types" in config:
            sliding = [t == "sliding_attention" for t in config["layer_types"]]
        elif kind == "gemma2":
            sliding = [not bool(i % 2) for i in range(layers)]
        else:
            sliding = [bool((i + 1) % config.get("sliding_window_pattern", 6)) for i in range(layers)]
        self.windows = [config["sliding_window"] if self.later and sliding[i] else None for i in range(layers)]
        self.inv_freqs = [self.inv_freq] * layers
        if kind == "gemma3_text":
            local = self._inv_freq(_rope_parameters(config, "sliding_attention").get(
                "rope_theta", config["rope_local_base_freq"]))
            self.inv_freqs = [local if sliding[i] else self.inv_freq for i in range(layers)]

    def _rms(self, x, name):
        out = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return (out * (1.0 + self.w[f"{name}.weight"].float())).type_as(x)

    def forward(self, ids: torch.Tensor, past: list | None, logits_to_keep: int = 0):
        b, s = ids.shape
        past_len = past[0][0].shape[2] if past else 0
        positions = torch.arange(past_len, past_len + s).float()
        h = self.w["model.embed_tokens.weight"][ids]
        h = h * torch.tensor(self.c["hidden_size"] ** 0.5, dtype=h.dtype)
        group = self.heads // self.kv_heads
        present = []
        for i in range(self.c["num_hidden_layers"]):
            p = f"model.layers.{i}"
            freqs = positions[:, None] * self.inv_freqs[i][None, :]
            emb = torch.cat([freqs, freqs], dim=-1)
            cos, sin = emb.cos(), emb.sin()
            x = self._rms(h, f"{p}.input_layernorm")
            q = self._linear(x, f"{p}.self_attn.q_proj").view(b, s, self.heads, self.dh)
            k, v = (self._linear(x, f"{p}.self_attn.{n}_proj").view(b, s, self.kv_heads, self.dh) for n in "kv")
            if self.c["model_type"] == "gemma3_text":
                q, k = self._rms(q, f"{p}.self_attn.q_norm"), self._rms(k, f"{p}.self_attn.k_norm")
            q, k, v = self._cached(q, k, v, cos, sin, past, i, present)
            k_all, v_all = (t.repeat_interleave(group, dim=1) for t in (k, v))
            ctx = _attend(q, k_all, v_all, past_len, self.scaling, self.attn_cap, self.windows[i])
            out = self._linear(ctx.transpose(1, 2).reshape(b, s, self.heads * self.dh), f"{p}.self_attn.o_proj")
            if self.later:
                out = self._rms(out, f"{p}.post_attention_layernorm")
                x = self._rms(h + out, f"{p}.pre_feedforward_layernorm")
            else:
                x = self._rms(h + out, f"{p}.post_attention_layernorm")
            h = h + out
            gate, up = self._linear(x, f"{p}.mlp.gate_proj"), self._linear(x, f"{p}.mlp.up_proj")
            out = self._linear(F.gelu(gate, approximate="tanh") * up, f"{p}.mlp.down_proj")
            if self.later:
                out = self._rms(out, f"{p}.post_feedforward_layernorm")
            h = h + out
        h = self._rms(h[:, -logits_to_keep:], "model.norm")
        logits = h @ self.w.get("lm_head.weight", self.w["model.embed_tokens.weight"]).T
        if self.final_cap is not None:
            logits = torch.tanh(logits / self.final_cap) * self.final_cap
        return logits, present


def load(config: dict, state: dict):
    """The model of a Hugging Face config dict over a state dict (checkpoint names)."""
    if config["model_type"] == "gpt2":
        return GPT2(config, state)
    if config["model_type"] in LLAMA_TYPES:
        return Llama(config, state)
    if config["model_type"] == "gemma3":  # Gemma3ForConditionalGeneration: its text model alone
        prefixes = ("language_model.model.", "model.language_model.")
        text = {k if not k.startswith(prefixes) else "model." + k.split(".", 2)[2]: v for k, v in state.items()}
        return Gemma({**config["text_config"], "model_type": "gemma3_text"}, text)
    if config["model_type"] in ("gemma", "gemma2", "gemma3_text"):
        return Gemma(config, state)
    raise ValueError(f"model_type {config['model_type']!r} is not one of gpt2, {', '.join(LLAMA_TYPES)}, "
                     "gemma, gemma2, gemma3_text, gemma3")


@torch.no_grad()
def forced_logits(model, ids: np.ndarray) -> np.ndarray:
    """The logits [B, S, vocab] (float32) of every position of ids [B, S],
    in one pass without a cache."""
    return model.forward(torch.as_tensor(np.asarray(ids, dtype=np.int64)), None)[0].numpy()


@torch.no_grad()
def greedy_generate(model, prompt: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The prompt [B, S] through the model once, then one token at a time with
    the cache; returns the new ids [B, steps] and the logits each came from
    [B, steps, vocab] (float32)."""
    ids = torch.as_tensor(np.asarray(prompt, dtype=np.int64))
    past, out, all_logits = None, [], []
    for _ in range(steps):
        logits, past = model.forward(ids, past)
        last = logits[:, -1]
        ids = torch.argmax(last, dim=-1, keepdim=True)
        out.append(ids)
        all_logits.append(last)
    return torch.cat(out, dim=1).numpy(), torch.stack(all_logits, dim=1).numpy()

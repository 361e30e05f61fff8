"""Numpy forward pass: the numeric oracle for the builder and the sharded program.

It follows the emitted IR op for op (same weight layout, same GeLU/SiLU
formulas, same -1e9 mask) and computes in float32 like the MLIR does.
`prefill`, `decode` and `generate` are greedy generation with a KV cache,
what a generating model's @prefill and @decode compute.
"""
from __future__ import annotations

import numpy as np

from .config import ModelConfig, rope_attention_factor
from .params import as_checkpoint, as_graph, input_name, input_shape, param_specs

MASK_VALUE = np.float32(-1e9)


def rope_inv_freq(cfg: ModelConfig, layer: int, dtype=np.float32) -> np.ndarray:
    """RoPE's Dh/2 inverse frequencies of a layer, 1 / theta^(2j/Dh), scaled
    as its rope_scaling says (cfg.rope_of_layer), computed in `dtype` in the
    order of Hugging Face's _compute_linear_scaling_rope_parameters /
    _compute_llama3_parameters / _compute_longrope_parameters, with its short
    factors (the builder's graph computes the same steps in f32)."""
    t = dtype
    theta, scaling = cfg.rope_of_layer(layer)
    kind = scaling.get("rope_type")
    power = np.power(t(theta), np.arange(0, cfg.rope_dim, 2).astype(t) / t(cfg.rope_dim))
    if kind == "longrope":
        return (t(1.0) / (np.asarray(scaling["short_factor"], dtype=t) * power)).astype(t)
    inv = t(1.0) / power
    if kind == "linear":
        return inv / t(scaling["factor"])
    if kind != "llama3":
        return inv
    factor, low, high, old = (t(scaling[k]) for k in (
        "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"))
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = t(2 * np.pi) / inv
    scaled = np.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (t(1.0) - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return np.where(medium, smoothed, scaled).astype(t)


def rope_tables(cfg: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    """rotate_half style cos/sin tables [S, R] (each frequency used for both halves)."""
    inv_freq = rope_inv_freq(cfg, 0, np.float64)  # one pair: no second base (rope_tables_in_graph)
    angles = np.outer(np.arange(cfg.seq, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=-1)
    attention = rope_attention_factor(cfg.rope_of_layer(0)[1])
    return (attention * np.cos(angles)).astype(np.float32), (attention * np.sin(angles)).astype(np.float32)


def random_weights(cfg: ModelConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Float32 weights with the builder's argument shapes, scaled to keep activations O(1)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for name, shape in param_specs(cfg):
        if name.startswith("rope."):
            continue
        if name == "wte.weight":  # embedding rows: O(1) hidden states
            w = rng.standard_normal(shape)
        elif name == "wpe.weight":
            w = 0.5 * rng.standard_normal(shape)
        elif name.endswith(".weight") and len(shape) == 1:  # norm scale
            w = 1.0 + 0.1 * rng.standard_normal(shape)
        elif len(shape) == 1:  # bias
            w = 0.1 * rng.standard_normal(shape)
        else:
            fan_in = shape[0] if cfg.weight_layout == "in_out" else shape[1]
            w = rng.standard_normal(shape) / np.sqrt(fan_in)
        out[name] = w.astype(np.float32)
    if cfg.rope and not cfg.rope_tables_in_graph:
        out["rope.cos"], out["rope.sin"] = rope_tables(cfg)
    return as_graph(cfg, as_checkpoint(cfg, out))  # a padded vocabulary's rows zero


def random_input(cfg: ModelConfig, seed: int = 1) -> np.ndarray:
    """Hidden states, or for a whole model token ids over the whole vocabulary."""
    rng = np.random.default_rng(seed)
    if cfg.vocab:
        return rng.integers(0, cfg.vocab, input_shape(cfg), dtype=np.int64)
    return rng.standard_normal(input_shape(cfg)).astype(np.float32)


def _f(v) -> np.float32:
    return np.float32(v)


def _linear(cfg: ModelConfig, w: dict, name: str, x: np.ndarray, bias: bool | None = None) -> np.ndarray:
    """bias: None is cfg.bias (the q/k/v projections pass cfg.qkv_bias)."""
    weight = w[f"{name}.weight"]
    if cfg.weight_layout == "out_in":
        weight = weight.T
    y = x @ weight
    if cfg.bias if bias is None else bias:
        y = y + w[f"{name}.bias"]
    return y


def _norm(cfg: ModelConfig, w: dict, name: str, x: np.ndarray, norm: str | None = None) -> np.ndarray:
    """cfg.norm (or `norm`) over the last dimension of x."""
    d, eps = _f(x.shape[-1]), _f(cfg.eps)
    if (norm or cfg.norm) == "rmsnorm":
        ms = np.sum(x * x, axis=-1, keepdims=True) / d
        scale = w[f"{name}.weight"]
        return x / np.sqrt(ms + eps) * (_f(1.0) + scale if cfg.norm_plus_one else scale)
    mean = np.sum(x, axis=-1, keepdims=True) / d
    var = np.sum((x - mean) ** 2, axis=-1, keepdims=True) / d
    return (x - mean) / np.sqrt(var + eps) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x: [B, S, NH, Dh]; cos/sin: [S, R], R <= Dh the features rotated."""
    r = cos.shape[-1]
    part, rest = x[..., :r], x[..., r:]
    half = r // 2
    rot = np.concatenate([-part[..., half:], part[..., :half]], axis=-1)
    return np.concatenate([part * cos[None, :, None, :] + rot * sin[None, :, None, :], rest], axis=-1)


def _hidden(cfg: ModelConfig, i: int, rows: np.ndarray, keys: int) -> np.ndarray:
    """[len(rows), keys]: the keys that queries at positions `rows` of layer
    i do not see: those after them, and those its sliding window leaves behind."""
    cols = np.arange(keys)[None, :]
    hidden = cols > rows[:, None]
    if cfg.window_of_layer(i):
        hidden |= rows[:, None] - cols >= cfg.window_of_layer(i)
    return hidden


def _softcap(x: np.ndarray, cap: float) -> np.ndarray:
    """cap * tanh(x / cap) (Gemma 2's scores and logits); x itself for cap 0."""
    return np.tanh(x / _f(cap)) * _f(cap) if cap else x


def _scores(cfg: ModelConfig, q: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """q [B, H, S, Dh] against keys [B, H, T, Dh]: scaled, then capped."""
    return _softcap((q @ keys.transpose(0, 1, 3, 2)) * _f(cfg.attn_scale), cfg.attn_softcap)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _qkv(cfg: ModelConfig, w: dict, i: int, x: np.ndarray):
    """q [B, S, H, Dh], k and v [B, S, KVH, Dh]."""
    b, s = x.shape[:2]
    h, kvh, dh, qb = cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.qkv_bias
    p = f"h.{i}.attn"
    if cfg.qkv == "fused":
        qkv = _linear(cfg, w, f"{p}.qkv", x, qb).reshape(b, s, 3, h, dh)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    elif cfg.qkv == "sliced":
        qkv = _linear(cfg, w, f"{p}.qkv", x, qb)
        q, k, v = (t.reshape(b, s, -1, dh) for t in np.split(qkv, [h * dh, (h + kvh) * dh], axis=-1))
    else:
        q, k, v = (_linear(cfg, w, f"{p}.{n}", x, qb).reshape(b, s, nh, dh)
                   for n, nh in (("q", h), ("k", kvh), ("v", kvh)))
    if cfg.qk_norm:  # per head, before RoPE (Qwen3)
        q, k = _norm(cfg, w, f"{p}.q_norm", q, "rmsnorm"), _norm(cfg, w, f"{p}.k_norm", k, "rmsnorm")
    return q, k, v


def _attention(cfg: ModelConfig, w: dict, i: int, x: np.ndarray) -> np.ndarray:
    b, s = x.shape[:2]
    h, dh = cfg.heads, cfg.head_dim
    p = f"h.{i}.attn"
    q, k, v = _qkv(cfg, w, i, x)
    if cfg.rope:
        cos, sin = rope_at(cfg, 0, s, i) if cfg.rope_tables_in_graph else (w["rope.cos"], w["rope.sin"])
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
    # kv head j serves query heads j*g .. j*g+g-1 (np.repeat, not np.tile).
    k, v = np.repeat(k, cfg.group, axis=2), np.repeat(v, cfg.group, axis=2)
    q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))  # [B, H, S, Dh]
    scores = _scores(cfg, q, k)
    if cfg.causal:
        scores = np.where(_hidden(cfg, i, np.arange(s), s), MASK_VALUE, scores)
    ctx = _softmax(scores) @ v  # [B, H, S, Dh]
    ctx = ctx.transpose(0, 2, 1, 3).reshape(b, s, h * dh)
    return _linear(cfg, w, f"{p}.out", ctx)


def _gelu(x: np.ndarray) -> np.ndarray:
    c = _f(np.sqrt(2.0 / np.pi))
    return x * _f(0.5) * (np.tanh((x + x * x * x * _f(0.044715)) * c) + _f(1.0))


def _mlp(cfg: ModelConfig, w: dict, i: int, x: np.ndarray) -> np.ndarray:
    p = f"h.{i}.mlp"
    if cfg.gate_up == "fused":
        gate, up = np.split(_linear(cfg, w, f"{p}.gate_up", x), 2, axis=-1)
    else:
        up = _linear(cfg, w, f"{p}.up", x)
        gate = _linear(cfg, w, f"{p}.gate", x) if cfg.gated else None
    if cfg.activation == "swiglu":
        act = gate / (_f(1.0) + np.exp(-gate)) * up
    elif cfg.activation == "geglu":
        act = _gelu(gate) * up
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
    h = _embed(cfg, w, np.asarray(x), 0) if cfg.vocab else np.asarray(x, dtype=np.float32)
    for i in range(cfg.layers):
        h = _block(cfg, w, i, h, lambda x: _attention(cfg, w, i, x))
    if cfg.vocab:
        h = _lm_head(cfg, w, h)
    return h.astype(np.float32)


def _block(cfg: ModelConfig, w: dict, i: int, h: np.ndarray, attention) -> np.ndarray:
    """Block i over h, with `attention` of its normed input (cached or not)."""
    def post_norm(name, x):
        return _norm(cfg, w, f"h.{i}.{name}", x) if cfg.post_norms else x
    h = h + post_norm("ln_attn_out", attention(_norm(cfg, w, f"h.{i}.ln_1", h)))
    return h + post_norm("ln_mlp_out", _mlp(cfg, w, i, _norm(cfg, w, f"h.{i}.ln_2", h)))


def _embed(cfg: ModelConfig, w: dict, ids: np.ndarray, pos: int) -> np.ndarray:
    h = w["wte.weight"][ids]
    if cfg.embed_scale:
        h = h * _f(np.sqrt(cfg.d_model))
    if cfg.positions:
        h = h + w["wpe.weight"][pos:pos + ids.shape[1]]
    return h


def _lm_head(cfg: ModelConfig, w: dict, h: np.ndarray) -> np.ndarray:
    h = _norm(cfg, w, "ln_f", h)
    logits = h @ w["wte.weight"].T if cfg.tie_embeddings else _linear(cfg, w, "lm_head", h, False)
    logits = _softcap(logits, cfg.logit_softcap)
    logits[..., cfg.vocab:] = -np.inf  # a padded vocabulary's positions
    return logits


# -- generation with a KV cache -------------------------------------------------

def rope_at(cfg: ModelConfig, pos: int, length: int, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """Layer `layer`'s cos/sin [length, R] at positions pos .. pos+length-1,
    in float32 as a generating model computes them (and Hugging Face's
    rotary embedding)."""
    angles = np.arange(pos, pos + length).astype(np.float32)[:, None] * rope_inv_freq(cfg, layer)[None, :]
    angles = np.concatenate([angles, angles], axis=-1)
    attention = np.float32(rope_attention_factor(cfg.rope_of_layer(layer)[1]))
    return np.cos(angles) * attention, np.sin(angles) * attention


def empty_caches(cfg: ModelConfig) -> list[np.ndarray]:
    """Zeroed caches, K then V per layer, [B, KVH, S_max, Dh]: every layer's
    holds every position (the graph's sliding layers keep a ring of their
    window; this oracle keeps its own simpler layout)."""
    shape = (cfg.batch, cfg.kv_heads, cfg.generate, cfg.head_dim)
    return [np.zeros(shape, dtype=np.float32) for _ in range(2 * cfg.layers)]


def _cached_attention(cfg: ModelConfig, w: dict, i: int, x: np.ndarray, pos: int,
                      k_cache: np.ndarray, v_cache: np.ndarray) -> np.ndarray:
    """The S tokens of x at positions pos .. pos+S-1: their K and V go into the
    caches (in place), their queries attend to every cached position up to their own
    (within a sliding layer's window): the cache's first pos+S positions, as
    @decode's slice of pos + 1 (whose causal mask, at S = 1, masks nothing)."""
    b, s = x.shape[:2]
    h, dh = cfg.heads, cfg.head_dim
    q, k, v = _qkv(cfg, w, i, x)
    if cfg.rope:
        cos, sin = rope_at(cfg, pos, s, i)
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
    k_cache[:, :, pos:pos + s] = k.transpose(0, 2, 1, 3)
    v_cache[:, :, pos:pos + s] = v.transpose(0, 2, 1, 3)
    end = pos + s
    keys = np.repeat(k_cache[:, :, :end], cfg.group, axis=1)  # [B, H, end, Dh]
    values = np.repeat(v_cache[:, :, :end], cfg.group, axis=1)
    q = q.transpose(0, 2, 1, 3)  # [B, H, S, Dh]
    scores = _scores(cfg, q, keys)
    scores = np.where(_hidden(cfg, i, pos + np.arange(s), end), MASK_VALUE, scores)
    ctx = (_softmax(scores) @ values).transpose(0, 2, 1, 3).reshape(b, s, h * dh)
    return _linear(cfg, w, f"h.{i}.attn.out", ctx)


def step(cfg: ModelConfig, weights: dict[str, np.ndarray], ids: np.ndarray, pos: int,
         caches: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Runs ids [B, S] at positions pos .. pos+S-1 over the caches (not
    changed: the updated copies are returned). Returns the greedy next ids
    [B, 1] (int64), the last position's logits [B, 1, vocab] and the caches."""
    if not cfg.generate:
        raise ValueError("step needs a generating config (generate = S_max > 0)")
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.shape[0] != cfg.batch:
        raise ValueError(f"ids: expected shape [{cfg.batch}, S], got {list(ids.shape)}")
    if pos < 0 or pos + ids.shape[1] > cfg.generate:
        raise ValueError(f"positions {pos} .. {pos + ids.shape[1] - 1} are outside the cache "
                         f"of {cfg.generate}")
    if ids.min() < 0 or ids.max() >= cfg.vocab:
        raise ValueError(f"ids must lie in [0, {cfg.vocab})")
    w = {k: np.asarray(v, dtype=np.float32) for k, v in weights.items()}
    caches = [np.array(c, dtype=np.float32) for c in caches]
    h = _embed(cfg, w, ids, pos)
    for i in range(cfg.layers):
        k_cache, v_cache = caches[2 * i], caches[2 * i + 1]
        h = _block(cfg, w, i, h, lambda x: _cached_attention(cfg, w, i, x, pos, k_cache, v_cache))
    logits = _lm_head(cfg, w, h[:, -1:]).astype(np.float32)
    return np.argmax(logits, axis=-1).astype(np.int64), logits, caches


def prefill(cfg: ModelConfig, weights: dict, ids: np.ndarray, caches: list[np.ndarray]):
    """What @prefill computes: the prompt [B, seq] at positions 0 .. seq-1."""
    if np.asarray(ids).shape != (cfg.batch, cfg.seq):
        raise ValueError(f"ids: expected shape {(cfg.batch, cfg.seq)}, got {np.asarray(ids).shape}")
    return step(cfg, weights, ids, 0, caches)


def decode(cfg: ModelConfig, weights: dict, ids: np.ndarray, pos: int, caches: list[np.ndarray]):
    """What @decode computes: one token per sequence [B, 1] at position pos."""
    if np.asarray(ids).shape != (cfg.batch, 1):
        raise ValueError(f"ids: expected shape {(cfg.batch, 1)}, got {np.asarray(ids).shape}")
    return step(cfg, weights, ids, pos, caches)


def generate(cfg: ModelConfig, weights: dict, prompt: np.ndarray, steps: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """Greedy generation: @prefill on the prompt, then @decode steps-1 times
    on the last new token. Returns the new ids [B, steps] (int64) and the
    logits each came from [B, steps, vocab]."""
    if steps < 1 or cfg.seq + steps - 1 > cfg.generate:
        raise ValueError(f"{steps} new tokens after a prompt of {cfg.seq} do not fit the "
                         f"cache of {cfg.generate} (at most {cfg.generate - cfg.seq + 1})")
    next_ids, logits, caches = prefill(cfg, weights, prompt, empty_caches(cfg))
    ids, all_logits = [next_ids], [logits]
    for t in range(1, steps):
        next_ids, logits, caches = decode(cfg, weights, next_ids, cfg.seq + t - 1, caches)
        ids.append(next_ids)
        all_logits.append(logits)
    return np.concatenate(ids, axis=1), np.concatenate(all_logits, axis=1)


def generate_alone(cfg: ModelConfig, weights: dict, prompts: list[np.ndarray], steps: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Greedy generation of each prompt (1-D ids; their lengths may differ)
    by itself, at batch 1 from position 0: what a ragged batch of them must
    give each sequence. Returns the new ids [B, steps] and their logits
    [B, steps, vocab]."""
    one = cfg.replace(batch=1, ragged=False)
    ids, logits = [], []
    for prompt in prompts:
        fed, pos, caches = np.asarray(prompt, dtype=np.int64)[None], 0, empty_caches(one)
        rows, row_logits = [], []
        for _ in range(steps):
            fed_next, step_logits, caches = step(one, weights, fed, pos, caches)
            pos += fed.shape[1]
            fed = fed_next
            rows.append(fed_next)
            row_logits.append(step_logits)
        ids.append(np.concatenate(rows, axis=1))
        logits.append(np.concatenate(row_logits, axis=1))
    return np.concatenate(ids), np.concatenate(logits)

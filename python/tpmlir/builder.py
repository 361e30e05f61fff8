"""Transformer blocks -> one `func.func @forward` in linalg-on-tensors.

The emitted idioms are the contract the sharding pass matches (design.md §3):
projections are collapse -> linalg.matmul -> expand (+ bias generic), heads
appear as an expand_shape to [..., h, dh] (or [..., 3, h, dh] when fused),
attention runs as linalg.batch_matmul over [B*H, S, *].

A generating model (cfg.generate = S_max) is two functions instead,
@prefill(ids [B, S], caches...) and @decode(ids [B, 1], pos, caches...), each
returning the greedy next ids [B, 1] (an argmax over the vocabulary) and the
caches [B, kv_heads, S_max, Dh], K and V per layer, updated by a
tensor.insert_slice at the position (docs/generation.md).
"""
from __future__ import annotations

import math

from .config import ModelConfig, rope_attention_factor
from .ir import Emitter, Val
from .params import (STEP_INPUTS, arg_specs, checkpoint_name, checkpoint_shapes, function_arg_specs, input_name,
                     packed_rows, result_specs)

GELU_C = math.sqrt(2.0 / math.pi)
MASK_VALUE = -1e9


def _i64(b, v: str) -> str:
    return b(f"arith.index_cast {v} : index to i64")


def _ring_position(b, latest: str, row: str, w: str) -> str:
    """The position ring row `row` (i64) holds once position `latest` is
    written, in a ring of `w` rows: the latest up to it in its class mod w,
    latest - (latest - row) mod w (wrong for a row not written yet, which
    its mask hides apart)."""
    back = b(f"arith.remui {b(f'arith.subi {latest}, {row} : i64')}, {w} : i64")
    return b(f"arith.subi {latest}, {back} : i64")


class _Builder:
    """Builds one function: @forward, or a generating model's @prefill,
    @decode or @extend."""

    def __init__(self, cfg: ModelConfig, function: str = "forward", maps: dict | None = None):
        self.cfg = cfg
        self.function = function
        self.ir = Emitter()
        if maps is not None:  # the functions of one module share its map aliases
            self.ir.maps = maps
        # Tokens this function runs over; the first one's position is 0, or
        # `pos` in @decode and @extend (an SSA index, set when the body starts).
        self.seq = 1 if function == "decode" else cfg.seq
        self.pos: int | str = 0
        self.valid = ""  # @extend: how many of its tokens are the prompt's (SSA index)
        # @decode, @extend: the cached positions read, pos + seq (or S_max, masked).
        self.seen: str | int | None = None
        # RoPE's cos/sin tables computed in the graph, by layer (a model whose
        # sliding layers have a base of their own has two pairs).
        self.rope_tables: dict[int, tuple[Val, Val]] = {}
        self.caches: dict[str, Val] = {}  # the updated caches, by name
        self.rings: dict[int, tuple[str, str]] = {}  # @decode's ring_bounds, by ring length
        self.chunk_rings: dict[int, tuple[str, ...]] = {}  # @extend's chunk_ring_bounds
        specs = arg_specs(cfg) if function == "forward" else function_arg_specs(cfg, function)
        self.args: dict[str, Val] = {}
        for name, shape in specs:
            dtype = "i64" if name in STEP_INPUTS else "f32"
            self.args[name] = Val(self.ir.fresh(name.replace(".", "_")), shape, dtype)

    # -- building blocks ----------------------------------------------------
    def project(self, x: Val, name: str, n: int, hint: str, bias: bool = True) -> Val:
        """[B, S, *K] -> [B, S, n] through a 2-D linalg.matmul on [B*S, K]."""
        cfg, ir = self.cfg, self.ir
        bias = bias and f"{name}.bias" in self.args
        b, s = x.shape[:2]
        x2 = ir.collapse(x, [[0, 1], list(range(2, len(x.shape)))], hint + "_in")
        w = self.args[f"{name}.weight"]
        if cfg.weight_layout == "out_in":
            w = ir.transpose(w, [1, 0], hint + "_wT")
        y = ir.matmul(x2, w, hint + "_mm")
        y = ir.expand(y, [[0, 1], [2]], (b, s, n), hint + "_nobias" if bias else hint)
        if bias:
            y = ir.pointwise(hint, [y, self.args[f"{name}.bias"]], lambda bd, a, c, o: bd.add(a, c))
        return y

    def norm(self, x: Val, name: str, hint: str, norm: str | None = None) -> Val:
        """cfg.norm (or `norm`) over the last dimension of x."""
        cfg, ir = self.cfg, self.ir
        d, eps = float(x.shape[-1]), cfg.eps
        gamma = self.args[f"{name}.weight"]
        row = tuple(range(len(x.shape) - 1))  # a per-row statistic, [B, S] of [B, S, D]
        if (norm or cfg.norm) == "rmsnorm":
            sumsq = ir.reduce_last(hint + "_sumsq", [x], lambda b, v, acc: b.add(b.mul(v, v), acc), 0.0)

            def rms(b, v, ss, g, o):
                inv = b.math("rsqrt", b.add(b.div(ss, b.const(d)), b.const(eps)))
                scale = b.add(b.const(1.0), g) if cfg.norm_plus_one else g
                return b.mul(b.mul(v, inv), scale)
            return ir.pointwise(hint, [x, (sumsq, row), gamma], rms)

        beta = self.args[f"{name}.bias"]
        total = ir.reduce_last(hint + "_sum", [x], lambda b, v, acc: b.add(v, acc), 0.0)
        mean = ir.pointwise(hint + "_mean", [total], lambda b, s, o: b.div(s, b.const(d)))

        def sq_dev(b, v, m, acc):
            dev = b.sub(v, m)
            return b.add(b.mul(dev, dev), acc)
        var_sum = ir.reduce_last(hint + "_varsum", [x, mean], sq_dev, 0.0)

        def layernorm(b, v, m, vs, g, bt, o):
            inv = b.math("rsqrt", b.add(b.div(vs, b.const(d)), b.const(eps)))
            return b.add(b.mul(b.mul(b.sub(v, m), inv), g), bt)
        return ir.pointwise(hint, [x, (mean, row), (var_sum, row), gamma, beta], layernorm)

    def rope(self, x: Val, i: int, hint: str) -> Val:
        """rotate_half RoPE of layer i on [B, S, NH, Dh]: x*cos + cat(-x2, x1)*sin,
        over the first rope_dim features of each head (the rest as they are)."""
        ir = self.ir
        b, s, nh, dh = x.shape
        if self.cfg.rope_dim < dh:
            r = self.cfg.rope_dim
            head, tail = [b, s, nh, r], [b, s, nh, dh - r]
            part = ir.extract_slice(x, [0, 0, 0, 0], head, head, hint + "_part")
            rest = ir.extract_slice(x, [0, 0, 0, r], tail, tail, hint + "_pass")
            return ir.concat(3, [self.rotate(part, i, hint + "_turned"), rest], hint)
        return self.rotate(x, i, hint)

    def rotate(self, x: Val, i: int, hint: str) -> Val:
        """x [B, S, NH, R] turned by layer i's tables [S, R]."""
        ir = self.ir
        b, s, nh, dh = x.shape
        half = [b, s, nh, dh // 2]
        x1 = ir.extract_slice(x, [0, 0, 0, 0], half, half, hint + "_x1")
        x2 = ir.extract_slice(x, [0, 0, 0, dh // 2], half, half, hint + "_x2")
        neg = ir.pointwise(hint + "_negx2", [x2], lambda bd, a, o: bd.neg(a))
        rot = ir.concat(3, [neg, x1], hint + "_rot")
        table = (0, 1, 3) if self.cfg.ragged else (1, 3)  # cos/sin are [B, S, R] or [S, R]
        cos_t, sin_t = self.rope_tables.get(i) or (self.args["rope.cos"], self.args["rope.sin"])
        cos, sin = (cos_t, table), (sin_t, table)
        return ir.pointwise(hint, [x, rot, cos, sin],
                            lambda bd, v, r, c, sn, o: bd.add(bd.mul(v, c), bd.mul(r, sn)))

    def make_rope_tables(self) -> dict[int, tuple[Val, Val]]:
        """Each layer's cos/sin tables: one pair for the layers of the
        model's base, another for sliding layers of their own base
        (cfg.rope_of_layer)."""
        pairs: dict[bool, tuple[Val, Val]] = {}
        tables = {}
        for i in range(self.cfg.layers):
            local = bool(self.cfg.rope_local_theta) and i in self.cfg.sliding_layers
            if local not in pairs:
                pairs[local] = self.rope_table_pair(*self.cfg.rope_of_layer(i), "_local" if local else "")
            tables[i] = pairs[local]
        return tables

    def rope_table_pair(self, theta: float, scaling: dict, suffix: str) -> tuple[Val, Val]:
        """cos/sin [S, R] (R = rope_dim) at positions pos .. pos+S-1 (ragged:
        [B, S, R], each sequence's positions less its padding), computed as
        Hugging Face does in fp32: inv_freq_j = 1 / theta^(2j/R), angle = position * inv_freq,
        each frequency used for both halves (rotate_half). longrope: 1 /
        (short_factor_j * theta^(2j/R)), cos and sin times its attention
        factor."""
        cfg, ir = self.cfg, self.ir
        dh = cfg.rope_dim
        ins = [(self.args["pos"], ())] if "pos" in self.args else []
        ragged = cfg.ragged
        if ragged:
            ins.append((self.args["padding"], (0,)))
        factors = scaling.get("short_factor") if scaling.get("rope_type") == "longrope" else None
        attention = rope_attention_factor(scaling)

        def table(fn):
            def body(b, *args):
                row = b(f"linalg.index {int(ragged)} : index")
                row = b(f"arith.index_cast {row} : index to i64")
                if "pos" in self.args:
                    row = b(f"arith.addi {row}, {args[0]} : i64")
                if ragged:  # scores see differences only; cos/sin as alone
                    row = b(f"arith.subi {row}, {args[-2]} : i64")
                position = b(f"arith.sitofp {row} : i64 to f32")
                half, two = b(f"arith.constant {dh // 2} : index"), b("arith.constant 2 : index")
                j = b(f"arith.remui {b(f'linalg.index {int(ragged) + 1} : index')}, {half} : index")
                two_j = b(f"arith.index_cast {b(f'arith.muli {j}, {two} : index')} : index to i64")
                exponent = b.div(b(f"arith.sitofp {two_j} : i64 to f32"), b.const(float(dh)))
                power = b(f"math.powf {b.const(theta)}, {exponent} : f32")
                if factors:
                    power = b.mul(self.pick(b, j, factors), power)
                inv_freq = b.div(b.const(1.0), power)
                value = b.math(fn, b.mul(position, self.scale_inv_freq(b, inv_freq, scaling)))
                return b.mul(value, b.const(attention)) if attention != 1.0 else value
            shape = (cfg.batch, self.seq, dh) if ragged else (self.seq, dh)
            return ir.generic(f"rope_{fn}{suffix}", ins, len(shape), shape, range(len(shape)), (), body)
        return table("cos"), table("sin")

    @staticmethod
    def pick(b, j: str, values: list) -> str:
        """values[j] for an index j, as selects over constants: a table of
        constants would be a weight to tp-shard and the runtime."""
        out = b.const(values[-1])
        for k in range(len(values) - 2, -1, -1):
            at = b(f"arith.cmpi eq, {j}, {b(f'arith.constant {k} : index')} : index")
            out = b(f"arith.select {at}, {b.const(values[k])}, {out} : f32")
        return out

    @staticmethod
    def scale_inv_freq(b, inv: str, scaling: dict) -> str:
        """One inverse frequency scaled as `scaling` (rope_scaling_params)
        says, in the steps of reference.rope_inv_freq (Hugging Face's llama3
        rule: the low frequencies divided by the factor, the high ones kept,
        the ones between blended)."""
        kind = scaling.get("rope_type")
        if kind == "linear":
            return b.div(inv, b.const(scaling["factor"]))
        if kind != "llama3":
            return inv
        import numpy as np  # f32 constants as the reference rounds them
        t = np.float32
        factor, low, high, old = (t(scaling[k]) for k in (
            "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"))
        wavelen = b.div(b.const(t(2 * np.pi)), inv)
        longer = b(f"arith.cmpf ogt, {wavelen}, {b.const(old / low)} : f32")
        scaled = b(f"arith.select {longer}, {b.div(inv, b.const(factor))}, {inv} : f32")
        smooth = b.div(b.sub(b.div(b.const(old), wavelen), b.const(low)), b.const(high - low))
        smoothed = b.add(b.div(b.mul(b.sub(b.const(1.0), smooth), scaled), b.const(factor)),
                         b.mul(smooth, scaled))
        not_high = b(f"arith.cmpf oge, {wavelen}, {b.const(old / high)} : f32")
        not_low = b(f"arith.cmpf ole, {wavelen}, {b.const(old / low)} : f32")
        medium = b(f"arith.andi {not_high}, {not_low} : i1")
        return b(f"arith.select {medium}, {smoothed}, {scaled} : f32")

    def repeat_kv(self, x: Val, hint: str) -> Val:
        """[B, S, KVH, Dh] -> [B, S, H, Dh]; kv head j feeds query heads j*g .. j*g+g-1."""
        b, s, kvh, dh = x.shape
        wide = self.ir.broadcast(x, (b, s, kvh, self.cfg.group, dh), [3], hint + "_bcast")
        return self.ir.collapse(wide, [[0], [1], [2, 3], [4]], hint)

    def repeat_cached(self, x: Val, hint: str) -> Val:
        """A cache's [B, KVH, L, Dh] -> [B*H, L, Dh], as repeat_kv then
        to_heads would make it."""
        b, kvh, length, dh = x.shape
        wide = self.ir.broadcast(x, (b, kvh, self.cfg.group, length, dh), [2], hint + "_bcast")
        return self.ir.collapse(wide, [[0, 1, 2], [3], [4]], hint)

    def to_heads(self, x: Val, hint: str) -> Val:
        """[B, S, H, Dh] -> [B*H, S, Dh]."""
        t = self.ir.transpose(x, [0, 2, 1, 3], hint + "_t")
        return self.ir.collapse(t, [[0, 1], [2], [3]], hint)

    def softmax(self, x: Val, hint: str) -> Val:
        ir = self.ir
        if self.cfg.softmax == "named":
            return ir.softmax(x, len(x.shape) - 1, hint)
        row = (0, 1)
        mx = ir.reduce_last(hint + "_max", [x], lambda b, v, acc: b.max(v, acc), float("-inf"))
        e = ir.pointwise(hint + "_exp", [x, (mx, row)], lambda b, v, m, o: b.math("exp", b.sub(v, m)))
        total = ir.reduce_last(hint + "_sum", [e], lambda b, v, acc: b.add(v, acc), 0.0)
        return ir.pointwise(hint, [e, (total, row)], lambda b, v, t, o: b.div(v, t))

    # -- a whole model's ends ---------------------------------------------------
    def embed(self) -> Val:
        """Token ids [B, S] -> their rows of wte [B, S, D]: a lookup, in the form
        torch-mlir and the TOSA conversion write one."""
        cfg, ids, wte = self.cfg, self.args["ids"], self.args["wte.weight"]

        def lookup(b, i, o):
            row = b(f"arith.index_cast {i} : i64 to index")
            col = b("linalg.index 2 : index")
            return b(f"tensor.extract {wte.name}[{row}, {col}] : {wte.type}")
        plain = not cfg.positions and not cfg.embed_scale
        tokens = self.ir.generic("embed" if plain else "embed_tokens", [(ids, (0, 1))], 3,
                                 (cfg.batch, self.seq, cfg.d_model), range(3), (), lookup)
        if cfg.embed_scale:  # Gemma: times sqrt(d_model), rounded to f32
            scale = math.sqrt(cfg.d_model)
            return self.ir.pointwise("embed", [tokens], lambda b, t, o: b.mul(t, b.const(scale)))
        if not cfg.positions:
            return tokens
        if cfg.ragged:
            return self.ir.pointwise("embed", [tokens, (self.args["padding"], (0,))], self.position_row)
        # Learned positions: rows pos .. pos+S-1 of wpe, added to every sequence.
        rows = (self.seq, cfg.d_model)
        wpe = self.ir.extract_slice(self.args["wpe.weight"], [self.pos, 0], rows, rows, "wpe_rows")
        return self.ir.pointwise("embed", [tokens, (wpe, (1, 2))], lambda b, t, p, o: b.add(t, p))

    def position_row(self, b, t: str, pad: str, o: str) -> str:
        """A ragged batch's token t [b, s, c] plus wpe[pos + s - padding[b], c]:
        each sequence's own positions (a padding slot reads row 0)."""
        wpe = self.args["wpe.weight"]
        slot = b("linalg.index 1 : index")
        if "pos" in self.args:
            slot = b(f"arith.addi {slot}, {self.pos} : index")
        pad = b(f"arith.index_cast {pad} : i64 to index")
        zero = b("arith.constant 0 : index")
        row = b(f"arith.maxsi {b(f'arith.subi {slot}, {pad} : index')}, {zero} : index")
        col = b("linalg.index 2 : index")
        return b.add(t, b(f"tensor.extract {wpe.name}[{row}, {col}] : {wpe.type}"))

    def lm_head(self, x: Val) -> Val:
        """Final norm, then logits [B, S, vocab_rows]: through wte transposed
        when tied; the padded positions' logits -inf."""
        cfg, ir = self.cfg, self.ir
        h = self.norm(x, "ln_f", "ln_f")
        if not cfg.tie_embeddings:
            logits = self.project(h, "lm_head", cfg.vocab_rows, "logits", bias=False)
        else:
            b, s = h.shape[:2]
            h2 = ir.collapse(h, [[0, 1], [2]], "logits_in")
            head = ir.transpose(self.args["wte.weight"], [1, 0], "wte_T")
            logits = ir.expand(ir.matmul(h2, head, "logits_mm"), [[0, 1], [2]], (b, s, cfg.vocab_rows), "logits")
        if cfg.logit_softcap:
            logits = self.softcap(logits, cfg.logit_softcap, "logits_capped")
        if cfg.vocab_rows == cfg.vocab:
            return logits

        # By position, so that a cut vocabulary masks the global ones.
        def mask(b, v, o):
            real = b(f"arith.cmpi ult, {b('linalg.index 2 : index')}, "
                     f"{b(f'arith.constant {cfg.vocab} : index')} : index")
            return b(f"arith.select {real}, {v}, {b.const(float('-inf'))} : f32")
        return ir.pointwise("logits_masked", [logits], mask)

    def softcap(self, x: Val, cap: float, hint: str) -> Val:
        """cap * tanh(x / cap), in Gemma 2's order of steps."""
        return self.ir.pointwise(hint, [x], lambda b, v, o: b.mul(b.math("tanh", b.div(v, b.const(cap))),
                                                                   b.const(cap)))

    # -- the block ------------------------------------------------------------
    def attention(self, x: Val, i: int) -> Val:
        cfg, ir = self.cfg, self.ir
        B, S, H, KVH, Dh = cfg.batch, self.seq, cfg.heads, cfg.kv_heads, cfg.head_dim
        p, a = f"l{i}", f"h.{i}.attn"
        if cfg.qkv == "fused":
            qkv = self.project(x, f"{a}.qkv", 3 * H * Dh, f"{p}_qkv")
            qkv = ir.expand(qkv, [[0], [1], [2, 3, 4]], (B, S, 3, H, Dh), f"{p}_qkv_heads")
            q, k, v = (ir.extract_slice(qkv, [0, 0, j, 0, 0], [B, S, 1, H, Dh], [B, S, H, Dh], f"{p}_{n}")
                       for j, n in enumerate("qkv"))
        elif cfg.qkv == "sliced":  # as torch-mlir exports qkv_proj(x).split
            qkv = self.project(x, f"{a}.qkv", (H + 2 * KVH) * Dh, f"{p}_qkv")
            starts, heads = (0, H * Dh, (H + KVH) * Dh), (H, KVH, KVH)
            q, k, v = (ir.expand(ir.extract_slice(qkv, [0, 0, start], [B, S, nh * Dh], [B, S, nh * Dh],
                                                  f"{p}_{n}_flat"),
                                 [[0], [1], [2, 3]], (B, S, nh, Dh), f"{p}_{n}")
                       for start, nh, n in zip(starts, heads, "qkv"))
        else:
            def heads(n, nh):
                y = self.project(x, f"{a}.{n}", nh * Dh, f"{p}_{n}_proj")
                return ir.expand(y, [[0], [1], [2, 3]], (B, S, nh, Dh), f"{p}_{n}")
            q, k, v = heads("q", H), heads("k", KVH), heads("v", KVH)
        if cfg.qk_norm:  # per head, before RoPE (Qwen3)
            q = self.norm(q, f"{a}.q_norm", f"{p}_q_norm", "rmsnorm")
            k = self.norm(k, f"{a}.k_norm", f"{p}_k_norm", "rmsnorm")
        if cfg.rope:
            q, k = self.rope(q, i, f"{p}_q_rope"), self.rope(k, i, f"{p}_k_rope")
        ring = cfg.cache_length(i)
        chunk_over_ring = self.function == "extend" and ring < cfg.generate
        if self.function != "forward":
            rows = {n: ir.transpose(t, [0, 2, 1, 3], f"l{i}_{n}_new") for t, n in ((k, "k"), (v, "v"))}
            # A chunk over a ring reads the ring as it was (the keys before
            # pos), then its own: read before the write that drops the oldest.
            before = {n: ir.concat(2, [self.args[f"cache.{i}.{n}"], rows[n]], f"l{i}_{n}_ring_and_chunk")
                      for n in "kv"} if chunk_over_ring else {}
            k_all, v_all = (self.update_cache(rows[n], i, n) for n in "kv")
        # A sliding layer hides the keys `window` or more positions before
        # the query; a window no position reaches changes nothing. @decode's
        # sliding layers keep their window alone, a ring (update_cache):
        # every key there is one to attend to.
        # (@extend: ring_chunk_keys over a ring; a window no position reaches.)
        window = cfg.window_of_layer(i) if "pos" not in self.args else 0
        if window >= self.seq:
            window = 0
        if self.function == "decode":
            # The query reads the cache's positions [0, pos] only (a slice of
            # dynamic length), so a step reads what it attends to, not S_max
            # rows, and needs no mask; or, "masked", all S_max rows (static
            # shapes) and a mask past pos below. Batched over kv heads, the
            # g query heads of a group as g rows: the cache is read as it
            # lies, never repeated per query head.
            G = cfg.group
            q = ir.collapse(q, [[0, 1], [2], [3]], f"{p}_q_bhd")  # S = 1
            q = ir.expand(q, [[0], [1, 2], [3]], (B, KVH, G, Dh), f"{p}_q_groups")
            qh = ir.collapse(q, [[0, 1], [2], [3]], f"{p}_qh")
            if cfg.decode_attention == "seen":
                # A ring of W rows holds min(pos + 1, W) keys.
                length = self.ring_bounds(ring)[1] if ring < cfg.generate else self.seen
                seen = (B, KVH, length, Dh)
                k_all, v_all = (ir.extract_slice(t, [0, 0, 0, 0], seen, seen, f"{p}_{n}_seen")
                                for t, n in ((k_all, "k"), (v_all, "v")))
            kh, vh = (ir.collapse(t, [[0, 1], [2], [3]], f"{p}_{n}h") for t, n in ((k_all, "k"), (v_all, "v")))
        elif chunk_over_ring:
            # A chunk's S queries over the ring's W rows before it and its own
            # S keys (ring_chunk_keys), kv heads repeated as @prefill's.
            qh = self.to_heads(q, f"{p}_qh")
            kh, vh = (self.repeat_cached(before[n], f"{p}_{n}h") for n in "kv")
        elif self.function == "extend":
            # A chunk's S queries over the cache's positions [0, pos + S)
            # (all S_max, masked), each kv head repeated for its query heads
            # as a prompt's are (a chunk is compute-bound, as @prefill).
            if cfg.decode_attention == "seen":
                seen = (B, KVH, self.seen, Dh)
                k_all, v_all = (ir.extract_slice(t, [0, 0, 0, 0], seen, seen, f"{p}_{n}_seen")
                                for t, n in ((k_all, "k"), (v_all, "v")))
            qh = self.to_heads(q, f"{p}_qh")
            kh, vh = (self.repeat_cached(t, f"{p}_{n}h") for t, n in ((k_all, "k"), (v_all, "v")))
        else:
            # A prompt attends to itself: its keys and values are all there is.
            if KVH != H:
                k, v = self.repeat_kv(k, f"{p}_k_rep"), self.repeat_kv(v, f"{p}_v_rep")
            qh, kh, vh = (self.to_heads(t, f"{p}_{n}h") for t, n in ((q, "q"), (k, "k"), (v, "v")))
        kt = ir.transpose(kh, [0, 2, 1], f"{p}_kT")
        scores = ir.batch_matmul(qh, kt, f"{p}_scores")
        scale = cfg.attn_scale
        scores = ir.pointwise(f"{p}_scaled", [scores], lambda b, s, o: b.mul(s, b.const(scale)))
        if cfg.attn_softcap:
            scores = self.softcap(scores, cfg.attn_softcap, f"{p}_capped")
        # Each mask also hides a ragged batch's padding: key slots before
        # padding[b] (by row of scores: pad_rows, the operand before the
        # body's output in `pad_out`).
        pads = [(self.pad_rows(KVH if self.function == "decode" else H, p), (0,))] if cfg.ragged else []

        def unpadded(b, seen, slot, pad):  # seen None: every key but padding
            if not pad:
                return seen
            real = b(f"arith.cmpi sge, {slot}, {pad[0]} : i64")
            return real if seen is None else b(f"arith.andi {seen}, {real} : i1")
        if cfg.causal and "pos" not in self.args:
            def mask(b, s, *pad_out):
                row, col = b("linalg.index 1 : index"), b("linalg.index 2 : index")
                seen = b(f"arith.cmpi ule, {col}, {row} : index")
                if window:  # row - col < window
                    reach = b(f"arith.addi {col}, {b(f'arith.constant {window} : index')} : index")
                    seen = b(f"arith.andi {seen}, {b(f'arith.cmpi ugt, {reach}, {row} : index')} : i1")
                seen = unpadded(b, seen, _i64(b, col), pad_out[:-1])
                return b(f"arith.select {seen}, {s}, {b.const(MASK_VALUE)} : f32")
            scores = ir.pointwise(f"{p}_masked", [scores] + pads, mask)
        elif chunk_over_ring:
            def mask_ring(b, s, pos, *pad_out):
                seen, slot = self.ring_chunk_keys(b, pos, ring)
                seen = unpadded(b, seen, slot, pad_out[:-1])
                return b(f"arith.select {seen}, {s}, {b.const(MASK_VALUE)} : f32")
            scores = ir.pointwise(f"{p}_masked", [scores, (self.args["pos"], ())] + pads, mask_ring)
        elif self.function == "extend":
            def mask_chunk(b, s, pos, *pad_out):  # keys past the query's position pos + row
                row = _i64(b, b("linalg.index 1 : index"))
                limit = b(f"arith.addi {pos}, {row} : i64")
                col = _i64(b, b("linalg.index 2 : index"))
                seen = unpadded(b, b(f"arith.cmpi sle, {col}, {limit} : i64"), col, pad_out[:-1])
                return b(f"arith.select {seen}, {s}, {b.const(MASK_VALUE)} : f32")
            scores = ir.pointwise(f"{p}_masked", [scores, (self.args["pos"], ())] + pads, mask_chunk)
        elif self.function == "decode" and (cfg.decode_attention == "masked" or pads):
            # "masked": rows not written yet (a ring's too); "seen" reads
            # the keys written so far only, with nothing to mask but padding.
            def mask_by_pos(b, s, pos, *pad_out):
                col = _i64(b, b("linalg.index 2 : index"))
                seen = None
                if cfg.decode_attention == "masked":
                    seen = b(f"arith.cmpi sle, {col}, {pos} : i64")
                if pads:
                    slot = self.ring_slot(b, col, pos, ring if ring < cfg.generate else 0)
                    seen = unpadded(b, seen, slot, pad_out[:-1])
                return b(f"arith.select {seen}, {s}, {b.const(MASK_VALUE)} : f32")
            scores = ir.pointwise(f"{p}_masked", [scores, (self.args["pos"], ())] + pads, mask_by_pos)
        probs = self.softmax(scores, f"{p}_probs")
        ctx = ir.batch_matmul(probs, vh, f"{p}_ctx")
        if self.function == "decode":  # [B*KVH, G, Dh] -> [B, 1, H, Dh]
            ctx = ir.expand(ctx, [[0, 1], [2], [3]], (B, KVH, cfg.group, Dh), f"{p}_ctx_groups")
            ctx = ir.collapse(ctx, [[0], [1, 2], [3]], f"{p}_ctx_bhd")
            ctx = ir.expand(ctx, [[0, 1], [2], [3]], (B, S, H, Dh), f"{p}_ctx_bshd")
            return self.project(ctx, f"{a}.out", cfg.d_model, f"{p}_attn_out")
        ctx = ir.expand(ctx, [[0, 1], [2], [3]], (B, H, S, Dh), f"{p}_ctx_heads")
        ctx = ir.transpose(ctx, [0, 2, 1, 3], f"{p}_ctx_bshd")
        return self.project(ctx, f"{a}.out", cfg.d_model, f"{p}_attn_out")

    def pad_rows(self, heads: int, hint: str) -> Val:
        """padding [B] for each row of the attention's scores [B*heads, ...]
        (each head of a sequence its sequence's): broadcast and merged as the
        heads are, so that a cut of the heads cuts it alike. Once per layer:
        one value that every layer's scores read would tie the layers'
        attentions together, and tp-shard would no longer cut each between
        its heads."""
        wide = self.ir.broadcast(self.args["padding"], (self.cfg.batch, heads), [1], hint + "_pad_heads")
        return self.ir.collapse(wide, [[0, 1]], hint + "_pad_rows")

    @staticmethod
    def ring_slot(b, col: str, pos: str, ring: int) -> str:
        """@decode at position pos: the position cache row `col` holds (i64),
        col itself, or in a ring of `ring` rows (ring < S_max: a window)
        the latest position up to pos in its class mod ring."""
        if not ring:
            return col
        return _ring_position(b, pos, col, b(f"arith.constant {ring} : i64"))

    @staticmethod
    def ring_chunk_keys(b, pos: str, window: int) -> tuple[str, str]:
        """@extend's keys over a ring of W = window rows, then the chunk's:
        whether query row i at position p = pos + i sees the key of the
        column (p - W < k <= p), and that key's position k. Ring row r
        (r < pos: written) holds the latest position before pos in its class
        mod W, pos - 1 - (pos - 1 - r) mod W; chunk key j (column W + j) is
        position pos + j."""
        def op(name, x, y, t="i64"):
            return b(f"arith.{name} {x}, {y} : {t}")
        row, col = _i64(b, b("linalg.index 1 : index")), _i64(b, b("linalg.index 2 : index"))
        w, one = b(f"arith.constant {window} : i64"), b("arith.constant 1 : i64")
        held = _ring_position(b, op("subi", pos, one), col, w)
        written = b(f"arith.cmpi slt, {col}, {pos} : i64")
        recent = b(f"arith.cmpi sgt, {op('addi', held, w)}, {op('addi', pos, row)} : i64")
        ring_seen = op("andi", written, recent, "i1")
        j = op("subi", col, w)
        causal = b(f"arith.cmpi sle, {j}, {row} : i64")
        near = b(f"arith.cmpi sgt, {op('addi', j, w)}, {row} : i64")
        chunk_seen = op("andi", causal, near, "i1")
        in_ring = b(f"arith.cmpi slt, {col}, {w} : i64")
        seen = b(f"arith.select {in_ring}, {ring_seen}, {chunk_seen} : i1")
        return seen, b(f"arith.select {in_ring}, {held}, {op('addi', pos, j)} : i64")

    def chunk_ring_bounds(self, ring: int) -> tuple[str, str, str, str, str]:
        """@extend's writes into a ring of `ring` rows: of the chunk's `count`
        tokens of the prompt (padding past them writes nothing), the last m =
        min(count, ring), from chunk row `skip` = count - m, at rows (pos +
        skip) mod ring onward: `size` rows from row `first`, then the `rest`
        from the chunk's row `later` at row 0 (SSA indices, once per ring)."""
        if ring not in self.chunk_rings:
            ir = self.ir
            w = ir.scalar(f"cw{ring}", f"arith.constant {ring} : index")
            m = ir.scalar(f"cw{ring}_m", f"arith.minui {self.valid}, {w} : index")
            skip = ir.scalar(f"cw{ring}_skip", f"arith.subi {self.valid}, {m} : index")
            start = ir.scalar(f"cw{ring}_start", f"arith.addi {self.pos}, {skip} : index")
            first = ir.scalar(f"cw{ring}_row", f"arith.remui {start}, {w} : index")
            room = ir.scalar(f"cw{ring}_room", f"arith.subi {w}, {first} : index")
            size = ir.scalar(f"cw{ring}_size", f"arith.minui {room}, {m} : index")
            rest = ir.scalar(f"cw{ring}_rest", f"arith.subi {m}, {size} : index")
            later = ir.scalar(f"cw{ring}_later", f"arith.addi {skip}, {size} : index")
            self.chunk_rings[ring] = skip, first, size, rest, later
        return self.chunk_rings[ring]

    def ring_bounds(self, ring: int) -> tuple[str, str]:
        """@decode's row of position pos in a ring of `ring` rows, pos mod
        ring, and the rows written once it is, min(pos + 1, ring) (SSA
        indices, emitted once per ring length)."""
        if ring not in self.rings:
            ir = self.ir
            rows = ir.scalar(f"w{ring}", f"arith.constant {ring} : index")
            length = min(self.seen, ring) if isinstance(self.seen, int) else \
                ir.scalar(f"w{ring}_len", f"arith.minui {self.seen}, {rows} : index")
            self.rings[ring] = ir.scalar(f"w{ring}_row", f"arith.remui {self.pos}, {rows} : index"), length
        return self.rings[ring]

    def update_cache(self, rows: Val, i: int, kv: str) -> Val:
        """Writes K or V of this step, [B, KVH, S, Dh], into the layer's cache
        [B, KVH, S_max, Dh] at positions pos .. pos+S-1: one insert_slice (a
        dynamic offset in @decode and @extend), so the cache can be updated in place. A
        ring of W rows (a sliding layer, cfg.cache_length) takes position p
        at row p mod W: @prefill writes a prompt shorter than W at rows
        [0, S), a longer one's last W positions in two slices; @extend the
        last min(count, W) of its chunk's `count` tokens in two slices of
        sizes known at run time."""
        ir, name, ring = self.ir, f"cache.{i}.{kv}", self.cfg.cache_length(i)
        cache, hint = self.args[name], f"cache_{i}_{kv}_next"
        if ring == self.cfg.generate or (self.function == "prefill" and self.seq < ring):
            cache = ir.insert_slice(rows, cache, [0, 0, self.pos, 0], hint)
        elif self.function == "decode":
            cache = ir.insert_slice(rows, cache, [0, 0, self.ring_bounds(ring)[0], 0], hint)
        elif self.function == "extend":
            B, KVH, S, Dh = rows.shape
            skip, first, count, rest, later = self.chunk_ring_bounds(ring)
            for offset, size, row in ((skip, count, first), (later, rest, 0)):
                part = (B, KVH, size, Dh)
                part = ir.extract_slice(rows, [0, 0, offset, 0], part, part, f"l{i}_{kv}_ring")
                cache = ir.insert_slice(part, cache, [0, 0, row, 0], hint)
        else:
            # Positions [S - W, S): the first W - r at rows [r, W), the last
            # r at [0, r). Never one slice of all W rows, which folds into
            # a new tensor instead of the cache's buffer (r = 0: split at
            # the last row).
            B, KVH, S, Dh = rows.shape
            r = S % ring
            parts = ((S - ring, ring - r, r), (S - r, r, 0)) if r else \
                ((S - ring, ring - 1, 0), (S - 1, 1, ring - 1))
            for first, count, row in parts:
                part = (B, KVH, count, Dh)
                part = ir.extract_slice(rows, [0, 0, first, 0], part, part, f"l{i}_{kv}_ring")
                cache = ir.insert_slice(part, cache, [0, 0, row, 0], hint)
        self.caches[name] = cache
        return cache

    def mlp(self, x: Val, i: int) -> Val:
        cfg, ir = self.cfg, self.ir
        p, m = f"l{i}", f"h.{i}.mlp"
        if cfg.gate_up == "fused":  # [.., 2, ffn] read as its two blocks, as q|k|v
            B, S, F = cfg.batch, self.seq, cfg.ffn
            both = self.project(x, f"{m}.gate_up", 2 * F, f"{p}_gate_up")
            both = ir.expand(both, [[0], [1], [2, 3]], (B, S, 2, F), f"{p}_gate_up_blocks")
            gate, up = (ir.extract_slice(both, [0, 0, j, 0], [B, S, 1, F], [B, S, F], f"{p}_{n}")
                        for j, n in enumerate(("gate", "up")))
        else:
            if cfg.gated:
                gate = self.project(x, f"{m}.gate", cfg.ffn, f"{p}_gate")
            up = self.project(x, f"{m}.up", cfg.ffn, f"{p}_up")

        def gelu(b, v):
            inner = b.add(v, b.mul(b.mul(b.mul(v, v), v), b.const(0.044715)))
            t = b.math("tanh", b.mul(inner, b.const(GELU_C)))
            return b.mul(b.mul(v, b.const(0.5)), b.add(t, b.const(1.0)))
        if cfg.activation == "swiglu":
            def swiglu(b, g, u, o):
                one = b.const(1.0)
                sigmoid = b.div(one, b.add(one, b.math("exp", b.neg(g))))
                return b.mul(b.mul(g, sigmoid), u)
            act = ir.pointwise(f"{p}_swiglu", [gate, up], swiglu)
        elif cfg.activation == "geglu":
            act = ir.pointwise(f"{p}_geglu", [gate, up], lambda b, g, u, o: b.mul(gelu(b, g), u))
        else:
            act = ir.pointwise(f"{p}_gelu", [up], lambda b, v, o: gelu(b, v))
        return self.project(act, f"{m}.down", cfg.d_model, f"{p}_mlp_out")

    def residual(self, a: Val, b: Val, hint: str) -> Val:
        return self.ir.pointwise(hint, [a, b], lambda bd, x, y, o: bd.add(x, y))

    def block(self, x: Val, i: int) -> Val:
        attn = self.attention(self.norm(x, f"h.{i}.ln_1", f"l{i}_ln1"), i)
        if self.cfg.post_norms:
            attn = self.norm(attn, f"h.{i}.ln_attn_out", f"l{i}_attn_out_norm")
        h = self.residual(x, attn, f"l{i}_h")
        mlp = self.mlp(self.norm(h, f"h.{i}.ln_2", f"l{i}_ln2"), i)
        if self.cfg.post_norms:
            mlp = self.norm(mlp, f"h.{i}.ln_mlp_out", f"l{i}_mlp_out_norm")
        return self.residual(h, mlp, f"l{i}_out")

    def build(self, inline: dict | None = None) -> str:
        """The module of one @forward."""
        if self.cfg.rope_tables_in_graph:
            self.rope_tables = self.make_rope_tables()
        x = self.embed() if self.cfg.vocab else self.args["x"]
        for i in range(self.cfg.layers):
            x = self.block(x, i)
        if self.cfg.vocab:
            x = self.lm_head(x)
        inline = _check_inline(self.cfg, inline, self.args)
        out = [f"{text} = {alias}" for text, alias in ((v, k) for k, v in self.ir.maps.items())]
        out += ["module {"] + self.function_text([x], [None], inline) + ["}", ""]
        if inline:
            out += _resources(inline)
        return "\n".join(out)

    def build_step(self) -> list[Val]:
        """@prefill's, @decode's or @extend's body; returns its results
        (result_specs order)."""
        cfg, ir = self.cfg, self.ir
        if "valid" in self.args:
            self.valid = ir.index_of(self.args["valid"], "valid_idx")
        if "pos" in self.args:
            self.pos = ir.index_of(self.args["pos"], "pos_idx")
            self.seen = cfg.generate  # "masked": all S_max positions
            if cfg.decode_attention == "seen":
                count = ir.scalar("c1" if self.seq == 1 else "chunk", f"arith.constant {self.seq} : index")
                self.seen = ir.scalar("seen", f"arith.addi {self.pos}, {count} : index")
        if cfg.rope_tables_in_graph:
            self.rope_tables = self.make_rope_tables()
        x = self.embed()
        for i in range(cfg.layers):
            x = self.block(x, i)
        if self.seq > 1:  # only the last position predicts the next token
            last = (cfg.batch, 1, cfg.d_model)
            row = self.seq - 1
            if "valid" in self.args:  # @extend: the last of its tokens of the prompt
                one = ir.scalar("one", "arith.constant 1 : index")
                row = ir.scalar("last_row", f"arith.subi {self.valid}, {one} : index")
            x = ir.extract_slice(x, [0, row, 0], last, last, "last")
        logits = self.lm_head(x)
        _, next_ids = ir.argmax_last(logits, "next")
        results = [next_ids] + ([logits] if cfg.keep_logits else [])
        return results + [self.caches[name] for name, _ in result_specs(cfg)[len(results):]]

    def function_text(self, results: list[Val], names: list[str | None], inline: dict) -> list[str]:
        """The func.func: arguments with their tp.name (the checkpoint's name
        for a weight), results named when `names` says so."""
        padded, packed = checkpoint_shapes(self.cfg), packed_rows(self.cfg)

        def arg(n):
            attrs = f"tp.name = \"{checkpoint_name(self.cfg, n) if n in self.weights() else n}\""
            stored = padded.get(n) or packed.get(n, (0, None))[1]
            if stored:
                attrs += f", tp.checkpoint_shape = array<i64: {', '.join(map(str, stored))}>"
            if n in packed:
                attrs += f", tp.checkpoint_offset = {packed[n][0]} : i64"
            if n.startswith("cache.") and self.args[n].shape[2] < self.cfg.generate:  # a ring
                attrs += f", tp.positions = {self.cfg.generate} : i64"
            return f"    {self.args[n].name}: {self.args[n].type} {{{attrs}}}"
        sig = ",\n".join(arg(n) for n in self.args if n not in inline)
        types = [r.type + (f" {{tp.name = \"{n}\"}}" if n else "") for r, n in zip(results, names)]
        ret = types[0] if len(types) == 1 else "(" + ", ".join(types) + ")"
        out = [f"  func.func @{self.function}(\n{sig}) -> {ret} {{"]
        out += [f"    {self.args[n].name} = arith.constant dense_resource<{n}> : {self.args[n].type}"
                for n in inline]
        out += [f"    {line}" for line in self.ir.lines]
        out += [f"    return {', '.join(r.name for r in results)} : {', '.join(r.type for r in results)}", "  }"]
        return out

    def weights(self) -> set[str]:
        return {n for n in self.args if n not in ("x", *STEP_INPUTS) and not n.startswith("cache.")}


def _resources(tensors: dict) -> list[str]:
    """The dialect_resources section holding `tensors` as builtin blobs
    (alignment 4, then the little-endian fp32 data), as torch-mlir's importer
    writes a module's weights."""
    import numpy as np
    blobs = [f'      {name}: "0x04000000{np.ascontiguousarray(a, dtype="<f4").tobytes().hex()}"'
             for name, a in tensors.items()]
    return ["{-#", "  dialect_resources: {", "    builtin: {", ",\n".join(blobs),
            "    }", "  }", "#-}", ""]


def _check_inline(cfg: ModelConfig, inline: dict | None, args: dict) -> dict:
    inline = dict(inline or {})
    unknown = sorted(n for n in inline if n not in args or n in (input_name(cfg), *STEP_INPUTS)
                     or n.startswith("cache."))
    if unknown:
        raise ValueError(f"inline weights {unknown} are not weights of this model")
    return inline


def _build_generate(cfg: ModelConfig, inline: dict | None) -> str:
    maps: dict[str, str] = {}
    names = [n for n, _ in result_specs(cfg)]
    functions = []
    for function in ("prefill", "decode") + (("extend",) if cfg.chunked_prefill else ()):
        b = _Builder(cfg, function, maps)
        results = b.build_step()
        functions += b.function_text(results, names, _check_inline(cfg, inline, b.args))
    out = [f"{text} = {alias}" for text, alias in ((v, k) for k, v in maps.items())]
    ends = ", ".join(str(i) for i in cfg.eos_token_ids)
    out += [f"module attributes {{tp.eos_token_ids = array<i64: {ends}>}} {{" if ends else "module {"]
    out += functions + ["}", ""]
    if inline:
        out += _resources(inline)
    return "\n".join(out)


def build_mlir(cfg: ModelConfig, inline_weights: dict | None = None) -> str:
    """The whole forward pass of `cfg.layers` blocks as MLIR text (with
    cfg.generate, the @prefill and @decode functions); each weight named in
    `inline_weights` (name -> array) is an `arith.constant
    dense_resource<name>` holding that array instead of an argument."""
    cfg.validate()
    if cfg.generate:
        return _build_generate(cfg, inline_weights)
    return _Builder(cfg).build(inline_weights)


# Fields added with generation: printed only when set, so that the headers of
# the models made before them do not change.
_LATER_FIELDS = ("head_dim", "qk_norm", "gate_up", "norm_plus_one", "embed_scale", "post_norms",
                 "query_pre_attn_scalar", "attn_softcap", "logit_softcap", "positions", "rope_theta",
                 "rope_scaling", "rotary_dim", "sliding_window", "sliding_layers", "rope_local_theta", "qkv_bias", "generate",
                 "keep_logits", "pad_vocab", "eos_token_ids", "decode_attention", "chunked_prefill", "ragged", "names",
                 "name_prefix")


def describe(cfg: ModelConfig) -> str:
    """One-line summary used in generated file headers."""
    defaults = ModelConfig(bias=cfg.bias)

    def shown(k: str) -> bool:
        if k == "head_dim":  # set apart from d_model / heads
            return cfg.head_dim * cfg.heads != cfg.d_model
        return k not in _LATER_FIELDS or getattr(cfg, k) != getattr(defaults, k)
    fields = ", ".join(f"{k}={getattr(cfg, k)}" for k in cfg.__dataclass_fields__ if shown(k))
    return f"// tpmlir ModelConfig({fields})"


__all__ = ["build_mlir", "describe"]

#!/usr/bin/env python3
"""Emit N GPT-2-style transformer blocks in the form upstream MLIR 22's
`shard` dialect accepts, for the compile-time benchmark against tp-opt.

    gen_upstream_blocks.py --blocks N [--d 768] [--heads 12] [--seq 128]
                           [--ffn 4*d] [--tp 2] [--attention einsum|bmm]
                           [--annotate all|split|none]

Prints one module: `shard.grid @grid(shape = TP)` and one func `@blocks`
that chains N pre-LN transformer blocks (LayerNorm -> causal multi-head
attention -> residual -> LayerNorm -> GeLU MLP -> residual).

Why this form (see bench/upstream/README.md for the errors that forced it):
  * Upstream propagation/partition only handles ops with a ShardingInterface
    (linalg structured ops, tosa, a few tensor/arith ops) and, inside linalg,
    only projected-permutation indexing maps.  tensor.expand_shape /
    collapse_shape / extract_slice and linalg.softmax have no interface, so
    heads are a real loop dimension here: Q/K/V weights are [d, h, dh], the
    out-projection weight is [h, dh, d], and every attention op is a
    linalg.generic over (s, h, dh) / (h, s, t) with no reshape.
  * Softmax is written as four generics (max-reduce, exp(x - max),
    sum-reduce, divide).
  * Weights carry explicit annotations: column split (QKV on the heads dim,
    FFN-up on the ffn dim, and their biases), row split (out-proj on the
    heads dim, FFN-down on the ffn dim); everything else replicated.
    Annotations are on the definition (`shard.shard %w to %s`), so the
    partitioned function takes pre-sliced weights, like `tp-opt --tp-shard`.
  * The causal mask is a replicated [s, s] additive-mask argument shared by
    all blocks (a linalg.index-based mask would also partition, but an
    argument keeps the IR identical across tools).

Stdlib only.
"""

import argparse
import sys


class Emitter:
    def __init__(self, s, d, h, dh, f, tp, annotate, attn="einsum"):
        self.s, self.d, self.h, self.dh, self.f = s, d, h, dh, f
        self.attn = attn
        self.tp = tp
        self.annotate = annotate
        self.lines = []
        self.args = []  # (name, type)

    # ------------------------------------------------------------------ utils
    @staticmethod
    def ty(*shape):
        return "tensor<" + "x".join(str(x) for x in shape) + "xf32>"

    def emit(self, line):
        self.lines.append("    " + line)

    def arg(self, name, shape, sharding):
        """Declare a function argument; return the SSA value blocks should use."""
        t = self.ty(*shape)
        self.args.append((name, t))
        if not self.annotate or (self.annotate == "split" and sharding == "s_rep"):
            return "%" + name
        self.emit(f"%{name}_s = shard.shard %{name} to %{sharding} : {t}")
        return f"%{name}_s"

    def fill(self, name, shape, value="%cst0"):
        t = self.ty(*shape)
        self.emit(f"%{name}_e = tensor.empty() : {t}")
        self.emit(f"%{name} = linalg.fill ins({value} : f32) outs(%{name}_e : {t}) -> {t}")
        return f"%{name}"

    def empty(self, name, shape):
        t = self.ty(*shape)
        self.emit(f"%{name} = tensor.empty() : {t}")
        return f"%{name}"

    def generic(self, res, dims, ins, out, iters, body):
        """ins: list of (value, shape, map-exprs); out: (value, shape, map-exprs).
        dims: loop dim names, e.g. "s,d"; body: list of lines using %a0.. %aN
        for inputs, %o for the output element, ending with a value name in
        the last entry ('yield X')."""
        dl = dims.split(",")
        maps = []
        for _, _, m in ins + [out]:
            maps.append(f"affine_map<({', '.join(dl)}) -> ({m})>")
        it = ", ".join(f'"{x}"' for x in iters)
        inv = ", ".join(v for v, _, _ in ins)
        intys = ", ".join(self.ty(*sh) for _, sh, _ in ins)
        ov, osh, _ = out
        oty = self.ty(*osh)
        bbargs = ", ".join([f"%a{i}: f32" for i in range(len(ins))] + ["%o: f32"])
        self.emit(f"%{res} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                  f"iterator_types = [{it}]}} ins({inv} : {intys}) outs({ov} : {oty}) {{")
        self.emit(f"^bb0({bbargs}):")
        for b in body[:-1]:
            self.emit("  " + b)
        self.emit(f"  linalg.yield {body[-1]} : f32")
        self.emit(f"}} -> {oty}")
        return f"%{res}"

    # ------------------------------------------------------------ components
    def layernorm(self, p, x, g, b):
        s, d = self.s, self.d
        zs = self.fill(f"{p}_z", (s,))
        sm = self.generic(f"{p}_sum", "s,d", [(x, (s, d), "s, d")], (zs, (s,), "s"),
                          ["parallel", "reduction"], ["%r = arith.addf %a0, %o : f32", "%r"])
        e = self.empty(f"{p}_xce", (s, d))
        xc = self.generic(f"{p}_xc", "s,d", [(x, (s, d), "s, d"), (sm, (s,), "s")],
                          (e, (s, d), "s, d"), ["parallel", "parallel"],
                          ["%m = arith.mulf %a1, %cinvd : f32",
                           "%r = arith.subf %a0, %m : f32", "%r"])
        zv = self.fill(f"{p}_zv", (s,))
        var = self.generic(f"{p}_var", "s,d", [(xc, (s, d), "s, d")], (zv, (s,), "s"),
                           ["parallel", "reduction"],
                           ["%q = arith.mulf %a0, %a0 : f32",
                            "%r = arith.addf %q, %o : f32", "%r"])
        e2 = self.empty(f"{p}_ye", (s, d))
        return self.generic(f"{p}_y", "s,d",
                            [(xc, (s, d), "s, d"), (var, (s,), "s"),
                             (g, (d,), "d"), (b, (d,), "d")],
                            (e2, (s, d), "s, d"), ["parallel", "parallel"],
                            ["%v = arith.mulf %a1, %cinvd : f32",
                             "%ve = arith.addf %v, %ceps : f32",
                             "%rs = math.rsqrt %ve : f32",
                             "%n = arith.mulf %a0, %rs : f32",
                             "%gn = arith.mulf %n, %a2 : f32",
                             "%r = arith.addf %gn, %a3 : f32", "%r"])

    def head_proj(self, p, x, w, bias):
        """x[s,d] @ w[d,h,e] + bias[h,e] -> [s,h,e] (heads kept as a loop dim)."""
        s, d, h, e = self.s, self.d, self.h, self.dh
        z = self.fill(f"{p}_z", (s, h, e))
        mm = self.generic(f"{p}_mm", "s,h,e,k",
                          [(x, (s, d), "s, k"), (w, (d, h, e), "k, h, e")],
                          (z, (s, h, e), "s, h, e"),
                          ["parallel", "parallel", "parallel", "reduction"],
                          ["%m = arith.mulf %a0, %a1 : f32",
                           "%r = arith.addf %o, %m : f32", "%r"])
        em = self.empty(f"{p}_be", (s, h, e))
        return self.generic(f"{p}", "s,h,e", [(mm, (s, h, e), "s, h, e"),
                                              (bias, (h, e), "h, e")],
                            (em, (s, h, e), "s, h, e"), ["parallel"] * 3,
                            ["%r = arith.addf %a0, %a1 : f32", "%r"])

    def attention(self, p, q, k, v, mask):
        s, h, e = self.s, self.h, self.dh
        z = self.fill(f"{p}_sz", (h, s, s))
        sc = self.generic(f"{p}_qk", "h,s,t,e",
                          [(q, (s, h, e), "s, h, e"), (k, (s, h, e), "t, h, e")],
                          (z, (h, s, s), "h, s, t"),
                          ["parallel", "parallel", "parallel", "reduction"],
                          ["%m = arith.mulf %a0, %a1 : f32",
                           "%r = arith.addf %o, %m : f32", "%r"])
        pr = self.softmax(p, sc, mask)
        zc = self.fill(f"{p}_cz", (s, h, e))
        return self.generic(f"{p}_ctx", "s,h,e,t",
                            [(pr, (h, s, s), "h, s, t"), (v, (s, h, e), "t, h, e")],
                            (zc, (s, h, e), "s, h, e"),
                            ["parallel", "parallel", "parallel", "reduction"],
                            ["%m = arith.mulf %a0, %a1 : f32",
                             "%r = arith.addf %o, %m : f32", "%r"])

    def softmax(self, p, sc, mask):
        """scale + causal mask + softmax over t, as generics on [h, s, t]."""
        s, h = self.s, self.h
        em = self.empty(f"{p}_me", (h, s, s))
        sm = self.generic(f"{p}_sm", "h,s,t", [(sc, (h, s, s), "h, s, t"),
                                               (mask, (s, s), "s, t")],
                          (em, (h, s, s), "h, s, t"), ["parallel"] * 3,
                          ["%m = arith.mulf %a0, %cscale : f32",
                           "%r = arith.addf %m, %a1 : f32", "%r"])
        # softmax over t as generics
        zm = self.fill(f"{p}_mxz", (h, s), "%cninf")
        mx = self.generic(f"{p}_mx", "h,s,t", [(sm, (h, s, s), "h, s, t")],
                          (zm, (h, s), "h, s"), ["parallel", "parallel", "reduction"],
                          ["%r = arith.maximumf %a0, %o : f32", "%r"])
        ee = self.empty(f"{p}_exe", (h, s, s))
        ex = self.generic(f"{p}_ex", "h,s,t", [(sm, (h, s, s), "h, s, t"),
                                               (mx, (h, s), "h, s")],
                          (ee, (h, s, s), "h, s, t"), ["parallel"] * 3,
                          ["%d = arith.subf %a0, %a1 : f32",
                           "%r = math.exp %d : f32", "%r"])
        zs = self.fill(f"{p}_smz", (h, s))
        su = self.generic(f"{p}_su", "h,s,t", [(ex, (h, s, s), "h, s, t")],
                          (zs, (h, s), "h, s"), ["parallel", "parallel", "reduction"],
                          ["%r = arith.addf %a0, %o : f32", "%r"])
        pe = self.empty(f"{p}_pe", (h, s, s))
        return self.generic(f"{p}_p", "h,s,t", [(ex, (h, s, s), "h, s, t"),
                                                (su, (h, s), "h, s")],
                            (pe, (h, s, s), "h, s, t"), ["parallel"] * 3,
                            ["%r = arith.divf %a0, %a1 : f32", "%r"])

    def transpose(self, name, x, shape, perm):
        out_shape = tuple(shape[i] for i in perm)
        e = self.empty(f"{name}_e", out_shape)
        self.emit(f"%{name} = linalg.transpose ins({x} : {self.ty(*shape)}) "
                  f"outs({e} : {self.ty(*out_shape)}) permutation = [{', '.join(map(str, perm))}]")
        return f"%{name}"

    def attention_bmm(self, p, q, k, v, mask):
        """Same attention with named ops: linalg.transpose to head-major and
        linalg.batch_matmul (heads = batch dim).  Returns ctx as [h, s, dh]."""
        s, h, e = self.s, self.h, self.dh
        qt = self.transpose(f"{p}_qt", q, (s, h, e), (1, 0, 2))   # [h,s,e]
        kt = self.transpose(f"{p}_kt", k, (s, h, e), (1, 2, 0))   # [h,e,t]
        vt = self.transpose(f"{p}_vt", v, (s, h, e), (1, 0, 2))   # [h,t,e]
        z = self.fill(f"{p}_sz", (h, s, s))
        t3, tq, tk = self.ty(h, s, s), self.ty(h, s, e), self.ty(h, e, s)
        self.emit(f"%{p}_qk = linalg.batch_matmul ins({qt}, {kt} : {tq}, {tk}) "
                  f"outs({z} : {t3}) -> {t3}")
        pr = self.softmax(p, f"%{p}_qk", mask)
        zc = self.fill(f"{p}_cz", (h, s, e))
        self.emit(f"%{p}_ctx = linalg.batch_matmul ins({pr}, {vt} : {t3}, {tq}) "
                  f"outs({zc} : {tq}) -> {tq}")
        return f"%{p}_ctx"

    def out_proj(self, p, ctx, wo, ctx_map="s, h, e"):
        """ctx[s,h,e] . wo[h,e,n] -> [s,n] (contracts heads and head dim)."""
        s, d, h, e = self.s, self.d, self.h, self.dh
        z = self.fill(f"{p}_z", (s, d))
        return self.generic(f"{p}", "s,n,h,e",
                            [(ctx, (s, h, e) if ctx_map == "s, h, e" else (h, s, e), ctx_map),
                             (wo, (h, e, d), "h, e, n")],
                            (z, (s, d), "s, n"),
                            ["parallel", "parallel", "reduction", "reduction"],
                            ["%m = arith.mulf %a0, %a1 : f32",
                             "%r = arith.addf %o, %m : f32", "%r"])

    def bias_residual(self, p, y, bias, resid):
        s, d = self.s, self.d
        e = self.empty(f"{p}_be", (s, d))
        yb = self.generic(f"{p}_b", "s,n", [(y, (s, d), "s, n"), (bias, (d,), "n")],
                          (e, (s, d), "s, n"), ["parallel", "parallel"],
                          ["%r = arith.addf %a0, %a1 : f32", "%r"])
        t = self.ty(s, d)
        e2 = self.empty(f"{p}_re", (s, d))
        self.emit(f"%{p} = linalg.add ins({yb}, {resid} : {t}, {t}) outs({e2} : {t}) -> {t}")
        return f"%{p}"

    def mlp(self, p, x, w1, b1, w2):
        s, d, f = self.s, self.d, self.f
        z1 = self.fill(f"{p}_z1", (s, f))
        td, tf, tw1, tw2 = self.ty(s, d), self.ty(s, f), self.ty(d, f), self.ty(f, d)
        self.emit(f"%{p}_up = linalg.matmul ins({x}, {w1} : {td}, {tw1}) outs({z1} : {tf}) -> {tf}")
        e = self.empty(f"{p}_ge", (s, f))
        g = self.generic(f"{p}_gelu", "s,f", [(f"%{p}_up", (s, f), "s, f"), (b1, (f,), "f")],
                         (e, (s, f), "s, f"), ["parallel", "parallel"],
                         ["%xb = arith.addf %a0, %a1 : f32",
                          "%x2 = arith.mulf %xb, %xb : f32",
                          "%x3 = arith.mulf %x2, %xb : f32",
                          "%c = arith.mulf %x3, %cgelu_a : f32",
                          "%i = arith.addf %xb, %c : f32",
                          "%j = arith.mulf %i, %cgelu_k : f32",
                          "%t = math.tanh %j : f32",
                          "%u = arith.addf %t, %cone : f32",
                          "%hx = arith.mulf %xb, %chalf : f32",
                          "%r = arith.mulf %hx, %u : f32", "%r"])
        z2 = self.fill(f"{p}_z2", (s, d))
        self.emit(f"%{p}_down = linalg.matmul ins({g}, {w2} : {tf}, {tw2}) outs({z2} : {td}) -> {td}")
        return f"%{p}_down"

    def block(self, i, x, mask):
        s, d, h, e, f = self.s, self.d, self.h, self.dh, self.f
        p = f"b{i}"
        self.emit(f"// ---- block {i}")
        ln1g = self.arg(f"{p}_ln1_g", (d,), "s_rep")
        ln1b = self.arg(f"{p}_ln1_b", (d,), "s_rep")
        wq = self.arg(f"{p}_wq", (d, h, e), "s_col3")
        bq = self.arg(f"{p}_bq", (h, e), "s_dim0")
        wk = self.arg(f"{p}_wk", (d, h, e), "s_col3")
        bk = self.arg(f"{p}_bk", (h, e), "s_dim0")
        wv = self.arg(f"{p}_wv", (d, h, e), "s_col3")
        bv = self.arg(f"{p}_bv", (h, e), "s_dim0")
        wo = self.arg(f"{p}_wo", (h, e, d), "s_dim0")
        bo = self.arg(f"{p}_bo", (d,), "s_rep")
        ln2g = self.arg(f"{p}_ln2_g", (d,), "s_rep")
        ln2b = self.arg(f"{p}_ln2_b", (d,), "s_rep")
        w1 = self.arg(f"{p}_w1", (d, f), "s_col2")
        b1 = self.arg(f"{p}_b1", (f,), "s_dim0")
        w2 = self.arg(f"{p}_w2", (f, d), "s_dim0")
        b2 = self.arg(f"{p}_b2", (d,), "s_rep")

        h1 = self.layernorm(f"{p}_ln1", x, ln1g, ln1b)
        q = self.head_proj(f"{p}_q", h1, wq, bq)
        k = self.head_proj(f"{p}_k", h1, wk, bk)
        v = self.head_proj(f"{p}_v", h1, wv, bv)
        if self.attn == "bmm":
            ctx = self.attention_bmm(f"{p}_att", q, k, v, mask)
            ao = self.out_proj(f"{p}_o", ctx, wo, ctx_map="h, s, e")
        else:
            ctx = self.attention(f"{p}_att", q, k, v, mask)
            ao = self.out_proj(f"{p}_o", ctx, wo)
        x1 = self.bias_residual(f"{p}_r1", ao, bo, x)
        h2 = self.layernorm(f"{p}_ln2", x1, ln2g, ln2b)
        m = self.mlp(f"{p}_mlp", h2, w1, b1, w2)
        return self.bias_residual(f"{p}_r2", m, b2, x1)

    def module(self, nblocks):
        s, d = self.s, self.d
        consts = [
            ("cst0", "0.0"), ("cone", "1.0"), ("chalf", "0.5"),
            ("cninf", "0xFF800000"), ("ceps", "1.0e-05"),
            ("cinvd", repr(1.0 / d)), ("cscale", repr(1.0 / (self.dh ** 0.5))),
            ("cgelu_a", "0.044715"), ("cgelu_k", "0.7978845608028654"),
        ]
        for n, v in consts:
            self.emit(f"%{n} = arith.constant {v} : f32")
        if self.annotate:
            self.emit("%s_rep = shard.sharding @grid split_axes = [[]] : !shard.sharding")
            self.emit("%s_dim0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding")
            self.emit("%s_col2 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding")
            self.emit("%s_col3 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding")
        x = self.arg("x_in", (s, d), "s_rep")
        mask = self.arg("mask", (s, s), "s_rep")
        for i in range(nblocks):
            x = self.block(i, x, mask)
        t = self.ty(s, d)
        if self.annotate:
            self.emit(f"%out = shard.shard {x} to %s_rep annotate_for_users : {t}")
            x = "%out"
        self.emit(f"return {x} : {t}")
        out = []
        if self.annotate:
            out.append(f"shard.grid @grid(shape = {self.tp})")
        sig = ",\n    ".join(f"%{n}: {t}" for n, t in self.args)
        out.append(f"func.func @blocks(\n    {sig}) -> {self.ty(s, d)} {{")
        out.extend(self.lines)
        out.append("}")
        return "module {\n" + "\n".join(out) + "\n}\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=1)
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--ffn", type=int, default=None, help="default 4*d")
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--attention", choices=["einsum", "bmm"], default="einsum",
                    help="einsum: QK^T and PV as linalg.generic contractions over "
                         "[s, h, dh] (default); bmm: linalg.transpose to head-major + "
                         "linalg.batch_matmul")
    ap.add_argument("--annotate", choices=["all", "split", "none"], default="all",
                    help="all: every argument gets a shard.shard (replicated ones "
                         "too) [default]; split: only the column/row-split weights "
                         "and biases; none: plain linalg, no shard ops")
    ap.add_argument("--no-annotations", action="store_true", help="same as --annotate none")
    a = ap.parse_args(argv)
    if a.d % a.heads:
        ap.error("--d must be divisible by --heads")
    f = a.ffn if a.ffn else 4 * a.d
    if a.heads % a.tp or f % a.tp:
        ap.error("--heads and ffn must be divisible by --tp (upstream needs even splits "
                 "for static shapes)")
    em = Emitter(a.seq, a.d, a.heads, a.d // a.heads, f, a.tp,
                 False if (a.no_annotations or a.annotate == "none") else a.annotate,
                 a.attention)
    sys.stdout.write(em.module(a.blocks))


if __name__ == "__main__":
    main()

"""A tiny text emitter for linalg-on-tensors.

Only what the transformer builder needs: every helper appends one op and
returns a `Val` that remembers its static shape, so callers never spell a
tensor type by hand.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence


def tensor_type(shape: Sequence[int | str], dtype: str = "f32") -> str:
    """A dimension given as an SSA index name is dynamic (`?`)."""
    return "tensor<" + "".join(f"{'?' if isinstance(d, str) else d}x" for d in shape) + dtype + ">"


def f32(value: float) -> str:
    """An MLIR f32 literal; 9 significant digits round-trip any f32."""
    if value == float("-inf"):
        return "0xFF800000"
    return f"{value:.9e}"


def ilist(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


@dataclass(frozen=True)
class Val:
    name: str
    shape: tuple[int | str, ...]  # a str is a dynamic size: the SSA index that holds it
    dtype: str = "f32"  # token ids are i64

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)


class Body:
    """Builds the region of a linalg.generic. Block arguments are %in0.. and %out."""

    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, text: str) -> str:
        name = f"%b{len(self.lines)}"
        self.lines.append(f"{name} = {text}")
        return name

    def const(self, value: float) -> str:
        return self(f"arith.constant {f32(value)} : f32")

    # Scalar f32 arithmetic; each returns the SSA name of its result.
    def add(self, a: str, b: str) -> str:
        return self(f"arith.addf {a}, {b} : f32")

    def sub(self, a: str, b: str) -> str:
        return self(f"arith.subf {a}, {b} : f32")

    def mul(self, a: str, b: str) -> str:
        return self(f"arith.mulf {a}, {b} : f32")

    def div(self, a: str, b: str) -> str:
        return self(f"arith.divf {a}, {b} : f32")

    def max(self, a: str, b: str) -> str:
        return self(f"arith.maximumf {a}, {b} : f32")

    def neg(self, a: str) -> str:
        return self(f"arith.negf {a} : f32")

    def math(self, fn: str, a: str) -> str:
        return self(f"math.{fn} {a} : f32")


# fn(body, *input block args, output block arg) -> name of the yielded value
BodyFn = Callable[..., str]


class Emitter:
    def __init__(self):
        self.lines: list[str] = []
        self._used: set[str] = set()
        self._consts: dict[str, str] = {}
        self.maps: dict[str, str] = {}  # affine map text -> alias

    # -- naming ---------------------------------------------------------
    def fresh(self, hint: str) -> str:
        # Block-argument style names (%in0, %out, %b0) are reserved for regions.
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint)
        name, n = base, 1
        while name in self._used:
            name, n = f"{base}_{n}", n + 1
        self._used.add(name)
        return "%" + name

    def reserve(self, name: str) -> None:
        self._used.add(name.lstrip("%"))

    def op(self, hint: str, shape: Sequence[int], text: str, dtype: str = "f32") -> Val:
        v = Val(self.fresh(hint), tuple(shape), dtype)
        self.lines.append(f"{v.name} = {text}")
        return v

    def scalar(self, hint: str, text: str) -> str:
        """One op with a scalar result (an index, an i64); returns its name."""
        name = self.fresh(hint)
        self.lines.append(f"{name} = {text}")
        return name

    def index_of(self, v: Val, hint: str) -> str:
        """The value of a rank-0 integer tensor as an index."""
        elem = self.scalar(hint + "_i64", f"tensor.extract {v.name}[] : {v.type}")
        return self.scalar(hint, f"arith.index_cast {elem} : {v.dtype} to index")

    def const(self, value: float) -> str:
        key = f32(value)
        if key not in self._consts:
            label = {0.0: "zero", float("-inf"): "neg_inf"}.get(value, "cst")
            name = self.fresh(f"cst_{label}")
            self.lines.append(f"{name} = arith.constant {key} : f32")
            self._consts[key] = name
        return self._consts[key]

    def affine_map(self, rank: int, dims: Sequence[int]) -> str:
        loops = ", ".join(f"d{i}" for i in range(rank))
        text = f"affine_map<({loops}) -> ({', '.join(f'd{d}' for d in dims)})>"
        if text not in self.maps:
            self.maps[text] = f"#map{len(self.maps)}"
        return self.maps[text]

    # -- tensor ops -----------------------------------------------------
    def empty(self, shape: Sequence[int | str], hint: str = "empty", dtype: str = "f32") -> Val:
        sizes = ", ".join(d for d in shape if isinstance(d, str))
        return self.op(hint, shape, f"tensor.empty({sizes}) : {tensor_type(shape, dtype)}", dtype)

    def fill(self, value: float, shape: Sequence[int], hint: str) -> Val:
        init = self.empty(shape, hint + "_empty")
        c = self.const(value)
        return self.op(hint, shape,
                       f"linalg.fill ins({c} : f32) outs({init.name} : {init.type}) -> {init.type}")

    def collapse(self, v: Val, reassoc: list[list[int]], hint: str) -> Val:
        shape = [_prod(v.shape[d] for d in group) for group in reassoc]
        return self.op(hint, shape, f"tensor.collapse_shape {v.name} {_reassoc(reassoc)} "
                                    f": {v.type} into {tensor_type(shape, v.dtype)}", v.dtype)

    def expand(self, v: Val, reassoc: list[list[int]], shape: Sequence[int], hint: str) -> Val:
        return self.op(hint, shape, f"tensor.expand_shape {v.name} {_reassoc(reassoc)} "
                                    f"output_shape {ilist(shape)} : {v.type} into {tensor_type(shape, v.dtype)}", v.dtype)

    def extract_slice(self, v: Val, offsets, sizes, result_shape, hint: str) -> Val:
        """offsets may mix integers and SSA index names (a dynamic offset)."""
        strides = [1] * len(sizes)
        return self.op(hint, result_shape,
                       f"tensor.extract_slice {v.name}{ilist(offsets)} {ilist(sizes)} {ilist(strides)} "
                       f": {v.type} to {tensor_type(result_shape, v.dtype)}", v.dtype)

    def insert_slice(self, src: Val, dest: Val, offsets, hint: str) -> Val:
        """`src` written into `dest` at `offsets` (integers or SSA index names);
        the result has dest's type, and a bufferization may write dest in place."""
        sizes = ilist(src.shape)
        strides = ilist([1] * len(src.shape))
        return self.op(hint, dest.shape,
                       f"tensor.insert_slice {src.name} into {dest.name}{ilist(offsets)} {sizes} {strides} "
                       f": {src.type} into {dest.type}", dest.dtype)

    def concat(self, dim: int, parts: Sequence[Val], hint: str) -> Val:
        shape = list(parts[0].shape)
        shape[dim] = sum(p.shape[dim] for p in parts)
        names = ", ".join(p.name for p in parts)
        types = ", ".join(p.type for p in parts)
        return self.op(hint, shape, f"tensor.concat dim({dim}) {names} : ({types}) -> {tensor_type(shape)}")

    # -- linalg named ops -------------------------------------------------
    def transpose(self, v: Val, perm: Sequence[int], hint: str) -> Val:
        shape = [v.shape[p] for p in perm]
        init = self.empty(shape, hint + "_empty")
        return self.op(hint, shape, f"linalg.transpose ins({v.name} : {v.type}) "
                                    f"outs({init.name} : {init.type}) permutation = {ilist(perm)}")

    def broadcast(self, v: Val, shape: Sequence[int], dims: Sequence[int], hint: str) -> Val:
        init = self.empty(shape, hint + "_empty", v.dtype)
        return self.op(hint, shape, f"linalg.broadcast ins({v.name} : {v.type}) "
                                    f"outs({init.name} : {init.type}) dimensions = {ilist(dims)}", v.dtype)

    def _contract(self, opname: str, a: Val, b: Val, shape: Sequence[int], hint: str) -> Val:
        init = self.fill(0.0, shape, hint + "_init")
        return self.op(hint, shape, f"{opname} ins({a.name}, {b.name} : {a.type}, {b.type}) "
                                    f"outs({init.name} : {init.type}) -> {init.type}")

    def matmul(self, a: Val, b: Val, hint: str) -> Val:
        return self._contract("linalg.matmul", a, b, (a.shape[0], b.shape[1]), hint)

    def batch_matmul(self, a: Val, b: Val, hint: str) -> Val:
        return self._contract("linalg.batch_matmul", a, b, (a.shape[0], a.shape[1], b.shape[2]), hint)

    def softmax(self, v: Val, dim: int, hint: str) -> Val:
        init = self.empty(v.shape, hint + "_empty")
        return self.op(hint, v.shape, f"linalg.softmax dimension({dim}) ins({v.name} : {v.type}) "
                                      f"outs({init.name} : {init.type}) -> {init.type}")

    # -- linalg.generic ---------------------------------------------------
    def generic(self, hint: str, ins: Sequence[tuple[Val, Sequence[int]]], rank: int,
                out_shape: Sequence[int], out_dims: Sequence[int], reduce_dims: Sequence[int],
                fn: BodyFn, init: Val | None = None) -> Val:
        """ins: (value, loop dims its indices use). The init defaults to tensor.empty."""
        if init is None:
            init = self.empty(out_shape, hint + "_empty")
        maps = [self.affine_map(rank, dims) for _, dims in ins] + [self.affine_map(rank, out_dims)]
        iters = ", ".join('"reduction"' if d in reduce_dims else '"parallel"' for d in range(rank))
        body = Body()
        args = [f"%in{i}" for i in range(len(ins))]
        result = fn(body, *args, "%out")
        operands = f"ins({', '.join(v.name for v, _ in ins)} : {', '.join(v.type for v, _ in ins)}) " if ins else ""
        head = (f"linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iters}]}} "
                f"{operands}outs({init.name} : {init.type}) {{")
        block = ", ".join(f"{a}: {v.dtype}" for a, v in zip(args + ["%out"], [v for v, _ in ins] + [init]))
        region = [f"^bb0({block}):"] + [f"  {line}" for line in body.lines] + [
            f"  linalg.yield {result} : {init.dtype}"]
        v = self.op(hint, out_shape, head, init.dtype)
        self.lines += region + [f"}} -> {init.type}"]
        return v

    def argmax_last(self, x: Val, hint: str) -> tuple[Val, Val]:
        """The maximum over the last dimension and its first index (i64), as one
        linalg.generic with two reduction outputs, the form torch-mlir and IREE
        write an argmax in: a strictly greater value takes the index."""
        rank = len(x.shape)
        kept = tuple(range(rank - 1))
        shape = x.shape[:-1]
        values = self.fill(float("-inf"), shape, hint + "_max_init")
        zero = self.scalar("c0_i64", "arith.constant 0 : i64")
        idx_empty = self.empty(shape, hint + "_idx_empty", "i64")
        indices = self.op(hint + "_idx_init", shape,
                          f"linalg.fill ins({zero} : i64) outs({idx_empty.name} : {idx_empty.type}) "
                          f"-> {idx_empty.type}", "i64")
        maps = [self.affine_map(rank, range(rank)), self.affine_map(rank, kept), self.affine_map(rank, kept)]
        iters = ", ".join(['"parallel"'] * (rank - 1) + ['"reduction"'])
        name = self.fresh(hint)
        self.lines += [
            f"{name}:2 = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iters}]}} "
            f"ins({x.name} : {x.type}) outs({values.name}, {indices.name} : {values.type}, {indices.type}) {{",
            f"^bb0(%in0: {x.dtype}, %out: {values.dtype}, %out_idx: i64):",
            f"  %b0 = linalg.index {rank - 1} : index",
            "  %b1 = arith.index_cast %b0 : index to i64",
            f"  %b2 = arith.maximumf %in0, %out : {x.dtype}",
            f"  %b3 = arith.cmpf ogt, %in0, %out : {x.dtype}",
            "  %b4 = arith.select %b3, %b1, %out_idx : i64",
            f"  linalg.yield %b2, %b4 : {x.dtype}, i64",
            f"}} -> ({values.type}, {indices.type})",
        ]
        return Val(f"{name}#0", tuple(shape)), Val(f"{name}#1", tuple(shape), "i64")

    def pointwise(self, hint: str, ins: Sequence[Val | tuple[Val, Sequence[int]]], fn: BodyFn,
                  shape: Sequence[int] | None = None) -> Val:
        """Elementwise op; a bare Val broadcasts right-aligned (e.g. a bias [N] over [B,S,N])."""
        first = ins[0][0] if isinstance(ins[0], tuple) else ins[0]
        shape = tuple(shape or first.shape)
        rank = len(shape)
        pairs = [i if isinstance(i, tuple) else (i, range(rank - len(i.shape), rank)) for i in ins]
        return self.generic(hint, pairs, rank, shape, range(rank), (), fn)

    def reduce_last(self, hint: str, ins: Sequence[Val | tuple[Val, Sequence[int]]], fn: BodyFn,
                    init_value: float) -> Val:
        """Reduce the last dim of the first input; extra bare inputs index the kept dims."""
        first = ins[0][0] if isinstance(ins[0], tuple) else ins[0]
        rank = len(first.shape)
        kept = tuple(range(rank - 1))
        pairs = [(ins[0], range(rank))] + [i if isinstance(i, tuple) else (i, kept) for i in ins[1:]]
        out_shape = first.shape[:-1]
        init = self.fill(init_value, out_shape, hint + "_init")
        return self.generic(hint, pairs, rank, out_shape, kept, (rank - 1,), fn, init=init)


def _prod(values) -> int | str:
    """The size of merged dimensions; a dynamic one can only stand alone."""
    values = list(values)
    if len(values) == 1:
        return values[0]
    if any(isinstance(v, str) for v in values):
        raise ValueError(f"cannot merge a dynamic dimension with others: {values}")
    out = 1
    for v in values:
        out *= v
    return out


def _reassoc(reassoc: list[list[int]]) -> str:
    return "[" + ", ".join(ilist(g) for g in reassoc) + "]"

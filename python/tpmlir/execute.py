"""Run a built forward pass on the CPU with upstream MLIR tools.

This is a test oracle, not a backend: weights are baked in as dense
constants, the module goes through a plain bufferize -> loops -> LLVM
pipeline, and mlir-runner prints the result, which is parsed back.
`run_generate` does the same for a generating model: one @main calls
@prefill and then @decode, feeding each step's ids and caches to the next.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

from .builder import build_mlir
from .config import ModelConfig
from .ir import tensor_type
from .params import STEP_INPUTS, arg_specs, function_arg_specs, input_name, output_shape, result_specs

DEFAULT_TOOLS = "/usr/lib/llvm-22"

# linalg.softmax has no standalone decomposition pass in MLIR 22; the transform
# dialect's decompose_interface is the upstream way to expand it into generics.
SOFTMAX_DECOMPOSE = """
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %sm = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    %parts = transform.structured.decompose_interface %sm : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""

LOWERING = ",".join([
    "one-shot-bufferize{bufferize-function-boundaries}",
    "convert-linalg-to-loops",
    "lower-affine",
    "convert-scf-to-cf",
    "expand-strided-metadata",
    "lower-affine",  # the affine.apply of a subview at a dynamic offset (the cache update)
    "finalize-memref-to-llvm",
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "convert-arith-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "reconcile-unrealized-casts",
])


def find_tool(name: str, prefix: str | None = None) -> str | None:
    prefix = prefix or os.environ.get("TPMLIR_LLVM_PREFIX", DEFAULT_TOOLS)
    path = os.path.join(prefix, "bin", name)
    return path if os.access(path, os.X_OK) else shutil.which(name)


def _dense(a: np.ndarray) -> str:
    # Raw little-endian hex keeps every bit of the f32 weights (and i64 ids).
    ids = a.dtype.kind in "iu"
    data = np.ascontiguousarray(a, dtype="<i8" if ids else "<f4").tobytes().hex().upper()
    return f'dense<"0x{data}"> : {tensor_type(a.shape, "i64" if ids else "f32")}'


def main_wrapper(cfg: ModelConfig, weights: dict[str, np.ndarray], x: np.ndarray) -> str:
    """A @main that calls @forward on constant inputs and prints the result."""
    values = {input_name(cfg): x, **weights}
    specs = arg_specs(cfg)
    out_t = tensor_type(output_shape(cfg))
    lines = ["func.func private @printMemrefF32(memref<*xf32>)", "func.func @main() {"]
    consts = []
    for i, (name, shape) in enumerate(specs):
        a = np.asarray(values[name])
        a = a if a.dtype.kind in "iu" else a.astype(np.float32)
        if a.shape != shape:
            raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
        consts.append(_dense(a))
        lines.append(f"  %a{i} = arith.constant {consts[-1]}")
    args = ", ".join(f"%a{i}" for i in range(len(specs)))
    types = ", ".join(c.rsplit(" : ", 1)[1] for c in consts)
    memref_t = out_t.replace("tensor<", "memref<")
    lines += [
        f"  %r = func.call @forward({args}) : ({types}) -> {out_t}",
        f"  %m = bufferization.to_buffer %r : {out_t} to {memref_t}",
        f"  %u = memref.cast %m : {memref_t} to memref<*xf32>",
        "  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()",
        "  return",
        "}",
    ]
    return "\n".join(lines)


def prompt_calls(length: int, seq: int, rows: int, rings: bool = False) -> list[tuple[str, int]]:
    """The calls that run a prompt of `length` >= seq tokens, as tp-run makes
    them (tprt::promptCalls): @prefill over [0, seq), then @extend over
    chunks of seq at their first positions. A last chunk of fewer tokens
    runs padded (its count the prompt's tokens in it) where the caches have
    `rows` for all seq; else it ends at the prompt's end (running positions
    the one before ran again), or with ring caches (`rings`, whose rows have
    dropped keys those positions attend to) the tokens after the last whole
    chunk run as @decode steps."""
    calls, start = [("prefill", 0)], seq
    while start < length:
        if start + seq <= length or start + seq <= rows:
            calls.append(("extend", start))
        elif rings:
            break
        else:
            calls.append(("extend", length - seq))
        start += seq
    return calls + [("decode", t) for t in range(start, length)]


def generate_wrapper(cfg: ModelConfig, weights: dict[str, np.ndarray], prompt: np.ndarray,
                     steps: int, padding: np.ndarray | None = None) -> str:
    """A @main that runs @prefill on `prompt` with zeroed caches (and
    @extend over the rest of a longer prompt, prompt_calls), then @decode
    steps-1 times at the positions after it, each on the ids and caches the
    step before returned, and prints every step's next ids (and logits).
    A ragged model's every call takes `padding` [B] (default: none)."""
    lines = ["func.func private @printMemrefF32(memref<*xf32>)",
             "func.func private @printMemrefI64(memref<*xi64>)", "func.func @main() {"]
    values: dict[str, str] = {}  # argument name -> SSA value
    types: dict[str, str] = {}
    prompt = np.asarray(prompt)
    length = prompt.shape[1]
    calls = prompt_calls(length, cfg.seq, cfg.generate, cfg.rings)
    pads = np.zeros(cfg.batch, dtype=np.int64) if padding is None else np.asarray(padding, dtype=np.int64)
    for name, shape in function_arg_specs(cfg, "prefill"):
        if name.startswith("cache."):
            a = np.zeros(shape, dtype=np.float32)
            constant = f"dense<0.0> : {tensor_type(shape)}"
        else:
            a = np.asarray({"ids": prompt[:, :cfg.seq], "padding": pads}.get(name, weights.get(name)))
            a = a if a.dtype.kind in "iu" else a.astype(np.float32)
            if a.shape != shape:
                raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
            constant = _dense(a)
        values[name], types[name] = f"%a{len(values)}", tensor_type(shape, "i64" if name in STEP_INPUTS else "f32")
        lines.append(f"  {values[name]} = arith.constant {constant}")
    results = result_specs(cfg)
    result_types = [tensor_type(shape, "i64" if name == "next_ids" else "f32") for name, shape in results]
    widths = {"extend": cfg.seq, "decode": 1}
    for n, (function, start) in enumerate(calls[1:]):  # the prompt's calls after the first
        count = min(widths[function], length - start)  # padded with the prompt's last token
        chunk = _dense(prompt[:, [min(t, length - 1) for t in range(start, start + widths[function])]])
        lines += [f"  %chunk{n} = arith.constant {chunk}", f"  %start{n} = arith.constant dense<{start}> : tensor<i64>",
                  f"  %count{n} = arith.constant dense<{count}> : tensor<i64>"]
    first_new = len(calls) - 1  # the call whose next ids are the first new ones
    calls += [("decode", length + t - 1) for t in range(1, steps)]
    for t, (function, start) in enumerate(calls):
        if 0 < t <= first_new:  # the prompt's ids
            values["ids"], types["ids"] = f"%chunk{t - 1}", tensor_type((cfg.batch, widths[function]), "i64")
            values["pos"], types["pos"] = f"%start{t - 1}", "tensor<i64>"
            values["valid"], types["valid"] = f"%count{t - 1}", "tensor<i64>"
        elif function == "decode":
            values["pos"], types["pos"] = f"%pos{t}", "tensor<i64>"
            lines.append(f"  %pos{t} = arith.constant dense<{start}> : tensor<i64>")
        names = [n for n, _ in function_arg_specs(cfg, function)]
        lines.append(f"  %r{t}:{len(results)} = func.call @{function}({', '.join(values[n] for n in names)}) "
                     f": ({', '.join(types[n] for n in names)}) -> ({', '.join(result_types)})")
        for j, ((name, _), rtype) in enumerate(zip(results, result_types)):
            if name.startswith("cache."):
                values[name] = f"%r{t}#{j}"
                continue
            if t < first_new:
                continue
            elem = "i64" if name == "next_ids" else "f32"
            memref_t = rtype.replace("tensor<", "memref<")
            lines += [f"  %m{t}_{j} = bufferization.to_buffer %r{t}#{j} : {rtype} to {memref_t}",
                      f"  %u{t}_{j} = memref.cast %m{t}_{j} : {memref_t} to memref<*x{elem}>",
                      f"  func.call @printMemref{elem.upper()}(%u{t}_{j}) : (memref<*x{elem}>) -> ()"]
        values["ids"], types["ids"] = f"%r{t}#0", result_types[0]
    return "\n".join(lines + ["  return", "}"])


def _run(cmd: list[str], stdin: str, timeout: float) -> str:
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
    if proc.returncode:
        raise RuntimeError(f"{os.path.basename(cmd[0])} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout


def parse_printed_memref(text: str, count: int) -> np.ndarray:
    body = text[text.index("data =") + len("data ="):] if "data =" in text else text
    nums = re.findall(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)", body)
    vals = np.array([float(v) for v in nums], dtype=np.float32)
    if vals.size != count:
        raise RuntimeError(f"expected {count} printed values, parsed {vals.size}")
    return vals


def lower(module: str, prefix: str | None = None, timeout: float = 300) -> str:
    opt = find_tool("mlir-opt", prefix)
    if not opt:
        raise FileNotFoundError("mlir-opt not found")
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "decompose.mlir")
        with open(spec, "w") as f:
            f.write(SOFTMAX_DECOMPOSE)
        pipeline = (f"builtin.module(transform-preload-library{{transform-library-paths={spec}}},"
                    f"transform-interpreter,{LOWERING})")
        return _run([opt, "--allow-unregistered-dialect", f"--pass-pipeline={pipeline}"], module, timeout)


def _lower_and_run(module: str, main: str, prefix: str | None, timeout: float) -> str:
    """Splices @main into the builder's module (before its closing brace),
    lowers it and runs it; returns what it printed."""
    module = module.rstrip().rstrip("}") + main + "\n}\n"
    llvm_ir = lower(module, prefix, timeout)
    runner = find_tool("mlir-runner", prefix)
    if not runner:
        raise FileNotFoundError("mlir-runner not found")
    libdir = os.path.join(prefix or os.environ.get("TPMLIR_LLVM_PREFIX", DEFAULT_TOOLS), "lib")
    libs = ",".join(os.path.join(libdir, f"lib{n}.so") for n in ("mlir_runner_utils", "mlir_c_runner_utils"))
    return _run([runner, "-e", "main", "-entry-point-result=void", f"-shared-libs={libs}"], llvm_ir, timeout)


def run_forward(cfg: ModelConfig, weights: dict[str, np.ndarray], x: np.ndarray,
                prefix: str | None = None, timeout: float = 300) -> np.ndarray:
    """Compile `build_mlir(cfg)` with upstream MLIR and run it; returns [B, S, D]
    float32 (logits [B, S, vocab_rows] for a whole model)."""
    out = _lower_and_run(build_mlir(cfg), main_wrapper(cfg, weights, x), prefix, timeout)
    shape = output_shape(cfg)
    return parse_printed_memref(out, int(np.prod(shape))).reshape(shape)


def run_generate(cfg: ModelConfig, weights: dict[str, np.ndarray], prompt: np.ndarray, steps: int,
                 prefix: str | None = None, timeout: float = 300, padding: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """Compile the @prefill and @decode of `build_mlir(cfg)` (cfg.generate > 0)
    with upstream MLIR and generate `steps` tokens greedily (one prefill, and
    @extend over a prompt longer than cfg.seq, then steps-1 decodes); returns the ids [B, steps] (int64) and, with
    cfg.keep_logits, the logits each came from [B, steps, vocab_rows], else None."""
    if not cfg.generate:
        raise ValueError("run_generate needs a generating config (generate = S_max > 0)")
    length = np.asarray(prompt).shape[1]
    if steps < 1 or length + steps - 1 > cfg.generate:
        raise ValueError(f"{steps} new tokens after a prompt of {length} do not fit the "
                         f"cache of {cfg.generate}")
    if length != cfg.seq and not (length > cfg.seq and cfg.chunked_prefill):
        raise ValueError(f"a prompt of {length} tokens: the model takes {cfg.seq} "
                         f"(more with chunked_prefill)")
    if padding is not None and not cfg.ragged:
        raise ValueError("padding: the model takes prompts of one length (build it ragged)")
    main = generate_wrapper(cfg, weights, prompt, steps, padding)
    out = _lower_and_run(build_mlir(cfg), main, prefix, timeout)
    printed = out.split("Unranked Memref")[1:]
    per_step = 2 if cfg.keep_logits else 1
    if len(printed) != per_step * steps:
        raise RuntimeError(f"expected {per_step * steps} printed results, got {len(printed)}")
    b, v = cfg.batch, cfg.vocab_rows
    ids = np.stack([parse_printed_memref(printed[per_step * t], b).astype(np.int64)
                    for t in range(steps)], axis=1)
    if not cfg.keep_logits:
        return ids, None
    logits = np.stack([parse_printed_memref(printed[per_step * t + 1], b * v).reshape(b, v)
                       for t in range(steps)], axis=1)
    return ids, logits

"""Run a built forward pass on the CPU with upstream MLIR tools.

This is a test oracle, not a backend: weights are baked in as dense
constants, the module goes through a plain bufferize -> loops -> LLVM
pipeline, and mlir-runner prints the result, which is parsed back.
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
from .params import arg_specs, input_name, output_shape

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


def run_forward(cfg: ModelConfig, weights: dict[str, np.ndarray], x: np.ndarray,
                prefix: str | None = None, timeout: float = 300) -> np.ndarray:
    """Compile `build_mlir(cfg)` with upstream MLIR and run it; returns [B, S, D]
    float32 (logits [B, S, vocab] for a whole model)."""
    module = build_mlir(cfg)
    # Splice @main into the builder's module (before its closing brace).
    module = module.rstrip().rstrip("}") + main_wrapper(cfg, weights, x) + "\n}\n"
    llvm_ir = lower(module, prefix, timeout)
    runner = find_tool("mlir-runner", prefix)
    if not runner:
        raise FileNotFoundError("mlir-runner not found")
    libdir = os.path.join(prefix or os.environ.get("TPMLIR_LLVM_PREFIX", DEFAULT_TOOLS), "lib")
    libs = ",".join(os.path.join(libdir, f"lib{n}.so") for n in ("mlir_runner_utils", "mlir_c_runner_utils"))
    out = _run([runner, "-e", "main", "-entry-point-result=void", f"-shared-libs={libs}"], llvm_ir, timeout)
    shape = output_shape(cfg)
    return parse_printed_memref(out, int(np.prod(shape))).reshape(shape)

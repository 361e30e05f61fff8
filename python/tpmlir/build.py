"""CLI: emit a transformer forward pass as linalg MLIR.

    PYTHONPATH=python python3 -m tpmlir.build --preset gpt2_small --layers 2 --seq 8 -o model.mlir

Every ModelConfig field can be overridden (--qkv separate, --norm rmsnorm,
--no-bias, ...). --weights/--input also write a random checkpoint and input
(safetensors) that match the emitted signature, plus the numpy reference output
with --expected. --inline-weights puts those weights in the MLIR instead, as
dense_resource constants (the form torch-mlir's importer emits).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from .builder import build_mlir, describe
from .config import PRESETS, ModelConfig, preset
from .params import input_name


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tpmlir.build", description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="gpt2_small", choices=sorted(PRESETS))
    for field in dataclasses.fields(ModelConfig):
        flag = "--" + field.name.replace("_", "-")
        if field.type in ("bool", bool):
            ap.add_argument(flag, dest=field.name, action=argparse.BooleanOptionalAction, default=None)
        elif field.type in ("float", float):
            ap.add_argument(flag, dest=field.name, type=float)
        elif field.type in ("str", str):
            ap.add_argument(flag, dest=field.name)
        else:
            ap.add_argument(flag, dest=field.name, type=int)
    ap.add_argument("-o", "--output", help="write the MLIR here (default: stdout)")
    ap.add_argument("--weights", help="also write random weights (safetensors) named like tp.name")
    ap.add_argument("--input", help="also write a random input x (.npy, else safetensors with key 'x')")
    ap.add_argument("--expected", help="also write the numpy reference output (.npy, else safetensors with key 'y')")
    ap.add_argument("--inline-weights", action="store_true",
                    help="put the random weights in the MLIR as dense_resource constants, "
                         "as torch-mlir's importer does, instead of arguments")
    ap.add_argument("--seed", type=int, default=0)
    return ap


def config_from_args(args: argparse.Namespace) -> ModelConfig:
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(ModelConfig)
                 if getattr(args, f.name) is not None}
    return preset(args.preset, **overrides)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.inline_weights and args.weights:
        print("error: --inline-weights puts the weights in the MLIR; --weights would write "
              "them a second time", file=sys.stderr)
        return 2
    try:
        cfg = config_from_args(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    weights = None
    if args.weights or args.input or args.expected or args.inline_weights:
        from . import reference
        weights = reference.random_weights(cfg, args.seed)
    text = describe(cfg) + "\n" + build_mlir(cfg, weights if args.inline_weights else None)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.weights or args.input or args.expected:
        from .checkpoint import save_safetensors
        x = reference.random_input(cfg, args.seed + 1)
        if args.weights:
            save_safetensors(args.weights, weights, {"config": describe(cfg)})
        if args.input:
            _save_array(args.input, input_name(cfg), x)
        if args.expected:
            _save_array(args.expected, "y", reference.forward(cfg, weights, x))
    return 0


def _save_array(path: str, key: str, array) -> None:
    """A .npy file (what tp-run reads), else safetensors with one tensor."""
    if path.endswith(".npy"):
        import numpy as np
        # Token ids stay int64; everything else is float32.
        np.save(path, np.ascontiguousarray(array, dtype=None if array.dtype.kind in "iu" else np.float32))
    else:
        from .checkpoint import save_safetensors
        save_safetensors(path, {key: array})


if __name__ == "__main__":
    sys.exit(main())

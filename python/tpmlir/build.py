"""CLI: emit a transformer forward pass as linalg MLIR.

    PYTHONPATH=python python3 -m tpmlir.build --preset gpt2_small --layers 2 --seq 8 -o model.mlir
    PYTHONPATH=python python3 -m tpmlir.build --preset tiny_llama --vocab 512 --generate 64 -o gen.mlir
    PYTHONPATH=python python3 -m tpmlir.build --hf-config qwen/config.json --generate 256 --seq 16 -o gen.mlir

Every ModelConfig field can be overridden (--qkv separate, --norm rmsnorm,
--no-bias, ...). --generate S_MAX makes a generating model: @prefill over the
prompt (--seq tokens) and @decode of one token, with KV caches of S_MAX
positions (docs/generation.md). --hf-config reads a Hugging Face config.json
(GPT-2, Llama, Qwen2, Qwen3, Mistral, Phi-3, Gemma, Gemma 2, Gemma 3) and names
the weights as its checkpoint does.
--weights/--input also write a random checkpoint and input (safetensors) that
match the emitted signature, plus the numpy reference output with --expected
(for a generating model: the prompt's ids, and the --steps greedy new ids).
--inline-weights puts those weights in the MLIR instead, as dense_resource
constants (the form torch-mlir's importer emits).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from .builder import build_mlir, describe
from .config import PRESETS, ModelConfig, preset
from .params import input_name


def _config_path(path: str) -> str:
    """A model directory stands for its config.json."""
    import os
    return os.path.join(path, "config.json") if os.path.isdir(path) else path


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m tpmlir.build", description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="gpt2_small", choices=sorted(PRESETS))
    ap.add_argument("--hf-config", metavar="DIR[/config.json]", type=_config_path,
                    help="take the model from a Hugging Face config, or a model directory's (instead of "
                         "--preset); its weights keep the checkpoint's names (with DIR's own prefix when "
                         "DIR holds one)")
    for field in dataclasses.fields(ModelConfig):
        flag = "--" + field.name.replace("_", "-")
        kind = str(field.type).split(" ")[0]  # "bool | None" -> bool
        if kind.startswith("tuple"):  # ids: a comma list, '' for none
            ap.add_argument(flag, dest=field.name, metavar="ID[,ID...]",
                            type=lambda text: tuple(int(i) for i in text.split(",")) if text else ())
        elif kind in ("bool", str(bool)):
            ap.add_argument(flag, dest=field.name, action=argparse.BooleanOptionalAction, default=None)
        elif kind in ("float", str(float)):
            ap.add_argument(flag, dest=field.name, type=float)
        elif kind in ("str", str(str)):
            ap.add_argument(flag, dest=field.name)
        else:
            ap.add_argument(flag, dest=field.name, type=int)
    ap.add_argument("-o", "--output", help="write the MLIR here (default: stdout)")
    ap.add_argument("--weights", help="also write random weights (safetensors) named like tp.name")
    ap.add_argument("--input", help="also write a random input x (.npy, else safetensors with key 'x')")
    ap.add_argument("--expected", help="also write the numpy reference output (.npy, else safetensors with key 'y'); "
                                       "with --generate the --steps new ids [B, steps]")
    ap.add_argument("--steps", type=int,
                    help="with --generate and --expected: new tokens (one prefill, steps-1 decodes; "
                         "default: up to 8, as the cache allows)")
    ap.add_argument("--inline-weights", action="store_true",
                    help="put the random weights in the MLIR as dense_resource constants, "
                         "as torch-mlir's importer does, instead of arguments")
    ap.add_argument("--seed", type=int, default=0)
    return ap


def config_from_args(args: argparse.Namespace) -> ModelConfig:
    overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(ModelConfig)
                 if getattr(args, f.name) is not None}
    if args.hf_config:
        from .hf import read_config
        return read_config(args.hf_config, **overrides)
    return preset(args.preset, **overrides)


def _weights(args: argparse.Namespace, cfg: ModelConfig) -> dict:
    """The weights by tpmlir name: those of the Hugging Face directory when
    it holds a checkpoint (and --weights does not ask for random ones), else random."""
    from . import reference
    if args.hf_config and not args.weights:
        import os
        from .checkpoint import load_model_dir
        from .hf import checkpoint_files, from_checkpoint
        model_dir = os.path.dirname(os.path.abspath(args.hf_config))
        if checkpoint_files(model_dir):
            return from_checkpoint(cfg, load_model_dir(model_dir))
    return reference.random_weights(cfg, args.seed)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.inline_weights and args.weights:
        print("error: --inline-weights puts the weights in the MLIR; --weights would write "
              "them a second time", file=sys.stderr)
        return 2
    weights = None
    try:
        cfg = config_from_args(args)
        steps = _steps(args, cfg)
        if args.weights or args.input or args.expected or args.inline_weights:
            from . import reference
            weights = _weights(args, cfg)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = describe(cfg) + "\n" + build_mlir(cfg, weights if args.inline_weights else None)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.weights or args.input or args.expected:
        from .checkpoint import save_safetensors
        from .hf import to_checkpoint
        x = reference.random_input(cfg, args.seed + 1)
        if args.weights:
            save_safetensors(args.weights, to_checkpoint(cfg, weights), {"config": describe(cfg)})
        if args.input:
            _save_array(args.input, input_name(cfg), x)
        if args.expected and cfg.generate:
            _save_array(args.expected, "ids", reference.generate(cfg, weights, x, steps)[0])
        elif args.expected:
            _save_array(args.expected, "y", reference.forward(cfg, weights, x))
    return 0


def _steps(args: argparse.Namespace, cfg: ModelConfig) -> int:
    room = cfg.generate - cfg.seq + 1  # the last new token is not written to the cache
    if args.steps is None:
        return min(8, room)
    if not cfg.generate:
        raise ValueError("--steps is an option of --generate")
    if not 1 <= args.steps <= room:
        raise ValueError(f"--steps {args.steps}: after a prompt of {cfg.seq} the cache of "
                         f"{cfg.generate} holds 1 to {room} new tokens")
    return args.steps


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

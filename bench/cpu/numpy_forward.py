"""tpmlir.reference.forward (the numpy oracle) timed on one BLAS thread.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=python /usr/bin/python3 bench/cpu/numpy_forward.py \
        --preset gpt2_small --layers 12 --seq 128 --weights w.safetensors \
        --input x.npy --expected ref.npy [--iters 5] [--json out.json]

Checks the output against ref.npy (rtol 1e-4, as tpmlir.compare) before timing.
Set OPENBLAS_NUM_THREADS before starting it: OpenBLAS reads it at load time.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from benchlib import (add_forward_args, forward_stats, relative_error,  # noqa: E402
                      time_calls, write_json)
from tpmlir import reference  # noqa: E402
from tpmlir.checkpoint import load_safetensors  # noqa: E402
from tpmlir.config import PRESETS, preset  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_forward_args(ap, PRESETS, iters=5)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    cfg = preset(args.preset, layers=args.layers, seq=args.seq, batch=args.batch)
    w = load_safetensors(args.weights)
    x = np.load(args.input)
    ref = np.load(args.expected)
    y = reference.forward(cfg, w, x)
    rel = relative_error(y, ref)
    if not (np.all(np.isfinite(y)) and rel <= args.rtol):
        print(f"numpy_forward: MISMATCH relative {rel:.3g} > rtol {args.rtol:g}")
        return 1
    times = time_calls(lambda: reference.forward(cfg, w, x), args.warmup, args.iters)
    tokens = cfg.batch * cfg.seq
    stats = forward_stats(times, tokens)
    med = stats["forward_s"]["median"]
    result = {"impl": "numpy", "numpy": np.__version__,
              "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
              "rel_err": rel, "ok": True, "tokens": tokens, **stats}
    print(f"numpy_forward: OK relative {rel:.3g}; median {med * 1e3:.3f} ms, "
          f"{tokens / med:.1f} tokens/s ({args.iters} iters)")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

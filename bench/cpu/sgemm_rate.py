"""This machine's achievable sgemm rate for the GEMMs one rank of the model runs.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/cpu/sgemm_rate.py \
        [--tokens 128] [--d 768] [--heads 12] [--ffn 3072] [--layers 12] [--tp 1] [--json out.json]

Times numpy float32 matmul (OpenBLAS sgemm; set OPENBLAS_NUM_THREADS=1 before
starting) for every distinct GEMM shape of a GPT-2 block (fused QKV, biased,
GeLU MLP) on one rank of tp N (Megatron cut: QKV/up by columns, out/down by
rows, heads split), m x k x n:

    qkv   T x d     x 3d/N          out   T x d/N x d
    up    T x d     x ffn/N         down  T x ffn/N x d
    qk    H/N batched T x dh x T (K transposed)     pv   H/N batched T x T x dh

Each shape: inputs made once, `reps` calls per sample, median of `samples`
samples. The achievable rate is the model's GEMM flops over the time these
shapes take when each is called as often as the model calls it (once per
layer, i.e. weighted by calls x flops): sum(calls * flops) / sum(calls * t).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import time_calls, write_json  # noqa: E402


def shapes(tokens: int, d: int, heads: int, ffn: int, tp: int) -> list[dict]:
    dh = d // heads
    h = heads // tp
    return [
        {"name": "qkv", "batch": 1, "m": tokens, "k": d, "n": 3 * d // tp},
        {"name": "out", "batch": 1, "m": tokens, "k": d // tp, "n": d},
        {"name": "up", "batch": 1, "m": tokens, "k": d, "n": ffn // tp},
        {"name": "down", "batch": 1, "m": tokens, "k": ffn // tp, "n": d},
        {"name": "qk", "batch": h, "m": tokens, "k": dh, "n": tokens, "trans_b": True},
        {"name": "pv", "batch": h, "m": tokens, "k": tokens, "n": dh},
    ]


def time_shape(s: dict, samples: int, min_sample_s: float) -> float:
    rng = np.random.default_rng(0)
    b, m, k, n = s["batch"], s["m"], s["k"], s["n"]
    a = rng.standard_normal((b, m, k) if b > 1 else (m, k)).astype(np.float32)
    if s.get("trans_b"):
        bt = rng.standard_normal((b, n, k)).astype(np.float32)
        bm = bt.swapaxes(-1, -2)  # a transposed view, as K^T is
    else:
        bm = rng.standard_normal((b, k, n) if b > 1 else (k, n)).astype(np.float32)
    c = np.empty((b, m, n) if b > 1 else (m, n), dtype=np.float32)
    np.matmul(a, bm, out=c)
    # Calls per sample so a sample lasts at least min_sample_s.
    start = time.perf_counter()
    np.matmul(a, bm, out=c)
    one = max(time.perf_counter() - start, 1e-7)
    reps = max(1, int(min_sample_s / one))
    per_call = time_calls(lambda: np.matmul(a, bm, out=c), 0, samples, reps)
    return statistics.median(per_call)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--ffn", type=int, default=3072)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--min-sample-s", type=float, default=0.05)
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    rows = []
    total_flops = total_s = 0.0
    for s in shapes(args.tokens, args.d, args.heads, args.ffn, args.tp):
        t = time_shape(s, args.samples, args.min_sample_s)
        flops = 2.0 * s["batch"] * s["m"] * s["k"] * s["n"]
        calls = args.layers
        total_flops += calls * flops
        total_s += calls * t
        rows.append({**s, "calls": calls, "flops": flops, "s": t, "gflops": flops / t / 1e9})
    rate = total_flops / total_s / 1e9
    result = {"tp": args.tp, "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
              "numpy": np.__version__, "shapes": rows,
              "gemm_flops_per_forward": total_flops, "gemm_s_per_forward": total_s,
              "gflops": rate}
    for r in rows:
        b = f"{r['batch']}x " if r["batch"] > 1 else ""
        print(f"sgemm tp{args.tp} {r['name']:5s} {b}{r['m']}x{r['k']}x{r['n']}: "
              f"{r['s'] * 1e6:9.1f} us  {r['gflops']:7.2f} GFLOP/s  x{r['calls']}")
    print(f"sgemm tp{args.tp} weighted: {total_flops / 1e9:.3f} GFLOP in "
          f"{total_s * 1e3:.2f} ms -> {rate:.2f} GFLOP/s")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

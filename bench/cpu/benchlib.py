"""What the forward-pass, generation and GEMM bench scripts share.

The numpy, torch (CPU) and torch (GPU) forward benches check the output the
same way and report the same JSON fields, so that bench/cpu/cpu_forward_report.py
and docs compare like with like; the helpers keep them from drifting apart.
"""
from __future__ import annotations

import json
import statistics
import time

import numpy as np


def add_forward_args(ap, presets, iters: int) -> None:
    """The arguments numpy_forward.py and torch_forward.py both take."""
    ap.add_argument("--preset", default="gpt2_small", choices=sorted(presets))
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=iters)


def relative_error(y, ref) -> float:
    """max |y - ref| over max |ref| (the absolute error when ref is all 0)."""
    diff = float(np.max(np.abs(y.astype(np.float64) - ref)))
    scale = float(np.max(np.abs(ref)))
    return diff / scale if scale else diff


def time_calls(fn, warmup: int, iters: int, reps: int = 1) -> list[float]:
    """Seconds per call of `fn`: `warmup` untimed calls, then `iters` samples
    of `reps` calls each."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - start) / reps)
    return times


def forward_stats(times: list[float], tokens: int) -> dict:
    """The timing fields of a forward bench's JSON."""
    med = statistics.median(times)
    return {"forward_s": {"median": med, "min": min(times), "all": times},
            "tokens_per_s": tokens / med}


def generate_stats(ttfts: list[float], steps: list[float], batch: int) -> dict:
    """The timing fields of a generation bench's JSON, named as tp-run
    --generate's report names them: the time to first token (median over
    generations), the decode step (median over every step of every
    generation) and decode tokens/s per sequence and for the batch."""
    med = statistics.median(steps)
    return {"ttft_s": statistics.median(ttfts), "ttft_all_s": ttfts,
            "decode_step_s": med, "decode_step_mean_s": statistics.mean(steps),
            "decode_step_all_s": steps,
            "decode_tokens_per_s": 1.0 / med, "decode_tokens_per_s_batch": batch / med}


def write_json(path: str | None, result: dict) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=2)

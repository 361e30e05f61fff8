"""The GPU's memory bandwidth, measured with PyTorch: device-to-device copies.

    python3 bench/gpu/hbm_bandwidth.py [--mib 2048] [--iters 20] [--json out.json]

A copy of N bytes between two device buffers (what cudaMemcpy device-to-device
does) reads N and writes N: copy_gbs is 2N per second, in GB/s (1e9). Also a
read-only rate, the sum of a buffer (N read per second; a reduction kernel,
which may fall short of the copy). Best of --iters, after a warm-up, timed with
CUDA events. The bound of a decode step is then the bytes it must read over
this rate (gpu_report.py). Exits 2 when torch has no CUDA device.
"""
from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cpu"))
from benchlib import write_json  # noqa: E402


def _best(fn, iters: int) -> float:
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=2048)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("hbm_bandwidth: torch has no CUDA device")
        return 2
    n = args.mib * 2**20
    src = torch.ones(n // 4, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    copy_s = _best(lambda: dst.copy_(src), args.iters)
    read_s = _best(lambda: src.sum(), args.iters)
    result = {"device": torch.cuda.get_device_name(), "bytes": n, "copy_s": copy_s,
              "copy_gbs": 2 * n / copy_s / 1e9, "read_sum_s": read_s, "read_sum_gbs": n / read_s / 1e9}
    print(f"hbm_bandwidth: {result['device']}: device-to-device copy of {args.mib} MiB "
          f"{result['copy_gbs']:.0f} GB/s (read + write), sum {result['read_sum_gbs']:.0f} GB/s (read)")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Sums a TPRT_KERNEL_LOG file (runtime/cuda/Mgpu.cpp) per kernel.

    python3 bench/gpu/kernel_times.py LOG [--top N] [--json OUT]

LOG has one line per kernel launch, "name gridX gridY gridZ blockX blockY
blockZ ms", each kernel timed alone on the device. A kernel's function is
its name before "_kernel" (decode_block0_kernel_85: decode_block0, the
layer tp-outline-repeated-blocks made of @decode's blocks). A function's
calls are the fewest launches of any of its kernels (each runs once per
call unless launched in a loop). Prints, per function, its calls and the
kernels' time per call, and the N kernels that take the most of it, with
their launch shapes: a reduction left with few threads (grid 1, block 32)
shows up there.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys


def read(path):
    kernels = collections.OrderedDict()
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 8:
                sys.exit(f"kernel_times: {path}:{number}: expected 'name gx gy gz bx by bz ms', "
                         f"got {line.strip()!r}")
            name, dims, ms = fields[0], tuple(int(v) for v in fields[1:7]), float(fields[7])
            k = kernels.setdefault(name, {"calls": 0, "ms": 0.0, "shapes": collections.Counter()})
            k["calls"] += 1
            k["ms"] += ms
            k["shapes"][dims] += 1
    return kernels


def function_of(name):
    return name.split("_kernel")[0]


def summarize(kernels, top):
    functions = collections.OrderedDict()
    for name, k in kernels.items():
        f = functions.setdefault(function_of(name), {"kernels": [], "ms": 0.0, "calls": None})
        f["kernels"].append(name)
        f["ms"] += k["ms"]
        f["calls"] = k["calls"] if f["calls"] is None else min(f["calls"], k["calls"])
    out = {"functions": {}, "kernels": []}
    for fname, f in functions.items():
        out["functions"][fname] = {"calls": f["calls"], "kernels": len(f["kernels"]),
                                   "ms_per_call": f["ms"] / f["calls"], "ms": f["ms"]}
    for name, k in sorted(kernels.items(), key=lambda kv: -kv[1]["ms"])[:top]:
        f = functions[function_of(name)]
        dims = k["shapes"].most_common(1)[0][0]
        out["kernels"].append({"name": name, "calls": k["calls"], "ms": k["ms"],
                               "us_per_call_of_function": 1e3 * k["ms"] / f["calls"],
                               "us_mean": 1e3 * k["ms"] / k["calls"],
                               "grid": dims[:3], "block": dims[3:]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    # The runtime opens the log at the first launch: none, no file (the host
    # stand-ins launch no kernel).
    kernels = read(args.log) if os.path.exists(args.log) else {}
    if not kernels:
        print(f"kernel_times: {args.log}: no kernel launches logged")
        return
    s = summarize(kernels, args.top)
    for fname, f in s["functions"].items():
        print(f"{fname}: {f['calls']} calls, {f['kernels']} kernels, "
              f"{f['ms_per_call']:.3f} ms of kernels per call")
    print(f"top {len(s['kernels'])} kernels by time:")
    for k in s["kernels"]:
        print(f"  {k['name']:32s} {k['ms']:8.3f} ms in all, "
              f"{k['us_per_call_of_function']:.1f} us per call of its function "
              f"({k['calls']} launches, {k['us_mean']:.1f} us each), "
              f"grid {'x'.join(map(str, k['grid']))} block {'x'.join(map(str, k['block']))}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(s, f, indent=1)


if __name__ == "__main__":
    main()

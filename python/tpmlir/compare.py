"""Compare a tp-run output with the numpy reference, and check its report.

    python -m tpmlir.compare y.npy ref.npy [--rtol 1e-4]
        [--report run.json --all-reduces N]

Prints one line and exits 0 when max |y - ref| <= rtol * max |ref| (and the
report counts N all-reduces per forward pass), 1 otherwise.
"""
import argparse
import json
import sys

import numpy as np


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tpmlir.compare")
    ap.add_argument("output")
    ap.add_argument("reference")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--report", help="tp-run --report-json file")
    ap.add_argument("--all-reduces", type=int,
                    help="all-reduces the report must count per forward pass")
    args = ap.parse_args(argv)

    y, ref = np.load(args.output), np.load(args.reference)
    if y.shape != ref.shape:
        print(f"compare: shape {y.shape} != reference {ref.shape}")
        return 1
    diff = float(np.max(np.abs(y.astype(np.float64) - ref)))
    scale = float(np.max(np.abs(ref)))
    rel = diff / scale if scale else diff
    ok = np.all(np.isfinite(y)) and rel <= args.rtol
    line = f"compare: max|diff| {diff:.3g}, max|ref| {scale:.3g}, relative {rel:.3g} (rtol {args.rtol:g})"
    if args.report:
        with open(args.report) as f:
            calls = json.load(f)["collectives_per_forward"]["all_reduce"]["calls"]
        line += f", all-reduces per forward {calls:g}"
        if args.all_reduces is not None and calls != args.all_reduces:
            ok = False
            line += f" (expected {args.all_reduces})"
    print(("OK " if ok else "MISMATCH ") + line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

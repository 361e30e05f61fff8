"""Compare a tp-run output with the numpy reference, and check its report.

    python -m tpmlir.compare y.npy ref.npy [--rtol 1e-4]
        [--report run.json --all-reduces N]

Prints one line and exits 0 when max |y - ref| <= rtol * max |ref| (and the
report counts N all-reduces per forward pass), 1 otherwise. Logits of a
padded vocabulary (tpmlir.build --pad-vocab) have -inf at the padded
positions: those columns past the other array's last are left out, and -inf
where both have it counts as equal; any other value that is not finite fails.
"""
import argparse
import json
import sys

import numpy as np


def padded_difference(y: np.ndarray, ref: np.ndarray) -> tuple[float, float] | str:
    """(max |y - ref|, max |ref|) over the columns both have, -inf in both
    counting as equal; a message where the shapes differ otherwise or a
    value is not finite."""
    if y.shape[:-1] != ref.shape[:-1] or y.ndim == 0:
        return f"shape {y.shape} != reference {ref.shape}"
    n = min(y.shape[-1], ref.shape[-1])
    for a in (y, ref):
        if not np.all(np.isneginf(a[..., n:])):
            return f"shape {y.shape} != reference {ref.shape}"
    y, ref = y[..., :n].astype(np.float64), ref[..., :n].astype(np.float64)
    padded = np.isneginf(y) & np.isneginf(ref)
    y, ref = np.where(padded, 0.0, y), np.where(padded, 0.0, ref)
    if not np.all(np.isfinite(y)):
        return "the output has values that are not finite"
    return float(np.max(np.abs(y - ref), initial=0.0)), float(np.max(np.abs(ref), initial=0.0))


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
    compared = padded_difference(y, ref)
    if isinstance(compared, str):
        print(f"MISMATCH compare: {compared}")
        return 1
    diff, scale = compared
    rel = diff / scale if scale else diff
    ok = rel <= args.rtol
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

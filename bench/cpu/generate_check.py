"""The generation benchmark's correctness gate for a `tp-run --generate` run.

    /usr/bin/python3 bench/cpu/generate_check.py ids.npy expected.npy \
        [--report r.json --all-reduces N]

Prints one line and exits 0 when the generated ids equal the expected ones
token for token (int64, same shape) and, with --report, when tp-run's report
counts N all-reduces per decode step; 1 otherwise (naming the first differing
token).
"""
from __future__ import annotations

import argparse
import json
import sys

import numpy as np

# The report's collective counts per decode step, under the names tp-run may use.
STEP_COLLECTIVES = ("collectives_per_step", "collectives_per_decode_step", "collectives_per_token")


def all_reduces_per_step(report: dict) -> float | None:
    for key in STEP_COLLECTIVES:
        counts = report.get(key)
        if isinstance(counts, dict):
            value = counts.get("all_reduce")
            if isinstance(value, dict):
                value = value.get("calls")
            if value is not None:
                return float(value)
            return 0.0  # the object is there, without all-reduces
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("output")
    ap.add_argument("expected")
    ap.add_argument("--report", help="tp-run --report-json file")
    ap.add_argument("--all-reduces", type=float, help="all-reduces per decode step the report must count")
    args = ap.parse_args(argv)
    got, want = np.load(args.output), np.load(args.expected)
    ok = got.shape == want.shape and got.dtype.kind in "iu" and np.array_equal(got, want)
    if ok:
        line = f"ids equal: {want.shape[0]} x {want.shape[1]} new tokens ({got.dtype})"
    elif got.shape != want.shape or got.dtype.kind not in "iu":
        line = f"ids {got.shape} {got.dtype}, expected {want.shape} {want.dtype}"
    else:
        b, t = np.argwhere(got != want)[0]
        line = (f"ids differ from token {t} of sequence {b}: {got[b, t]} instead of {want[b, t]} "
                f"({int(np.sum(got != want))} of {want.size} differ)")
    if args.report:
        with open(args.report) as f:
            calls = all_reduces_per_step(json.load(f))
        if calls is None:
            line += "; the report has no collectives per step"
            ok = ok and args.all_reduces is None
        else:
            line += f"; all-reduces per decode step {calls:g}"
            if args.all_reduces is not None and calls != args.all_reduces:
                ok = False
                line += f" (expected {args.all_reduces:g})"
    print(("OK " if ok else "MISMATCH ") + line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

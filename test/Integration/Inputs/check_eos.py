"""Checks ids generated with end ids against those generated without.
    check_eos.py FULL.npy STOPPED.npy EOS[,EOS...]
Each sequence of STOPPED must be FULL's up to the first of the end ids it
gives and that id after; STOPPED ends where the last sequence to give one
gave it."""
import sys

import numpy as np

full, stopped = np.load(sys.argv[1]), np.load(sys.argv[2])
eos = {int(i) for i in sys.argv[3].split(",")}
ends = [next((k + 1 for k, i in enumerate(row) if i in eos), full.shape[1]) for row in full]
expected = full[:, :max(ends)].copy()
for row, end in zip(expected, ends):
    row[end:] = row[end - 1]
if not np.array_equal(stopped, expected):
    sys.exit(f"{sys.argv[2]}: {stopped.tolist()}, expected {expected.tolist()}")
print(f"stopped after {stopped.shape[1]} of {full.shape[1]} ids, each sequence at its end id")

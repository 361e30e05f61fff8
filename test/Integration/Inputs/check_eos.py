"""Checks ids generated with an end id against those generated without.
    check_eos.py FULL.npy STOPPED.npy EOS
Each sequence of STOPPED must be FULL's up to its first EOS and EOS after;
STOPPED ends where the last sequence to give EOS gave it."""
import sys

import numpy as np

full, stopped, eos = np.load(sys.argv[1]), np.load(sys.argv[2]), int(sys.argv[3])
ends = [list(row).index(eos) + 1 if eos in row else full.shape[1] for row in full]
expected = full[:, :max(ends)].copy()
for row, end in zip(expected, ends):
    row[end:] = eos
if not np.array_equal(stopped, expected):
    sys.exit(f"{sys.argv[2]}: {stopped.tolist()}, expected {expected.tolist()}")
print(f"stopped after {stopped.shape[1]} of {full.shape[1]} ids, each sequence at its end id")

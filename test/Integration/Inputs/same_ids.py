"""Checks that integer .npy files (token ids) are equal, and that the first
spreads over more than one value (so that a test of them is not vacuous).
    same_ids.py A.npy B.npy ...  ->  "same ids: DTYPE [SHAPE]", exit 1 if not"""
import sys

import numpy as np

arrays = [np.load(path) for path in sys.argv[1:]]
first = arrays[0]
if first.dtype.kind != "i":
    sys.exit(f"{sys.argv[1]}: {first.dtype} is not an integer type")
for path, array in zip(sys.argv[2:], arrays[1:]):
    if array.dtype != first.dtype or not np.array_equal(array, first):
        sys.exit(f"{path}: {array} differs from {sys.argv[1]}: {first}")
if len(np.unique(first)) < 2:
    sys.exit(f"{sys.argv[1]}: every id is {first.flat[0]}: nothing is tested")
print(f"same ids: {first.dtype} {list(first.shape)}")

"""Checks the six results of Inputs/tm-sort-topk.mlir that tp-run wrote.

usage: check_sort_topk.py ORDER.npy SORTED.npy OUT.npy
(OUT.npy and OUT.1.npy .. OUT.5.npy: top-2 values and i32 indices, sorted
logits and i64 positions, the integer top 2 and its indices)
"""

import sys

import numpy as np

order, ref = np.load(sys.argv[1]), np.load(sys.argv[2])
stem = sys.argv[3][: -len(".npy")]
values, indices, sorted_, positions, ints, int_indices = (
    np.load(stem + (f".{k}" if k else "") + ".npy") for k in range(6)
)
assert indices.dtype == np.int32 and positions.dtype == np.int64
assert (positions == order).all(), (positions, order)
assert (indices == order[:, :2]).all(), (indices, order)
assert np.allclose(sorted_, ref, rtol=1e-5, atol=1e-5), (sorted_, ref)
assert np.allclose(values, ref[:, :2], rtol=1e-5, atol=1e-5), (values, ref)
assert ints.tolist() == [3, 3] and int_indices.tolist() == [0, 2], (ints, int_indices)
print("OK sort topk")

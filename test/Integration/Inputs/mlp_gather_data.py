"""Weights (unnamed: bound by position), input and numpy reference for
mlp-gather.mlir, whose cut output is gathered before the return.
    mlp_gather_data.py PREFIX  ->  PREFIX.safetensors, PREFIX.x.npy, PREFIX.ref.npy"""
import sys

import numpy as np

from tpmlir.checkpoint import save_safetensors

prefix = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 8)).astype(np.float32)
w = rng.standard_normal((8, 16)).astype(np.float32)
b = rng.standard_normal(16).astype(np.float32)
save_safetensors(f"{prefix}.safetensors", {"w": w, "b": b})
np.save(f"{prefix}.x.npy", x)
np.save(f"{prefix}.ref.npy", np.tanh(x @ w + b).astype(np.float32))

"""Weights (unnamed: bound by position), input and numpy reference for
embedding-lm.mlir: ids from the input, a vocabulary lookup, an MLP pair with
a residual, an LM head.
    embedding_lm_data.py PREFIX  ->  PREFIX.safetensors, PREFIX.x.npy, PREFIX.ref.npy"""
import sys

import numpy as np

from tpmlir.checkpoint import save_safetensors

prefix = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal(4).astype(np.float32)
table = rng.standard_normal((1024, 16)).astype(np.float32)
up = rng.standard_normal((16, 64)).astype(np.float32)
down = rng.standard_normal((64, 16)).astype(np.float32)
head = rng.standard_normal((16, 1024)).astype(np.float32)
save_safetensors(f"{prefix}.safetensors",
                 {"table": table, "up": up, "down": down, "head": head})
np.save(f"{prefix}.x.npy", x)
ids = (np.abs(x) * np.float32(997.0)).astype(np.int64) % 1024
h = table[ids]
r = h + np.tanh(h @ up) @ down
np.save(f"{prefix}.ref.npy", (r @ head).astype(np.float32))

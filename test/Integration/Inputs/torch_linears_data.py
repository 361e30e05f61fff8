"""Checkpoint, input and numpy reference for torch-linears.mlir (torch's
nn.Linear layout: weights [out, in], y = x @ W^T + b).
    torch_linears_data.py PREFIX  ->  PREFIX.safetensors, PREFIX.x.npy, PREFIX.ref.npy"""
import sys

import numpy as np

from tpmlir.checkpoint import save_safetensors

prefix = sys.argv[1]
rng = np.random.default_rng(0)
x = rng.standard_normal((1, 4, 8)).astype(np.float32)
w = {
    "fc1.weight": rng.standard_normal((32, 8)).astype(np.float32),
    "fc1.bias": rng.standard_normal(32).astype(np.float32),
    "fc2.weight": rng.standard_normal((8, 32)).astype(np.float32),
    "fc2.bias": rng.standard_normal(8).astype(np.float32),
}
save_safetensors(f"{prefix}.safetensors", w)
np.save(f"{prefix}.x.npy", x)
h = np.tanh(x @ w["fc1.weight"].T + w["fc1.bias"])
np.save(f"{prefix}.ref.npy", (h @ w["fc2.weight"].T + w["fc2.bias"]).astype(np.float32))

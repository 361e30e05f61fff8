"""Checkpoint, inputs and numpy reference for token-ids.mlir, and inputs of
the wrong dtype for the refusals.
    token_ids_data.py PREFIX  ->  PREFIX.safetensors, PREFIX.{ids,pos,mask}.npy,
        PREFIX.ref.npy, PREFIX.ids32.npy (int32 ids), PREFIX.maskf.npy (float32)"""
import sys

import numpy as np

from tpmlir.checkpoint import save_safetensors

prefix = sys.argv[1]
rng = np.random.default_rng(0)
w = {"wte": rng.standard_normal((16, 8)), "wpe": rng.standard_normal((4, 8)),
     "fc1": rng.standard_normal((8, 32)), "fc2": rng.standard_normal((32, 8))}
w = {k: v.astype(np.float32) for k, v in w.items()}
ids = rng.integers(0, 16, (2, 4), dtype=np.int64)
pos = np.tile(np.arange(4, dtype=np.int32), (2, 1))
mask = np.array([[True, True, True, True], [True, True, False, False]])
save_safetensors(f"{prefix}.safetensors", w)
np.save(f"{prefix}.ids.npy", ids)
np.save(f"{prefix}.pos.npy", pos)
np.save(f"{prefix}.mask.npy", mask)
np.save(f"{prefix}.ids32.npy", ids.astype(np.int32))
np.save(f"{prefix}.maskf.npy", mask.astype(np.float32))

h = (w["wte"][ids] + w["wpe"][pos]) * mask[..., None]
y = np.maximum(h.reshape(8, 8) @ w["fc1"], 0) @ w["fc2"]
np.save(f"{prefix}.ref.npy", y.astype(np.float32))

"""Minimal safetensors reader/writer (the launcher's checkpoint format, design.md §5).

Written against the public format so tests can make checkpoints without the
`safetensors` package: u64 little-endian header size, JSON header, raw data.
"""
from __future__ import annotations

import json
import struct

import numpy as np

_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def save_safetensors(path: str, tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None):
    header: dict = {"__metadata__": dict(metadata)} if metadata else {}
    blobs, offset = [], 0
    # Data in the dict's order: a graph without tp.name binds its weights by
    # position in the file (runtime/include/tprt/model.h).
    for name in tensors:
        a = np.ascontiguousarray(tensors[name])
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        if a.dtype not in _NAMES:
            raise ValueError(f"{name}: unsupported dtype {a.dtype}")
        data = a.tobytes()
        header[name] = {"dtype": _NAMES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def load_safetensors(path: str) -> dict[str, np.ndarray]:
    with open(path, "rb") as f:
        raw = f.read()
    (size,) = struct.unpack_from("<Q", raw)
    header = json.loads(raw[8:8 + size])
    base = 8 + size
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _DTYPES:
            raise ValueError(f"{name}: unsupported dtype {info['dtype']}")
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(raw[base + begin:base + end], dtype=_DTYPES[info["dtype"]]
                                  ).reshape(info["shape"]).copy()
    return out

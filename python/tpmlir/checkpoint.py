"""Minimal safetensors reader/writer (the launcher's checkpoint format, design.md §5).

Written against the public format so tests can make checkpoints without the
`safetensors` package: u64 little-endian header size, JSON header, raw data.
A Hugging Face model directory holds model.safetensors, or shards
model-0000k-of-0000n.safetensors listed by model.safetensors.index.json.

As a command, it wraps a raw parameter file (buddy-mlir's arg0.data, all of a
model's parameters one after the other) as a checkpoint of one flat tensor:
    python3 -m tpmlir.checkpoint --raw arg0.data --name arg0 -o params.safetensors
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}
# Element sizes of the dtypes a raw parameter file may hold (numpy has no bf16).
_RAW_DTYPES = {**{k: np.dtype(v).itemsize for k, v in _DTYPES.items()}, "BF16": 2}


def bf16_bits(a: np.ndarray) -> np.ndarray:
    """The bfloat16 bits (uint16) of float32 `a`, rounded to nearest even, a
    NaN kept as a quiet NaN of its sign: as tprt's toBf16 (Launch.cpp) and
    arith.truncf round."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), (bits >> 16).astype(np.uint16) | np.uint16(0x40), rounded)


def save_safetensors(path: str, tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None,
                     floats: str = "F32"):
    """Writes `tensors`; float32 ones as `floats`: F32, or BF16 or F16 (rounded
    to nearest even), the dtypes Hugging Face checkpoints ship in. Returns
    the bytes of tensor data written."""
    if floats not in ("F32", "BF16", "F16"):
        raise ValueError(f"floats must be F32, BF16 or F16, not {floats!r}")
    header: dict = {"__metadata__": dict(metadata)} if metadata else {}
    blobs, offset = [], 0
    # Data in the dict's order: a graph without tp.name binds its weights by
    # position in the file (runtime/include/tprt/model.h).
    for name in tensors:
        a = np.ascontiguousarray(tensors[name])
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        if a.dtype not in _NAMES:
            raise ValueError(f"{name}: unsupported dtype {a.dtype}")
        dtype = _NAMES[a.dtype]
        if dtype == "F32" and floats == "BF16":
            a, dtype = bf16_bits(a).astype("<u2"), "BF16"
        elif dtype == "F32" and floats == "F16":
            a, dtype = a.astype("<f2"), "F16"
        data = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    with open(path, "wb") as f:
        _write_header(f, header)
        for data in blobs:
            f.write(data)
    return offset


def _write_header(f, header: dict):
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned
    f.write(struct.pack("<Q", len(text)))
    f.write(text)


def raw_to_safetensors(raw: str, path: str, name: str, dtype: str = "F32") -> int:
    """Writes the little-endian elements of file `raw` as the one 1-D tensor
    `name` of `path`, copied in chunks (a 7B model's parameters are 27 GB).
    Returns the element count."""
    if dtype not in _RAW_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_RAW_DTYPES)}, not {dtype!r}")
    size, item = os.path.getsize(raw), _RAW_DTYPES[dtype]
    if size == 0 or size % item:
        raise ValueError(f"{raw}: {size} bytes are not a whole number of {dtype} elements")
    if os.path.exists(path) and os.path.samefile(raw, path):
        raise ValueError(f"{path}: the output would overwrite the raw file it copies")
    with open(raw, "rb") as source, open(path, "wb") as f:
        _write_header(f, {name: {"dtype": dtype, "shape": [size // item],
                                 "data_offsets": [0, size]}})
        shutil.copyfileobj(source, f, 1 << 24)
    return size // item


def read_json(path: str) -> dict:
    """A JSON file whose top level is an object; else a ValueError naming the file."""
    with open(path) as f:
        try:
            data = json.load(f)
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
            raise ValueError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object but {type(data).__name__} {json.dumps(data)[:40]}")
    return data


def read_weight_map(index: str) -> dict[str, str]:
    """The weight_map (tensor name -> shard file) of a model.safetensors.index.json."""
    weight_map = read_json(index).get("weight_map")
    if weight_map is None:
        raise ValueError(f"{index}: 'weight_map' is missing")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise ValueError(f"{index}: 'weight_map' must be an object of tensor names to files, "
                         f"not {weight_map!r:.40}")
    return weight_map


def _header(f) -> tuple[dict, int]:
    try:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    except (struct.error, ValueError) as e:
        raise ValueError(f"{f.name}: not a safetensors file: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{f.name}: not a safetensors file: its header is not a JSON object")
    return header, 8 + size


def read_safetensors_names(path: str) -> list[str]:
    """The tensor names of a safetensors file (its header only)."""
    with open(path, "rb") as f:
        header, _ = _header(f)
    return [name for name in header if name != "__metadata__"]


def load_safetensors(path: str) -> dict[str, np.ndarray]:
    """Every tensor of the file; BF16 and F16 ones widened to float32 (as
    tp-run widens them for a model that takes F32)."""
    with open(path, "rb") as f:
        header, base = _header(f)
        f.seek(0)
        raw = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        data = raw[base + begin:base + end]
        if info["dtype"] == "BF16":  # the top half of a float32
            a = (np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "F16":
            a = np.frombuffer(data, dtype="<f2").astype(np.float32)
        elif info["dtype"] in _DTYPES:
            a = np.frombuffer(data, dtype=_DTYPES[info["dtype"]]).copy()
        else:
            raise ValueError(f"{name}: unsupported dtype {info['dtype']}")
        out[name] = a.reshape(info["shape"])
    return out


def load_model_dir(model_dir: str) -> dict[str, np.ndarray]:
    """The tensors of a Hugging Face model directory, sharded or not."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        weight_map = read_weight_map(index)
        out: dict[str, np.ndarray] = {}
        for file in sorted(set(weight_map.values())):
            out.update(load_safetensors(os.path.join(model_dir, file)))
        missing = sorted(set(weight_map) - set(out))
        if missing:
            raise ValueError(f"{index} lists tensors no shard holds: {', '.join(missing[:5])}")
        return out
    single = os.path.join(model_dir, "model.safetensors")
    if not os.path.exists(single):
        raise FileNotFoundError(f"{model_dir} has neither model.safetensors nor model.safetensors.index.json")
    return load_safetensors(single)


def save_model_dir(model_dir: str, config: dict, tensors: dict[str, np.ndarray], shards: int = 1,
                   floats: str = "F32") -> list[str]:
    """Writes config.json and the tensors as model.safetensors, or (shards > 1)
    as model-0000k-of-0000n.safetensors with model.safetensors.index.json, the
    way save_pretrained does, float32 tensors as `floats` (save_safetensors).
    Returns the safetensors files written."""
    os.makedirs(model_dir, exist_ok=True)
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    names = list(tensors)
    if shards <= 1:
        path = os.path.join(model_dir, "model.safetensors")
        save_safetensors(path, tensors, {"format": "pt"}, floats)
        return [path]
    per = -(-len(names) // shards)
    files, weight_map, total = [], {}, 0
    for k in range(shards):
        part = names[k * per:(k + 1) * per]
        file = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        total += save_safetensors(os.path.join(model_dir, file), {n: tensors[n] for n in part},
                                  {"format": "pt"}, floats)
        files.append(os.path.join(model_dir, file))
        weight_map.update({n: file for n in part})
    with open(os.path.join(model_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m tpmlir.checkpoint",
        description="Wrap a raw parameter file (buddy-mlir's arg0.data) as a safetensors "
                    "checkpoint of one flat tensor, which tp-run reads a packed model's weights from.")
    ap.add_argument("--raw", required=True, help="raw little-endian elements, one after the other")
    ap.add_argument("--name", required=True,
                    help="the tensor's name: the packed argument's tp.name (arg<i> for argument i)")
    ap.add_argument("--dtype", default="F32", choices=sorted(_RAW_DTYPES))
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    try:
        count = raw_to_safetensors(args.raw, args.output, args.name, args.dtype)
    except (OSError, ValueError) as e:
        print(f"tpmlir.checkpoint: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.output}: '{args.name}' [{count}] {args.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Seeds of tprt-loader-fuzzer (tprt-loader-fuzzer.cpp says what an input is).

    /usr/bin/python3 test/fuzz/tprt-loader/seeds.py DIR

writes into DIR one file per seed: .npy arrays of each dtype tp-run reads,
.safetensors checkpoints of several dtypes, a sharded checkpoint's index,
and manifests, each with a checkpoint that binds to it, of the kinds
tp-compile writes: a cut weight in panels, a padded vocabulary, rows of a
packed tensor, stacked parts with shared kv heads, a decode step's cache
updated in place. The manifests take this tree's ABI version, so that they
pass checkManifest.
"""

import io
import json
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tpmlir.checkpoint import save_safetensors  # noqa: E402


def abi_version() -> int:
    with open(os.path.join(ROOT, "runtime/include/tprt/tprt.h")) as f:
        return int(re.search(r"#define TPRT_ABI_VERSION (\d+)", f.read()).group(1))


def npy(array: np.ndarray, version=None) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


def safetensors(tensors: dict, metadata=None, floats="F32") -> bytes:
    path = os.path.join(sys.argv[1], ".tmp.safetensors")
    save_safetensors(path, tensors, metadata, floats)
    with open(path, "rb") as f:
        data = f.read()
    os.remove(path)
    return data


def arg(name, shape, local=None, shard=None, **extra):
    entry = {"name": name, "dtype": "f32", "shape": shape,
             "local_shape": local or shape, "shard": shard, "named": True,
             "role": "weight"}
    entry.update(extra)
    return entry


def manifest(tp, args, results, name="forward"):
    return json.dumps({
        "abi_version": abi_version(), "backend": "cpu", "tp_size": tp,
        "functions": [{"name": name, "symbol": "tp_model_" + name,
                       "args": args, "results": results}]}).encode()


def f32(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "npy-f32": b"n" + npy(f32(2, 3)),
        "npy-i64": b"n" + npy(np.array([[1, 5, 9, 2]], dtype=np.int64)),
        "npy-i32": b"n" + npy(np.array([3, 1, 4], dtype=np.int32)),
        "npy-bool": b"n" + npy(np.array([[True, False], [False, True]])),
        "npy-v2": b"n" + npy(f32(1, 2, 2), version=(2, 0)),
        "npy-scalar": b"n" + npy(np.float32(1.5).reshape(())),
        "st-f32": b"s" + safetensors({"a": f32(2, 3), "b": np.arange(4, dtype=np.int64)},
                                    {"format": "pt"}),
        "st-f16": b"s" + safetensors({"h": f32(4, 4), "z": np.zeros((0, 3), np.float32)},
                                    floats="F16"),
        "st-bf16": b"s" + safetensors({"g": f32(2, 2, 4)}, floats="BF16"),
    }
    index = {"metadata": {"total_size": 96},
             "weight_map": {"a": "model-00001-of-00002.safetensors",
                            "b": "model-00002-of-00002.safetensors"}}
    seeds["index"] = b"i" + json.dumps(index).encode()
    seeds["m-panels"] = b"m" + manifest(
        2, [{"name": "x", "dtype": "f32", "shape": [4, 8], "local_shape": [4, 8],
             "shard": None, "named": False, "role": "input"},
            arg("qkv", [8, 12], [8, 6], {"dim": 1, "outer": 3}, layout="panels")],
        [{"name": "result0", "dtype": "f32", "shape": [4, 6], "local_shape": [4, 6],
          "shard": None}]) + b"\0" + safetensors({"qkv": f32(8, 12)})
    seeds["m-padded"] = b"m" + manifest(
        2, [arg("wte", [104, 8], [52, 8], {"dim": 0, "outer": 1},
                checkpoint_shape=[97, 8], layout="transposed_panels")],
        [{"name": "r", "dtype": "f32", "shape": [1], "shard": None}]) + b"\0" + \
        safetensors({"wte": f32(97, 8)})
    seeds["m-rows"] = b"m" + manifest(
        1, [arg("qkv", [2, 8], checkpoint_shape=[12, 8], checkpoint_offset=8),
            arg("qkv", [2, 8], checkpoint_shape=[12, 8], checkpoint_offset=10)],
        [{"name": "r", "dtype": "f32", "shape": [1], "shard": None}]) + b"\0" + \
        safetensors({"qkv": f32(12, 8)})
    # buddy-mlir's flat parameters: a [2, 4] matrix cut by columns and a
    # bias, elements of one [12].
    seeds["m-flat-rows"] = b"m" + manifest(
        2, [arg("arg0", [2, 4], [2, 2], {"dim": 1, "outer": 1}, checkpoint_shape=[12],
                checkpoint_offset=0),
            arg("arg0", [4], checkpoint_shape=[12], checkpoint_offset=8)],
        [{"name": "r", "dtype": "f32", "shape": [1], "shard": None}]) + b"\0" + \
        safetensors({"arg0": f32(12)})
    seeds["m-stack"] = b"m" + manifest(
        2, [dict(arg("{q,k}", [8, 8]), stack={"dim": 1, "parts": [
            arg("q", [8, 8], [8, 4], {"dim": 1, "outer": 1}),
            arg("k", [8, 4], [8, 4], {"dim": 1, "outer": 1, "replicas": 2})]})],
        [{"name": "r", "dtype": "f32", "shape": [1], "shard": None}]) + b"\0" + \
        safetensors({"q": f32(8, 8), "k": f32(8, 4)}, floats="BF16")
    seeds["m-decode"] = b"m" + manifest(
        2, [{"name": "ids", "dtype": "i64", "shape": [1, 1], "local_shape": [1, 1],
             "shard": None, "tokens": True, "vocab": 16, "role": "input"},
            arg("w", [4, 16], [4, 8], {"dim": 1, "outer": 1}),
            {"name": "cache.0.k", "dtype": "f32", "shape": [1, 4, 8, 2],
             "local_shape": [1, 2, 8, 2], "shard": {"dim": 1, "outer": 1},
             "role": "input", "positions": 8}],
        [{"name": "next_ids", "dtype": "i64", "shape": [1, 1], "shard": None},
         {"name": "cache.0.k", "dtype": "f32", "shape": [1, 4, 8, 2],
          "local_shape": [1, 2, 8, 2], "shard": {"dim": 1, "outer": 1}, "in_place": 2}],
        name="decode") + b"\0" + safetensors({"w": f32(4, 16)})
    for name, data in seeds.items():
        with open(os.path.join(out, "loader-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Inputs for the tp-run tests against runtime/test/FakeModel.c.

  fake_model_data.py make DIR    writes x.npy, weights.safetensors, expected.npy,
                                 the weights in F16 and the broken variants the
                                 refusal tests use
  fake_model_data.py check Y E   compares two .npy files (fp32 tolerance)
  fake_model_data.py cut-elf SO OUT segment|sections
                                 writes SO truncated inside its executable
                                 segment or its section header table

The model is y = (x @ fc1) @ fc2 with x [2, 4, 8], fc1 [8, 16], fc2 [16, 8].
"""
import json
import struct
import sys

import numpy as np

DTYPES = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("float64"): "F64"}


def safetensors_bytes(tensors):
    """tensors: name -> numpy array; the header lists them in that order."""
    header, data = {}, b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": DTYPES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_raw(entries, data):
    """entries: name -> (array, [begin, end]) as written in the header, over
    the bytes `data`: for files whose offsets break the format."""
    header = {name: {"dtype": DTYPES[array.dtype], "shape": list(array.shape),
                     "data_offsets": offsets}
              for name, (array, offsets) in entries.items()}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def write(path, content):
    with open(path, "wb") as f:
        f.write(content)


def make(out):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 8)).astype(np.float32)
    fc1 = rng.standard_normal((8, 16)).astype(np.float32)
    fc2 = rng.standard_normal((16, 8)).astype(np.float32)
    np.save(f"{out}/x.npy", x)
    np.save(f"{out}/expected.npy", (x @ fc1) @ fc2)
    np.save(f"{out}/x_bad_shape.npy", x[:, :, :6].copy())
    np.save(f"{out}/x_f64.npy", x.astype(np.float64))

    good = safetensors_bytes({"fc1.weight": fc1, "fc2.weight": fc2})
    write(f"{out}/weights.safetensors", good)
    write(f"{out}/missing.safetensors", safetensors_bytes({"fc1.weight": fc1}))
    write(f"{out}/fc2_only.safetensors", safetensors_bytes({"fc2.weight": fc2}))
    write(f"{out}/renamed.safetensors",
          safetensors_bytes({"fc1.weight": fc1, "mlp.fc2.weight": fc2}))
    write(f"{out}/wrong_shape.safetensors",
          safetensors_bytes({"fc1.weight": fc1, "fc2.weight": fc2[:8]}))
    write(f"{out}/wrong_dtype.safetensors",
          safetensors_bytes({"fc1.weight": fc1,
                             "fc2.weight": fc2.astype(np.float64)}))
    # F16 weights, which tp-run widens, and the same values stored as F32.
    half = {"fc1.weight": fc1.astype(np.float16), "fc2.weight": fc2.astype(np.float16)}
    write(f"{out}/f16.safetensors", safetensors_bytes(half))
    write(f"{out}/f16_widened.safetensors",
          safetensors_bytes({k: v.astype(np.float32) for k, v in half.items()}))
    write(f"{out}/truncated.safetensors", good[: len(good) - 100])
    (length,) = struct.unpack("<Q", good[:8])
    write(f"{out}/corrupt_header.safetensors",
          good[:8] + b"{\"fc1.weight\": [" + good[8 + 16:])
    write(f"{out}/tiny.safetensors", good[:5])
    # Each offset in bounds and of the right length, but fc2 reads half of
    # fc1's bytes; or every tensor 4 bytes later than the data area begins.
    raw = fc1.tobytes() + fc2.tobytes()
    write(f"{out}/overlapping.safetensors",
          safetensors_raw({"fc1.weight": (fc1, [0, 512]),
                           "fc2.weight": (fc2, [256, 768])}, raw))
    write(f"{out}/shifted.safetensors",
          safetensors_raw({"fc1.weight": (fc1, [4, 516]),
                           "fc2.weight": (fc2, [516, 1028])}, raw + bytes(4)))


def cut_elf(source, target, where):
    """Writes `source` truncated in the middle of its executable PT_LOAD
    segment (where="segment"; dlopen crashed on it) or just before its end,
    in the section header table (where="sections")."""
    with open(source, "rb") as f:
        data = f.read()
    if where == "sections":
        write(target, data[:len(data) - 100])
        return
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    cut = None
    for i in range(phnum):
        p_type, p_flags, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 1 and p_filesz > 1:  # PT_LOAD, PF_X
            cut = p_offset + p_filesz // 2
    write(target, data[:cut])


def check(got_path, want_path):
    got, want = np.load(got_path), np.load(want_path)
    if got.shape != want.shape:
        print(f"shape {got.shape} != {want.shape}")
        return 1
    error = float(np.max(np.abs(got - want)))
    print(f"max abs error {error:.3g}: {'OK' if error < 1e-4 else 'MISMATCH'}")
    return 0 if error < 1e-4 else 1


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "cut-elf":
        cut_elf(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)

"""Prints each tensor of a safetensors file (name, dtype, shape, values) in
the order of its data, and checks the layout tp-run relies on."""
import json
import struct
import sys

import numpy as np

with open(sys.argv[1], "rb") as f:
    blob = f.read()
(n,) = struct.unpack("<Q", blob[:8])
header = json.loads(blob[8:8 + n])
data = blob[8 + n:]
entries = sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                 key=lambda kv: kv[1]["data_offsets"][0])
end = 0
for name, e in entries:
    begin, stop = e["data_offsets"]
    assert begin == end, f"{name}: data at {begin}, expected {end}"
    values = np.frombuffer(data[begin:stop], dtype="<f4").reshape(e["shape"])
    print(name, e["dtype"], e["shape"], values.ravel().tolist())
    end = stop
assert end == len(data), f"{len(data) - end} bytes after the last tensor"
assert n % 8 == 0, f"header of {n} bytes"
print("data in argument order, header padded to 8 bytes")

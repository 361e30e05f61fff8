"""Random weights and inputs for a graph's entry function, from its
signature: each f32 argument with a tp.name goes to the checkpoint, every
other argument is an input (as tp-run decides when the checkpoint lacks it).
    random_arguments.py MODEL.mlir PREFIX [--ids-below N]
        ->  PREFIX.safetensors, PREFIX.NAME.npy per input (argI if unnamed)"""
import argparse
import re

import numpy as np

from tpmlir.checkpoint import save_safetensors

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("prefix")
ap.add_argument("--ids-below", type=int, default=100,
                help="integer inputs are drawn from [0, N)")
args = ap.parse_args()

text = open(args.model).read()
signature = re.search(r"func\.func @\w+\((.*?)\)\s*->", text, re.S).group(1)
arg = re.compile(r'%[\w.]+:\s*tensor<([0-9x]*)x?(f32|i64|i32|i1)>'
                 r'(?:\s*\{[^}]*tp\.name\s*=\s*"([^"]+)"[^}]*\})?')
rng = np.random.default_rng(0)
types = {"f32": np.float32, "i64": np.int64, "i32": np.int32, "i1": np.bool_}
weights = {}
for i, (dims, dtype, name) in enumerate(arg.findall(signature)):
    shape = tuple(int(d) for d in dims.split("x") if d)
    if dtype == "f32":
        value = (0.1 * rng.standard_normal(shape)).astype(np.float32)
    elif dtype == "i1":
        value = np.ones(shape, dtype=np.bool_)
    else:
        value = rng.integers(0, args.ids_below, shape).astype(types[dtype])
    if name and dtype == "f32":
        weights[name] = value
    else:
        np.save(f"{args.prefix}.{name or f'arg{i}'}.npy", value)
save_safetensors(f"{args.prefix}.safetensors", weights)

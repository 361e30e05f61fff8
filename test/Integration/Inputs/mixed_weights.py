"""Writes tiny GPT-2 (4 layers, seed 0: cpu-e2e.test's) with its MLP weights
inline and the other weights in a checkpoint of their own, as a graph with
part of its parameters imported as constants would come.
    mixed_weights.py OUT.mlir OUT.safetensors"""
import sys

from tpmlir import reference
from tpmlir.builder import build_mlir
from tpmlir.checkpoint import save_safetensors
from tpmlir.config import preset

cfg = preset("tiny_gpt2", layers=4)
weights = reference.random_weights(cfg, 0)
inline = {n: a for n, a in weights.items() if ".mlp." in n}
with open(sys.argv[1], "w") as f:
    f.write(build_mlir(cfg, inline))
save_safetensors(sys.argv[2], {n: a for n, a in weights.items() if n not in inline})

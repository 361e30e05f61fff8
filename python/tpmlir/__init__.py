"""tpmlir: transformer builders (linalg MLIR), a numpy reference and tool drivers."""
from .builder import build_mlir
from .config import ModelConfig, gpt2_small, llama_like, preset, tiny_gpt2, tiny_llama
from .params import arg_specs, param_specs

__all__ = ["ModelConfig", "build_mlir", "arg_specs", "param_specs", "preset",
           "gpt2_small", "llama_like", "tiny_gpt2", "tiny_llama"]

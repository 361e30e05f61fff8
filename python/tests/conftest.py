import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tpmlir.config import tiny_gpt2, tiny_llama  # noqa: E402
from tpmlir.execute import find_tool  # noqa: E402

# Small configs covering every structural option; shared by the verify and numeric tests.
VARIANTS = {
    "gpt2": tiny_gpt2(),
    "gpt2_generic_softmax": tiny_gpt2(softmax="generic"),
    "gpt2_out_in": tiny_gpt2(weight_layout="out_in"),
    "gpt2_separate": tiny_gpt2(qkv="separate"),
    "gpt2_noncausal_batch2": tiny_gpt2(causal=False, batch=2),
    "gpt2_rmsnorm_swiglu_nobias": tiny_gpt2(norm="rmsnorm", activation="swiglu", bias=False),
    "llama": tiny_llama(),
    "llama_in_out_generic": tiny_llama(weight_layout="in_out", softmax="generic"),
    "llama_no_gqa": tiny_llama(kv_heads=4),
    "llama_mqa": tiny_llama(kv_heads=1),
    "llama_ln_gelu_bias": tiny_llama(norm="layernorm", activation="gelu", bias=True),
    "llama_noncausal_batch2_3layers": tiny_llama(causal=False, batch=2, layers=3),
    "llama_fused_rope": tiny_llama(qkv="fused", kv_heads=4),
    # Heads wider than d_model / heads, q|k|v and gate|up fused, q and k
    # normalized per head (Phi-3's layout with Qwen3's norms).
    "llama_fused_qk_norm_wide_heads": tiny_llama(qkv="fused", gate_up="fused", kv_heads=4, qk_norm=True,
                                                 head_dim=32),
    # Phi-4-mini's layout: GQA in a packed q|k|v, RoPE over 12 of 16 features
    # of each head (the RoPE tables [S, 12] as arguments).
    "llama_packed_partial_rope": tiny_llama(qkv="packed", gate_up="fused", rotary_dim=12),
    # The same q|k|v as one projection the graph slices into sections of
    # unequal widths (a torch-mlir export of Phi-3-medium's qkv_proj), with
    # biases.
    "llama_sliced_gqa_bias": tiny_llama(qkv="sliced", bias=True),
}


@pytest.fixture(scope="session")
def mlir_opt():
    path = find_tool("mlir-opt")
    if not path:
        pytest.skip("mlir-opt (MLIR 22) not found; set TPMLIR_LLVM_PREFIX")
    return path


@pytest.fixture(scope="session")
def mlir_runner(mlir_opt):
    path = find_tool("mlir-runner")
    if not path:
        pytest.skip("mlir-runner not found; set TPMLIR_LLVM_PREFIX")
    return path

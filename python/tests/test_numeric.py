"""Numeric oracle: the emitted MLIR, lowered and run by upstream MLIR, equals numpy."""
import numpy as np
import pytest
from conftest import VARIANTS

from tpmlir import reference
from tpmlir.execute import run_forward


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_mlir_matches_numpy(mlir_runner, name):
    cfg = VARIANTS[name]
    w = reference.random_weights(cfg, seed=7)
    x = reference.random_input(cfg, seed=8)
    got = run_forward(cfg, w, x)
    want = reference.forward(cfg, w, x)
    assert not np.allclose(want, x, atol=1e-2)  # the blocks did something
    # printMemrefF32 prints 6 significant digits, hence the tolerance.
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


# Whole models: token ids over the whole vocabulary in, logits out; GPT-2's
# LM head is its embedding transposed, Llama's its own weight.
WHOLE = {"gpt2_tied": dict(preset="tiny_gpt2", vocab=96),
         "llama_untied": dict(preset="tiny_llama", vocab=96),
         # Hugging Face names: GPT-2's learned positions, Llama's RoPE tables
         # computed in the graph (Qwen2's q/k/v biases and rope_theta).
         "gpt2_hf_positions": dict(preset="tiny_gpt2", vocab=96, names="hf_gpt2", positions=16),
         "qwen2_hf_rope_in_graph": dict(preset="tiny_llama", vocab=96, names="hf_llama", bias=False,
                                        qkv_bias=True, rope_theta=1e6)}


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_whole_model_matches_numpy(mlir_runner, name):
    from tpmlir.config import preset
    spec = dict(WHOLE[name])
    cfg = preset(spec.pop("preset"), **spec)
    w = reference.random_weights(cfg, seed=7)
    ids = reference.random_input(cfg, seed=8)
    assert ids.dtype == np.int64 and ids.shape == (cfg.batch, cfg.seq)
    assert ("lm_head.weight" in w) != cfg.tie_embeddings
    got = run_forward(cfg, w, ids)
    want = reference.forward(cfg, w, ids)
    assert want.shape == (cfg.batch, cfg.seq, cfg.vocab)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

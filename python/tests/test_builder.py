"""The builder's IR parses and verifies, and matches the shared signature."""
import re
import subprocess

import numpy as np
import pytest
from conftest import VARIANTS

from tpmlir import reference
from tpmlir.builder import build_mlir
from tpmlir.config import ModelConfig, gpt2_small, llama_like, preset, tiny_gpt2, tiny_llama
from tpmlir.params import arg_specs, checkpoint_names

PRESETS = {"gpt2_small": gpt2_small(), "llama_like": llama_like(),
           "tiny_gpt2": tiny_gpt2(), "tiny_llama": tiny_llama()}
ALL = {**PRESETS, **VARIANTS}


def verify(mlir_opt, text: str) -> str:
    proc = subprocess.run([mlir_opt, "--allow-unregistered-dialect", "--verify-each"],
                          input=text, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def parsed_signature(printed: str) -> list[tuple[str, tuple[int, ...]]]:
    """(tp.name, shape) of each @forward argument, read back from mlir-opt's output."""
    header = printed[printed.index("func.func @forward("):]
    header = header[:header.index("{\n")]
    args = re.findall(r"%\w+: tensor<([0-9x]+)xf32> \{([^}]*)\}", header)
    return [(re.search(r'tp.name = "([^"]+)"', attrs).group(1), tuple(int(d) for d in dims.split("x")))
            for dims, attrs in args]


@pytest.mark.parametrize("name", sorted(ALL))
def test_verifies_and_signature_matches(mlir_opt, name):
    cfg = ALL[name]
    printed = verify(mlir_opt, build_mlir(cfg))
    names = checkpoint_names(cfg)  # packed q, k, v: the name of the tensor packing them
    assert parsed_signature(printed) == [(names.get(n, n), shape) for n, shape in arg_specs(cfg)]
    b, s, d = cfg.batch, cfg.seq, cfg.d_model
    assert re.search(rf"-> tensor<{b}x{s}x{d}xf32>", printed)


def _count(text: str, op: str) -> int:
    return len(re.findall(rf"= {re.escape(op)}[ ({{]", text))


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_idioms(name):
    cfg = VARIANTS[name]
    text = build_mlir(cfg)
    B, S, H, Dh, L = cfg.batch, cfg.seq, cfg.heads, cfg.head_dim, cfg.layers
    qkv_mms = 1 if cfg.qkv in ("fused", "sliced") else 3
    mlp_mms = 2 if cfg.gate_up == "fused" else 3 if cfg.activation == "swiglu" else 2
    matmuls = L * (qkv_mms + 1 + mlp_mms)
    assert _count(text, "linalg.matmul") == matmuls
    assert _count(text, "linalg.batch_matmul") == 2 * L
    # 3 to-heads + k^T + context back to [B,S,H,Dh]; plus one per matmul for torch layout.
    transposes = 5 * L + (matmuls if cfg.weight_layout == "out_in" else 0)
    assert _count(text, "linalg.transpose") == transposes
    assert _count(text, "linalg.softmax") == (L if cfg.softmax == "named" else 0)
    assert text.count("tensor.expand_shape") == text.count("output_shape")
    if cfg.qkv == "fused":
        assert f"into tensor<{B}x{S}x3x{H}x{Dh}xf32>" in text
    if cfg.qkv == "sliced":
        assert text.count(f"tensor<{B}x{S}x{(H + 2 * cfg.kv_heads) * Dh}xf32> to") == 3 * L
    if cfg.kv_heads != cfg.heads:
        assert _count(text, "linalg.broadcast") == 2 * L
    assert ("linalg.index" in text) == cfg.causal
    assert ("tensor.concat" in text) == cfg.rope
    assert ("math.tanh" in text) == (cfg.activation == "gelu")


def test_arguments_carry_names():
    text = build_mlir(tiny_llama(layers=1))
    assert '%x: tensor<1x4x64xf32> {tp.name = "x"}' in text
    assert '{tp.name = "h.0.attn.k.weight"}' in text
    assert '{tp.name = "rope.sin"}' in text


def test_inline_weights(mlir_opt):
    """--inline-weights: only x is an argument; each weight is a dense_resource
    constant whose blob (alignment 4, then little-endian fp32) holds its values."""
    cfg = tiny_llama(layers=1)
    weights = reference.random_weights(cfg, 0)
    text = build_mlir(cfg, weights)
    printed = verify(mlir_opt, text)
    assert parsed_signature(printed) == [("x", (cfg.batch, cfg.seq, cfg.d_model))]
    for name, value in weights.items():
        shape = "x".join(map(str, value.shape))
        assert f"arith.constant dense_resource<{name}> : tensor<{shape}xf32>" in text
        blob = re.search(rf'^      {re.escape(name)}: "0x04000000([0-9a-f]*)"', text, re.M)
        assert blob, name
        stored = np.frombuffer(bytes.fromhex(blob.group(1)), dtype="<f4")
        np.testing.assert_array_equal(stored, value.ravel())


def test_inline_weights_must_be_weights():
    with pytest.raises(ValueError, match=r"\['h.9.mlp.up.weight', 'x'\] are not weights"):
        build_mlir(tiny_llama(layers=1), {"x": np.zeros(1), "h.9.mlp.up.weight": np.zeros(1)})


@pytest.mark.parametrize("name", sorted(ALL))
def test_reference_runs(name):
    cfg = ALL[name]
    w = reference.random_weights(cfg, seed=3)
    assert [(k, v.shape) for k, v in w.items()] == [(k, s) for k, s in arg_specs(cfg)[1:]]
    assert all(v.dtype == np.float32 for v in w.values())
    y = reference.forward(cfg, w, reference.random_input(cfg))
    assert y.shape == (cfg.batch, cfg.seq, cfg.d_model) and y.dtype == np.float32
    assert np.isfinite(y).all()


def test_reference_rejects_bad_weights():
    cfg = tiny_gpt2(layers=1)
    w = reference.random_weights(cfg)
    x = reference.random_input(cfg)
    with pytest.raises(ValueError, match="missing weights: h.0.mlp.up.bias"):
        reference.forward(cfg, {k: v for k, v in w.items() if k != "h.0.mlp.up.bias"}, x)
    w["h.0.attn.qkv.weight"] = w["h.0.attn.qkv.weight"].T
    with pytest.raises(ValueError, match="h.0.attn.qkv.weight: expected shape"):
        reference.forward(cfg, w, x)


def test_causal_mask_hides_the_future():
    cfg = tiny_gpt2(layers=2)
    w = reference.random_weights(cfg)
    x = reference.random_input(cfg)
    x2 = x.copy()
    x2[:, -1] += 1.0
    y, y2 = reference.forward(cfg, w, x), reference.forward(cfg, w, x2)
    np.testing.assert_array_equal(y[:, :-1], y2[:, :-1])
    assert not np.allclose(y[:, -1], y2[:, -1])


@pytest.mark.parametrize("kwargs, message", [
    (dict(d_model=64, heads=5), "d_model=64 is not divisible by heads=5"),
    (dict(heads=4, kv_heads=3, qkv="separate"), "multiple of kv_heads=3"),
    (dict(heads=4, kv_heads=8, qkv="separate"), "multiple of kv_heads=8"),
    (dict(heads=4, kv_heads=2, qkv="fused"), "qkv='fused' needs kv_heads == heads"),
    (dict(d_model=12, heads=4, rope=True), "even head_dim"),
    (dict(norm="batchnorm"), "norm='batchnorm' is not one of layernorm, rmsnorm"),
    (dict(activation="relu"), "activation"),
    (dict(weight_layout="col"), "weight_layout"),
    (dict(softmax="fast"), "softmax"),
    (dict(dtype="f16"), "dtype"),
    (dict(layers=0), "layers must be a positive integer"),
    (dict(seq=True), "seq must be a positive integer"),
    (dict(eps=0.0), "eps must be positive"),
])
def test_invalid_configs(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ModelConfig(**kwargs)


def test_unknown_preset():
    with pytest.raises(ValueError, match="unknown preset 'bert'"):
        preset("bert")


def test_replace_keeps_no_gqa():
    assert tiny_gpt2().replace(heads=2).kv_heads == 2
    assert tiny_llama().replace(heads=8).kv_heads == 2


def test_whole_model_signature(mlir_opt):
    cfg = tiny_llama(layers=1, vocab=64)
    printed = verify(mlir_opt, build_mlir(cfg))
    assert re.search(r"%\w+: tensor<1x4xi64> \{tp.name = \"ids\"\}", printed)
    assert re.search(r"-> tensor<1x4x64xf32>", printed)
    # The f32 arguments after the ids: wte first, then the blocks, ln_f and
    # the untied head (then the RoPE tables).
    names = [n for n, _ in parsed_signature(printed)]
    assert names == [n for n, _ in arg_specs(cfg)][1:]
    assert names[0] == "wte.weight"
    assert names.index("ln_f.weight") + 1 == names.index("lm_head.weight")


def test_vocab_must_not_be_negative():
    with pytest.raises(ValueError, match="vocab must be 0 or a positive integer"):
        ModelConfig(vocab=-1)

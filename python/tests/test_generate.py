"""Generating models: @prefill and @decode with KV caches, greedy argmax in the
graph. The built graphs, run by upstream MLIR (the oracle), must give the same
ids as the numpy reference and as an independent PyTorch implementation, and
logits within 1e-4 relative; Hugging Face directories map onto the graphs."""
import json
import math
import os
import re
import subprocess

import numpy as np
import pytest

from tpmlir import hf, reference
from tpmlir.build import main
from tpmlir.builder import build_mlir
from tpmlir.checkpoint import load_model_dir, read_safetensors_names, save_model_dir
from tpmlir.compare import padded_difference
from tpmlir.config import ModelConfig, rope_attention_factor, tiny_gpt2, tiny_llama
from tpmlir.execute import prompt_calls, run_generate
from tpmlir.params import STEP_INPUTS, cache_specs, checkpoint_names, function_arg_specs, result_specs

STEPS = 4

# Llama 3's RoPE scaling with its original context cut to 80 positions, so
# that a head of 16 (8 frequencies) keeps 2 as they are, blends 1 and
# divides 5 by the factor: every branch of the rule is taken.
LLAMA3_SCALING = json.dumps({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 80})
# Phi-3.5's longrope at a tiny scale: 8 factors for a head of 16, the
# original 16 positions stretched 32-fold (attention factor
# sqrt(1 + ln 32 / ln 16) = 1.5); the model serves 10, so the short ones.
LONGROPE = json.dumps({"rope_type": "longrope", "short_factor": [1.0, 1.1, 1.3, 1.7, 2.2, 3.0, 4.5, 6.0],
                       "long_factor": [1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0],
                       "factor": 32.0, "original_max_position_embeddings": 16})
LONGROPE6 = json.dumps({"rope_type": "longrope", "short_factor": [1.0, 1.2, 1.6, 2.5, 4.0, 6.0],
                        "long_factor": [1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
                        "factor": 32.0, "original_max_position_embeddings": 16})

GEMMA = dict(kv_heads=1, head_dim=32, activation="geglu", norm_plus_one=True, embed_scale=True,
             tie_embeddings=True)
GEMMA2 = dict(GEMMA, kv_heads=2, post_norms=True, query_pre_attn_scalar=24.0, attn_softcap=20.0,
              logit_softcap=10.0)
# Gemma 3: no caps; q and k normed per head; layer 0 slides a window of 4
# (shorter than the prompt) with a RoPE base of its own, layer 1 sees all.
GEMMA3 = dict(GEMMA, kv_heads=2, post_norms=True, qk_norm=True, rope_theta=1e6, sliding_window=4,
              sliding_layers=(0,), rope_local_theta=10000.0)

# Batch 2 throughout; GPT-2 (tied head, learned positions) and Llama with
# GQA (RoPE, untied head), also with Llama 3's scaled RoPE. keep_logits for
# the 1e-4 comparison.
GEN = {
    "gpt2": tiny_gpt2(vocab=96, batch=2, generate=10, keep_logits=True),
    "llama_gqa": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True),
    "llama3_rope": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, rope_scaling=LLAMA3_SCALING),
    # GPT-2's vocabulary divides among no tp size; padded to a multiple of 8.
    "gpt2_padded": tiny_gpt2(vocab=97, batch=2, generate=10, keep_logits=True, pad_vocab=8),
    # Qwen3: heads wider than d_model / heads (q 4 x 32 = 128 of d 64), each
    # head of q and k RMS-normalized before RoPE, a tied head.
    "qwen3": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, head_dim=32, qk_norm=True,
                        tie_embeddings=True),
    # Phi-3: q|k|v in one weight, gate|up in one weight (Linear [out, in]).
    "phi3": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, kv_heads=4, qkv="fused",
                       gate_up="fused"),
    # Phi-4-mini (and Phi-3-medium's GQA): q, k and v sections of 64, 32 and
    # 32 rows in one weight, read apart; RoPE over 12 of each head's 16
    # features, longrope's 6 factors for them; a tied head.
    "phi4_mini": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, qkv="packed", gate_up="fused",
                            rotary_dim=12, tie_embeddings=True, rope_scaling=LONGROPE6),
    # Phi-3.5 (and the 128k Phi-3s): longrope's short factors and its
    # attention factor on cos and sin.
    "phi3_longrope": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, kv_heads=4, qkv="fused",
                                gate_up="fused", rope_scaling=LONGROPE),
    # Gemma: norms scaling by 1 + weight, embeddings times sqrt(d), GeGLU,
    # MQA with heads wider than d / heads, a tied head.
    "gemma": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, **GEMMA),
    # Gemma 2: a norm after the attention and after the MLP too, scores
    # scaled by query_pre_attn_scalar, scores and logits capped (caps low
    # enough that tanh bends them).
    "gemma2": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, **GEMMA2),
    "gemma3": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, **GEMMA3),
    # Mistral: every layer sees its last 3 positions only, its caches a ring
    # of 3 rows: the prompt's (4) last 3 wrap (positions 1, 2 at rows 1, 2,
    # 3 at row 0), and so do the steps.
    "mistral_window": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, sliding_window=3,
                                 sliding_layers=(0, 1)),
    # A ring the prompt fills exactly twice: its last 2 positions in one slice.
    "mistral_window2": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, sliding_window=2,
                                  sliding_layers=(0, 1)),
    # A window longer than the prompt (4) that the steps pass: @decode reads
    # rows [0, pos] of its ring until pos 5, then all 6 (pos 6 at row 0).
    "mistral_window6": tiny_llama(vocab=96, batch=2, generate=10, keep_logits=True, sliding_window=6,
                                  sliding_layers=(0, 1)),
}


def weights_for(cfg: ModelConfig, seed: int = 3) -> dict:
    w = reference.random_weights(cfg, seed)
    # A tied head on unit-scale embeddings predicts the last token again and
    # again; smaller rows make the continuations vary.
    if cfg.tie_embeddings:
        w["wte.weight"] = w["wte.weight"] * np.float32(0.1)
    return w


def hf_twin(cfg: ModelConfig) -> ModelConfig:
    """The same model under Hugging Face names (what the PyTorch code reads)."""
    return cfg.replace(names="hf_gpt2" if cfg.norm == "layernorm" else "hf_llama")


def relative(got: np.ndarray, want: np.ndarray) -> float:
    """Over the vocabulary both have: a padded vocabulary's logits have -inf
    at its padded positions, which PyTorch's have not."""
    compared = padded_difference(got, want)
    assert not isinstance(compared, str), compared
    return compared[0] / compared[1]


def min_gap(logits: np.ndarray) -> float:
    """The smallest margin of the best logit over the second: ids compared
    across implementations mean something only when it is well above 1e-4."""
    top = np.sort(logits, axis=-1)
    return float(np.min(top[..., -1] - top[..., -2]))


# -- the graphs ------------------------------------------------------------------

def _function(printed: str, name: str) -> str:
    start = printed.index(f"func.func @{name}(")
    end = printed.find("func.func @", start + 1)
    return printed[start:end if end > 0 else len(printed)]


def _signature(function_text: str) -> list[tuple[str, str]]:
    header = function_text[:function_text.index(") -> ")]
    # (mlir-opt prints the attributes in name order: tp.checkpoint_shape first)
    return [(re.search(r'tp.name = "([^"]+)"', attrs).group(1), t)
            for t, attrs in re.findall(r"%\w+: (tensor<[^>]*>) \{([^}]*)\}", header)]


def _type(shape, dtype) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


@pytest.mark.parametrize("name", sorted(GEN))
def test_two_functions_verify(mlir_opt, name):
    cfg = GEN[name]
    proc = subprocess.run([mlir_opt, "--verify-each"], input=build_mlir(cfg), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = proc.stdout
    assert "@forward" not in printed
    for function in ("prefill", "decode"):
        text = _function(printed, function)
        names = checkpoint_names(cfg)  # packed q, k, v: the name of the tensor packing them
        want = [(names.get(n, n), _type(s, "i64" if n in STEP_INPUTS else "f32"))
                for n, s in function_arg_specs(cfg, function)]
        assert _signature(text) == want
        results = ", ".join(f'{_type(s, "i64" if n == "next_ids" else "f32")} {{tp.name = "{n}"}}'
                            for n, s in result_specs(cfg))
        assert f") -> ({results})" in text
        # The greedy argmax: one generic with two reduction results over the vocabulary.
        assert re.search(r"linalg.generic .*outs\(.*: tensor<2x1xf32>, tensor<2x1xi64>\)", text)
        assert "arith.cmpf ogt" in text
        assert "rope.cos" not in text
    b, kvh, smax, dh = cfg.batch, cfg.kv_heads, cfg.generate, cfg.head_dim
    # A sliding layer's caches are a ring of its window W < S_max: row p mod W.
    rings = [cfg.cache_length(i) for i in range(cfg.layers) if cfg.cache_length(i) < smax]
    full = cfg.layers - len(rings)
    # prefill writes the prompt's rows at 0 (a ring: its last W, in two
    # slices, never one of all W rows), decode one row at pos (pos mod W).
    prefill = _function(printed, "prefill")
    assert prefill.count(f"[0, 0, 0, 0] [{b}, {kvh}, {cfg.seq}, {dh}] [1, 1, 1, 1] : "
                         f"tensor<{b}x{kvh}x{cfg.seq}x{dh}xf32> into tensor<{b}x{kvh}x{smax}x{dh}xf32>") == 2 * full
    for w in set(rings):
        into = f"into tensor<{b}x{kvh}x{w}x{dh}xf32>"
        assert prefill.count(into) == 2 * rings.count(w) * (2 if cfg.seq >= w else 1), w
    decode = _function(printed, "decode")
    assert len(re.findall(rf"tensor.insert_slice %\S+ into %\S+\[0, 0, %\S+, 0\] \[2, \d+, 1, {dh}\]", decode)) \
        == 2 * cfg.layers
    assert decode.count(f"tensor<{b}x{kvh}x1x{dh}xf32> into tensor<{b}x{kvh}x{smax}x{dh}xf32>") == 2 * full
    # Decode attention batches over kv heads, a group's query heads as rows:
    # the cache is read as it lies, never repeated per query head.
    assert "linalg.broadcast" not in decode
    # It reads the cache's positions [0, pos] only: a slice of each updated
    # cache, pos + 1 long, and scores and probabilities that long; no mask.
    # A ring reads its first min(pos + 1, W) rows: all of them once full.
    pos = re.search(r"(%\S+) = tensor.extract %arg1\[\] : tensor<i64>", decode).group(1)
    pos = re.search(rf"(%\S+) = arith.index_cast {pos} : i64 to index", decode).group(1)
    seen = re.search(rf"%(\S+) = arith.addi {pos}, %c1\S* : index", decode).group(1)
    slices = re.findall(rf"tensor.extract_slice %\S+\[0, 0, 0, 0\] \[{b}, {kvh}, %{seen}, {dh}\] \[1, 1, 1, 1\] "
                        rf": tensor<{b}x{kvh}x{smax}x{dh}xf32> to tensor<{b}x{kvh}x\?x{dh}xf32>", decode)
    assert len(slices) == 2 * full
    for w in set(rings):
        assert len(re.findall(rf"tensor.extract_slice %\S+\[0, 0, 0, 0\] \[{b}, {kvh}, %\S+, {dh}\] \[1, 1, 1, 1\] "
                              rf": tensor<{b}x{kvh}x{w}x{dh}xf32> to tensor<{b}x{kvh}x\?x{dh}xf32>", decode)) \
            == 2 * rings.count(w)
    assert decode.count("arith.minui") == len(set(rings))
    for w in set(rings):
        assert re.search(rf"arith.remui {pos}, %c{w}(_\d+)? : index", decode), w
    g = cfg.heads // kvh
    assert len(re.findall(rf"linalg.batch_matmul ins\(%\S+, %\S+ : tensor<{b * kvh}x{g}x{dh}xf32>, "
                          rf"tensor<{b * kvh}x{dh}x\?xf32>\) outs\(%\S+ : tensor<{b * kvh}x{g}x\?xf32>\)",
                          decode)) == cfg.layers
    assert len(re.findall(rf"linalg.batch_matmul ins\(%\S+, %\S+ : tensor<{b * kvh}x{g}x\?xf32>, "
                          rf"tensor<{b * kvh}x\?x{dh}xf32>\)", decode)) == cfg.layers
    assert "-1.000000e+09" not in decode and f"x{smax}xf32>) outs" not in decode


def test_masked_decode_has_static_shapes(mlir_opt):
    """decode_attention="masked": @decode reads every cached position, with
    the ones past pos masked; no shape in it depends on pos."""
    cfg = GEN["llama_gqa"].replace(decode_attention="masked")
    proc = subprocess.run([mlir_opt, "--verify-each"], input=build_mlir(cfg), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    decode = _function(proc.stdout, "decode")
    b, kvh, smax, dh = cache_specs(cfg)[0][1]  # llama_gqa: no sliding layer
    assert "?" not in decode and f"tensor<{b}x{kvh}x{smax}x{dh}xf32> to" not in decode
    g = cfg.heads // kvh
    masks = re.findall(rf"ins\(%\S+, %arg1 : tensor<{b * kvh}x{g}x{smax}xf32>, tensor<i64>\)", decode)
    assert len(masks) == cfg.layers
    assert len(re.findall(r"arith.cmpi sle, %\S+, %\S+ : i64", decode)) == cfg.layers
    with pytest.raises(ValueError, match="decode_attention is an option of generate"):
        tiny_llama(decode_attention="masked")


def test_logits_are_optional():
    cfg = GEN["llama_gqa"].replace(keep_logits=False)
    assert [n for n, _ in result_specs(cfg)][:2] == ["next_ids", "cache.0.k"]
    assert 'tp.name = "logits"' not in build_mlir(cfg)


def test_hf_names_in_the_graph():
    cfg = hf_twin(GEN["gpt2"])
    text = build_mlir(cfg)
    assert '{tp.name = "transformer.h.0.attn.c_attn.weight"}' in text
    assert '{tp.name = "transformer.wpe.weight"}' in text
    assert '{tp.name = "cache.1.v"}' in text and "lm_head" not in text
    text = build_mlir(hf_twin(GEN["llama_gqa"]))
    assert '{tp.name = "model.layers.1.self_attn.k_proj.weight"}' in text
    assert '{tp.name = "lm_head.weight"}' in text


# -- the references ----------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(GEN))
def test_cache_equals_recomputing(name):
    """The cache changes nothing: each new token's logits equal a forward
    pass over the prompt and the tokens before it."""
    cfg = GEN[name]
    w, prompt = weights_for(cfg), reference.random_input(cfg, 4)
    ids, logits = reference.generate(cfg, w, prompt, STEPS)
    seq = np.concatenate([prompt, ids[:, :-1]], axis=1)
    whole = cfg.replace(seq=seq.shape[1], generate=0, keep_logits=False)
    ww = dict(w)
    if cfg.rope:
        ww["rope.cos"], ww["rope.sin"] = reference.rope_tables(whole)
    want = reference.forward(whole, ww, seq)[:, cfg.seq - 1:]
    assert relative(logits, want) < 1e-5
    np.testing.assert_array_equal(ids, np.argmax(want, axis=-1))
    assert len(np.unique(ids)) > 1  # the continuations vary


def test_reference_refuses():
    cfg = GEN["gpt2"]
    w = weights_for(cfg)
    with pytest.raises(ValueError, match="do not fit the cache of 10"):
        reference.generate(cfg, w, reference.random_input(cfg), 8)
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 96\)"):
        reference.prefill(cfg, w, np.full((2, 4), 96), reference.empty_caches(cfg))


def test_padded_vocabulary():
    """A padded vocabulary: the graph's tables have zero rows after the
    checkpoint's (tp.checkpoint_shape says how many), its padded logits are
    -inf, and its ids are the unpadded model's."""
    cfg = GEN["gpt2_padded"]
    plain = cfg.replace(pad_vocab=0)
    assert cfg.vocab_rows == 104
    w = weights_for(cfg)
    assert w["wte.weight"].shape == (104, 64) and not w["wte.weight"][97:].any()
    text = build_mlir(cfg)
    assert 'tp.checkpoint_shape = array<i64: 97, 64>' in text
    prompt = reference.random_input(cfg, 4)
    ids, logits = reference.generate(cfg, w, prompt, STEPS)
    plain_ids, plain_logits = reference.generate(plain, {k: v[:97] if k == "wte.weight" else v
                                                         for k, v in w.items()}, prompt, STEPS)
    np.testing.assert_array_equal(ids, plain_ids)
    assert logits.shape[-1] == 104 and np.isneginf(logits[..., 97:]).all()
    np.testing.assert_allclose(logits[..., :97], plain_logits, rtol=1e-6, atol=1e-6)
    # A Hugging Face checkpoint holds the unpadded rows.
    twin = hf_twin(cfg)
    assert hf.to_checkpoint(twin, w)["transformer.wte.weight"].shape == (97, 64)
    assert hf.from_checkpoint(twin, hf.to_checkpoint(twin, w))["wte.weight"].shape == (104, 64)


def test_compare_padded_logits(tmp_path, capsys):
    """tpmlir.compare takes a padded vocabulary's logits: the -inf columns
    past the reference's are left out, -inf in both is equal; anything else
    that is not finite, or another shape, fails."""
    from tpmlir.compare import main as compare
    ref = np.arange(12, dtype=np.float32).reshape(2, 6) + 1
    padded = np.concatenate([ref, np.full((2, 2), -np.inf, np.float32)], axis=1)
    cases = [(padded, ref, 0), (padded, padded, 0), (ref, padded, 0),
             (np.where(ref > 6, np.float32(np.nan), ref), ref, 1),
             (np.concatenate([ref, np.zeros((2, 2), np.float32)], axis=1), ref, 1),
             (ref[:1], ref, 1), (ref + 1, ref, 1)]
    for i, (y, want, status) in enumerate(cases):
        np.save(tmp_path / "y.npy", y)
        np.save(tmp_path / "r.npy", want)
        assert compare([str(tmp_path / "y.npy"), str(tmp_path / "r.npy")]) == status, i
    assert "MISMATCH compare: shape (2, 8) != reference (2, 6)" in capsys.readouterr().out


def test_padded_checkpoint_must_hold_the_vocabulary():
    """A checkpoint's table of other rows than the vocabulary's (or the
    padded vocabulary's, taken as it is) is refused, not padded."""
    cfg = hf_twin(GEN["gpt2_padded"])
    w = weights_for(cfg)
    tensors = hf.to_checkpoint(cfg, w)
    stored_padded = {**tensors, "transformer.wte.weight": w["wte.weight"]}
    np.testing.assert_array_equal(hf.from_checkpoint(cfg, stored_padded)["wte.weight"], w["wte.weight"])
    for rows in (90, 105):
        bad = {**tensors, "transformer.wte.weight": np.zeros((rows, 64), np.float32)}
        with pytest.raises(ValueError, match=rf"'wte.weight' is \({rows}, 64\) in the checkpoint; "
                                             r"the model takes \(97, 64\) \(or \(104, 64\), padded\)"):
            hf.from_checkpoint(cfg, bad)


def test_rope_scaling_frequencies():
    """Each branch of Llama 3's rule, and linear scaling, against the plain
    frequencies; the scaled model's logits are not the plain one's (the
    tests comparing them with PyTorch would catch a scaling left out)."""
    cfg = GEN["llama3_rope"]
    plain = reference.rope_inv_freq(cfg.replace(rope_scaling=""), 0)
    scaled = reference.rope_inv_freq(cfg, 0)
    wavelen = 2 * np.pi / plain
    high, low = wavelen < 20, wavelen > 80
    np.testing.assert_array_equal(scaled[high], plain[high])
    np.testing.assert_allclose(scaled[low], plain[low] / 8, rtol=1e-6)
    medium = ~high & ~low
    assert (high.sum(), medium.sum(), low.sum()) == (2, 1, 5)
    assert np.all((scaled[medium] < plain[medium]) & (scaled[medium] > plain[medium] / 8))
    linear = cfg.replace(rope_scaling='{"type": "linear", "factor": 2}')
    assert linear.rope_scaling == '{"factor": 2, "rope_type": "linear"}'
    np.testing.assert_allclose(reference.rope_inv_freq(linear, 0), plain / 2, rtol=1e-6)
    w, prompt = weights_for(cfg), reference.random_input(cfg, 4)
    _, logits = reference.generate(cfg, w, prompt, STEPS)
    _, plain_logits = reference.generate(cfg.replace(rope_scaling=""), w, prompt, STEPS)
    assert relative(plain_logits, logits) > 1e-2


@pytest.mark.parametrize("name, field, plain", [
    ("gemma2", "norm_plus_one", False), ("gemma2", "embed_scale", False), ("gemma2", "query_pre_attn_scalar", 0.0),
    ("gemma2", "attn_softcap", 0.0), ("gemma2", "logit_softcap", 0.0), ("gemma3", "qk_norm", False),
    ("gemma2", "activation", "swiglu"), ("gemma3", "rope_local_theta", 0.0),
    ("mistral_window", "sliding_window", 8)])
def test_gemma_fields_change_the_logits(name, field, plain):
    """Each of Gemma's changes, and a window shorter than the prompt, moves
    the logits well past the tests' 1e-4, so a graph that dropped one would
    fail them (post_norms changes the weights too: the graph's signature
    shows it)."""
    cfg = GEN[name]
    w, prompt = weights_for(cfg), reference.random_input(cfg, 4)
    logits = reference.prefill(cfg, w, prompt, reference.empty_caches(cfg))[1]
    other = reference.prefill(cfg.replace(**{field: plain}), w, prompt, reference.empty_caches(cfg))[1]
    assert relative(other, logits) > 1e-3


@pytest.mark.parametrize("name", sorted(GEN))
def test_torch_matches_numpy(name):
    torch_reference = pytest.importorskip("tpmlir.torch_reference")
    cfg = hf_twin(GEN[name])
    w, prompt = weights_for(cfg), reference.random_input(cfg, 4)
    ids, logits = reference.generate(cfg, w, prompt, STEPS)
    model = torch_reference.load(hf.hf_config(cfg), hf.to_checkpoint(cfg, w))
    tids, tlogits = torch_reference.greedy_generate(model, prompt, STEPS)
    np.testing.assert_array_equal(tids, ids)
    assert relative(tlogits, logits) < 1e-5


# -- the graphs run by upstream MLIR -------------------------------------------------

@pytest.mark.parametrize("attention", ["seen", "masked"])
@pytest.mark.parametrize("name", sorted(GEN))
def test_mlir_generation(mlir_runner, name, attention):
    cfg = GEN[name].replace(decode_attention=attention)
    w, prompt = weights_for(cfg), reference.random_input(cfg, 4)
    got_ids, got_logits = run_generate(cfg, w, prompt, STEPS)
    ids, logits = reference.generate(cfg, w, prompt, STEPS)
    assert min_gap(logits) > 1e-3
    np.testing.assert_array_equal(got_ids, ids)
    assert relative(got_logits, logits) < 1e-4
    try:
        from tpmlir import torch_reference
    except ImportError:
        return
    twin = hf_twin(cfg)
    model = torch_reference.load(hf.hf_config(twin), hf.to_checkpoint(twin, w))
    tids, tlogits = torch_reference.greedy_generate(model, prompt, STEPS)
    np.testing.assert_array_equal(got_ids, tids)
    assert relative(got_logits, tlogits) < 1e-4


# Models whose caches hold every position (no ring), chunked.
CHUNKED = ("gpt2", "llama_gqa", "phi3_longrope", "gemma", "gemma2", "qwen3")


@pytest.mark.parametrize("attention", ["seen", "masked"])
@pytest.mark.parametrize("name", CHUNKED)
def test_chunked_prefill(mlir_runner, name, attention):
    """A prompt of 6 past @prefill's 4: @extend over positions 4 .. 7, 2 of
    them the prompt's (the logits of the chunk's row 1; positions 6 and 7
    written with padding, then by the steps before they are read) gives the
    ids and logits of one prefill over all 6."""
    cfg = GEN[name].replace(decode_attention=attention, chunked_prefill=True)
    w = weights_for(cfg)
    prompt = np.random.default_rng(7).integers(0, cfg.vocab, (cfg.batch, 6))
    assert prompt_calls(6, cfg.seq, cfg.generate) == [("prefill", 0), ("extend", 4)]
    got_ids, got_logits = run_generate(cfg, w, prompt, STEPS)
    ids, logits = reference.generate(cfg.replace(seq=6, chunked_prefill=False), w, prompt, STEPS)
    assert min_gap(logits) > 1e-3
    np.testing.assert_array_equal(got_ids, ids)
    assert relative(got_logits, logits) < 1e-4


# Sliding windows whose caches are rings: of 3 rows (the chunk's last 3 of
# 4 written, wrapping), of 6 (all 4), and Gemma 3's 4 on layer 0 beside a
# full layer.
RING_CHUNKED = ("mistral_window", "mistral_window6", "gemma3")


@pytest.mark.parametrize("length", [8, 11, 13])
@pytest.mark.parametrize("name", RING_CHUNKED)
def test_chunked_prefill_over_rings(mlir_runner, name, length):
    """Prompts of 8 (@extend at 4), 11 (@extend at 4 and at 8, 3 of its 4
    the prompt's: the padding writes no ring row) and 13 (at 4, 8 and 12, 1
    of 4) give the ids and logits of one prefill over all of them."""
    cfg = GEN[name].replace(generate=17, chunked_prefill=True)
    w = weights_for(cfg)
    prompt = np.random.default_rng(length).integers(0, cfg.vocab, (cfg.batch, length))
    got_ids, got_logits = run_generate(cfg, w, prompt, STEPS)
    ids, logits = reference.generate(cfg.replace(seq=length, chunked_prefill=False), w, prompt, STEPS)
    assert min_gap(logits) > 1e-3
    np.testing.assert_array_equal(got_ids, ids)
    assert relative(got_logits, logits) < 1e-4


def test_prompt_calls():
    """A last chunk of 3 runs padded where the caches have rows for all 4;
    where they do not, it runs positions again, or over rings the rest is
    stepped."""
    for rings in (False, True):
        assert prompt_calls(11, 4, 12, rings) == [("prefill", 0), ("extend", 4), ("extend", 8)]
        assert prompt_calls(12, 4, 12, rings) == [("prefill", 0), ("extend", 4), ("extend", 8)]
    assert prompt_calls(11, 4, 11) == [("prefill", 0), ("extend", 4), ("extend", 7)]
    assert prompt_calls(11, 4, 11, rings=True) == [("prefill", 0), ("extend", 4), ("decode", 8), ("decode", 9),
                                                   ("decode", 10)]


@pytest.mark.parametrize("name", ["llama_gqa", "mistral_window"])
def test_last_chunk_without_rows(mlir_runner, name):
    """Caches of exactly the prompt's 11 positions (one new id): no rows for
    a padded last chunk, so it runs positions 7 .. 10 again (llama_gqa) or,
    over rings of 3, positions 8 .. 10 as steps (mistral_window)."""
    cfg = GEN[name].replace(generate=11, chunked_prefill=True)
    w = weights_for(cfg)
    prompt = np.random.default_rng(11).integers(0, cfg.vocab, (cfg.batch, 11))
    got_ids, got_logits = run_generate(cfg, w, prompt, 1)
    ids, logits = reference.generate(cfg.replace(seq=11, chunked_prefill=False), w, prompt, 1)
    np.testing.assert_array_equal(got_ids, ids)
    assert relative(got_logits, logits) < 1e-4


@pytest.mark.parametrize("length", [8, 11])
def test_chunks_after_chunks(mlir_runner, length):
    """Prompts of two whole chunks (@extend at 4) and of three (at 4, then
    at 8, 3 of its 4 the prompt's)."""
    cfg = GEN["llama_gqa"].replace(generate=14, chunked_prefill=True)
    w = weights_for(cfg)
    prompt = np.random.default_rng(length).integers(0, cfg.vocab, (cfg.batch, length))
    got_ids, got_logits = run_generate(cfg, w, prompt, STEPS)
    ids, logits = reference.generate(cfg.replace(seq=length, chunked_prefill=False), w, prompt, STEPS)
    np.testing.assert_array_equal(got_ids, ids)
    assert relative(got_logits, logits) < 1e-4


def test_chunked_prefill_graph():
    """@extend takes the chunk's ids, its first position and how many of its
    tokens are the prompt's (the logits those of the last of them), reads
    the cache's rows [0, pos + 4) and masks the keys past each query's own."""
    text = build_mlir(GEN["llama_gqa"].replace(chunked_prefill=True))
    extend = text[text.index("func.func @extend("):]
    assert re.search(r'tensor<2x4xi64> \{tp.name = "ids"\},\s+%\w+: tensor<i64> \{tp.name = "pos"\},'
                     r'\s+%\w+: tensor<i64> \{tp.name = "valid"\}', extend)
    assert re.search(r"tensor.extract_slice %\w+\[0, %last_row, 0\] \[2, 1, 64\]", extend)
    assert "%chunk = arith.constant 4 : index" in extend
    assert re.search(r"tensor.extract_slice %\w+\[0, 0, 0, 0\] \[2, 2, %seen, 16\]", extend)
    assert extend.count("arith.cmpi sle") == 2  # one mask per layer
    assert "func.func @extend(" not in build_mlir(GEN["llama_gqa"])
    # Over a ring of 3: the ring as it was and the chunk's keys, then two
    # writes of sizes the position and the count give.
    text = build_mlir(GEN["mistral_window"].replace(chunked_prefill=True))
    extend = text[text.index("func.func @extend("):]
    concat = extend.index("tensor.concat dim(2)")
    writes = [m.start() for m in re.finditer(r"tensor.insert_slice %\w+ into %\w+\[0, 0, (?:%\w+|0), 0\] \[2, 2, %\w+, 16\]",
                                             extend)]
    assert len(writes) == 8 and concat < writes[0]  # 2 layers x K, V x 2 slices
    with pytest.raises(ValueError, match="chunked_prefill is an option of generate"):
        tiny_llama(chunked_prefill=True)


# -- Hugging Face model directories ---------------------------------------------------

# (model_type, the tpmlir config it is written from, shards, checkpoint prefix):
# GPT-2 as the hub's original files (no "transformer." prefix, one file); Qwen2
# (biases on q/k/v only, rope_theta 1e6, MQA) sharded with an index.
HF_DIRS = {
    "gpt2": ("gpt2", tiny_gpt2(vocab=96, names="hf_gpt2", name_prefix="", positions=32), 1),
    "qwen2": ("qwen2", tiny_llama(vocab=96, names="hf_llama", kv_heads=1, bias=False, qkv_bias=True,
                                  rope_theta=1e6), 3),
    "phi3": ("phi3", tiny_llama(vocab=96, names="hf_llama", kv_heads=4, qkv="fused", gate_up="fused"), 2),
    "phi4_mini": ("phi3", tiny_llama(vocab=96, names="hf_llama", qkv="packed", gate_up="fused", rotary_dim=12,
                                     tie_embeddings=True, rope_scaling=LONGROPE6), 2),
    # Phi-4-mini's q|k|v as a torch-mlir export reads it: qkv_proj whole,
    # its result sliced in the graph.
    "phi4_mini_sliced": ("phi3", tiny_llama(vocab=96, names="hf_llama", qkv="sliced", gate_up="fused",
                                            rotary_dim=12, tie_embeddings=True), 1),
    "qwen3": ("qwen3", tiny_llama(vocab=96, names="hf_llama", head_dim=8, qk_norm=True, tie_embeddings=True,
                                  rope_theta=1e6), 1),
    "gemma2": ("gemma2", tiny_llama(vocab=96, names="hf_llama", **GEMMA2, sliding_window=3, sliding_layers=(0,)), 2),
    # Gemma 3 4B and larger: the text model's weights inside
    # Gemma3ForConditionalGeneration's checkpoint, beside a vision tower's.
    "gemma3": ("gemma3", tiny_llama(vocab=96, names="hf_llama", name_prefix="model.language_model.", **GEMMA3), 2),
}


def write_hf_dir(tmp_path, name: str) -> tuple[str, ModelConfig]:
    model_type, cfg, shards = HF_DIRS[name]
    w = weights_for(cfg, seed=11)
    tensors = {k: v for k, v in hf.to_checkpoint(cfg, w).items() if not k.startswith("rope.")}
    if model_type == "gpt2":  # as older GPT-2 files do: the attention's mask buffers too
        tensors["h.0.attn.bias"] = np.tril(np.ones((1, 1, 32, 32), dtype=np.float32))
    if model_type == "gemma3":
        tensors["vision_tower.vision_model.post_layernorm.weight"] = np.ones(8, dtype=np.float32)
    config = hf.hf_config(cfg, model_type)
    # Which layers slide from the family's rule rather than layer_types: the
    # even ones (Gemma 2), all but every sliding_window_pattern-th (Gemma 3).
    text = config.get("text_config", config)
    if text.pop("layer_types", None) and model_type == "gemma3":
        text["sliding_window_pattern"] = 2
    model_dir = str(tmp_path / name)
    save_model_dir(model_dir, config, tensors, shards)
    return model_dir, cfg


@pytest.mark.parametrize("name", sorted(HF_DIRS))
def test_hf_dir_generation(tmp_path, mlir_runner, name):
    model_dir, written = write_hf_dir(tmp_path, name)
    out = str(tmp_path / "gen.mlir")
    # A layout no config.json says (how a front-end writes q|k|v): an option.
    layout = {"qkv": "sliced"} if written.qkv == "sliced" else {}
    # The directory stands for its config.json (generate.test passes the file).
    assert main(["--hf-config", model_dir, "--generate", "12", "--seq", "5", "--batch", "2",
                 "--keep-logits", "-o", out, *(a for k, v in layout.items() for a in (f"--{k}", v))]) == 0
    text = open(out).read()
    cfg = hf.read_config(os.path.join(model_dir, "config.json"), seq=5, batch=2, generate=12,
                         keep_logits=True, **layout)
    assert cfg.qkv == written.qkv
    assert text.split("\n", 1)[1] == build_mlir(cfg)
    # Every weight argument is a tensor of the directory, of the same shape.
    tensors = load_model_dir(model_dir)
    weights = {n for n, _ in re.findall(r'\{tp.name = "(([^"c]|c(?!ache\.))[^"]*)"[,}]', text)} - {
        *STEP_INPUTS, "next_ids", "logits"}
    assert weights == set(checkpoint_names(cfg).values())
    assert weights <= set(tensors)
    w = hf.from_checkpoint(cfg, tensors)
    prompt = reference.random_input(cfg, 4)
    got_ids, got_logits = run_generate(cfg, w, prompt, STEPS)
    ids, logits = reference.generate(cfg, w, prompt, STEPS)
    assert min_gap(logits) > 1e-3
    np.testing.assert_array_equal(got_ids, ids)
    assert relative(got_logits, logits) < 1e-4
    torch_reference = pytest.importorskip("tpmlir.torch_reference")
    with open(os.path.join(model_dir, "config.json")) as f:
        model = torch_reference.load(json.load(f), tensors)
    tids, tlogits = torch_reference.greedy_generate(model, prompt, STEPS)
    np.testing.assert_array_equal(got_ids, tids)
    assert relative(got_logits, tlogits) < 1e-4


def test_hf_prefix_follows_the_checkpoint(tmp_path):
    model_dir, _ = write_hf_dir(tmp_path, "gpt2")
    cfg = hf.read_config(os.path.join(model_dir, "config.json"), generate=8)
    assert cfg.name_prefix == "" and checkpoint_names(cfg)["h.0.attn.qkv.weight"] == "h.0.attn.c_attn.weight"
    # Without a checkpoint: save_pretrained's names.
    os.remove(os.path.join(model_dir, "model.safetensors"))
    cfg = hf.read_config(os.path.join(model_dir, "config.json"))
    assert checkpoint_names(cfg)["wte.weight"] == "transformer.wte.weight"
    model_dir, _ = write_hf_dir(tmp_path, "qwen2")
    assert len(os.listdir(model_dir)) == 5
    names = set()
    for k in range(3):
        names |= set(read_safetensors_names(os.path.join(model_dir, f"model-0000{k + 1}-of-00003.safetensors")))
    cfg = hf.read_config(os.path.join(model_dir, "config.json"))
    assert (cfg.kv_heads, cfg.rope_theta, cfg.bias, cfg.qkv_bias) == (1, 1e6, False, True)
    assert set(checkpoint_names(cfg).values()) == names


def test_gemma3_text_model_of_the_multimodal_checkpoint(tmp_path):
    """Gemma3ForConditionalGeneration: the text_config's model under the
    checkpoint's prefix (the hub's language_model.model. when no checkpoint
    says), its vision tower's weights left out; Gemma3TextConfig's defaults
    fill what the text_config leaves out."""
    model_dir, cfg = write_hf_dir(tmp_path, "gemma3")
    got = hf.read_config(os.path.join(model_dir, "config.json"))
    assert got.name_prefix == "model.language_model." and got.qk_norm and got.sliding_layers == (0,)
    os.remove(os.path.join(model_dir, "model.safetensors.index.json"))
    for name in os.listdir(model_dir):
        if name.endswith(".safetensors"):
            os.remove(os.path.join(model_dir, name))
    cfg = hf.read_config(os.path.join(model_dir, "config.json"))
    assert checkpoint_names(cfg)["h.0.attn.q_norm.weight"] == "language_model.model.layers.0.self_attn.q_norm.weight"
    config = hf.hf_config(GEN["gemma3"].replace(names="hf_llama"), "gemma3")
    for key in ("vocab_size", "num_hidden_layers", "layer_types"):
        del config["text_config"][key]
    cfg = hf.config_from_hf(config)
    assert (cfg.vocab, cfg.layers) == (262208, 26)
    with pytest.raises(ValueError, match=re.escape("gemma3: 'text_config' must be an object, not None")):
        hf.config_from_hf({"model_type": "gemma3"})


def test_hf_checkpoint_must_hold_the_weights(tmp_path):
    _, cfg, _ = HF_DIRS["qwen2"]
    tensors = hf.to_checkpoint(cfg, weights_for(cfg))
    del tensors["model.norm.weight"]
    save_model_dir(str(tmp_path), hf.hf_config(cfg), tensors, 2)
    with pytest.raises(ValueError, match="the checkpoint lacks 1 weight.*model.norm.weight"):
        hf.read_config(str(tmp_path / "config.json"))


@pytest.mark.parametrize("change, message", [
    (dict(model_type="bert"), "model_type 'bert' is not one of gpt2, llama, qwen2, qwen3, mistral, phi3, "
                              "gemma, gemma2, gemma3_text, gemma3"),
    # Phi-3 rotates part of a head (Phi-4-mini); Llama's attention would not.
    (dict(partial_rotary_factor=0.75), "llama: partial_rotary_factor 0.75 (RoPE over part of a head) is not supported"),
    (dict(model_type="phi3", partial_rotary_factor=0.7),
     "phi3: partial_rotary_factor 0.7 rotates 11 features of a head, not an even number above 0"),
    (dict(model_type="phi3", partial_rotary_factor=0.05),
     "phi3: partial_rotary_factor 0.05 rotates 0 features of a head, not an even number above 0"),
    (dict(model_type="phi3", partial_rotary_factor=1.5),
     "phi3: partial_rotary_factor 1.5 (RoPE over part of a head) is not supported"),
    (dict(model_type="qwen3", attention_bias=True), "qwen3: attention_bias is not supported"),
    (dict(rope_scaling={"type": "yarn", "factor": 4.0}),
     "llama: rope_scaling of type 'yarn' is not supported (only linear, llama3, longrope)"),
    (dict(rope_scaling={"type": "longrope", "short_factor": [1.0] * 8, "long_factor": [1.0] * 8, "factor": 0}),
     "llama: rope_scaling 'factor' must be a positive number, not 0"),
    (dict(rope_scaling={"type": "longrope", "short_factor": [1.0] * 8, "long_factor": [1.0] * 8,
                        "original_max_position_embeddings": 1}),
     "rope_scaling 'original_max_position_embeddings' must be more than 1"),
    (dict(rope_scaling={"type": "longrope", "short_factor": [1.0] * 8, "factor": 2.0}),
     "llama: rope_scaling 'long_factor' must be a list of positive numbers, not None"),
    (dict(rope_scaling={"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [1.0] * 4, "factor": 2.0}),
     "rope_scaling longrope has 4 factors for 16 rotated features of a head; it needs 8"),
    (dict(rope_scaling={"type": "longrope", "short_factor": [1.0] * 8, "long_factor": [0.0] * 8, "factor": 2.0}),
     "'long_factor' must be a list of positive numbers"),
    (dict(rope_scaling={"type": "longrope", "short_factor": [1.0] * 8, "long_factor": [1.0] * 8},
          original_max_position_embeddings=12, max_position_embeddings=48),
     "rope_scaling longrope: 16 positions pass original_max_position_embeddings 12, past which"),
    (dict(rope_scaling={"rope_type": "llama3", "factor": 8.0}),
     "llama: rope_scaling 'low_freq_factor' must be a positive number, not None"),
    (dict(rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4, "high_freq_factor": 1,
                        "original_max_position_embeddings": 8192}),
     "high_freq_factor (1) must be more than low_freq_factor (4)"),
    (dict(rope_scaling=[8.0]), "rope_scaling must be an object, not [8.0]"),
    (dict(hidden_act="gelu"), "hidden_act 'gelu'"),
    (dict(head_dim=0), "'head_dim' must be a positive integer, not 0"),
    (dict(attention_bias=True), "attention_bias=True with mlp_bias=False"),
    (dict(max_position_embeddings=8), "16 positions are more than the model's 8"),
])
def test_hf_config_refusals(change, message):
    config = {**hf.hf_config(tiny_llama(vocab=96, names="hf_llama")), **change}
    with pytest.raises(ValueError, match=re.escape(message)):
        hf.config_from_hf(config, generate=16)


@pytest.mark.parametrize("change, message", [
    (dict(hidden_activation=None, hidden_act="gelu"), "gemma2: activation 'gelu' (the builder's GeLU is the tanh"),
    (dict(hidden_activation="silu"), "gemma2: activation 'silu'"),
    (dict(attention_bias=True), "gemma2: attention_bias is not supported"),
    (dict(sliding_window=8, layer_types=["full_attention"]), "'layer_types' must list 2 of 'sliding_attention' or "
                                           "'full_attention', not ['full_attention']"),
    (dict(attn_logit_softcapping=-1.0), "'attn_logit_softcapping' must be a positive number, not -1.0"),
])
def test_gemma_config_refusals(change, message):
    config = {**hf.hf_config(tiny_llama(vocab=96, names="hf_llama", **GEMMA2)), **change}
    with pytest.raises(ValueError, match=re.escape(message)):
        hf.config_from_hf(config, generate=16)


def test_phi3_longrope_config():
    """Phi-3.5-mini's rope_scaling: the type and both factor lists, with
    original_max_position_embeddings and max_position_embeddings beside
    it (their ratio the factor); read back as written."""
    config = {**hf.hf_config(GEN["phi3"].replace(names="hf_llama")),
              "rope_scaling": {"type": "longrope", "short_factor": [1.5] * 8, "long_factor": [2.0] * 8},
              "original_max_position_embeddings": 4096, "max_position_embeddings": 131072}
    cfg = hf.config_from_hf(config, generate=4096)
    assert cfg.rope_scaling_params == {"rope_type": "longrope", "short_factor": [1.5] * 8,
                                       "long_factor": [2.0] * 8, "factor": 32.0,
                                       "original_max_position_embeddings": 4096}
    assert rope_attention_factor(cfg.rope_scaling_params) == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))
    written = hf.hf_config(cfg)
    assert written["rope_scaling"] == config["rope_scaling"]
    assert (written["original_max_position_embeddings"], written["max_position_embeddings"]) == (4096, 131072)
    assert hf.config_from_hf(written, generate=4096) == cfg
    # Without a config's own original positions: the object's factor, over
    # max_position_embeddings; an attention factor given wins.
    del config["original_max_position_embeddings"]
    config["rope_scaling"] = {**config["rope_scaling"], "factor": 4.0, "attention_factor": 1.25}
    cfg = hf.config_from_hf(config, generate=64)
    assert cfg.rope_scaling_params["original_max_position_embeddings"] == 131072
    assert rope_attention_factor(cfg.rope_scaling_params) == 1.25
    # Phi-3's older "su" is longrope; a factor that stretches the original
    # positions to no whole count cannot be written back.
    config["rope_scaling"] = {"type": "su", "short_factor": [1.5] * 8, "long_factor": [2.0] * 8}
    config["original_max_position_embeddings"] = 4096
    assert hf.config_from_hf(config, generate=64).rope_scaling_params["rope_type"] == "longrope"
    with pytest.raises(ValueError, match="no whole max_position_embeddings"):
        hf.hf_config(cfg.replace(rope_scaling=json.dumps({**cfg.rope_scaling_params, "factor": 2.5,
                                                          "original_max_position_embeddings": 4095})))


def test_longrope_changes_the_logits():
    """The short factors and the attention factor each change the logits
    (the comparisons with PyTorch would catch either left out)."""
    cfg = GEN["phi3_longrope"]
    w, prompt = weights_for(cfg), reference.random_input(cfg, 4)
    logits = reference.generate(cfg, w, prompt, 2)[1]
    unit = json.dumps({**cfg.rope_scaling_params, "attention_factor": 1.0})
    for other in (cfg.replace(rope_scaling=""), cfg.replace(rope_scaling=unit)):
        assert np.abs(reference.generate(other, w, prompt, 2)[1] - logits).max() > 1e-3


def test_gemma_config_defaults():
    """As transformers' GemmaConfig and Gemma2Config: head_dim 256, a tied
    head; Gemma 2's query_pre_attn_scalar 256 and caps 50 and 30 when
    missing, no cap when null; Gemma 1.0's hidden_act "gelu" overridden by
    its hidden_activation."""
    config = hf.hf_config(tiny_llama(vocab=96, names="hf_llama", **GEMMA2))
    for key in ("head_dim", "query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping",
                "tie_word_embeddings"):
        del config[key]
    cfg = hf.config_from_hf(config)
    assert (cfg.head_dim, cfg.query_pre_attn_scalar, cfg.attn_softcap, cfg.logit_softcap, cfg.tie_embeddings) \
        == (256, 256.0, 50.0, 30.0, True)
    cfg = hf.config_from_hf({**config, "attn_logit_softcapping": None, "final_logit_softcapping": None})
    assert (cfg.attn_softcap, cfg.logit_softcap) == (0.0, 0.0)
    gemma = {**hf.hf_config(tiny_llama(vocab=96, names="hf_llama", **GEMMA)), "hidden_act": "gelu"}
    cfg = hf.config_from_hf(gemma)
    assert (cfg.activation, cfg.post_norms, cfg.attn_scale) == ("geglu", False, pytest.approx(32 ** -0.5))
    del gemma["num_key_value_heads"], config["num_key_value_heads"]  # GemmaConfig's 16, Gemma2Config's 4
    assert (hf.config_from_hf({**gemma, "num_attention_heads": 16}).kv_heads, hf.config_from_hf(config).kv_heads) \
        == (16, 4)
    with pytest.raises(ValueError, match=re.escape("llama has none of Gemma's attn_softcap")):
        hf.hf_config(tiny_llama(vocab=96, names="hf_llama", attn_softcap=5.0))
    with pytest.raises(ValueError, match=re.escape("gemma3_text needs a sliding_window and rope_local_theta")):
        hf.hf_config(GEN["gemma3"].replace(names="hf_llama", rope_local_theta=0.0))
    with pytest.raises(ValueError, match=re.escape("gemma needs post_norms=False")):
        hf.hf_config(GEN["gemma2"].replace(names="hf_llama"), "gemma")
    with pytest.raises(ValueError, match=re.escape("llama has none of Gemma's norm_plus_one, embed_scale")):
        hf.hf_config(GEN["gemma"].replace(names="hf_llama"), "llama")


def test_qwen3_head_dim_defaults_to_128():
    """As transformers' Qwen3Config: 128 when config.json gives none."""
    config = hf.hf_config(GEN["qwen3"].replace(names="hf_llama"))
    assert hf.config_from_hf(config, generate=16).head_dim == 32
    del config["head_dim"]
    assert hf.config_from_hf(config, generate=16).head_dim == 128


def test_hf_layout_refusals():
    with pytest.raises(ValueError, match=re.escape("names='hf_gpt2' needs head_dim = d_model / heads")):
        tiny_gpt2(vocab=96, names="hf_gpt2", head_dim=32)
    with pytest.raises(ValueError, match=re.escape("holds q|k|v and gate|up each in one weight (Phi-3) or neither")):
        tiny_llama(vocab=96, names="hf_llama", kv_heads=4, qkv="fused")
    with pytest.raises(ValueError, match=re.escape("qwen3 needs qk_norm=True")):
        hf.hf_config(tiny_llama(vocab=96, names="hf_llama"), "qwen3")
    with pytest.raises(ValueError, match=re.escape("llama needs qkv 'separate' and gate_up 'separate'")):
        hf.hf_config(GEN["phi3"].replace(names="hf_llama"), "llama")


def test_packed_rows_round_trip():
    """q, k and v, weights and biases, one after the other in one qkv tensor
    and back; a packed tensor of another shape is refused, naming it."""
    cfg = tiny_llama(vocab=96, names="hf_llama", qkv="packed", gate_up="fused", bias=False, qkv_bias=True)
    w = weights_for(cfg)
    tensors = hf.to_checkpoint(cfg, w)
    name = "model.layers.1.self_attn.qkv_proj"
    assert tensors[f"{name}.weight"].shape == (128, 64) and tensors[f"{name}.bias"].shape == (128,)
    np.testing.assert_array_equal(tensors[f"{name}.weight"][64:96], w["h.1.attn.k.weight"])
    np.testing.assert_array_equal(tensors[f"{name}.bias"][96:], w["h.1.attn.v.bias"])
    back = hf.from_checkpoint(cfg, tensors)
    assert sorted(back) == sorted(w)
    for k, v in w.items():
        np.testing.assert_array_equal(back[k], v)
    assert 'tp.checkpoint_shape = array<i64: 128>, tp.checkpoint_offset = 96 : i64' in build_mlir(cfg)
    tensors[f"{name}.weight"] = tensors[f"{name}.weight"][:120]
    with pytest.raises(ValueError, match=re.escape(f"'{name}.weight' is (120, 64) in the checkpoint; the model "
                                                   "packs its q, k and v in (128, 64)")):
        hf.from_checkpoint(cfg, tensors)


@pytest.mark.parametrize("head_dim, rotary", [(16, 12), (44, 30)])
def test_partial_rotary_factor_round_trip(head_dim, rotary):
    """rotary_dim -> partial_rotary_factor -> int(head_dim x factor) gives it
    back, even where rotary / head_dim rounds down (30 / 44)."""
    cfg = tiny_llama(vocab=96, names="hf_llama", qkv="packed", gate_up="fused", head_dim=head_dim,
                     rotary_dim=rotary)
    config = hf.hf_config(cfg)
    assert int(head_dim * config["partial_rotary_factor"]) == rotary
    assert hf.config_from_hf(config, generate=16).rotary_dim == rotary


def test_eos_token_ids_from_the_configs(tmp_path):
    """generation_config.json's eos_token_id, else config.json's: into the
    graph as tp.eos_token_ids; only a generating model takes them."""
    cfg = tiny_llama(vocab=96, names="hf_llama")
    config = {**hf.hf_config(cfg), "eos_token_id": 2}
    assert hf.config_from_hf(config, generate=16).eos_token_ids == (2,)
    assert hf.config_from_hf(config).eos_token_ids == ()
    assert hf.config_from_hf(config, generate=16, generation={"eos_token_id": [5, 7]}).eos_token_ids == (5, 7)
    assert hf.config_from_hf({**config, "eos_token_id": None}, generate=16).eos_token_ids == ()
    with pytest.raises(ValueError, match=re.escape("its eos_token_id must be an id or a list of ids, not 'x'")):
        hf.config_from_hf({**config, "eos_token_id": "x"}, generate=16)
    with pytest.raises(ValueError, match=re.escape("its end ids [96] are not all in the vocabulary [0, 96): "
                                                   "give --eos-token-ids (or '' for none)")):
        hf.config_from_hf({**config, "eos_token_id": 96}, generate=16)
    assert hf.config_from_hf({**config, "eos_token_id": 96}, generate=16, eos_token_ids=()).eos_token_ids == ()
    # A generation config without end ids has none (transformers does not
    # fall back to the model config's then).
    assert hf.config_from_hf(config, generate=16, generation={"do_sample": False}).eos_token_ids == ()
    save_model_dir(str(tmp_path), config, hf.to_checkpoint(cfg, weights_for(cfg)))
    with open(tmp_path / "generation_config.json", "w") as f:
        json.dump({"eos_token_id": [3, 4]}, f)
    cfg = hf.read_config(str(tmp_path / "config.json"), generate=16)
    assert cfg.eos_token_ids == (3, 4)
    assert "module attributes {tp.eos_token_ids = array<i64: 3, 4>} {" in build_mlir(cfg)


def test_sliding_windows_from_the_configs():
    """Mistral slides every layer (4096 when its config says nothing, none
    when null), Gemma 2 the even ones, Gemma 3 five of six, or as
    layer_types says; --layers keeps the windows of the layers it takes.
    A window the positions never pass leaves the graph unmasked."""
    config = {**hf.hf_config(tiny_llama(vocab=96, names="hf_llama"), "mistral"), "sliding_window": 16}
    cfg = hf.config_from_hf(config, generate=17)
    assert (cfg.sliding_window, cfg.sliding_layers) == (16, (0, 1))
    assert hf.config_from_hf({**config, "sliding_window": None}, generate=17).sliding_layers == ()
    del config["sliding_window"]
    assert hf.config_from_hf(config).sliding_window == 4096
    assert build_mlir(hf.config_from_hf(config, generate=16)) == build_mlir(
        hf.config_from_hf(config, generate=16, sliding_window=0, sliding_layers=()))
    gemma2 = hf.hf_config(tiny_llama(vocab=96, names="hf_llama", **GEMMA2).replace(layers=5))
    del gemma2["layer_types"]
    gemma2["sliding_window"] = 8
    assert hf.config_from_hf(gemma2).sliding_layers == (0, 2, 4)
    gemma3 = hf.hf_config(tiny_llama(vocab=96, names="hf_llama", **GEMMA3).replace(layers=8))
    assert hf.config_from_hf(gemma3).sliding_layers == (0,)
    del gemma3["layer_types"]
    cfg = hf.config_from_hf(gemma3)
    assert (cfg.sliding_layers, cfg.rope_local_theta) == ((0, 1, 2, 3, 4, 6, 7), 10000.0)
    assert hf.config_from_hf(gemma3, layers=3).sliding_layers == (0, 1, 2)
    # --sliding-window 0: none (Gemma 3's local base then asked for too); a
    # window without sliding layers: refused.
    cfg = hf.config_from_hf(gemma2, sliding_window=0)
    assert (cfg.sliding_window, cfg.sliding_layers) == (0, ())
    with pytest.raises(ValueError, match=re.escape("--sliding-window 0 would leave them theirs")):
        hf.config_from_hf(gemma3, sliding_window=0)
    cfg = hf.config_from_hf(gemma3, sliding_window=0, rope_local_theta=0.0)
    assert (cfg.sliding_window, cfg.sliding_layers, cfg.rope_local_theta) == (0, (), 0.0)
    with pytest.raises(ValueError, match=re.escape("--sliding-window needs --sliding-layers")):
        hf.config_from_hf(hf.hf_config(tiny_llama(vocab=96, names="hf_llama")), sliding_window=3)
    cfg = hf.config_from_hf(hf.hf_config(tiny_llama(vocab=96, names="hf_llama")), sliding_window=3,
                            sliding_layers=(1,))
    assert (cfg.sliding_window, cfg.sliding_layers) == (3, (1,))
    with pytest.raises(ValueError, match="sliding_window 1 attends to each position alone"):
        hf.config_from_hf({**config, "sliding_window": 1}, generate=16)
    assert hf.config_from_hf({**config, "sliding_window": 1}).sliding_window == 1
    # A global first layer alone: no window, no second RoPE base.
    gemma3["layer_types"] = ["full_attention"] + ["sliding_attention"] * 7
    cfg = hf.config_from_hf(gemma3, layers=1)
    assert (cfg.sliding_window, cfg.sliding_layers, cfg.rope_local_theta) == (0, (), 0.0)
    with pytest.raises(ValueError, match=re.escape("gemma3_text: sliding_window null is not supported")):
        hf.config_from_hf({**gemma3, "sliding_window": None})


def _as_transformers5(config: dict) -> dict:
    """config.json as transformers 5 writes it: RoPE's fields in
    rope_parameters, one object per layer type where the layers' bases differ."""
    config = dict(config)
    scaling = dict(config.pop("rope_scaling", None) or {})
    full = {"rope_type": scaling.pop("type", "default"), **scaling, "rope_theta": config.pop("rope_theta")}
    if "partial_rotary_factor" in config:
        full["partial_rotary_factor"] = config.pop("partial_rotary_factor")
    if "rope_local_base_freq" in config:
        local = {"rope_type": "default", "rope_theta": config.pop("rope_local_base_freq")}
        config["rope_parameters"] = {"full_attention": full, "sliding_attention": local}
    else:
        config["rope_parameters"] = full
    return config


# Gemma 3 4B's RoPE: the full layers' frequencies divided by 8 (linear).
GEMMA3_SCALED = json.dumps({"rope_type": "linear", "factor": 8.0})


@pytest.mark.parametrize("name", ["llama3_rope", "gemma3", "gemma3_scaled", "phi4_mini"])
def test_transformers5_rope_parameters(name):
    """rope_parameters (transformers 5) reads as rope_theta, rope_scaling and
    rope_local_base_freq did, in tpmlir and in the PyTorch oracle (bases
    apart from the families' defaults, so that a field left unread shows);
    a base rope_parameters leaves out comes from rope_theta."""
    cfg = GEN[name.replace("_scaled", "")].replace(names="hf_llama", rope_theta=5e5)
    if cfg.rope_local_theta:
        cfg = cfg.replace(rope_local_theta=2e3, rope_scaling=GEMMA3_SCALED if "scaled" in name else "")
    config = hf.hf_config(cfg)
    new = _as_transformers5(config)
    assert "rope_theta" not in new and "rope_parameters" in new
    fields = dict(seq=cfg.seq, batch=2, generate=10, keep_logits=True)
    assert hf.config_from_hf(new, **fields) == hf.config_from_hf(config, **fields)
    full = new["rope_parameters"].get("full_attention", new["rope_parameters"])
    partial = {**new, "rope_theta": full.pop("rope_theta")}  # the base from rope_theta
    assert hf.config_from_hf(partial, **fields) == hf.config_from_hf(config, **fields)
    torch_reference = pytest.importorskip("tpmlir.torch_reference")
    w, prompt = weights_for(cfg), reference.random_input(cfg, 4)
    tensors = hf.to_checkpoint(cfg, w)
    want = torch_reference.greedy_generate(torch_reference.load(config, tensors), prompt, STEPS)[1]
    for form in (_as_transformers5(config), partial):
        got = torch_reference.greedy_generate(torch_reference.load(form, tensors), prompt, STEPS)[1]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, params, message", [
    ("llama3_rope", {"rope_theta": 1e4, "partial_rotary_factor": 0.5},
     "partial_rotary_factor 0.5 (RoPE over part of a head) is not supported"),
    ("llama3_rope", {"full_attention": {"rope_theta": 1e4}, "sliding_attention": {"rope_theta": 10.0}},
     "rope_parameters differ by layer type, which this family does not"),
    ("gemma3", {"rope_theta": 1e4}, "rope_parameters must be keyed by layer type"),
    ("gemma3", {"full_attention": 5}, "rope_parameters.full_attention must be an object, not 5"),
    ("gemma3", {"full_attention": {}, "sliding_attention": {"rope_type": "linear", "factor": 2.0}},
     "a scaled RoPE on the sliding layers is not supported"),
])
def test_transformers5_rope_refusals(name, params, message):
    config = {**_as_transformers5(hf.hf_config(GEN[name].replace(names="hf_llama"))), "rope_parameters": params}
    with pytest.raises(ValueError, match=re.escape(message)):
        hf.config_from_hf(config)
    with pytest.raises(ValueError, match=re.escape("rope_scaling and rope_parameters are both given")):
        hf.config_from_hf({**config, "rope_scaling": {"rope_type": "linear", "factor": 2.0}})


def test_hf_rope_scaling():
    """Llama 3's rope_scaling goes into the config and back; "default" is none."""
    cfg = GEN["llama3_rope"].replace(names="hf_llama")
    config = hf.hf_config(cfg)
    assert config["rope_scaling"]["rope_type"] == "llama3"
    assert hf.config_from_hf(config, seq=cfg.seq, batch=2, generate=10, keep_logits=True) == cfg
    config["rope_scaling"] = {"rope_type": "default"}
    assert hf.config_from_hf(config).rope_scaling == ""


def test_gpt2_config_refusals():
    config = hf.hf_config(tiny_gpt2(vocab=96, names="hf_gpt2", positions=32))
    assert hf.config_from_hf(config).ffn == 256
    for change, message in [(dict(activation_function="gelu"), "activation_function 'gelu'"),
                            (dict(tie_word_embeddings=False), "tie_word_embeddings false"),
                            (dict(scale_attn_by_inverse_layer_idx=True), "scale_attn_by_inverse_layer_idx")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            hf.config_from_hf({**config, **change})


def _hf_base(family: str) -> dict:
    cfg = tiny_gpt2(vocab=96, names="hf_gpt2", positions=32) if family == "gpt2" else \
        tiny_llama(vocab=96, names="hf_llama")
    return hf.hf_config(cfg)


def _cli_error(capsys, config_path: str, *flags: str) -> str:
    """What `build --hf-config config_path` prints, as an error (exit 2, no traceback)."""
    assert main(["--hf-config", config_path, "-o", os.devnull, *flags]) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("family, change, message", [
    ("gpt2", dict(n_head=None), "'n_head' is missing"),
    ("gpt2", dict(n_embd=None), "'n_embd' is missing"),
    ("gpt2", dict(vocab_size=None), "'vocab_size' is missing"),
    ("gpt2", dict(n_layer=0), "'n_layer' must be a positive integer, not 0"),
    ("llama", dict(intermediate_size=None), "'intermediate_size' is missing"),
    ("llama", dict(num_attention_heads=None), "'num_attention_heads' is missing"),
    ("llama", dict(num_hidden_layers="null"), "'num_hidden_layers' is null"),
    ("llama", dict(rms_norm_eps="x"), "'rms_norm_eps' must be a positive number, not 'x'"),
    ("llama", dict(rope_theta="x"), "'rope_theta' must be a positive number, not 'x'"),
    ("llama", dict(num_key_value_heads=0), "'num_key_value_heads' must be a positive integer, not 0"),
    ("llama", dict(num_key_value_heads=-2), "'num_key_value_heads' must be a positive integer, not -2"),
    ("llama", dict(hidden_size=64.0), "'hidden_size' must be a positive integer, not 64.0"),
    ("llama", dict(tie_word_embeddings="false"), "'tie_word_embeddings' must be true or false, not 'false'"),
])
def test_hf_config_field_errors(tmp_path, capsys, family, change, message):
    """A missing field (None here: left out; "null": JSON null) or one of the
    wrong type or sign: an error naming the file and the field."""
    config = _hf_base(family)
    for key, value in change.items():
        config.pop(key)
        if value is not None:
            config[key] = None if value == "null" else value
    path = str(tmp_path / "config.json")
    with open(path, "w") as f:
        json.dump(config, f)
    assert f"error: {path}: {message}\n" in _cli_error(capsys, path)


def test_hf_kv_heads_missing_or_null_is_mha(tmp_path, capsys):
    config = _hf_base("llama")
    assert config["num_key_value_heads"] == 2
    assert hf.config_from_hf({**config, "num_key_value_heads": None}).kv_heads == 4
    del config["num_key_value_heads"]
    assert hf.config_from_hf(config).kv_heads == 4
    with pytest.raises(ValueError, match="'num_key_value_heads' must be a positive integer, not 0"):
        hf.config_from_hf({**config, "num_key_value_heads": 0})


@pytest.mark.parametrize("text, message", [
    ('{"model_type": "gpt2",\n', "not valid JSON: Expecting property name enclosed in double quotes: line 2"),
    ('{"model_type":\n', "not valid JSON: Expecting value: line 2 column 1"),
    ("[1, 2]", "not a JSON object but list [1, 2]"),
    ('"gpt2"', "not a JSON object but str"),
])
def test_hf_config_file_errors(tmp_path, capsys, text, message):
    path = str(tmp_path / "config.json")
    with open(path, "w") as f:
        f.write(text)
    assert f"error: {path}: {message}" in _cli_error(capsys, path)


@pytest.mark.parametrize("index, message", [
    ('{"metadata": {}}', "'weight_map' is missing"),
    ('{"weight_map": ["model-00001-of-00002.safetensors"]}', "'weight_map' must be an object of tensor names"),
    ('{"weight_map": {\n', "not valid JSON: Expecting property name enclosed in double quotes: line 2"),
])
def test_hf_index_errors(tmp_path, capsys, index, message):
    model_dir, _ = write_hf_dir(tmp_path, "qwen2")
    path = os.path.join(model_dir, "model.safetensors.index.json")
    with open(path, "w") as f:
        f.write(index)
    assert f"error: {path}: {message}" in _cli_error(capsys, os.path.join(model_dir, "config.json"))
    with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
        load_model_dir(model_dir)


def test_hf_checkpoint_errors(tmp_path, capsys):
    """An index naming a tensor no shard holds (found when the weights are
    read, for --expected), and a safetensors file cut short."""
    model_dir, _ = write_hf_dir(tmp_path, "qwen2")
    config = os.path.join(model_dir, "config.json")
    index = os.path.join(model_dir, "model.safetensors.index.json")
    with open(index) as f:
        data = json.load(f)
    data["weight_map"]["model.extra"] = "model-00001-of-00003.safetensors"
    with open(index, "w") as f:
        json.dump(data, f)
    err = _cli_error(capsys, config, "--expected", str(tmp_path / "y.npy"))
    assert f"error: {index} lists tensors no shard holds: model.extra" in err
    shard = os.path.join(model_dir, "model-00002-of-00003.safetensors")
    with open(shard, "wb") as f:
        f.write(b"\x10\x00")
    assert f"error: {shard}: not a safetensors file: unpack requires a buffer of 8 bytes" in \
        _cli_error(capsys, config)
    with open(shard, "wb") as f:
        f.write(b"\x04" + b"\x00" * 7 + b"[1] ")
    assert f"error: {shard}: not a safetensors file: its header is not a JSON object" in \
        _cli_error(capsys, config)


# -- configuration and CLI ------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(generate=8), "generate needs a whole model"),
    (dict(vocab=32, generate=4, seq=8), "the prompt (seq=8) does not fit the cache (generate=4)"),
    (dict(vocab=32, generate=8, causal=False), "generate needs a causal model"),
    (dict(vocab=32, keep_logits=True), "keep_logits is an option of generate"),
    (dict(vocab=32, positions=4, seq=8), "positions=4 is fewer than the 8 positions"),
    (dict(vocab=32, positions=16, rope=True), "exclude each other"),
    (dict(vocab=32, names="hf_gpt2", qkv="separate"), "names='hf_gpt2' needs qkv='fused'"),
    (dict(vocab=32, names="hf_llama"), "names='hf_llama' needs weight_layout='out_in'"),
    (dict(name_prefix=""), "name_prefix is an option of the Hugging Face names"),
    (dict(generate=-1), "generate must be 0 or a positive integer"),
    (dict(rope_scaling='{"type": "linear", "factor": 2}'), "rope_scaling is an option of rope"),
    (dict(pad_vocab=8), "pad_vocab needs a whole model"),
    (dict(vocab=32, pad_vocab=-1), "pad_vocab must be 0 or a positive integer"),
    (dict(rope=True, rope_scaling="llama3"), "rope_scaling must be a JSON object, got 'llama3'"),
])
def test_invalid_generate_configs(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ModelConfig(**kwargs)


def test_learned_positions_only_without_rope():
    assert tiny_gpt2(vocab=32, generate=16).positions == 16
    assert tiny_llama(vocab=32, generate=16).positions == 0


def test_cli_generate_writes_prompt_and_continuation(tmp_path):
    p = {k: str(tmp_path / f"{k}.npy") for k in ("ids", "out")}
    w = str(tmp_path / "w.safetensors")
    assert main(["--preset", "tiny_gpt2", "--vocab", "96", "--generate", "12", "--batch", "2", "-o",
                 str(tmp_path / "m.mlir"), "--weights", w, "--input", p["ids"], "--expected", p["out"],
                 "--steps", "5"]) == 0
    cfg = tiny_gpt2(vocab=96, generate=12, batch=2)
    from tpmlir.checkpoint import load_safetensors
    weights = load_safetensors(w)
    assert list(weights) == [n for n, _ in function_arg_specs(cfg, "prefill")
                             if n not in ("ids",) and not n.startswith("cache.")]
    prompt = np.load(p["ids"])
    assert prompt.shape == (2, 4) and prompt.dtype == np.int64
    out = np.load(p["out"])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, reference.generate(cfg, weights, prompt, 5)[0])
    assert "func.func @decode(" in open(tmp_path / "m.mlir").read()


@pytest.mark.parametrize("argv, message", [
    (["--vocab", "96", "--generate", "12", "--steps", "10"], "the cache of 12 holds 1 to 9 new tokens"),
    (["--vocab", "96", "--steps", "2"], "--steps is an option of --generate"),
    (["--hf-config", "/nonexistent/config.json"], "No such file"),
])
def test_cli_refusals(capsys, argv, message):
    assert main(["--preset", "tiny_gpt2"] + argv) == 2
    assert message in capsys.readouterr().err


def test_cli_hf_weights_keep_checkpoint_names(tmp_path):
    """--weights with --hf-config: random weights under the checkpoint's names."""
    model_dir, _ = write_hf_dir(tmp_path, "qwen2")
    w = str(tmp_path / "w.safetensors")
    assert main(["--hf-config", os.path.join(model_dir, "config.json"), "--generate", "16",
                 "-o", str(tmp_path / "m.mlir"), "--weights", w]) == 0
    assert set(read_safetensors_names(w)) == set(read_safetensors_names(
        os.path.join(model_dir, "model-00001-of-00003.safetensors"))) | set(read_safetensors_names(
            os.path.join(model_dir, "model-00002-of-00003.safetensors"))) | set(read_safetensors_names(
                os.path.join(model_dir, "model-00003-of-00003.safetensors")))


def test_cli_optional_flags(tmp_path):
    """Fields that default to None (qkv_bias, name_prefix) are flags too."""
    out = str(tmp_path / "m.mlir")
    assert main(["--preset", "tiny_llama", "--vocab", "32", "--no-bias", "--qkv-bias", "--names", "hf_llama",
                 "--name-prefix", "", "-o", out]) == 0
    text = open(out).read()
    assert '{tp.name = "layers.0.self_attn.q_proj.bias"}' in text and "o_proj.bias" not in text
    assert "qkv_bias=True" in text.splitlines()[0] and "rope.cos" not in text


# Prompts of 10 and 3 tokens in one batch, left-padded to 10: the second's
# padding (7) fills @prefill's first 4 positions and 3 of @extend's. Over
# rings of 3 and 4 rows the steps' rows hold no padding; over Mistral's 6
# (positions 5 to 10 at the first step) two of them do.
RAGGED = ("gpt2", "llama_gqa", "phi4_mini", "gemma2", "gemma3", "mistral_window", "mistral_window6")


@pytest.mark.parametrize("attention", ["seen", "masked"])
@pytest.mark.parametrize("name", RAGGED)
def test_ragged_batch(mlir_runner, name, attention):
    """Each sequence of a ragged batch gets the ids and logits it gets alone
    (numpy, batch 1): no key of the padding is attended to, and its
    positions (RoPE, learned, a window's ring) count from its first token."""
    cfg = GEN[name].replace(generate=16, chunked_prefill=True, ragged=True, decode_attention=attention,
                            positions=16 if GEN[name].positions else 0)
    w = weights_for(cfg)
    rng = np.random.default_rng(11)
    prompts = [rng.integers(0, cfg.vocab, n) for n in (10, 3)]
    width = max(len(p) for p in prompts)
    padded = np.stack([np.concatenate([np.full(width - len(p), p[0]), p]) for p in prompts])
    got_ids, got_logits = run_generate(cfg, w, padded, STEPS, padding=[width - len(p) for p in prompts])
    ids, logits = reference.generate_alone(cfg, w, prompts, STEPS)
    assert min_gap(logits) > 1e-3
    np.testing.assert_array_equal(got_ids, ids)
    assert relative(got_logits, logits) < 1e-4


def test_ragged_needs_a_ragged_model():
    with pytest.raises(ValueError, match="ragged is an option of generate"):
        tiny_llama(ragged=True)
    with pytest.raises(ValueError, match="build it ragged"):
        run_generate(GEN["gpt2"], {}, np.zeros((2, 4), dtype=np.int64), 1, padding=[0, 1])

"""A Hugging Face model directory with random weights, a prompt, and the
greedy continuations of the numpy reference and of PyTorch (generate.test).

  hf_generation.py model DIR {gpt2,llama,llama3,mistral,qwen3,phi3,phi4,gemma2,gemma3} S_MAX [VOCAB [FLOATS]]
      DIR/config.json and DIR/model.safetensors: 2 layers, vocabulary VOCAB
      (default 96), the weights stored as FLOATS (F32, or BF16 or F16 as
      Llama's and Qwen's checkpoints ship)
      (llama: 4 query heads, 2 kv heads, RoPE; llama3: the same with Llama
      3's rope_scaling, its original context 256 positions, so that of the
      8 frequencies of a head 3 stay, 1 is blended and 4 are divided by the
      factor; qwen3: 4 heads of 32 over a hidden size of 64, q_norm and
      k_norm, tied head; phi3: 4 heads, q|k|v fused in qkv_proj and gate|up
      in gate_up_proj, Phi-3.5's longrope (8 short and long factors, the
      original S_MAX positions stretched 32-fold: cos and sin times
      sqrt(2)); phi4 (Phi-4-mini's layout): phi3 with 2 kv heads, so q|k|v
      sections of 64, 32 and 32 rows in qkv_proj, RoPE over 12 of each head's
      16 features (partial_rotary_factor 0.75, 6 longrope factors), a tied
      head; gemma2: 4 heads of 32 over 2 kv heads, norms
      scaling by 1 + weight before and after the attention and the MLP,
      embeddings times sqrt(64), GeGLU, scores scaled by 24 ** -0.5 and
      capped at 20, logits capped at 10, tied head; gemma3: as gemma2
      without caps, q and k normed per head, layer 0 seeing its last 4
      positions only with a RoPE base of 10^4, layer 1 all with 10^6;
      mistral: the llama model with every layer seeing its last 12
      positions only; gpt2: learned
      positions for S_MAX, tied head).
  hf_generation.py prompt DIR OUT.npy B P [SEED]
      random ids [B, P] inside the vocabulary (SEED: 7).
  hf_generation.py reference DIR PROMPT.npy[,PROMPT.npy...] K PREFIX
      PREFIX.numpy.npy and PREFIX.torch.npy: the new ids [B, K] of the numpy
      reference and of tpmlir.torch_reference (a PyTorch model with a KV
      cache, written from Hugging Face's), which must agree; and
      PREFIX.torch.logits.npy, the logits [B, K, V] each id came from. Of
      several prompts (of different lengths: tp-run's ragged batch), each
      is continued by itself, their rows stacked.
  hf_generation.py forced DIR PROMPT.npy IDS.npy OUT.npy
      OUT.npy: the logits [B, K, V] PyTorch gives the prompt's last position
      and each of the new ids IDS [B, K] but the last, fed in (not its own
      greedy ids: tp-run's sampled ones).
"""
import json
import os
import sys

import numpy as np

from tpmlir import hf, reference, torch_reference
from tpmlir.checkpoint import load_model_dir, save_model_dir
from tpmlir.config import tiny_gpt2, tiny_llama

LLAMA3_SCALING = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0, "original_max_position_embeddings": 256}


def model(model_dir: str, family: str, s_max: int, vocab: int, floats: str):
    if family == "gpt2":
        cfg = tiny_gpt2(vocab=vocab, names="hf_gpt2", name_prefix="", positions=s_max)
    elif family == "llama":
        cfg = tiny_llama(vocab=vocab, names="hf_llama")
    elif family == "phi3":
        longrope = {"rope_type": "longrope", "short_factor": [1.0, 1.1, 1.3, 1.7, 2.2, 3.0, 4.5, 6.0],
                    "long_factor": [1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0], "factor": 32.0,
                    "original_max_position_embeddings": s_max}
        cfg = tiny_llama(vocab=vocab, names="hf_llama", kv_heads=4, qkv="fused", gate_up="fused",
                         rope_scaling=json.dumps(longrope))
    elif family == "phi4":
        longrope = {"rope_type": "longrope", "short_factor": [1.0, 1.2, 1.6, 2.5, 4.0, 6.0],
                    "long_factor": [1.0, 2.0, 4.0, 8.0, 16.0, 32.0], "factor": 32.0,
                    "original_max_position_embeddings": s_max}
        cfg = tiny_llama(vocab=vocab, names="hf_llama", qkv="packed", gate_up="fused", rotary_dim=12,
                         tie_embeddings=True, rope_scaling=json.dumps(longrope))
    elif family == "qwen3":
        cfg = tiny_llama(vocab=vocab, names="hf_llama", head_dim=32, qk_norm=True, tie_embeddings=True)
    elif family == "mistral":
        cfg = tiny_llama(vocab=vocab, names="hf_llama", sliding_window=12, sliding_layers=(0, 1))
    elif family == "gemma3":
        cfg = tiny_llama(vocab=vocab, names="hf_llama", head_dim=32, activation="geglu", norm_plus_one=True,
                         embed_scale=True, tie_embeddings=True, post_norms=True, qk_norm=True, rope_theta=1e6,
                         sliding_window=4, sliding_layers=(0,), rope_local_theta=10000.0)
    elif family == "gemma2":
        cfg = tiny_llama(vocab=vocab, names="hf_llama", head_dim=32, activation="geglu", norm_plus_one=True,
                         embed_scale=True, tie_embeddings=True, post_norms=True, query_pre_attn_scalar=24.0,
                         attn_softcap=20.0, logit_softcap=10.0)
    else:
        cfg = tiny_llama(vocab=vocab, names="hf_llama", rope_scaling=json.dumps(LLAMA3_SCALING))
    w = reference.random_weights(cfg, 5)
    # A tied head on unit-scale embeddings repeats the last token; smaller
    # rows make the continuations vary (smaller still for Gemma, whose graph
    # multiplies the rows by sqrt(d)).
    if cfg.tie_embeddings:
        w["wte.weight"] = w["wte.weight"] * np.float32(0.1 if not cfg.embed_scale else 0.03)
    tensors = {k: v for k, v in hf.to_checkpoint(cfg, w).items() if not k.startswith("rope.")}
    config = hf.hf_config(cfg)
    config["torch_dtype"] = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[floats]
    save_model_dir(model_dir, config, tensors, 1, floats)


def prompt(model_dir: str, out: str, batch: int, length: int, seed: int = 7):
    cfg = hf.read_config(os.path.join(model_dir, "config.json"))
    rng = np.random.default_rng(seed)
    np.save(out, rng.integers(0, cfg.vocab, (batch, length)).astype(np.int64))


def continuations(model_dir: str, ids: np.ndarray, steps: int):
    """The numpy and PyTorch greedy continuations of ids [B, P], and
    PyTorch's logits, checked to agree."""
    config = os.path.join(model_dir, "config.json")
    cfg = hf.read_config(config, batch=ids.shape[0], seq=ids.shape[1],
                         generate=ids.shape[1] + steps)
    tensors = load_model_dir(model_dir)
    numpy_ids, _ = reference.generate(cfg, hf.from_checkpoint(cfg, tensors), ids, steps)
    with open(config) as f:
        torch_model = torch_reference.load(json.load(f), tensors)
    torch_ids, torch_logits = torch_reference.greedy_generate(torch_model, ids, steps)
    if not np.array_equal(numpy_ids, torch_ids):
        sys.exit(f"numpy {numpy_ids} and PyTorch {torch_ids} differ")
    return numpy_ids, torch_ids, torch_logits


def references(model_dir: str, prompt_paths: str, steps: int, prefix: str):
    each = [continuations(model_dir, np.load(path), steps) for path in prompt_paths.split(",")]
    for suffix, part in ((".numpy.npy", 0), (".torch.npy", 1), (".torch.logits.npy", 2)):
        np.save(prefix + suffix, np.concatenate([e[part] for e in each]))


def forced(model_dir: str, prompt_path: str, ids_path: str, out: str):
    prompt, ids = np.load(prompt_path), np.load(ids_path)
    with open(os.path.join(model_dir, "config.json")) as f:
        torch_model = torch_reference.load(json.load(f), load_model_dir(model_dir))
    logits = torch_reference.forced_logits(torch_model, np.concatenate([prompt, ids[:, :-1]], axis=1))
    np.save(out, logits[:, prompt.shape[1] - 1:])


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "model":
        model(args[0], args[1], int(args[2]), int(args[3]) if len(args) > 3 else 96,
              args[4] if len(args) > 4 else "F32")
    elif command == "prompt":
        prompt(args[0], args[1], int(args[2]), int(args[3]), *map(int, args[4:5]))
    elif command == "reference":
        references(args[0], args[1], int(args[2]), args[3])
    elif command == "forced":
        forced(*args)
    else:
        sys.exit(__doc__)

"""A Hugging Face model directory of a published model's shape with random
weights, as people download one, for bench/cpu/hf_model.sh.

    PYTHONPATH=python /usr/bin/python3 bench/cpu/hf_model_inputs.py DIR \
        [--model qwen3_0_6b|gemma3_1b] [--prompt 16] [--steps 32]

DIR/config.json (the model's published config: Qwen3-0.6B's by default, or
Gemma 3 1B's),
DIR/generation_config.json (its end ids), the weights in BF16, as that model
ships them, in two shards with model.safetensors.index.json; and
DIR/prompt.npy (random ids [1, --prompt]) and DIR/expected.npy, the numpy
reference's --steps new ids for them, greedy, end ids ignored (tpmlir's
reference.generate over the BF16 values widened, independent of PyTorch and of
the compiled code). The weights are tpmlir's random ones (seed 0), the tied
embedding scaled by 0.05 so that the continuation varies: on unit-scale rows
every new id is one token, at 0.1 the first six are (the smallest margin of
the best logit over the second, 0.02 at 0.05, stays far above fp32's
rounding).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from tpmlir import hf, reference  # noqa: E402
from tpmlir.checkpoint import load_model_dir, save_model_dir  # noqa: E402

EMBEDDING_SCALE = 0.05

# Published configs (the fields tpmlir reads, as the hub's config.json has
# them), their generation_config.json, and what the report says of them.
MODELS = {
    "qwen3_0_6b": ({"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024,
                    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
                    "intermediate_size": 3072, "num_hidden_layers": 28, "vocab_size": 151936,
                    "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "max_position_embeddings": 40960,
                    "hidden_act": "silu", "tie_word_embeddings": True, "attention_bias": False,
                    "use_sliding_window": False, "sliding_window": None, "torch_dtype": "bfloat16",
                    "bos_token_id": 151643, "eos_token_id": 151645},
                   {"eos_token_id": [151645, 151643]},
                   "Qwen3-0.6B's published shape ({shape}; q_norm and k_norm; RoPE theta 1e6)"),
    "gemma3_1b": ({"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"], "hidden_size": 1152,
                   "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
                   "intermediate_size": 6912, "num_hidden_layers": 26, "vocab_size": 262144,
                   "rms_norm_eps": 1e-6, "rope_theta": 1000000, "rope_local_base_freq": 10000,
                   "rope_scaling": None, "max_position_embeddings": 32768, "query_pre_attn_scalar": 256,
                   "sliding_window": 512, "sliding_window_pattern": 6, "attn_logit_softcapping": None,
                   "final_logit_softcapping": None, "hidden_activation": "gelu_pytorch_tanh",
                   "attention_bias": False, "torch_dtype": "bfloat16", "bos_token_id": 2,
                   "eos_token_id": [1, 106], "pad_token_id": 0},
                  {"eos_token_id": [1, 106]},
                  "Gemma 3 1B's published shape ({shape}; norms scaling by 1 + weight before and after "
                  "the attention and the MLP, q_norm and k_norm, GeGLU, embeddings times sqrt(1152); five "
                  "layers in six attend to their last 512 positions only, with RoPE theta 1e4, the others "
                  "to all, with 1e6)"),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--model", default="qwen3_0_6b", choices=sorted(MODELS))
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--steps", type=int, default=32)
    args = ap.parse_args(argv)
    config, generation, description = MODELS[args.model]
    cfg = hf.config_from_hf(config, generate=args.prompt + args.steps, seq=args.prompt, batch=1)
    w = reference.random_weights(cfg, 0)
    if cfg.tie_embeddings:
        w["wte.weight"] = w["wte.weight"] * np.float32(EMBEDDING_SCALE)
    save_model_dir(args.dir, config, hf.to_checkpoint(cfg, w), 2, "BF16")
    with open(os.path.join(args.dir, "generation_config.json"), "w") as f:
        json.dump(generation, f, indent=2)
    with open(os.path.join(args.dir, "description.txt"), "w") as f:
        f.write(description)
    prompt = np.random.default_rng(1).integers(0, cfg.vocab, (1, args.prompt)).astype(np.int64)
    np.save(os.path.join(args.dir, "prompt.npy"), prompt)
    # The weights as tp-run reads them: the BF16 values, widened.
    stored = hf.from_checkpoint(cfg, load_model_dir(args.dir))
    ids, _ = reference.generate(cfg, stored, prompt, args.steps)
    np.save(os.path.join(args.dir, "expected.npy"), ids)
    print(f"hf_model_inputs: {args.model} in {args.dir}: {len(set(ids[0].tolist()))} distinct ids "
          f"in {args.steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

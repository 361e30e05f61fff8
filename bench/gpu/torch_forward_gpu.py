"""PyTorch eager on the GPU: bench/cpu/torch_forward.py's forward pass on cuda.

    PYTHONPATH=python python3 bench/gpu/torch_forward_gpu.py --preset gpt2_small \
        --layers 12 --seq 128 --weights w.safetensors --input x.npy \
        --expected ref.npy [--dtype f32|bf16] [--iters 20] [--json out.json]

Same ops as torch_forward.py (which mirrors python/tpmlir/reference.py). fp32
with TF32 off (as tp-run-cuda's GEMMs) is checked against the numpy
reference first (rtol 1e-3); bf16 (weights and activations, fp32 accumulation
in cuBLAS) is only timed, its error printed. Times use
torch.cuda.synchronize() around each forward pass. Exits 1 on a mismatch, 2
when torch has no CUDA.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cpu"))  # benchlib, torch_forward
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from benchlib import forward_stats, relative_error, time_calls, write_json  # noqa: E402
from torch_forward import forward  # noqa: E402
from tpmlir.checkpoint import load_safetensors  # noqa: E402
from tpmlir.config import PRESETS, preset  # noqa: E402
from tpmlir.params import param_specs  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="gpt2_small", choices=sorted(PRESETS))
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--d-model", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--kv-heads", type=int)
    ap.add_argument("--ffn", type=int)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--dtype", choices=["f32", "bf16"], default="f32")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("torch_forward_gpu: torch has no CUDA device")
        return 2
    overrides = {k: v for k, v in (("d_model", args.d_model), ("heads", args.heads),
                                   ("kv_heads", args.kv_heads), ("ffn", args.ffn))
                 if v is not None}
    cfg = preset(args.preset, layers=args.layers, seq=args.seq, **overrides)
    torch.backends.cuda.matmul.allow_tf32 = False
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    torch.set_default_device("cuda")
    arrays = load_safetensors(args.weights)
    w = {n: torch.from_numpy(arrays[n]).to("cuda", dtype) for n, _ in param_specs(cfg)}
    x = torch.from_numpy(np.load(args.input)).to("cuda", dtype)
    ref = np.load(args.expected)
    with torch.inference_mode():
        y = forward(cfg, w, x).float().cpu().numpy()
        rel = relative_error(y, ref)
        ok = bool(np.all(np.isfinite(y)) and (args.dtype == "bf16" or rel <= args.rtol))
        if not ok:
            print(f"torch_forward_gpu: MISMATCH relative {rel:.3g} > rtol {args.rtol:g}")
            return 1
        def timed_forward():
            forward(cfg, w, x)
            torch.cuda.synchronize()

        times = time_calls(timed_forward, args.warmup, args.iters)
    tokens = cfg.batch * cfg.seq
    stats = forward_stats(times, tokens)
    med = stats["forward_s"]["median"]
    result = {"impl": "torch-cuda", "dtype": args.dtype, "torch": torch.__version__,
              "device": torch.cuda.get_device_name(), "rel_err": rel, "tokens": tokens,
              **stats}
    print(f"torch_forward_gpu: {args.dtype} relative {rel:.3g}; median {med * 1e3:.3f} ms, "
          f"{tokens / med:.1f} tokens/s")
    write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

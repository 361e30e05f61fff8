"""The front ends' BERT-base graphs through tp-compile with and without
tp-fold-broadcast-into-matmul, timed in the same run (bench/cpu/bert_linears.sh
is the command; see there): torch-mlir's FX graph, whose linears broadcast
the transposed weight to [1, in, out] by a copy, and buddy-mlir's TOSA one,
whose linears reshape it to [1, in, out].

Random weights (normal, std 0.02, seed 0) for every named f32 argument; the
integer inputs as a tokenizer would give them: positions 0..511, token types
0, word ids random below the vocabulary, an attention mask of ones. A graph
whose arguments have no names (buddy's) takes corpus_e2e.py's arguments
(test/Integration/Inputs; its weights std 0.1, the [1, 512] position buffer
0..511, the ids, token types and mask drawn from {0, 1}). Both builds run on
the same checkpoint and inputs; their outputs must agree (rtol 1e-4) before
any timing is used. Then R rounds, the order of the two alternating; each
run is `mpirun -np 1 tp-run --warmup 1 --iters ITERS --report-json`, whose
median forward time, tokens/s and GEMM share (the runtime's own counters:
time inside its GEMMs over the forward time) are kept. Ratios are taken per round
(after over before, same round) and their median reported.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

from tpmlir.checkpoint import save_safetensors


def arguments(model: str):
    """(name, shape, dtype, tp.name or None) of the entry's arguments."""
    text = open(model).read()
    sig = re.search(r"func\.func @\w+\((.*?)\)\s*->", text, re.S).group(1)
    arg = re.compile(r'%[\w.]+:\s*tensor<([0-9x]*)x?(f32|i64|i32|i1)>'
                     r'(?:\s*\{[^}]*tp\.name\s*=\s*"([^"]+)"[^}]*\})?')
    for i, (dims, dtype, name) in enumerate(arg.findall(sig)):
        yield i, tuple(int(d) for d in dims.split("x") if d), dtype, name


def corpus_inputs(model: str, so: str, root: str,
                  work: str) -> tuple[list[str], int]:
    """corpus_e2e.py's arguments for a graph without argument names, written
    to work/w.*; tp-run's flags, and the tokens: the length of the [1, S]
    integer arguments other than the [1, 512] position buffer."""
    sig = list(arguments(model))
    positions = [f"arg{i}" for i, shape, dtype, _ in sig
                 if dtype != "f32" and shape == (1, 512)]
    ids = [shape[1] for _, shape, dtype, _ in sig
           if dtype != "f32" and len(shape) == 2 and shape != (1, 512)]
    if len(positions) != 1 or not ids:
        sys.exit(f"error: {model}: expected one [1, 512] position buffer and "
                 "[1, S] integer inputs (a BERT without argument names)")
    tokens = max(ids)
    prefix = os.path.join(work, "w")
    script = os.path.join(root, "test", "Integration", "Inputs", "corpus_e2e.py")
    run([sys.executable, script, "arguments", so, prefix, "--ids-below", "2",
         *(f for name in positions for f in ("--arange", name))])
    names = open(prefix + ".inputs").read().split()
    return [f for n in names for f in ("--input", f"{n}={prefix}.{n}.npy")], tokens


def make_inputs(model: str, work: str, vocab: int) -> tuple[list[str], int]:
    """Writes work/w.safetensors and one .npy per input; returns tp-run's
    --input flags and the number of tokens (the word ids' elements)."""
    rng = np.random.default_rng(0)
    weights, flags, ints, tokens = {}, [], [], 0
    for i, shape, dtype, name in arguments(model):
        if dtype == "f32" and name:
            weights[name] = (0.02 * rng.standard_normal(shape)).astype(np.float32)
            continue
        ints.append((name or f"arg{i}", shape, dtype))
    # torch-mlir's BERT signatures: the [1, 512] buffers first (position ids,
    # then token type ids, HF's registered buffers), then ids, then the mask.
    for k, (name, shape, dtype) in enumerate(ints):
        n = int(np.prod(shape))
        if len(ints) == 4 and k == 0:
            value = np.arange(n).reshape(shape)
        elif len(ints) == 4 and k == 1:
            value = np.zeros(shape)
        elif len(ints) == 4 and k == 3:
            value = np.ones(shape)
        else:
            value = rng.integers(1, vocab, shape)
            tokens = n
        path = os.path.join(work, f"{name}.npy")
        np.save(path, value.astype({"i64": np.int64, "i32": np.int32}[dtype]))
        flags += ["--input", f"{name}={path}"]
    save_safetensors(os.path.join(work, "w.safetensors"), weights)
    return flags, tokens


def run(cmd, env=None) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        sys.exit(f"error: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r.stdout


# What each front end writes for a linear, by the file's producer.
FORMS = {
    "torchmlir": ("torch-mlir's FX importer", "`linalg.transpose` of the [out, in] "
                  "weight, a broadcast `linalg.generic` to [1, in, out] and "
                  "`linalg.batch_matmul`"),
    "buddy": ("buddy-mlir's TOSA (tosa-to-linalg)", "`tosa.transpose` of the "
              "[out, in] weight, `tosa.reshape` to [1, in, out] and the batched "
              "`tosa.matmul`: `linalg.transpose`, `tensor.expand_shape` and "
              "`linalg.batch_matmul`"),
}


def measure(model, args, bin_dir, env, mpirun):
    """Compiles `model` both ways, checks the outputs agree, times R rounds;
    returns the section of the report."""
    work = os.path.join(args.work, os.path.basename(model).split(".")[0])
    os.makedirs(work, exist_ok=True)
    builds = {"before": ["--fold-broadcast-into-matmul=false"], "after": []}
    compile_s = {}
    for tag, extra in builds.items():
        t = time.monotonic()
        run([os.path.join(bin_dir, "tp-compile"), model, "--tp-size", "1",
             *extra, "-o", os.path.join(work, f"{tag}.so")])
        compile_s[tag] = time.monotonic() - t
    named = any(name for *_, name in arguments(model))
    flags, tokens = (make_inputs(model, work, args.vocab) if named else
                     corpus_inputs(model, os.path.join(work, "before.so"),
                                   args.root, work))

    def tp_run(tag, r, iters, warmup=1):
        out = os.path.join(work, f"{tag}.{r}")
        run([*mpirun, os.path.join(bin_dir, "tp-run"),
             os.path.join(work, f"{tag}.so"), "--weights",
             os.path.join(work, "w.safetensors"), *flags, "--warmup",
             str(warmup), "--iters", str(iters), "--output", out + ".npy",
             "--report-json", out + ".json", "--quiet"], env)
        return json.load(open(out + ".json")), out + ".npy"

    # Correctness gate: the two builds agree.
    _, y0 = tp_run("before", "check", 1, 0)
    _, y1 = tp_run("after", "check", 1, 0)
    compare = run([sys.executable, "-m", "tpmlir.compare", y1, y0]).strip()
    if not compare.startswith("OK"):
        sys.exit(f"error: {model}: the builds disagree: {compare}")

    rounds = []
    for r in range(args.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        rounds.append({tag: tp_run(tag, r, args.iters)[0] for tag in order})

    def med(tag, f):
        return statistics.median(f(rd[tag]) for rd in rounds)

    fwd = lambda j: j["forward_s"]["median"] * 1e3
    # tp-run counts the first rank-2 input, in these BERTs the [1, 512]
    # position buffer or the word embedding: the tokens are the word ids'.
    tps = lambda j: tokens / j["forward_s"]["median"]
    share = lambda j: j["gemm"]["share_of_forward"] * 100
    gemm_ms = lambda j: j["gemm"]["s_per_forward"] * 1e3
    gflops = lambda j: j["gemm"]["gflops"]
    ratios = [tps(rd["after"]) / tps(rd["before"]) for rd in rounds]
    ratio = statistics.median(ratios)

    rows = []
    for tag, label in (("before", "before: `--fold-broadcast-into-matmul=false`"),
                       ("after", "after (default)")):
        rows.append(
            f"| {label} | {med(tag, fwd):.1f} | {med(tag, tps):.1f} | "
            f"{med(tag, gemm_ms):.1f} | {med(tag, share):.1f}% | "
            f"{med(tag, gflops):.1f} | {rounds[0][tag]['gemm']['calls_per_forward']:.0f} | "
            f"{compile_s[tag]:.1f} |")
    share_after = med("after", share)
    producer, form = FORMS.get(os.path.basename(model).split("_")[0],
                               (os.path.basename(model), "as its producer wrote it"))
    inputs = ("random weights (normal, std 0.02, seed 0); inputs: positions "
              "0..511, token types 0, random word ids, a mask of ones" if named else
              "corpus_e2e.py's arguments (weights normal, std 0.1, seed 0; "
              "positions 0..511; ids, token types and mask drawn from {0, 1})")
    return [
        f"## `{os.path.basename(model)}`",
        "",
        f"{producer}: BERT-base, 12 layers, d 768, 12 heads, FFN 3072; {tokens} "
        f"tokens, fp32, {inputs}. Each linear is {form}.",
        "",
        "| build | forward (ms) | tokens/s | GEMM ms / forward | GEMM share | "
        "GEMM GFLOP/s | GEMM calls | compile (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"tokens/s after / before, per round (same run): "
        f"{', '.join(f'{x:.2f}x' for x in ratios)}; median **{ratio:.2f}x**.",
        "",
        "| target (issue 14, item 4) | measured | result |",
        "|---|---:|---|",
        f"| GEMM share of the forward pass ≥ 85% | {share_after:.1f}% | "
        f"{'pass' if share_after >= 85 else '**FAIL**'} |",
        f"| tokens/s ≥ 4x before, same run | {ratio:.2f}x | "
        f"{'pass' if ratio >= 4 else '**FAIL**'} |",
        "",
        f"Correctness: after against before, same weights and inputs: `{compare}`.",
        "",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--cmdline", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--vocab", type=int, default=30522)
    args = ap.parse_args()
    bin_dir = os.path.join(args.root, "build", "bin")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               TPRT_BLAS_THREADS="1")
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "1"]

    sections = [line for model in args.model
                for line in measure(model, args, bin_dir, env, mpirun)]
    lines = [
        "# Front ends' linears at GEMM speed: BERT-base, CPU, tp 1",
        "",
        f"Generated by `{args.cmdline}` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC.",
        "",
        "Models from ../shared/external. Both builds of each from the same "
        "`tp-compile`, `--tp-size 1`; \"before\" turns "
        "`tp-fold-broadcast-into-matmul` off, which leaves each linear's weight "
        "transposed and copied in every forward pass. Each "
        f"row: median over {args.rounds} rounds (order alternating) of each run's "
        f"median over {args.iters} forward passes after 1 warmup, "
        "`mpirun -np 1 tp-run ... --report-json`, one BLAS thread. GEMM time and "
        "share: the runtime's counters (time inside the runtime's GEMMs over the "
        "forward time, rank 0). Tokens/s: the word ids' tokens over the median "
        "forward time (tp-run's own count takes the first rank-2 input: the "
        "[1, 512] position buffer, or buddy's word embedding).",
        "",
        *sections,
        "## Machine and versions",
        "",
        f"- `nproc` {os.cpu_count()}, {platform.processor() or platform.machine()}; "
        f"1-min load average at the end: {os.getloadavg()[0]:.2f} (other builds may "
        "share the cores).",
        "- tp-mlir " + run(["git", "-C", args.root, "rev-parse", "--short", "HEAD"]).strip()
        + ("" if not run(["git", "-C", args.root, "status", "--porcelain",
                          "--untracked-files=no"]).strip() else " (with local changes)"),
        "- Environment: OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1, TPRT_BLAS_THREADS=1.",
        f"- Raw results: `{args.work}`.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.doc != "-":
        open(args.doc, "w").write(text)


if __name__ == "__main__":
    main()

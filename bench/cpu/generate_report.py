"""Turns a bench/cpu/generate.sh results directory into the markdown report.

Called by bench/cpu/generate.sh; prints the report and writes it to --doc
(unless --doc is "-"). Reads r<round>-<kind>.json (kinds tp<N>-b<B>,
torch-b<B>, bw-*), check-*.txt and loadavg.txt from --run, info<B>.json from
--model-dir.

The memory-bandwidth bound of a decode step: the bytes it must read, over
the read bandwidth of the core(s) reading them. Bytes: every weight once
(the LM head reads the whole tied embedding; the lookup's B rows are among
them; of the position table only the step's row), plus the KV cache of
positions 0 .. p for the step at position p, K and V of every layer (what
the compiled graph's decode reads: a slice of p + 1 positions). At tp N a
rank reads its shard: the column- and row-cut matrices, the embedding's rows
of its vocabulary part and the cut biases divided by N, the norms and the
row-cut layers' biases whole, and its kv heads' part of the cache. The
step is taken at the median position of the decode steps (the measured
numbers are medians over the steps too). Bandwidth: bench/cpu/read_bw.c on
huge pages, one core (tp 1), and per core with both cores reading at once
(tp 2).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_forward_report import cpu_model, openblas_info, sh  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from tpmlir.config import preset  # noqa: E402
from tpmlir.params import param_specs  # noqa: E402

MIB = 1024.0 * 1024.0


def load(path):
    with open(path) as f:
        return json.load(f)


def med(values):
    return statistics.median(values)


def field(report: dict, *names, default=None):
    """The first of `names` the report has (tp-run's field names may vary)."""
    for name in names:
        if name in report:
            return report[name]
    return default


def weight_bytes_per_step(cfg, tp: int) -> float:
    """Bytes of weights one rank reads per decode step (see the module doc)."""
    total = 0
    for name, shape in param_specs(cfg):
        n = 1
        for d in shape:
            n *= d
        if name == "wpe.weight":
            n = shape[1]  # the step's position row
        elif len(shape) == 2 or name.endswith((".attn.qkv.bias", ".mlp.up.bias")):
            n = n / tp  # column- or row-cut matrices, vocabulary-cut embedding, cut biases
        total += 4 * n
    return total


def kv_bytes_per_step(cfg, tp: int, pos: int) -> float:
    """Bytes of K and V one rank reads at position pos (positions 0 .. pos)."""
    return 4.0 * 2 * cfg.layers * cfg.batch * (cfg.kv_heads / tp) * (pos + 1) * cfg.head_dim


def pair_gbps(run: str, kind: str, r: int, when: int):
    """Per-core bandwidth of the two read_bw copies run just before (0) or after (1)."""
    paths = [f"{run}/r{r}-{kind}-pair{when}-{c}.json" for c in "ab"]
    if not all(os.path.exists(x) for x in paths):
        return None  # a run of the script before the brackets
    return statistics.mean(load(x)["median_gbps"] for x in paths)


def host_rounds(p, run, rounds, batches, tp, step_s, bws, bound) -> None:
    """Each tp-2 run against the bandwidth both cores got just around it."""
    have = [(r, b) for b in batches for r in rounds
            if pair_gbps(run, f"tp2-b{b}", r, 0) is not None]
    if not have:
        return
    p("## tp 2 and what the host gave both cores")
    p("")
    p("On a VM the host decides what its cores read together, and that can change within "
      "seconds (docs/generation.md, item 10: two cores at once reading as much as one alone "
      "each, or little more than one together). Each tp-2 run is bracketed by a read_bw "
      "pair, one copy per core (512 MiB, 5 passes, huge pages), just before and just after it. A run counts as on "
      "full bandwidth when both pairs got at least 90% of that round's one-core bandwidth each. "
      "A pair takes a tenth of a second and a run several: the brackets say what the cores got "
      "around a run, not during it, and the rows show how far that predicts the run.")
    p("")
    p("| batch | round | tp 1 step (ms) | tp 2 step (ms) | tp 2 / tp 1 | both cores around the run "
      "(GB/s each, before / after) | one core (GB/s) | tp 2 of its bound at the pairs' mean |")
    p("|---:|---:|---:|---:|---:|---:|---:|---:|")
    full, shared = {}, {}
    for b in batches:
        s1, s2 = step_s(tp[(1, b)]), step_s(tp[(2, b)])
        for i, r in enumerate(rounds):
            before, after = (pair_gbps(run, f"tp2-b{b}", r, w) for w in (0, 1))
            if before is None or after is None:
                continue
            one = bws[("1", "huge")][i]
            ratio = s1[i] / s2[i]
            at_bound = bound[(2, b)]["bytes"] / ((before + after) / 2 * 1e9) / s2[i]
            (full if min(before, after) >= 0.9 * one else shared).setdefault(b, []).append(ratio)
            p(f"| {b} | {r} | {s1[i] * 1e3:.1f} | {s2[i] * 1e3:.1f} | {ratio:.2f}x | "
              f"{before:.1f} / {after:.1f} | {one:.1f} | {at_bound * 100:.0f}% |")
    p("")

    def span(v):
        return f"{min(v):.2f}x" if len(v) == 1 else f"{min(v):.2f}x–{max(v):.2f}x"
    for b in batches:
        parts = []
        if b in full:
            parts.append(f"{span(full[b])} in the {len(full[b])} round(s) on full bandwidth")
        if b in shared:
            parts.append(f"{span(shared[b])} in the {len(shared[b])} other(s)")
        p(f"- batch {b}: tp 2 ran " + "; ".join(parts) + ".")
    p("")

def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    for a in ("run", "model-dir", "batches", "command", "date", "start-load", "end-load", "compile-note",
              "tp-compile", "tp-run", "cc", "root", "doc"):
        ap.add_argument("--" + a, required=True)
    for a in ("rounds", "have-generate", "layers", "vocab", "pad-vocab", "generate", "seq", "steps"):
        ap.add_argument("--" + a, type=int, required=True)
    args = ap.parse_args(argv)
    run, rounds = args.run, range(1, args.rounds + 1)
    batches = [int(b) for b in args.batches.split()]
    have_gen = bool(args.have_generate)

    # --- bandwidth --------------------------------------------------------------
    def bw(copies: str, pages: str) -> list[float]:
        if copies == "1":
            return [load(f"{run}/r{r}-bw-1-{pages}.json")["median_gbps"] for r in rounds]
        return [statistics.mean(load(f"{run}/r{r}-bw-2{c}-{pages}.json")["median_gbps"] for c in "ab")
                for r in rounds]
    bws = {(c, p): bw(c, p) for c in "12" for p in ("huge", "4k")}
    huge_share = min(load(f)["huge_share"] for f in glob.glob(f"{run}/r*-bw-*-huge.json"))
    gbps_4k = {tp: med(bws[(str(tp), "4k")]) * 1e9 for tp in (1, 2)}
    gbps = {tp: max(med(bws[(str(tp), "huge")]) * 1e9, gbps_4k[tp]) for tp in (1, 2)}

    # --- runs ---------------------------------------------------------------------
    def runs(kind):
        return [load(f"{run}/r{r}-{kind}.json") for r in rounds]
    torch = {b: runs(f"torch-b{b}") for b in batches}
    tp = {(n, b): runs(f"tp{n}-b{b}") for n in (1, 2) for b in batches} if have_gen else {}
    checks = {}
    for path in sorted(glob.glob(f"{run}/check-*.txt")):
        checks[os.path.basename(path)[6:-4]] = open(path).read().strip()
    loads = []
    with open(f"{run}/loadavg.txt") as f:
        for line in f:
            loads.append(float(line.split()[2]))
    info = {b: load(f"{args.model_dir}/info{b}.json") for b in batches}

    def step_s(reports):  # per round: that run's median decode step
        return [field(x, "decode_step_s", "decode_step_median_s") if not isinstance(
            field(x, "decode_step_s"), dict) else x["decode_step_s"]["median"] for x in reports]

    def fastest_s(reports):  # the fastest decode step over every run
        return min(x["decode_step_min_s"] if "decode_step_min_s" in x else min(x["decode_step_all_s"])
                   for x in reports)

    def ttft_s(reports):
        return [field(x, "ttft_s", "time_to_first_token_s") for x in reports]

    # Median decode position: steps t = 1 .. steps-1 at positions seq + t - 1.
    positions = [args.seq + t - 1 for t in range(1, args.steps)]
    mid = int(med(positions))

    out = []
    p = out.append
    p("# CPU generation: compiled tp 1 / tp 2 vs PyTorch eager and the memory-bandwidth bound")
    p("")
    p(f"Generated by `{args.command}` on {args.date}. Each number: median over {args.rounds} interleaved "
      "rounds (order rotated every round) of each run's own median over its decode steps (time to first "
      "token: one per run); the spread is the min–max of the per-round values; the fastest step is the "
      "quickest single decode step of all runs (what a step costs when nothing else competes for the "
      "core; the verdicts use the medians).")
    p("")
    p(f"Model: GPT-2-small shapes, `python -m tpmlir.build --preset gpt2_small --layers {args.layers} "
      f"--vocab {args.vocab} --pad-vocab {args.pad_vocab} --generate {args.generate} --seq {args.seq} "
      "--batch B` (d 768, 12 heads, ffn 3072, learned positions, LM head tied to the embedding; the "
      f"checkpoint holds a vocabulary of {args.vocab} rows, GPT-2's, which the graph pads to a multiple of "
      f"{args.pad_vocab}, as Megatron-LM pads it, so that 2 ranks cut it: `tp-run` pads the rows with zeros "
      "and the padded positions' logits are -inf), fp32, "
      f"a cache of {args.generate} positions, a prompt of {args.seq} random ids, {args.steps} new tokens "
      f"(one prefill, {args.steps - 1} decode steps at positions {positions[0]}–{positions[-1]}), greedy. "
      "Weights: tpmlir's random ones (seed 0) with the embedding scaled by 0.1 "
      "(`bench/cpu/generate_inputs.py`).")
    p("")

    rows = []  # (batch, name, threads, ttft list, step list, key)
    for b in batches:
        rows.append((b, f"PyTorch {torch[b][0]['torch']} eager, KV cache (`torch_generate.py`)", "1",
                     ttft_s(torch[b]), step_s(torch[b]), "torch", fastest_s(torch[b])))
        if have_gen:
            rows.append((b, "compiled, tp 1 (`tp-run --generate`, 1 rank)", "1 BLAS",
                         ttft_s(tp[(1, b)]), step_s(tp[(1, b)]), "tp1", fastest_s(tp[(1, b)])))
            rows.append((b, "compiled, tp 2 (`tp-run --generate`, 2 ranks)", "2 ranks × 1 BLAS",
                         ttft_s(tp[(2, b)]), step_s(tp[(2, b)]), "tp2", fastest_s(tp[(2, b)])))

    bound = {}
    for b in batches:
        cfg = preset("gpt2_small", layers=args.layers, vocab=args.vocab, pad_vocab=args.pad_vocab,
                     generate=args.generate, seq=args.seq, batch=b)
        for n in (1, 2):
            w = weight_bytes_per_step(cfg, n)
            kv = kv_bytes_per_step(cfg, n, mid)
            kv_smax = kv_bytes_per_step(cfg, n, args.generate - 1)
            bound[(n, b)] = {"weights": w, "kv": kv, "kv_smax": kv_smax, "bytes": w + kv,
                             "step_s": (w + kv) / gbps[n], "step_4k_s": (w + kv) / gbps_4k[n]}

    p("## Decode and time to first token")
    p("")
    p("| batch | implementation | threads | time to first token (ms) | decode step (ms) | "
      "decode tokens/s per sequence | decode tokens/s, batch | spread (batch tokens/s) | vs PyTorch | "
      "of the bound | fastest step (ms) |")
    p("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    summary = {}
    for b, name, th, tt, st, key, fast in rows:
        s = med(st)
        summary[(key, b)] = {"ttft": med(tt), "step": s, "tps": 1 / s, "tps_batch": b / s}
    for batch in batches:
        for b, name, th, tt, st, key, fast in rows:
            if b != batch:
                continue
            s = summary[(key, b)]
            vs = s["tps"] / summary[("torch", b)]["tps"]
            n = 2 if key == "tp2" else 1
            of_bound = f"{bound[(n, b)]['step_s'] / s['step'] * 100:.0f}%" if key != "torch" else \
                f"{bound[(1, b)]['step_s'] / s['step'] * 100:.0f}% (tp 1's)"
            p(f"| {b} | {name} | {th} | {s['ttft'] * 1e3:.0f} | {s['step'] * 1e3:.1f} | {s['tps']:.2f} | "
              f"{s['tps_batch']:.1f} | {min(b / x for x in st):.1f}–{max(b / x for x in st):.1f} | "
              f"{vs:.2f}x | {of_bound} | {fast * 1e3:.1f} |")
        for n in (1, 2):
            bd = bound[(n, batch)]
            p(f"| {batch} | *bound, tp {n}: {bd['bytes'] / 1e6:.0f} MB per step per rank at "
              f"{gbps[n] / 1e9:.2f} GB/s* | | | {bd['step_s'] * 1e3:.1f} | {1 / bd['step_s']:.2f} | "
              f"{batch / bd['step_s']:.1f} | | | 100% | |")
    p("")
    if not have_gen:
        p(f"**The compiled rows are missing**: this `tp-run` (`{args.tp_run}`) has no `--generate` yet "
          "(issue 12, item 5); the script skips them and reports PyTorch and the bound alone.")
        p("")
    p("Correctness: every PyTorch run's ids equal numpy's `reference.generate` token for token "
      "(`torch_generate.py` checks before it writes a number)"
      + ("; compiled, round 1: " + "; ".join(f"{k} `{v}`" for k, v in checks.items()) if checks else "")
      + ". The expected continuations: "
      + "; ".join(f"batch {b}: {min(info[b]['distinct_ids'])}–{max(info[b]['distinct_ids'])} distinct ids "
                  f"per sequence, smallest top-2 logit margin {info[b]['min_top2_gap']:.2g} "
                  f"(logits up to {info[b]['max_abs_logit']:.2g})" for b in batches) + ".")
    p("")

    # --- the bound -----------------------------------------------------------------
    p("## The memory-bandwidth bound")
    p("")
    p("| | tp 1 (1 core) | tp 2 (per core, both reading) |")
    p("|---|---:|---:|")
    for pages, label in (("huge", "huge pages"), ("4k", "4 KiB pages")):
        v1, v2 = bws[("1", pages)], bws[("2", pages)]
        p(f"| read bandwidth, {label} (GB/s; spread over rounds) | {med(v1):.2f} ({min(v1):.2f}–{max(v1):.2f}) | "
          f"{med(v2):.2f} ({min(v2):.2f}–{max(v2):.2f}) |")
    p(f"| read bandwidth of the bound (GB/s; the larger) | {gbps[1] / 1e9:.2f} | {gbps[2] / 1e9:.2f} |")
    for b in batches:
        p(f"| batch {b}: weights read per step, per rank (MB) | {bound[(1, b)]['weights'] / 1e6:.1f} | "
          f"{bound[(2, b)]['weights'] / 1e6:.1f} |")
        p(f"| batch {b}: KV read at position {mid} (MB; all {args.generate} positions: "
          f"{bound[(1, b)]['kv_smax'] / 1e6:.1f} / {bound[(2, b)]['kv_smax'] / 1e6:.1f}) | "
          f"{bound[(1, b)]['kv'] / 1e6:.1f} | {bound[(2, b)]['kv'] / 1e6:.1f} |")
        p(f"| batch {b}: bound decode step (ms); at 4 KiB pages' bandwidth | "
          f"{bound[(1, b)]['step_s'] * 1e3:.1f}; {bound[(1, b)]['step_4k_s'] * 1e3:.1f} | "
          f"{bound[(2, b)]['step_s'] * 1e3:.1f}; {bound[(2, b)]['step_4k_s'] * 1e3:.1f} |")
    p("")
    p(f"`bench/cpu/read_bw.c` ({args.cc} -O3 -march=native -ffast-math): the median of 10 passes summing "
      f"a 1 GiB float32 array (the L3 is 32 MiB), vectorised by clang with 4 AVX-512 accumulators, so "
      "the loop never limits the pass (numpy's float32 sum runs at its build's SIMD width, SSE2 in "
      "Debian's, and cannot ask for huge pages). Huge pages: `madvise(MADV_HUGEPAGE)` before the first "
      f"touch ({huge_share * 100:.0f}% of the array got them, in the run that got the fewest); 4 KiB "
      "pages: what `malloc` gives a large buffer. "
      "The bound takes the larger of the two, the machine's bandwidth; in this VM 4 KiB pages' TLB "
      "misses have cost from a few percent (idle) to half of it (both cores busy). "
      "Two copies at once (one per core) give the per-core bandwidth while both ranks stream their "
      "shards. Bytes: the module doc of `bench/cpu/generate_report.py`; fp32 weights, "
      "at tp 2 the cut matrices and the embedding halved, the norms and two biases per layer whole.")
    p("")

    # --- tp-run's own numbers ------------------------------------------------------------
    if have_gen:
        p("## Compiled runs: collectives and memory per rank")
        p("")
        p("| batch | tp | collectives per decode step | GEMM share of a step | collectives' share | "
          "bytes of the bound / step (GB/s) | GEMM rate, est. (GFLOP/s) | cache (MiB per rank) | "
          "weights (MiB per rank) | peak RSS (MiB) |")
        p("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for b in batches:
            for n in (1, 2):
                x = tp[(n, b)][0]
                coll = field(x, "collectives_per_step", "collectives_per_decode_step", default={})
                if isinstance(coll, dict):  # {"all_reduce": 27, "all_reduce_bytes": ..., ...}
                    parts = []
                    for k, v in coll.items():
                        calls = v.get("calls") if isinstance(v, dict) else v
                        if calls and not k.endswith("_bytes"):
                            nbytes = coll.get(f"{k}_bytes")
                            parts.append(f"{k} {calls:g}" + (f" ({nbytes / 1024:.0f} KiB)" if nbytes else ""))
                    coll = ", ".join(parts) or "none"
                num = lambda v: f"{v:.1f}" if isinstance(v, (int, float)) else "?"  # noqa: E731
                share = med([field(y, "gemm_share_of_decode", default=0.0) or 0.0 for y in tp[(n, b)]])
                comm = [field(y, "comm_share_of_decode") for y in tp[(n, b)]]
                comm = f"{med(comm) * 100:.1f}%" if None not in comm else "–"
                step = summary[(f"tp{n}", b)]["step"]
                # 2 flops per weight per sequence (the attention's few are left out).
                rate = 2 * b * bound[(n, b)]["weights"] / 4 / (step * share) / 1e9 if share else 0.0
                p(f"| {b} | {n} | {coll} | {share * 100:.0f}% | {comm} | "
                  f"{bound[(n, b)]['bytes'] / step / 1e9:.1f} | "
                  f"{rate:.1f} | {num(field(x, 'cache_mib_per_rank', 'cache_mib'))} | "
                  f"{num(field(x, 'weights_mib_per_rank', 'weights_local_mib'))} | "
                  f"{num(max(field(y, 'peak_rss_mib', default=0) or 0 for y in tp[(n, b)]))} |")
        p("")

    # --- targets -----------------------------------------------------------------------
    p("## Targets (issue 12, item 8)")
    p("")
    p("| batch | target | measured | result |")
    p("|---:|---|---:|---|")

    def verdict(ok, miss):
        return "**met**" if ok else f"**not met** ({miss})"
    for b in batches:
        if not have_gen:
            for t in ("tp 1 decode ≥ 80% of the bound", "tp 1 decode ≥ 1.5x PyTorch eager (1 thread)",
                      "tp 2 decode ≥ 1.7x tp 1"):
                p(f"| {b} | {t} | – | not measured (no `tp-run --generate`) |")
            continue
        s1, s2, st = summary[("tp1", b)], summary[("tp2", b)], summary[("torch", b)]
        of_bound = bound[(1, b)]["step_s"] / s1["step"]
        vs_torch = s1["tps"] / st["tps"]
        speedup = s2["tps"] / s1["tps"]
        p(f"| {b} | tp 1 decode ≥ 80% of the bound | {of_bound * 100:.1f}% | "
          f"{verdict(of_bound >= 0.8, f'{(0.8 - of_bound) * 100:.1f} points short')} |")
        p(f"| {b} | tp 1 decode ≥ 1.5x PyTorch eager (1 thread) | {vs_torch:.2f}x | "
          f"{verdict(vs_torch >= 1.5, f'{1.5 - vs_torch:.3f}x short')} |")
        p(f"| {b} | tp 2 decode ≥ 1.7x tp 1 | {speedup:.2f}x | "
          f"{verdict(speedup >= 1.7, f'{1.7 - speedup:.3f}x short')} |")
    p("")
    # What the memory allows tp 2 over tp 1 here: a decode step that streams its bytes at the
    # bandwidth cannot scale past the ratio of the two bounds.
    caps = {b: bound[(1, b)]["step_s"] / bound[(2, b)]["step_s"] for b in batches}
    ceilings = ", ".join(f"{caps[b]:.2f}x at batch {b}" for b in batches)
    # With tp 1 as measured, what tp 2 at its own bound would give.
    reach = ("" if not have_gen else
             " Over tp 1 as measured, tp 2 at its own bound would run " +
             ", ".join(f"{summary[('tp1', b)]['step'] / bound[(2, b)]['step_s']:.2f}x at batch {b}"
                       for b in batches) + ".")
    p(f"The bandwidth bounds cap tp 2 over a tp 1 that runs at its bound at {ceilings} in this "
      f"run: both cores reading at once got {2 * gbps[2] / 1e9:.1f} GB/s together against "
      f"{gbps[1] / 1e9:.1f} GB/s for one alone, and a step that streams its bytes at the "
      "bandwidth scales no further." + reach)
    p("")
    if have_gen:
        host_rounds(p, run, rounds, batches, tp, step_s, bws, bound)

    # --- notes -------------------------------------------------------------------------
    p("## Notes")
    p("")
    copies = []
    for b in batches:
        cfg = preset("gpt2_small", layers=args.layers, vocab=args.vocab, pad_vocab=args.pad_vocab,
                     generate=args.generate, seq=args.seq, batch=b)
        copies.append(f"{kv_bytes_per_step(cfg, 1, mid) / 1e6:.0f} MB at batch {b}")
    p(f"- PyTorch grows its cache by `torch.cat` every step, as transformers' default cache does: at "
      f"position {mid} each step copies the whole cache ({', '.join(copies)}, read and written again) "
      f"on top of reading the {bound[(1, batches[0])]['weights'] / 1e6:.0f} MB of weights. Its prefill "
      "computes the LM head for the last position only (`logits_to_keep=1`, as `generate()` does).")
    bmax = max(batches)
    gflop = 2 * bmax * bound[(1, bmax)]["weights"] / 4 / 1e9  # 2 flops per weight per sequence
    peaks = {w: load(os.path.join(run, f"fma-{w}.json"))
             for w in ("native", "avx2") if os.path.exists(os.path.join(run, f"fma-{w}.json"))}
    at_peak = "; ".join(
        f"{peaks[w]['max_gflops']:.0f} GFLOP/s on {peaks[w]['lanes']}-float vectors "
        f"({'-march=native' if w == 'native' else 'AVX2, the width of OpenBLAS Haswell kernels'}), "
        f"{gflop / peaks[w]['max_gflops'] * 1e3:.1f} ms" for w in peaks)
    p(f"- The bound counts bytes only. At batch {bmax} a decode step is also {gflop:.1f} GFLOP of "
      "matrix products (2 per weight per sequence); at one core's multiply-add peak, measured in "
      "this run by `bench/cpu/fma_peak.c`, that is " + (at_peak or "(not measured)") + ". "
      "The runtime's register tiles multiply from the L2 at 150-200 GFLOP/s (8 rows; a /tmp "
      "timing), so at this batch the products fit under the bound: what a step loses against it "
      "is the weights' read under the tiles (docs/generation.md, item 10 of the C++ side's "
      "state).")
    if have_gen:
        def share(n, b):
            return med([field(y, "gemm_share_of_decode", default=0.0) or 0.0 for y in tp[(n, b)]])
        for b in batches:
            f1 = [r for r in rows if r[0] == b and r[5] == "tp1"][0][6]
            f2 = [r for r in rows if r[0] == b and r[5] == "tp2"][0][6]
            comm = [field(y, "comm_share_of_decode") for y in tp[(2, b)]]
            comm = "–" if None in comm else f"{med(comm) * 100:.1f}%"
            p(f"- tp 2, batch {b}: GEMMs are {share(2, b) * 100:.0f}% of a step against "
              f"{share(1, b) * 100:.0f}% at tp 1; the 27 all-reduces, waiting in them for the other "
              f"rank included, {comm}; the rest is the compiled loops. The fastest single "
              f"steps: {f2 * 1e3:.1f} ms at tp 2, {f1 * 1e3:.1f} ms at "
              f"tp 1 ({f1 / f2:.2f}x). Two ranks on two cores "
              "leave nothing for anything else: each time another process runs, one rank stops and the "
              "other waits for it.")
        p("- The blocks' [in, out] weights, which only the runtime's GEMMs read, are laid out "
          "by `tp-run` in column panels of 32 (`tp-panel-weights` marks them in the manifest; "
          "docs/runtime.md, \"Weights in panels\"): at any batch tiles of c held in registers read "
          "each panel as one stream, prefetching 16 KiB ahead (runtime/lib/Panels.cpp), and the "
          "prefill's products take the same tiles over L2-sized groups of panels. The tied LM head, "
          "the embedding [V, d] read transposed, is laid out as the panels of its transpose, and the "
          "compiled lookup reads each token's row there (a column of a panel, 32 floats apart). "
          "Each product of the attention's batch prefetches the next one's operand. "
          "docs/bench-small-m-gemm.md times each path against OpenBLAS.")
        p("- `tp-run` asks for huge pages (`madvise(MADV_HUGEPAGE)`, runtime/lib/Buffers.cpp) for "
          "every buffer of 2 MiB or more (the weights and caches a step streams); the bound's "
          "bandwidth and the 4 KiB one are in the bandwidth table.")
    p("- Both cores of this machine are shared with whatever else runs (builds and test suites of other "
      "worktrees); the load averages below say how busy it was (a 1-min load above 2 means processes "
      "waited for a core). All ratios are of numbers taken in the same run.")
    p("")

    # --- environment ------------------------------------------------------------------
    head = sh(["git", "rev-parse", "--short", "HEAD"], cwd=args.root)
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=args.root)
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    p("## Machine and versions")
    p("")
    p(f"- Machine: `nproc` {ncpu}, {cpu_model()}, Linux {platform.release()}; transparent huge pages "
      f"`{sh(['cat', '/sys/kernel/mm/transparent_hugepage/enabled'])}`.")
    p(f"- Load: 1/5/15-min load average at start {args.start_load}, at end {args.end_load}; 1-min load "
      f"before each measurement: min {min(loads):.2f}, max {max(loads):.2f}.")
    version = sh([args.tp_compile, "--version"]).splitlines() if os.access(args.tp_compile, os.X_OK) \
        else ["not built"]
    p(f"- tp-mlir {head}{' (with uncommitted changes to tracked files)' if dirty else ''}; "
      f"tp-compile: {version[0] if version else '?'}"
      + (f"; compile: {args.compile_note}" if args.compile_note else "") + ".")
    p(f"- {sh(['mpirun', '--version']).splitlines()[0]}; OpenBLAS: {openblas_info()}; "
      f"{sh([args.cc, '--version']).splitlines()[0]}.")
    t0 = torch[batches[0]][0]
    p(f"- Python {t0['python']}, numpy {t0['numpy']}, torch {t0['torch']} (`torch.set_num_threads(1)`).")
    env = ", ".join(f"{k}={os.environ[k]!s}" if k in os.environ else f"{k} unset"
                    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                              "TPRT_BLAS_THREADS"))
    p(f"- Environment: {env}.")
    p(f"- Raw results: `{run}`.")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.doc != "-":
        with open(args.doc, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

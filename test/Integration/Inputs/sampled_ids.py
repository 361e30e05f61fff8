"""Replays the draws of `tp-run --generate --temperature` (the stream and the
steps runtime/include/tprt/sampler.h writes down) over the logits it wrote
with the ids: each id must be the one its logits and the seeded stream give,
drawn per step for each sequence in order (SEED one integer), or each
sequence from its own stream (SEED one per sequence, separated by commas);
and some must differ from their logits' argmax (the draws were taken, not the
greedy ids).

  sampled_ids.py IDS.npy LOGITS.npy T K P SEED[,SEED...] [--min-p M]
                 [--repetition-penalty R --prompt PROMPT.npy]
    ->  "sampled ids: [B, T], N not the argmax"

K 0: no top-k; P 1: no top-p; T 0: no draw, the argmax of the penalized
logits (a repetition penalty alone). Exit 1 at the first id that differs."""
import argparse
import math
import sys

import numpy as np

MASK = (1 << 64) - 1


class Stream:
    """splitmix64; uniform(): its top 53 bits times 2^-53."""

    def __init__(self, seed: int):
        self.state = seed & MASK

    def uniform(self) -> float:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return ((z ^ (z >> 31)) >> 11) * 2.0 ** -53


def _sum(p, ids) -> float:  # left to right, as the C++ loop adds
    total = 0.0
    for i in ids:
        total += p[i]
    return total


def draw(logits: np.ndarray, seen, a, stream: Stream) -> int:
    values = [float(v) for v in logits]  # float32 to double, exactly
    for i in set(seen):
        values[i] = values[i] / a.penalty if values[i] > 0 else values[i] * a.penalty
    largest = max(values)
    if a.temperature == 0:
        return values.index(largest)
    p = [math.exp((v - largest) / a.temperature) for v in values]
    top_k, top_p = a.top_k, a.top_p
    kept = [i for i in range(len(p)) if p[i] > 0]
    likeliest = lambda ids: sorted(ids, key=lambda i: (-p[i], i))
    if top_k and top_k < len(kept):
        kept = sorted(likeliest(kept)[:top_k])
    if top_p < 1:
        bound, running = top_p * _sum(p, kept), 0.0
        for j, i in enumerate(likeliest(kept)):
            running += p[i]
            if running >= bound:
                kept = sorted(likeliest(kept)[:j + 1])
                break
    kept = [i for i in kept if p[i] >= a.min_p]
    u, running = stream.uniform() * _sum(p, kept), 0.0
    for i in kept:
        running += p[i]
        if u < running:
            return i
    return kept[-1]


def main():
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("ids_path")
    parser.add_argument("logits_path")
    parser.add_argument("temperature", type=float)
    parser.add_argument("top_k", type=int)
    parser.add_argument("top_p", type=float)
    parser.add_argument("seed", type=lambda text: [int(s) for s in text.split(",")])
    parser.add_argument("--min-p", dest="min_p", type=float, default=0.0)
    parser.add_argument("--repetition-penalty", dest="penalty", type=float, default=1.0)
    parser.add_argument("--prompt")
    a = parser.parse_args()
    ids, logits = np.load(a.ids_path), np.load(a.logits_path)
    batch, steps = ids.shape
    if logits.shape[:2] != (batch, steps):
        sys.exit(f"{a.logits_path}: logits {list(logits.shape)} are not [{batch}, {steps}, V]")
    if (a.penalty != 1) != bool(a.prompt):
        sys.exit("--repetition-penalty and --prompt go together")
    seen = [list(row) for row in np.load(a.prompt)] if a.prompt else [[] for _ in range(batch)]
    if len(a.seed) not in (1, batch):
        sys.exit(f"{len(a.seed)} seeds for a batch of {batch}")
    streams = [Stream(seed) for seed in a.seed]
    greedy = 0
    for t in range(steps):
        for b in range(batch):
            want = draw(logits[b, t], seen[b], a, streams[b % len(streams)])
            if ids[b, t] != want:
                sys.exit(f"{a.ids_path}: sequence {b}, new id {t}: {ids[b, t]}, the draw gives {want}")
            seen[b].append(want)
            greedy += int(want == int(np.argmax(logits[b, t])))
    if greedy == batch * steps:
        sys.exit(f"{a.ids_path}: every id is its logits' argmax: the draws are not tested")
    print(f"sampled ids: [{batch}, {steps}], {batch * steps - greedy} not the argmax")


if __name__ == "__main__":
    main()

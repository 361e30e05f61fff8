"""Replays the draws of `tp-run --generate --temperature` (the stream and the
steps runtime/include/tprt/sampler.h writes down) over the logits it wrote
with the ids: each id must be the one its logits and the seeded stream give,
drawn per step for each sequence in order; and some must differ from their
logits' argmax (the draws were taken, not the greedy ids).

  sampled_ids.py IDS.npy LOGITS.npy T K P SEED  ->  "sampled ids: [B, T], N not the argmax"

K 0: no top-k; P 1: no top-p. Exit 1 at the first id that differs."""
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


def draw(logits: np.ndarray, temperature: float, top_k: int, top_p: float, stream: Stream) -> int:
    values = [float(v) for v in logits]  # float32 to double, exactly
    largest = max(values)
    p = [math.exp((v - largest) / temperature) for v in values]
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
    u, running = stream.uniform() * _sum(p, kept), 0.0
    for i in kept:
        running += p[i]
        if u < running:
            return i
    return kept[-1]


def main(ids_path, logits_path, temperature, top_k, top_p, seed):
    ids, logits = np.load(ids_path), np.load(logits_path)
    batch, steps = ids.shape
    if logits.shape[:2] != (batch, steps):
        sys.exit(f"{logits_path}: logits {list(logits.shape)} are not [{batch}, {steps}, V]")
    stream, greedy = Stream(int(seed)), 0
    for t in range(steps):
        for b in range(batch):
            want = draw(logits[b, t], float(temperature), int(top_k), float(top_p), stream)
            if ids[b, t] != want:
                sys.exit(f"{ids_path}: sequence {b}, new id {t}: {ids[b, t]}, the draw gives {want}")
            greedy += int(want == int(np.argmax(logits[b, t])))
    if greedy == batch * steps:
        sys.exit(f"{ids_path}: every id is its logits' argmax: the draws are not tested")
    print(f"sampled ids: [{batch}, {steps}], {batch * steps - greedy} not the argmax")


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])

//===- sampler.h - drawing the next token from a step's logits ---*- C++
//-*-===//
//
// What tp-run --generate --temperature does instead of the greedy argmax
// (library tprt_loader): a draw from the softmax of a step's logits divided
// by a temperature, cut to the top-k, the top-p and the min-p of it, after
// a repetition penalty, as Hugging Face's RepetitionPenaltyLogitsProcessor,
// TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper and
// MinPLogitsWarper do, in that order. Every
// rank holds the same logits (the LM head's combine gathers them) and the
// same seeded stream, so every rank draws the same ids without
// communicating. The stream and each step of a draw are written down here
// so that another implementation can replay them exactly
// (test/Integration/Inputs/sampled_ids.py does).
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SAMPLER_H
#define TPRT_SAMPLER_H

#include "tprt/loader.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tprt {

struct Sampling {
  /// > 0: the logits are divided by it; 0: no draw, the likeliest id (ties:
  /// the lower), what a repetition penalty alone asks (Hugging Face's
  /// greedy search with one).
  double temperature = 1.0;
  /// > 0: only the k most likely ids may be drawn; 0: all.
  int64_t topK = 0;
  /// In (0, 1]: only the most likely ids whose probabilities (after top-k)
  /// first sum to at least top-p may be drawn.
  double topP = 1.0;
  /// In [0, 1]: only the ids (after top-p) at least min-p times as likely as
  /// the likeliest may be drawn; 0: all.
  double minP = 0;
  /// > 0: before the rest, the logit of every id the sequence holds (its
  /// prompt's and its new ids) divided by it where positive, multiplied by
  /// it where not; 1: none.
  double repetitionPenalty = 1.0;
  /// The stream's start: one stream for the batch, drawn from in sequence
  /// order (a sequence's ids depend on the others'), unless `seeds`.
  uint64_t seed = 0;
  /// One seed per sequence, each sequence its own stream: its ids are those
  /// it would be drawn alone (at batch 1 with `seed` its seed), whatever
  /// else is in the batch; one seed: the batch's, as `seed`; empty: `seed`.
  std::vector<uint64_t> seeds;

  /// Whether the ids are drawn (not the penalized argmax).
  bool draws() const { return temperature > 0; }
  /// Why the sampling cannot draw for `batch` sequences: more than one of
  /// `seeds`, but not one per sequence.
  std::optional<std::string> whyNotFor(int64_t batch) const;
};

/// Hugging Face's sampling settings from a generation_config.json (what
/// `model.generate(do_sample=True)` uses): `temperature`, `top_k`, `top_p`,
/// `min_p`, `repetition_penalty`, each as GenerationConfig defaults it when
/// absent (1, 50, 1, none, 1) or null (none); `do_sample` is not read. A
/// field of the wrong type or out of range (as GenerationConfig takes them:
/// a temperature >= 0, top-p and min-p in [0, 1]) is an error naming the
/// file and the field.
Expected<Sampling> readGenerationConfig(const std::string &path);

/// One draw per call, from a splitmix64 stream started at the seed, or from
/// one of several, one per sequence.
class TokenSampler {
public:
  explicit TokenSampler(const Sampling &sampling)
      : sampling(sampling),
        states(sampling.seeds.empty() ? std::vector<uint64_t>{sampling.seed}
                                      : sampling.seeds) {}

  /// An id of `logits` [vocab] (fp32, -inf: never drawn) of a sequence that
  /// holds the ids `seen` (its prompt and new ids so far), in doubles:
  ///   l_i becomes l_i / R if l_i > 0 else l_i * R for each id i of `seen`
  ///   (once however often it is there), for a repetition penalty R;
  ///   with a temperature of 0, the first id of the largest l_i, no draw;
  ///   p_i = exp((l_i - max_j l_j) / T) for the ids kept, at first those
  ///   of p_i > 0; "likelier": a larger p, or an equal p and a lower id;
  ///   top-k: the k likeliest kept; top-p: of those, the likeliest in
  ///   order until their running sum (in that order) reaches top-p times
  ///   their sum (in id order), all of them if it never does;
  ///   min-p: of those, the ids of p_i >= min-p (the likeliest's p is 1);
  ///   u = uniform() times the kept ids' sum, then the first kept id, in
  ///   id order, whose running sum exceeds u (the last if none does).
  /// -1 when no logit is finite or one is NaN. No cut sorts the
  /// vocabulary: a draw without them is two passes over it (three with a
  /// repetition penalty).
  /// Drawn from the stream of `sequence` (the one stream when there is
  /// one); -1 too for a sequence past the seeds.
  int64_t draw(const float *logits, int64_t vocab,
               const std::vector<int64_t> &seen = {}, size_t sequence = 0);

  /// The next double in [0, 1) of the stream of `sequence` (which must have
  /// one): the top 53 bits of splitmix64's next value times 2^-53.
  double uniform(size_t sequence = 0);

private:
  /// The state of the stream of `sequence`; null past the seeds.
  uint64_t *stateOf(size_t sequence) {
    size_t stream = states.size() == 1 ? 0 : sequence;
    return stream < states.size() ? &states[stream] : nullptr;
  }

  Sampling sampling;
  std::vector<uint64_t> states;
  /// A draw's work, kept between draws (a vocabulary of 262144: 4 MB).
  std::vector<double> probabilities;
  std::vector<int64_t> candidates;
  std::vector<std::pair<double, int64_t>> likeliest;
};

} // namespace tprt

#endif // TPRT_SAMPLER_H

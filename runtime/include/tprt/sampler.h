//===- sampler.h - drawing the next token from a step's logits ---*- C++
//-*-===//
//
// What tp-run --generate --temperature does instead of the greedy argmax
// (library tprt_loader): a draw from the softmax of a step's logits divided
// by a temperature, cut to the top-k and the top-p of it, as Hugging Face's
// TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper do. Every
// rank holds the same logits (the LM head's combine gathers them) and the
// same seeded stream, so every rank draws the same ids without
// communicating. The stream and each step of a draw are written down here
// so that another implementation can replay them exactly
// (test/Integration/Inputs/sampled_ids.py does).
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SAMPLER_H
#define TPRT_SAMPLER_H

#include <cstdint>
#include <utility>
#include <vector>

namespace tprt {

struct Sampling {
  /// > 0: the logits are divided by it.
  double temperature = 1.0;
  /// > 0: only the k most likely ids may be drawn; 0: all.
  int64_t topK = 0;
  /// In (0, 1]: only the most likely ids whose probabilities (after top-k)
  /// first sum to at least top-p may be drawn.
  double topP = 1.0;
  uint64_t seed = 0;
};

/// One draw per call, from a splitmix64 stream started at the seed.
class TokenSampler {
public:
  explicit TokenSampler(const Sampling &sampling)
      : sampling(sampling), state(sampling.seed) {}

  /// An id of `logits` [vocab] (fp32, -inf: never drawn), in doubles:
  ///   p_i = exp((l_i - max_j l_j) / T) for the ids kept, at first those
  ///   of p_i > 0; "likelier": a larger p, or an equal p and a lower id;
  ///   top-k: the k likeliest kept; top-p: of those, the likeliest in
  ///   order until their running sum (in that order) reaches top-p times
  ///   their sum (in id order), all of them if it never does;
  ///   u = uniform() times the kept ids' sum, then the first kept id, in
  ///   id order, whose running sum exceeds u (the last if none does).
  /// -1 when no logit is finite or one is NaN. Neither cut sorts the
  /// vocabulary: a draw without them is one pass over it.
  int64_t draw(const float *logits, int64_t vocab);

  /// The next double in [0, 1): the top 53 bits of splitmix64's next value
  /// times 2^-53.
  double uniform();

private:
  Sampling sampling;
  uint64_t state;
  /// A draw's work, kept between draws (a vocabulary of 262144: 4 MB).
  std::vector<double> probabilities;
  std::vector<int64_t> candidates;
  std::vector<std::pair<double, int64_t>> likeliest;
};

} // namespace tprt

#endif // TPRT_SAMPLER_H

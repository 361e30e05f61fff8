//===- Sampler.cpp - drawing the next token from a step's logits ----------===//

#include "tprt/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace tprt {

double TokenSampler::uniform() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return double(z >> 11) * 0x1.0p-53;
}

/// The sum of p over `ids`, in their order.
static double sum(const std::vector<double> &p,
                  const std::vector<int64_t> &ids) {
  double total = 0;
  for (int64_t id : ids)
    total += p[size_t(id)];
  return total;
}

int64_t TokenSampler::draw(const float *logits, int64_t vocab) {
  double largest = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < vocab; ++i) {
    if (std::isnan(logits[i]))
      return -1;
    largest = std::max(largest, double(logits[i]));
  }
  if (!std::isfinite(largest))
    return -1;
  std::vector<double> &p = probabilities;
  std::vector<int64_t> &kept = candidates; // ascending ids
  p.resize(size_t(vocab));
  kept.clear();
  for (int64_t i = 0; i < vocab; ++i) {
    p[size_t(i)] =
        std::exp((double(logits[i]) - largest) / sampling.temperature);
    if (p[size_t(i)] > 0)
      kept.push_back(i);
  }
  // (-p, id): in ascending order the likelier first (a tie: the lower id),
  // compared without reading p through the ids.
  auto rank = [&](const std::vector<int64_t> &ids) {
    likeliest.clear();
    for (int64_t id : ids)
      likeliest.emplace_back(-p[size_t(id)], id);
  };
  auto keep = [&](size_t n) {
    kept.clear();
    for (size_t j = 0; j < n; ++j)
      kept.push_back(likeliest[j].second);
    std::sort(kept.begin(), kept.end());
  };
  // The k likeliest, found without sorting the vocabulary.
  if (sampling.topK > 0 && size_t(sampling.topK) < kept.size()) {
    rank(kept);
    std::nth_element(likeliest.begin(), likeliest.begin() + sampling.topK,
                     likeliest.end());
    keep(size_t(sampling.topK));
  }
  // The likeliest ids in order until their running sum reaches top-p of
  // the total: sorted in prefixes growing 8-fold (a peaked distribution
  // reaches it within the first), each the same ids as a full sort's.
  if (sampling.topP < 1) {
    double bound = sampling.topP * sum(p, kept);
    rank(kept);
    for (size_t n = std::min<size_t>(64, likeliest.size());;
         n = std::min(likeliest.size(), 8 * n)) {
      auto end = likeliest.begin() + std::ptrdiff_t(n);
      if (n < likeliest.size())
        std::nth_element(likeliest.begin(), end, likeliest.end());
      std::sort(likeliest.begin(), end);
      double running = 0;
      size_t cut = 0;
      for (size_t j = 0; j < n && !cut; ++j)
        if ((running -= likeliest[j].first) >= bound)
          cut = j + 1;
      if (cut) {
        keep(cut);
        break;
      }
      if (n == likeliest.size()) // rounding: all of them
        break;
    }
  }
  if (kept.empty()) // a temperature that is not > 0
    return -1;
  double u = uniform() * sum(p, kept), running = 0;
  for (int64_t id : kept)
    if (u < (running += p[size_t(id)]))
      return id;
  return kept.back();
}

} // namespace tprt

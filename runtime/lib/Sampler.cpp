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
  std::vector<double> p(static_cast<size_t>(vocab));
  std::vector<int64_t> kept; // ascending ids
  for (int64_t i = 0; i < vocab; ++i) {
    p[size_t(i)] =
        std::exp((double(logits[i]) - largest) / sampling.temperature);
    if (p[size_t(i)] > 0)
      kept.push_back(i);
  }
  auto likelier = [&](int64_t a, int64_t b) {
    return p[size_t(a)] > p[size_t(b)] ||
           (p[size_t(a)] == p[size_t(b)] && a < b);
  };
  // The k likeliest, found without sorting the vocabulary.
  if (sampling.topK > 0 && size_t(sampling.topK) < kept.size()) {
    std::nth_element(kept.begin(), kept.begin() + sampling.topK, kept.end(),
                     likelier);
    kept.resize(size_t(sampling.topK));
    std::sort(kept.begin(), kept.end());
  }
  // The likeliest ids in order until their running sum reaches top-p of
  // the total: sorted in prefixes growing 8-fold (a peaked distribution
  // reaches it within the first), each the same ids as a full sort's.
  if (sampling.topP < 1) {
    double bound = sampling.topP * sum(p, kept);
    std::vector<int64_t> order = kept;
    for (size_t n = std::min<size_t>(64, order.size());;
         n = std::min(order.size(), 8 * n)) {
      if (n < order.size())
        std::nth_element(order.begin(), order.begin() + std::ptrdiff_t(n),
                         order.end(), likelier);
      std::sort(order.begin(), order.begin() + std::ptrdiff_t(n), likelier);
      double running = 0;
      size_t cut = 0;
      for (size_t j = 0; j < n && !cut; ++j)
        if ((running += p[size_t(order[j])]) >= bound)
          cut = j + 1;
      if (cut) {
        order.resize(cut);
        std::sort(order.begin(), order.end());
        kept = std::move(order);
        break;
      }
      if (n == order.size()) // rounding: all of them
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

//===- Sampler.cpp - drawing the next token from a step's logits ----------===//

#include "tprt/sampler.h"

#include <algorithm>
#include <cmath>
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
  std::vector<int64_t> order;
  for (int64_t i = 0; i < vocab; ++i) {
    p[size_t(i)] =
        std::exp((double(logits[i]) - largest) / sampling.temperature);
    if (p[size_t(i)] > 0)
      order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return p[size_t(a)] > p[size_t(b)] ||
           (p[size_t(a)] == p[size_t(b)] && a < b);
  });
  size_t kept = order.size();
  if (sampling.topK > 0)
    kept = std::min(kept, size_t(sampling.topK));
  if (sampling.topP < 1) {
    double total = 0, running = 0;
    for (size_t j = 0; j < kept; ++j)
      total += p[size_t(order[j])];
    for (size_t j = 0; j < kept; ++j) {
      running += p[size_t(order[j])];
      if (running >= sampling.topP * total) {
        kept = j + 1;
        break;
      }
    }
  }
  double total = 0;
  for (size_t j = 0; j < kept; ++j)
    total += p[size_t(order[j])];
  double u = uniform() * total, running = 0;
  for (size_t j = 0; j < kept; ++j) {
    running += p[size_t(order[j])];
    if (u < running)
      return order[j];
  }
  return order[kept - 1];
}

} // namespace tprt

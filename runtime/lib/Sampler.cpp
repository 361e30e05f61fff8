//===- Sampler.cpp - drawing the next token from a step's logits ----------===//

#include "tprt/sampler.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace tprt {

std::optional<std::string> Sampling::whyNotFor(int64_t batch) const {
  if (seeds.size() <= 1 || seeds.size() == size_t(batch))
    return std::nullopt;
  return std::to_string(seeds.size()) + " seeds for a batch of " +
         std::to_string(batch) +
         " sequences (one per sequence, or one for the batch)";
}

double TokenSampler::uniform(size_t sequence) {
  uint64_t *state = stateOf(sequence);
  assert(state && "a sequence past the seeds");
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
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

int64_t TokenSampler::draw(const float *logits, int64_t vocab,
                           const std::vector<int64_t> &seen, size_t sequence) {
  if (vocab <= 0 || !stateOf(sequence))
    return -1;
  std::vector<double> &p = probabilities; // the logits, then their p
  p.resize(size_t(vocab));
  size_t best = 0; // the first id of the largest
  for (int64_t i = 0; i < vocab; ++i) {
    if (std::isnan(logits[i]))
      return -1;
    p[size_t(i)] = logits[i];
    if (p[size_t(i)] > p[best])
      best = size_t(i);
  }
  // Read from `logits`, so an id seen twice is penalized once.
  if (double penalty = sampling.repetitionPenalty;
      penalty != 1 && !seen.empty()) {
    for (int64_t id : seen)
      if (id >= 0 && id < vocab) {
        double l = logits[id];
        p[size_t(id)] = l > 0 ? l / penalty : l * penalty;
      }
    best = size_t(std::max_element(p.begin(), p.end()) - p.begin());
  }
  if (!std::isfinite(p[best]))
    return -1;
  if (!sampling.draws())
    return int64_t(best);
  double top = p[best];
  std::vector<int64_t> &kept = candidates; // ascending ids
  kept.clear();
  for (int64_t i = 0; i < vocab; ++i) {
    p[size_t(i)] = std::exp((p[size_t(i)] - top) / sampling.temperature);
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
  // The likeliest's p is exp(0) = 1 and every cut keeps it.
  if (sampling.minP > 0)
    kept.erase(std::remove_if(
                   kept.begin(), kept.end(),
                   [&](int64_t id) { return p[size_t(id)] < sampling.minP; }),
               kept.end());
  double u = uniform(sequence) * sum(p, kept), running = 0;
  for (int64_t id : kept)
    if (u < (running += p[size_t(id)]))
      return id;
  return kept.back();
}

Expected<Sampling> readGenerationConfig(const std::string &path) {
  auto bad = [&](const std::string &what) {
    return Status(TPRT_ERR_INVALID_ARGUMENT, path + ": " + what);
  };
  std::ifstream in(path);
  if (!in)
    return Status(TPRT_ERR_IO, "cannot read '" + path + "'");
  nlohmann::json config = nlohmann::json::parse(in, nullptr, false);
  if (config.is_discarded())
    return bad("not valid JSON");
  if (!config.is_object())
    return bad("not a JSON object");
  // GenerationConfig's defaults; null turns a cut off.
  Sampling s;
  double topK = 50;
  std::string error;
  // `into` from field `name` when it is there: a number in (0, highest],
  // or [0, highest] if `zeroOk`; `off` if null. A temperature of 0 is
  // read (an option may replace it); tp-run refuses to draw with it.
  auto read = [&](const char *name, double &into, double off, bool zeroOk,
                  double highest) {
    auto it = config.find(name);
    if (it == config.end() || !error.empty())
      return;
    if (it->is_null()) {
      into = off;
      return;
    }
    bool integer = name == std::string("top_k");
    double x = it->is_number() ? it->get<double>() : -1;
    if (x < 0 || (x == 0 && !zeroOk) || !(x <= highest) ||
        (integer && x != std::floor(x)))
      error = std::string("'") + name + "' is " + it->dump() + ", not " +
              (integer ? "an integer" : "a number") +
              (zeroOk ? " >= 0" : " > 0") +
              (highest == 1 ? " and <= 1"
               : integer    ? " and <= 10^15"
                            : "");
    else
      into = x;
  };
  double unbounded = std::numeric_limits<double>::max();
  read("temperature", s.temperature, 1, true, unbounded);
  read("top_k", topK, 0, true, 1e15);
  read("top_p", s.topP, 1, true, 1);
  read("min_p", s.minP, 0, true, 1);
  read("repetition_penalty", s.repetitionPenalty, 1, false, unbounded);
  if (!error.empty())
    return bad(error);
  s.topK = int64_t(topK);
  return s;
}

} // namespace tprt

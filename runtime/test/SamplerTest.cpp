//===- SamplerTest.cpp - drawing ids from logits --------------------------===//

#include "tprt/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

namespace {

// logits of ids 0..3 with probabilities 0.1, 0.2, 0.3, 0.4 at temperature 1.
const std::vector<float> kLogits = {std::log(0.1f), std::log(0.2f),
                                    std::log(0.3f), std::log(0.4f)};

std::map<int64_t, int> counts(const tprt::Sampling &sampling, int draws) {
  tprt::TokenSampler sampler(sampling);
  std::map<int64_t, int> seen;
  for (int i = 0; i < draws; ++i)
    ++seen[sampler.draw(kLogits.data(), int64_t(kLogits.size()))];
  return seen;
}

TEST(Sampler, StreamIsSplitmix64) {
  // splitmix64's first value from seed 0 is 0xe220a8397b1dcdaf.
  tprt::TokenSampler sampler(tprt::Sampling{});
  EXPECT_EQ(sampler.uniform(), double(0xe220a8397b1dcdafull >> 11) * 0x1.0p-53);
}

TEST(Sampler, DrawsInProportion) {
  std::map<int64_t, int> seen = counts(tprt::Sampling{}, 20000);
  for (int64_t id = 0; id < 4; ++id)
    EXPECT_NEAR(seen[id] / 20000.0, 0.1 * double(id + 1), 0.015) << id;
}

TEST(Sampler, CutsToTopKAndTopP) {
  tprt::Sampling topK;
  topK.topK = 2;
  std::map<int64_t, int> seen = counts(topK, 5000);
  EXPECT_EQ(seen.count(0) + seen.count(1), 0u);
  EXPECT_NEAR(seen[3] / 5000.0, 0.4 / 0.7, 0.03);
  // 0.4 + 0.3 = 0.7 reaches 0.65: ids 3 and 2.
  tprt::Sampling topP;
  topP.topP = 0.65;
  seen = counts(topP, 5000);
  EXPECT_EQ(seen.count(0) + seen.count(1), 0u);
  // 0.4 alone reaches 0.4.
  topP.topP = 0.4;
  EXPECT_EQ(counts(topP, 100), (std::map<int64_t, int>{{3, 100}}));
  tprt::Sampling one;
  one.topK = 1;
  EXPECT_EQ(counts(one, 100), (std::map<int64_t, int>{{3, 100}}));
}

TEST(Sampler, TopPPastTheFirstPrefix) {
  // 1000 equal logits: top-p 0.5 keeps the 500 lowest ids (ties: the lower
  // id is likelier), past the first sorted prefix of 64 and the second of
  // 512's cut; top-k 700 first keeps 350 of them.
  std::vector<float> flat(1000, 0.5f);
  for (auto [topK, last] : {std::pair<int64_t, int64_t>{0, 499}, {700, 349}}) {
    tprt::Sampling half;
    half.topP = 0.5;
    half.topK = topK;
    tprt::TokenSampler sampler(half);
    int64_t lowest = 1000, highest = -1;
    for (int i = 0; i < 5000; ++i) {
      int64_t id = sampler.draw(flat.data(), 1000);
      lowest = std::min(lowest, id);
      highest = std::max(highest, id);
    }
    EXPECT_EQ(lowest, 0) << topK;
    EXPECT_EQ(highest, last) << topK;
  }
}

TEST(Sampler, TemperatureSharpens) {
  tprt::Sampling cold;
  cold.temperature = 0.01;
  EXPECT_EQ(counts(cold, 100), (std::map<int64_t, int>{{3, 100}}));
}

TEST(Sampler, SameSeedSameIds) {
  tprt::Sampling a, b;
  a.seed = b.seed = 42;
  EXPECT_EQ(counts(a, 1000), counts(b, 1000));
  b.seed = 43;
  EXPECT_NE(counts(a, 1000), counts(b, 1000));
}

TEST(Sampler, NeverDrawsAMaskedId) {
  std::vector<float> logits = {-std::numeric_limits<float>::infinity(), 0.0f,
                               -std::numeric_limits<float>::infinity()};
  tprt::TokenSampler sampler(tprt::Sampling{});
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(sampler.draw(logits.data(), 3), 1);
}

TEST(Sampler, NoFiniteLogits) {
  float inf = std::numeric_limits<float>::infinity();
  std::vector<float> masked = {-inf, -inf}, nan = {0.0f, std::nanf("")};
  tprt::TokenSampler sampler(tprt::Sampling{});
  EXPECT_EQ(sampler.draw(masked.data(), 2), -1);
  EXPECT_EQ(sampler.draw(nan.data(), 2), -1);
  // A library caller's temperature of 0 (tp-run refuses it): nothing kept.
  tprt::Sampling frozen;
  frozen.temperature = 0;
  tprt::TokenSampler zero(frozen);
  EXPECT_EQ(zero.draw(kLogits.data(), 4), -1);
}

} // namespace

//===- SamplerTest.cpp - drawing ids from logits --------------------------===//

#include "tprt/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

// logits of ids 0..3 with probabilities 0.1, 0.2, 0.3, 0.4 at temperature 1.
const std::vector<float> kLogits = {std::log(0.1f), std::log(0.2f),
                                    std::log(0.3f), std::log(0.4f)};

/// How often each id of kLogits is drawn in `draws` draws, for a sequence
/// that holds `held`.
std::map<int64_t, int> counts(const tprt::Sampling &sampling, int draws,
                              const std::vector<int64_t> &held = {}) {
  tprt::TokenSampler sampler(sampling);
  std::map<int64_t, int> seen;
  for (int i = 0; i < draws; ++i)
    ++seen[sampler.draw(kLogits.data(), int64_t(kLogits.size()), held)];
  return seen;
}

TEST(Sampler, StreamIsSplitmix64) {
  // splitmix64's first value from seed 0 is 0xe220a8397b1dcdaf.
  tprt::TokenSampler sampler(tprt::Sampling{});
  EXPECT_EQ(sampler.uniform(), double(0xe220a8397b1dcdafull >> 11) * 0x1.0p-53);
}

TEST(Sampler, OneStreamPerSeed) {
  // Stream 1 of seeds {5, 9} is seed 9's stream alone, however many values
  // stream 0 gives between.
  tprt::Sampling both, nine;
  both.seeds = {5, 9};
  nine.seed = 9;
  tprt::TokenSampler sampler(both), alone(nine);
  for (int i = 0; i < 3; ++i) {
    sampler.uniform(0);
    EXPECT_EQ(sampler.uniform(1), alone.uniform());
  }
  std::vector<int64_t> drawn, drawnAlone;
  for (int i = 0; i < 20; ++i) {
    drawn.push_back(sampler.draw(kLogits.data(), 4, {}, 1));
    sampler.draw(kLogits.data(), 4, {}, 0);
    drawnAlone.push_back(alone.draw(kLogits.data(), 4));
  }
  EXPECT_EQ(drawn, drawnAlone);
  // A sequence past the seeds: no draw.
  EXPECT_EQ(sampler.draw(kLogits.data(), 4, {}, 2), -1);
  // One seed is the batch's: every sequence draws from it in turn.
  tprt::Sampling one;
  one.seeds = {9};
  tprt::TokenSampler shared(one), nineAgain(nine);
  EXPECT_EQ(shared.uniform(0), nineAgain.uniform());
  EXPECT_EQ(shared.uniform(3), nineAgain.uniform());
}

TEST(Sampler, SeedsOnePerSequence) {
  tprt::Sampling s;
  EXPECT_FALSE(s.whyNotFor(3));
  s.seeds = {1};
  EXPECT_FALSE(s.whyNotFor(3));
  s.seeds = {1, 2};
  EXPECT_FALSE(s.whyNotFor(2));
  EXPECT_EQ(s.whyNotFor(3).value_or(""),
            "2 seeds for a batch of 3 sequences (one per sequence, or one "
            "for the batch)");
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
  tprt::Sampling greedy;
  greedy.temperature = 0;
  tprt::TokenSampler argmax(greedy);
  EXPECT_EQ(argmax.draw(masked.data(), 2), -1);
  EXPECT_EQ(argmax.draw(nan.data(), 2), -1);
}

TEST(Sampler, TemperatureZeroIsTheArgmax) {
  tprt::Sampling greedy;
  greedy.temperature = 0;
  greedy.topK = 2; // no draw: the cuts do not matter
  tprt::TokenSampler sampler(greedy);
  EXPECT_EQ(sampler.draw(kLogits.data(), 4), 3);
  std::vector<float> tie = {0.0f, 1.0f, 1.0f};
  EXPECT_EQ(sampler.draw(tie.data(), 3), 1);
  // No draw took a value of the stream.
  EXPECT_EQ(sampler.uniform(), tprt::TokenSampler({}).uniform());
}

TEST(Sampler, RepetitionPenaltyOncePerId) {
  // kLogits are negative: a seen id's logit is multiplied. log(0.4) * 1.2
  // stays above log(0.3); twice it would fall below.
  tprt::Sampling greedy;
  greedy.temperature = 0;
  greedy.repetitionPenalty = 1.2;
  tprt::TokenSampler sampler(greedy);
  EXPECT_EQ(sampler.draw(kLogits.data(), 4, {3, 3, 3}), 3);
  greedy.repetitionPenalty = 2;
  tprt::TokenSampler stronger(greedy);
  EXPECT_EQ(stronger.draw(kLogits.data(), 4, {3}), 2);
  EXPECT_EQ(stronger.draw(kLogits.data(), 4, {3, 2}), 1);
  // A positive logit is divided: 2 / 4 falls below 1.
  std::vector<float> positive = {1.0f, 2.0f};
  tprt::Sampling divided = greedy;
  divided.repetitionPenalty = 4;
  tprt::TokenSampler four(divided);
  EXPECT_EQ(four.draw(positive.data(), 2, {1}), 0);
  EXPECT_EQ(four.draw(positive.data(), 2, {7, -1}), 1); // outside: no id
  // Drawn: id 3 at 0.4^2 = 0.16 against 0.1, 0.2, 0.3.
  tprt::Sampling drawn;
  drawn.repetitionPenalty = 2;
  EXPECT_NEAR(counts(drawn, 20000, {3})[3] / 20000.0, 0.16 / 0.76, 0.015);
}

TEST(Sampler, MinPKeepsTheLikelyEnough) {
  // Relative to the likeliest: 0.25, 0.5, 0.75, 1. Min-p 0.6 keeps ids 2
  // and 3 (3/7 and 4/7); 0.76 keeps 3 alone.
  tprt::Sampling minP;
  minP.minP = 0.6;
  std::map<int64_t, int> seen = counts(minP, 5000);
  EXPECT_EQ(seen.count(0) + seen.count(1), 0u);
  EXPECT_NEAR(seen[3] / 5000.0, 4.0 / 7.0, 0.03);
  minP.minP = 0.76;
  EXPECT_EQ(counts(minP, 100), (std::map<int64_t, int>{{3, 100}}));
  // After top-p (Hugging Face's order): top-p 0.5 keeps ids 3 and 2 (0.4
  // + 0.3 reach 0.5), whose p relative to the likeliest, 1 and 0.75, min-p
  // 0.6 keeps both; min-p first would keep 2 and 3 as well, top-p then 3
  // alone (0.4 of 0.7 reaches 0.5 of it), so id 2 tells the order.
  minP.minP = 0.6;
  minP.topP = 0.5;
  seen = counts(minP, 5000);
  EXPECT_EQ(seen.count(0) + seen.count(1), 0u);
  EXPECT_NEAR(seen[2] / 5000.0, 3.0 / 7.0, 0.03);
}

/// readGenerationConfig of `text` written to a file.
tprt::Expected<tprt::Sampling> config(const std::string &text) {
  std::string path = ::testing::TempDir() + "generation_config.json";
  std::ofstream(path) << text;
  return tprt::readGenerationConfig(path);
}

TEST(Sampler, ReadsGenerationConfig) {
  tprt::Expected<tprt::Sampling> s =
      config(R"({"do_sample": true, "temperature": 0.6, "top_p": 0.9,
                 "min_p": 0.05, "repetition_penalty": 1.1, "eos_token_id": 2})");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->temperature, 0.6);
  EXPECT_EQ(s->topK, 50); // GenerationConfig's default
  EXPECT_EQ(s->topP, 0.9);
  EXPECT_EQ(s->minP, 0.05);
  EXPECT_EQ(s->repetitionPenalty, 1.1);
  s = config(R"({"top_k": null, "temperature": null, "top_p": 1})");
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->topK, 0);
  EXPECT_EQ(s->temperature, 1);
  s = config(R"({"top_k": 20})");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->topK, 20);
}

TEST(Sampler, RefusesABadGenerationConfig) {
  for (auto [text, why] : std::vector<std::pair<std::string, std::string>>{
           {R"({"temperature": -1})", "'temperature' is -1, not a number >= 0"},
           {R"({"top_k": 2.5})",
            "'top_k' is 2.5, not an integer >= 0 and <= 10^15"},
           {R"({"top_p": 1.5})", "'top_p' is 1.5, not a number >= 0 and <= 1"},
           {R"({"min_p": "0.1"})",
            "'min_p' is \"0.1\", not a number >= 0 and <= 1"},
           {R"({"repetition_penalty": -1})",
            "'repetition_penalty' is -1, not a number > 0"},
           {"[1, 2]", "not a JSON object"},
           {"{", "not valid JSON"}}) {
    tprt::Expected<tprt::Sampling> s = config(text);
    ASSERT_FALSE(s) << text;
    EXPECT_NE(s.status().message().find("generation_config.json: " + why),
              std::string::npos)
        << s.status().message();
  }
  EXPECT_FALSE(
      tprt::readGenerationConfig("/nonexistent/generation_config.json"));
}

} // namespace

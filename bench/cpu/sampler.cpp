// What one draw of tp-run --temperature costs (runtime/lib/Sampler.cpp) at
// the vocabularies of GPT-2 (50257), Qwen (151936) and Gemma 3 (262144),
// over logits drawn from N(0, 2) ("flat", as a random model's) and the same
// with 8 ids raised by 15 ("peaked", as a trained model's), for each cut
// (the last with every cut and a repetition penalty over a sequence of 2048
// ids): the median of `draws` draws, in ms, as markdown rows.
//
//   sampler DRAWS
#include "tprt/sampler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char **argv) {
  int draws = argc > 1 ? std::atoi(argv[1]) : 25;
  struct Cut {
    const char *name;
    int64_t topK;
    double topP, minP = 0, penalty = 1;
  };
  const Cut cuts[] = {
      {"temperature 1 alone", 0, 1.0},
      {"top-k 64", 64, 1.0},
      {"top-p 0.95", 0, 0.95},
      {"top-k 64, top-p 0.95", 64, 0.95},
      {"top-k 20, top-p 0.8, min-p 0.05, penalty 1.05", 20, 0.8, 0.05, 1.05}};
  for (int64_t vocab : {50257, 151936, 262144})
    for (bool peaked : {false, true}) {
      std::vector<float> logits(static_cast<size_t>(vocab));
      std::mt19937 gen(1);
      std::normal_distribution<float> normal(0, 2);
      for (float &x : logits)
        x = normal(gen);
      if (peaked)
        for (int i = 0; i < 8; ++i)
          logits[size_t(gen() % uint32_t(vocab))] += 15;
      std::vector<int64_t> seen(2048);
      for (int64_t &id : seen)
        id = int64_t(gen() % uint32_t(vocab));
      std::printf("| %lld | %s |", static_cast<long long>(vocab),
                  peaked ? "peaked" : "flat");
      for (const Cut &cut : cuts) {
        tprt::Sampling sampling;
        sampling.topK = cut.topK;
        sampling.topP = cut.topP;
        sampling.minP = cut.minP;
        sampling.repetitionPenalty = cut.penalty;
        tprt::TokenSampler sampler(sampling);
        sampler.draw(logits.data(), vocab, seen); // its buffers
        std::vector<double> ms;
        for (int i = 0; i < draws; ++i) {
          auto start = std::chrono::steady_clock::now();
          if (sampler.draw(logits.data(), vocab, seen) < 0)
            return 1;
          ms.push_back(std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start)
                           .count());
        }
        std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
        std::printf(" %.2f |", ms[ms.size() / 2]);
      }
      std::printf("\n");
    }
}

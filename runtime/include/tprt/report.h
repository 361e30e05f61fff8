//===- report.h - a launcher's run report ------------------------*- C++
//-*-===//
//
// What tp-run prints (and writes with --report-json) after the forward
// passes: phase times, forward times, collectives, GEMM rate and memory
// (library tprt_loader; docs/runtime.md describes every field).
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_REPORT_H
#define TPRT_REPORT_H

#include "tprt/manifest.h"
#include "tprt/sampler.h"
#include "tprt/tprt.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tprt {

struct RunReport {
  RunReport() = default;
  /// The run's description: `function` of `model` (as given, with
  /// `manifest`), whose arguments `inputs` are inputs, on `worldSize`
  /// ranks; `warmup` untimed and `iterations` timed passes.
  RunReport(std::string model, const Manifest &manifest,
            const ManifestFunction &function, const std::vector<size_t> &inputs,
            int worldSize, int warmup, int iterations);

  std::string model;
  std::string backend;
  int64_t tpSize = 0;
  int worldSize = 1;
  /// The input that carries the tokens (tokenInput), its shape, and how
  /// many inputs the model takes.
  std::string inputName;
  std::vector<int64_t> inputShape;
  size_t inputCount = 1;
  int64_t tokens = 1;
  int warmup = 0;
  int iterations = 0;
  double loadSeconds = 0, sliceSeconds = 0;
  /// Per timed iteration (the slowest rank's).
  std::vector<double> forwardSeconds;
  /// Rank 0's, over the timed iterations.
  tprt_counters counters{};
  /// MiB, the largest over ranks: peak resident set, this rank's weight
  /// slices, the heap's growth over the forward passes.
  double peakRssMib = 0, weightsLocalMib = 0, activationsMib = 0;
};

/// What tp-run --generate prints (and writes with --report-json).
struct GenerationReport {
  std::string model, backend;
  int64_t tpSize = 0;
  int worldSize = 1;
  int64_t batch = 0, promptTokens = 0, newTokens = 0;
  /// Each sequence's left padding in a ragged batch (empty: none).
  std::vector<int64_t> promptPadding;
  /// The calls that ran the prompt, by function as GenerationSignature::call
  /// numbers them: @prefill's, @decode's, @extend's.
  std::array<int64_t, 3> promptCalls{};
  /// The end ids the run stopped sequences at (none: K ids each).
  std::vector<int64_t> eosTokenIds;
  /// How the ids were drawn or penalized (none: the graph's argmax).
  std::optional<Sampling> sampling;
  int warmup = 0, iterations = 0;
  double loadSeconds = 0, sliceSeconds = 0;
  /// Per timed generation (the slowest rank's): time to the first new ids,
  /// and every decode step after them, all generations in a row.
  std::vector<double> firstTokenSeconds, stepSeconds;
  /// Rank 0's collectives over the last generation's decode steps, and
  /// how many steps that was.
  tprt_counters decodeCounters{};
  int64_t decodeSteps = 0;
  /// MiB, the largest over ranks.
  double cacheMib = 0, weightsLocalMib = 0, peakRssMib = 0;
  /// --cuda-graph: the last generation's @decode calls, those replayed as
  /// a CUDA graph, and why none was when it could not be.
  bool cudaGraph = false;
  int64_t decodeCalls = 0, replayedCalls = 0;
  std::string graphWhyNot;
};

std::string reportText(const GenerationReport &report);
std::string reportJson(const GenerationReport &report);

/// Which of `inputs` (argument numbers of `function`) carries the tokens,
/// and how many: the first integer input of rank 2 is token ids [B, S] (B *
/// S tokens); without one, the first input, whose dimensions but the last
/// count the tokens ([B, S, D]: B * S). Empty `inputs`: none, one token.
std::pair<std::optional<size_t>, int64_t>
tokenInput(const ManifestFunction &function, const std::vector<size_t> &inputs);

/// The block tp-run prints on stdout.
std::string reportText(const RunReport &report);
/// The --report-json file's contents.
std::string reportJson(const RunReport &report);

/// Bytes the malloc heap has taken from the system (sbrk arena and mmapped
/// chunks).
double heapBytes();
/// The process's peak resident set (getrusage ru_maxrss), MiB.
double peakRssMib();

} // namespace tprt

#endif // TPRT_REPORT_H

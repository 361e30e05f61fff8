//===- Report.cpp - a launcher's run report -------------------------------===//

#include "tprt/report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <malloc.h>
#include <sys/resource.h>

namespace tprt {

std::pair<std::optional<size_t>, int64_t>
tokenInput(const ManifestFunction &function,
           const std::vector<size_t> &inputs) {
  auto count = [&](size_t i) {
    int64_t tokens = 1;
    for (int64_t size : function.args[i].shape)
      tokens *= size;
    return tokens;
  };
  for (size_t i : inputs)
    if (function.args[i].tokens)
      return {i, count(i)};
  for (size_t i : inputs) {
    const ManifestArg &arg = function.args[i];
    if ((arg.dtype == "i64" || arg.dtype == "i32") && arg.shape.size() == 2)
      return {i, arg.shape[0] * arg.shape[1]};
  }
  if (inputs.empty())
    return {std::nullopt, 1};
  const std::vector<int64_t> &shape = function.args[inputs.front()].shape;
  int64_t tokens = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    tokens *= shape[d];
  return {inputs.front(), tokens};
}

RunReport::RunReport(std::string model, const Manifest &manifest,
                     const ManifestFunction &function,
                     const std::vector<size_t> &inputs, int worldSize,
                     int warmup, int iterations)
    : model(std::move(model)), backend(manifest.backend),
      tpSize(manifest.tpSize), worldSize(worldSize), inputCount(inputs.size()),
      warmup(warmup), iterations(iterations) {
  auto [input, count] = tokenInput(function, inputs);
  tokens = count;
  if (input) {
    inputName = function.args[*input].name;
    inputShape = function.args[*input].shape;
  }
}

static double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static nlohmann::json toJson(const RunReport &r) {
  int64_t tokens = r.tokens;
  double iters = static_cast<double>(r.forwardSeconds.size());
  double fwdMin =
      r.forwardSeconds.empty()
          ? 0.0
          : *std::min_element(r.forwardSeconds.begin(), r.forwardSeconds.end());
  double fwdMedian = r.forwardSeconds.empty() ? 0.0 : median(r.forwardSeconds);
  double fwdTotal = 0;
  for (double t : r.forwardSeconds)
    fwdTotal += t;
  const tprt_counters &c = r.counters;
  auto perForward = [&](int64_t value) {
    return static_cast<double>(value) / iters;
  };
  return {
      {"model", r.model},
      {"backend", r.backend},
      {"tp_size", r.tpSize},
      {"world_size", r.worldSize},
      {"input", r.inputName},
      {"input_count", r.inputCount},
      {"input_shape", r.inputShape},
      {"tokens", tokens},
      {"warmup", r.warmup},
      {"iterations", r.iterations},
      {"load_validate_s", r.loadSeconds},
      {"slice_s", r.sliceSeconds},
      {"forward_s",
       {{"min", fwdMin},
        {"median", fwdMedian},
        {"mean", fwdTotal / iters},
        {"all", r.forwardSeconds}}},
      {"tokens_per_s", fwdMedian > 0 ? tokens / fwdMedian : 0.0},
      {"collectives_per_forward",
       {{"all_reduce",
         {{"calls", perForward(c.all_reduce_calls)},
          {"bytes", perForward(c.all_reduce_bytes)}}},
        {"all_gather",
         {{"calls", perForward(c.all_gather_calls)},
          {"bytes", perForward(c.all_gather_bytes)}}},
        {"reduce_scatter",
         {{"calls", perForward(c.reduce_scatter_calls)},
          {"bytes", perForward(c.reduce_scatter_bytes)}}}}},
      {"comm_s_per_forward", c.comm_seconds / iters},
      {"peak_rss_mib", r.peakRssMib},
      {"weights_local_mib", r.weightsLocalMib},
      {"activations_mib", r.activationsMib},
      {"comm_share", fwdTotal > 0 ? c.comm_seconds / fwdTotal : 0.0},
      {"gemm",
       {{"calls_per_forward", perForward(c.gemm_calls)},
        {"flops_per_forward", c.gemm_flops / iters},
        {"s_per_forward", c.gemm_seconds / iters},
        {"share_of_forward", fwdTotal > 0 ? c.gemm_seconds / fwdTotal : 0.0},
        {"gflops",
         c.gemm_seconds > 0 ? c.gemm_flops / c.gemm_seconds / 1e9 : 0.0}}},
  };
}

std::string reportJson(const RunReport &report) {
  return toJson(report).dump(2) + "\n";
}

std::string reportText(const RunReport &report) {
  nlohmann::json r = toJson(report);
  const nlohmann::json &fwd = r["forward_s"];
  const nlohmann::json &coll = r["collectives_per_forward"];
  const nlohmann::json &gemm = r["gemm"];
  auto ms = [](const nlohmann::json &seconds) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f ms", seconds.get<double>() * 1e3);
    return std::string(text);
  };
  auto collective = [&](const char *name) {
    std::ostringstream os;
    os << name << " " << coll[name]["calls"].get<double>() << " ("
       << static_cast<int64_t>(coll[name]["bytes"].get<double>()) << " B)";
    return os.str();
  };
  char line[256];
  std::ostringstream os;
  os << "tp-run: " << r["model"].get<std::string>() << ", backend "
     << r["backend"].get<std::string>() << ", tp " << r["tp_size"] << ", input "
     << (r["input_count"].get<size_t>() > 1
             ? "'" + r["input"].get<std::string>() + "' "
             : std::string())
     << r["input_shape"].dump() << " (" << r["tokens"] << " tokens)\n";
  os << "  load+validate  " << ms(r["load_validate_s"]) << "\n";
  os << "  slice          " << ms(r["slice_s"]) << "\n";
  os << "  forward        min " << ms(fwd["min"]) << ", median "
     << ms(fwd["median"]) << " (" << r["iterations"] << " iterations after "
     << r["warmup"] << " warmup; slowest rank)\n";
  std::snprintf(line, sizeof(line), "  tokens/s       %.1f\n",
                r["tokens_per_s"].get<double>());
  os << line;
  os << "  collectives    per forward: " << collective("all_reduce") << ", "
     << collective("all_gather") << ", " << collective("reduce_scatter") << "; "
     << ms(r["comm_s_per_forward"]) << "\n";
  std::snprintf(line, sizeof(line),
                "  gemm           per forward: %.0f calls, %.4g GFLOP, "
                "%.1f%% of forward, %.2f GFLOP/s (rank 0)\n",
                gemm["calls_per_forward"].get<double>(),
                gemm["flops_per_forward"].get<double>() / 1e9,
                gemm["share_of_forward"].get<double>() * 100,
                gemm["gflops"].get<double>());
  os << line;
  std::snprintf(line, sizeof(line),
                "  memory         peak rss %.1f MiB, weight shard %.1f MiB, "
                "activations %.1f MiB (max over ranks)\n",
                r["peak_rss_mib"].get<double>(),
                r["weights_local_mib"].get<double>(),
                r["activations_mib"].get<double>());
  os << line;
  return os.str();
}

static nlohmann::json graphJson(const GenerationReport &r) {
  if (!r.cudaGraph)
    return nullptr;
  return {{"decode_calls", r.decodeCalls},
          {"replayed_calls", r.replayedCalls},
          {"why_not", r.graphWhyNot}};
}

static nlohmann::json toJson(const GenerationReport &r) {
  double ttft = r.firstTokenSeconds.empty() ? 0.0 : median(r.firstTokenSeconds);
  double step = r.stepSeconds.empty() ? 0.0 : median(r.stepSeconds);
  double stepMin =
      r.stepSeconds.empty()
          ? 0.0
          : *std::min_element(r.stepSeconds.begin(), r.stepSeconds.end());
  double mean = 0;
  for (double t : r.stepSeconds)
    mean += t / double(r.stepSeconds.size());
  const tprt_counters &c = r.decodeCounters;
  double steps = r.decodeSteps > 0 ? double(r.decodeSteps) : 1.0;
  return {
      {"mode", "generate"},
      {"model", r.model},
      {"backend", r.backend},
      {"tp_size", r.tpSize},
      {"world_size", r.worldSize},
      {"batch", r.batch},
      {"prompt_tokens", r.promptTokens},
      {"prompt_padding", r.promptPadding},
      {"prompt_calls",
       {{"prefill", r.promptCalls[0]},
        {"extend", r.promptCalls[2]},
        {"decode", r.promptCalls[1]}}},
      {"new_tokens", r.newTokens},
      {"eos_token_ids", r.eosTokenIds},
      {"sampling",
       r.sampling
           ? nlohmann::json{{"temperature", r.sampling->temperature},
                            {"top_k", r.sampling->topK},
                            {"top_p", r.sampling->topP},
                            {"min_p", r.sampling->minP},
                            {"repetition_penalty",
                             r.sampling->repetitionPenalty},
                            {"seed", r.sampling->seeds.empty()
                                         ? nlohmann::json(r.sampling->seed)
                                         : nlohmann::json()},
                            {"seeds", r.sampling->seeds}}
           : nlohmann::json()},
      {"warmup", r.warmup},
      {"iterations", r.iterations},
      {"load_validate_s", r.loadSeconds},
      {"slice_s", r.sliceSeconds},
      {"ttft_s", ttft},
      {"decode_steps", r.decodeSteps},
      {"decode_step_s", step},
      {"decode_step_min_s", stepMin},
      {"decode_tokens_per_s", step > 0 ? 1.0 / step : 0.0},
      {"decode_tokens_per_s_batch", step > 0 ? double(r.batch) / step : 0.0},
      {"collectives_per_step",
       {{"all_reduce", double(c.all_reduce_calls) / steps},
        {"all_reduce_bytes", double(c.all_reduce_bytes) / steps},
        {"all_gather", double(c.all_gather_calls) / steps},
        {"all_gather_bytes", double(c.all_gather_bytes) / steps},
        {"reduce_scatter", double(c.reduce_scatter_calls) / steps}}},
      // Rank 0's GEMM time in the last generation against the mean step
      // (the slowest rank's).
      {"gemm_share_of_decode", mean > 0 ? c.gemm_seconds / steps / mean : 0.0},
      // Rank 0's time inside the collectives, waiting for the other ranks
      // included: at tp > 1 a step's time that neither computes nor reads.
      {"comm_share_of_decode", mean > 0 ? c.comm_seconds / steps / mean : 0.0},
      {"cache_mib_per_rank", r.cacheMib},
      {"weights_mib_per_rank", r.weightsLocalMib},
      {"peak_rss_mib", r.peakRssMib},
      {"cuda_graph", graphJson(r)},
  };
}

std::string reportJson(const GenerationReport &report) {
  return toJson(report).dump(2) + "\n";
}

std::string reportText(const GenerationReport &report) {
  nlohmann::json r = toJson(report);
  const nlohmann::json &coll = r["collectives_per_step"];
  char line[320];
  std::ostringstream os;
  os << "tp-run --generate: " << r["model"].get<std::string>() << ", backend "
     << r["backend"].get<std::string>() << ", tp " << r["tp_size"] << ", batch "
     << r["batch"] << ", prompt " << r["prompt_tokens"] << " tokens";
  if (!report.promptPadding.empty())
    os << " (left-padded by "
       << *std::max_element(report.promptPadding.begin(),
                            report.promptPadding.end())
       << " at most)";
  os << ", " << r["new_tokens"] << " new";
  for (size_t i = 0; i < report.eosTokenIds.size(); ++i)
    os << (i ? ", " : "; ends at ids ") << report.eosTokenIds[i];
  if (const std::optional<Sampling> &s = report.sampling) {
    if (s->draws()) {
      os << "; sampled at temperature " << s->temperature << ", top-k "
         << s->topK << ", top-p " << s->topP;
      if (s->minP > 0)
        os << ", min-p " << s->minP;
      if (s->seeds.empty())
        os << ", seed " << s->seed;
      for (size_t i = 0; i < s->seeds.size(); ++i)
        os << (i ? "," : ", seeds ") << s->seeds[i];
    }
    if (s->repetitionPenalty != 1)
      os << (s->draws() ? ", " : "; greedy, ") << "repetition penalty "
         << s->repetitionPenalty;
  }
  os << "\n";
  std::snprintf(line, sizeof(line),
                "  load+validate  %.3f ms\n  slice          %.3f ms\n",
                r["load_validate_s"].get<double>() * 1e3,
                r["slice_s"].get<double>() * 1e3);
  os << line;
  std::snprintf(line, sizeof(line),
                "  first token    %.3f ms (median of %d after %d warmup; "
                "slowest rank): @prefill %lld, @extend %lld, @decode %lld\n",
                r["ttft_s"].get<double>() * 1e3, report.iterations,
                report.warmup, static_cast<long long>(report.promptCalls[0]),
                static_cast<long long>(report.promptCalls[2]),
                static_cast<long long>(report.promptCalls[1]));
  os << line;
  if (report.stepSeconds.empty())
    std::snprintf(line, sizeof(line),
                  "  decode step    none: no new id after the first\n");
  else
    std::snprintf(line, sizeof(line),
                  "  decode step    median %.3f ms, min %.3f ms: %.1f tokens/s "
                  "per sequence, %.1f for the batch\n",
                  r["decode_step_s"].get<double>() * 1e3,
                  r["decode_step_min_s"].get<double>() * 1e3,
                  r["decode_tokens_per_s"].get<double>(),
                  r["decode_tokens_per_s_batch"].get<double>());
  os << line;
  std::snprintf(
      line, sizeof(line),
      "  collectives    per decode step: all_reduce %g (%.0f B), "
      "all_gather %g (%.0f B); gemm %.1f%%, collectives %.1f%% of a step\n",
      coll["all_reduce"].get<double>(), coll["all_reduce_bytes"].get<double>(),
      coll["all_gather"].get<double>(), coll["all_gather_bytes"].get<double>(),
      r["gemm_share_of_decode"].get<double>() * 100,
      r["comm_share_of_decode"].get<double>() * 100);
  os << line;
  std::snprintf(line, sizeof(line),
                "  memory         kv cache %.2f MiB, weight shard %.1f MiB, "
                "peak rss %.1f MiB (per rank, max over ranks)\n",
                r["cache_mib_per_rank"].get<double>(),
                r["weights_mib_per_rank"].get<double>(),
                r["peak_rss_mib"].get<double>());
  os << line;
  if (report.cudaGraph && report.graphWhyNot.empty())
    os << "  cuda graph     " << report.replayedCalls << " of "
       << report.decodeCalls
       << " @decode calls replayed (GEMM and collective times not measured "
          "inside)\n";
  else if (report.cudaGraph)
    os << "  cuda graph     not used: " << report.graphWhyNot << "\n";
  return os.str();
}

double heapBytes() {
  struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.arena) + static_cast<double>(info.hblkhd);
}

double peakRssMib() {
  struct rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0; // KiB on Linux
}

} // namespace tprt

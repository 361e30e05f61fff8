//===- tp-run.cpp - SPMD launcher for compiled tp models ------------------===//
//
// mpirun -np N tp-run MODEL.so ... (kUsage). Every rank loads and checks
// the model, checkpoints and input (tprt/launch.h), then all ranks agree
// (one MPI_Allreduce) before any collective runs: if one rank failed, every
// rank says so and exits 1. Then each rank slices its arguments and runs
// the forward passes, and rank 0 writes the results and the report. The
// backend is the runtime this executable is linked with: tp-run libtprt,
// tp-run-cuda libtprt_cuda.
//
//===----------------------------------------------------------------------===//

#include "tprt/generate.h"
#include "tprt/launch.h"
#include "tprt/report.h"

#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <tuple>

namespace {

using tprt::Expected;
using tprt::Status;

const char *kUsage =
    "usage: mpirun -np N tp-run MODEL.so [--weights FILE.safetensors|DIR]...\n"
    "              --input NAME=X.npy... [--function NAME] [--output Y.npy]\n"
    "              [--warmup K] [--iters K] [--quiet] [--report-json FILE]\n"
    "       mpirun -np N tp-run MODEL.so [--weights FILE.safetensors|DIR]...\n"
    "              --prompt IDS.npy... --generate K [--eos ID[,ID...]]...\n"
    "              [--ignore-eos] [--temperature T] [--sample] [--top-k K]\n"
    "              [--top-p P] [--min-p M] [--seed S[,S...]]\n"
    "              [--repetition-penalty R] [--output Y.npy]\n"
    "              [--warmup K] [--iters K] [--quiet] [--report-json FILE]\n"
    "              [--cuda-graph]\n"
    "  --weights DIR (or DIR/model.safetensors.index.json): a Hugging Face\n"
    "  model directory's checkpoint, sharded or not;\n"
    "  --input X.npy without a name when the model takes one input;\n"
    "  --function to run one function of a model with several;\n"
    "  --generate K: K new ids after the prompt, greedily, with the model's\n"
    "  @prefill and @decode (default --warmup 0 --iters 1);\n"
    "  --prompt again: more sequences of the batch, of another length for a\n"
    "  model built with --ragged (shorter ones left-padded);\n"
    "  --eos: the end ids (default: the model's, its config's eos_token_id):\n"
    "  a sequence ends at the first it gives, the run when every sequence\n"
    "  has; --ignore-eos: K ids each;\n"
    "  --temperature T: each id drawn from softmax(logits / T) (a model\n"
    "  built with --keep-logits), cut to its K likeliest ids (--top-k) and\n"
    "  to the likeliest of those that hold P of their probability (--top-p;\n"
    "  default, or 0: no cut), then to those at least M times as likely as\n"
    "  the likeliest (--min-p), on a stream seeded with S (--seed, default\n"
    "  0): the same ids on every rank and every run; one S per sequence:\n"
    "  a stream each, a sequence's ids those it would be drawn alone;\n"
    "  --sample: draws with the settings of the generation_config.json\n"
    "  beside the weights (the options given win);\n"
    "  --repetition-penalty R: the logit of each id the sequence holds\n"
    "  divided by R where positive, times R where not; greedy without\n"
    "  --temperature or --sample;\n"
    "  --cuda-graph: @decode captured once as a CUDA graph and replayed\n"
    "  (cuda backend; a model built with --decode-attention masked)\n";

struct Options {
  tprt::LaunchFiles files;
  int warmup = 1, iters = 5;
  bool quiet = false, help = false;
  /// --generate: new ids per sequence (0: a forward pass instead).
  int64_t generate = 0;
  /// --eos, each value a comma list: the end ids (empty: the model's).
  std::vector<int64_t> eos;
  bool ignoreEos = false;
  /// --prompt, one or more: their rows make the batch.
  std::vector<std::string> prompts;
  bool cudaGraph = false;
  /// --temperature or --sample (with --top-k, --top-p, --min-p, --seed),
  /// --repetition-penalty: ids drawn, or the penalized logits' argmax, not
  /// the graph's argmax; `samplingOption` is the one that asks, for
  /// messages.
  std::optional<tprt::Sampling> sampling;
  std::string samplingOption;
};

/// Prints "tp-run[rank R]: <line>" for every line of `message`.
void printError(const std::string &message) {
  std::istringstream lines(message);
  std::ostringstream out;
  for (std::string line; std::getline(lines, line);)
    out << "tp-run[rank " << tprt_rank() << "]: " << line << "\n";
  std::cerr << out.str() << std::flush;
}

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

Status bad(const std::string &what) {
  return Status(TPRT_ERR_INVALID_ARGUMENT, what);
}

/// NAME=FILE, or FILE alone: a file name may hold '=' after a '/'.
tprt::InputFile parseInput(const std::string &value) {
  size_t equals = value.find('=');
  if (equals == std::string::npos || equals == 0 || value.find('/') < equals)
    return {"", value};
  return {value.substr(0, equals), value.substr(equals + 1)};
}

/// The integer `text` of option `arg`, in [minimum, maximum].
Expected<int64_t> parseCount(const std::string &arg, const std::string &text,
                             int64_t minimum, int64_t maximum) {
  char *end = nullptr;
  errno = 0;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno || n < minimum || n > maximum)
    return bad(arg + " takes an integer >= " + std::to_string(minimum) +
               (maximum < INT64_MAX ? " and <= " + std::to_string(maximum)
                                    : std::string()) +
               ", not '" + text + "'");
  return int64_t(n);
}

/// The integers >= 0 separated by commas of `text`, `what` of option `arg`.
Expected<std::vector<int64_t>> parseCounts(const std::string &arg,
                                           const std::string &text,
                                           const std::string &what) {
  if (text.front() == ',' || text.back() == ',' ||
      text.find(",,") != std::string::npos)
    return bad(arg + " takes " + what + " separated by commas, not '" + text +
               "'");
  std::vector<int64_t> counts;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    Expected<int64_t> n = parseCount(arg, item, 0, INT64_MAX);
    if (!n)
      return n.status();
    counts.push_back(*n);
  }
  return counts;
}

/// The finite number `text` of option `arg`, > 0 (>= 0 if `zeroOk`; and
/// <= 1 if `atMostOne`).
Expected<double> parseNumber(const std::string &arg, const std::string &text,
                             bool zeroOk, bool atMostOne) {
  char *end = nullptr;
  errno = 0;
  double x = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno || !std::isfinite(x) || x < 0 ||
      (x == 0 && !zeroOk) || (atMostOne && x > 1))
    return bad(arg + " takes a number " + (zeroOk ? ">= 0" : "> 0") +
               (atMostOne ? " and <= 1" : "") + ", not '" + text + "'");
  return x;
}

/// The sampling settings of the generation_config.json beside the first
/// --weights (in that directory, or in the directory of that file).
Expected<tprt::Sampling>
generationConfig(const std::vector<std::string> &weights) {
  namespace fs = std::filesystem;
  if (weights.empty())
    return bad("--sample reads the generation_config.json beside the "
               "weights; give --weights DIR");
  fs::path first(weights.front()),
      dir = fs::is_directory(first) ? first : first.parent_path();
  if (dir.empty())
    dir = ".";
  fs::path config = dir / "generation_config.json";
  if (!fs::exists(config))
    return bad("--sample: no generation_config.json in '" + dir.string() +
               "' (give --temperature T instead)");
  return tprt::readGenerationConfig(config.string());
}

Expected<Options> parseOptions(int argc, char **argv) {
  Options o;
  tprt::LaunchFiles &f = o.files;
  bool warmupGiven = false, itersGiven = false;
  // The sampling options as given (generation_config.json fills the rest
  // for --sample).
  std::optional<double> temperature, topP, minP, penalty;
  std::optional<int64_t> topK;
  std::vector<int64_t> seeds; // --seed: one, or one per sequence
  bool sample = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], count, input, function, eos, sampling;
    bool isSampling = arg == "--temperature" || arg == "--top-k" ||
                      arg == "--top-p" || arg == "--min-p" || arg == "--seed" ||
                      arg == "--repetition-penalty";
    bool isCount = arg == "--warmup" || arg == "--iters" || arg == "--generate";
    std::string *value = arg == "--weights"       ? &f.weights.emplace_back()
                         : arg == "--input"       ? &input
                         : arg == "--output"      ? &f.output
                         : arg == "--report-json" ? &f.reportJson
                         : arg == "--prompt"      ? &o.prompts.emplace_back()
                         : arg == "--function"    ? &function
                         : arg == "--eos"         ? &eos
                         : isCount                ? &count
                         : isSampling             ? &sampling
                                                  : nullptr;
    if (value && i + 1 >= argc)
      return bad(arg + " needs a value");
    if (value)
      *value = argv[++i];
    if (value && value->empty())
      return bad(arg + " needs a value, not ''");
    if (value == &count) {
      int64_t minimum = arg == "--iters" || arg == "--generate" ? 1 : 0;
      Expected<int64_t> n = parseCount(arg, count, minimum, 1000000);
      if (!n)
        return n.status();
      if (arg == "--iters")
        o.iters = int(*n), itersGiven = true;
      else if (arg == "--warmup")
        o.warmup = int(*n), warmupGiven = true;
      else
        o.generate = *n;
    } else if (value == &eos) {
      Expected<std::vector<int64_t>> ids = parseCounts(arg, eos, "ids");
      if (!ids)
        return ids.status();
      o.eos.insert(o.eos.end(), ids->begin(), ids->end());
    } else if (value == &sampling) {
      if (arg == "--top-k") {
        Expected<int64_t> n = parseCount(arg, sampling, 0, INT64_MAX);
        if (!n)
          return n.status();
        topK = *n;
      } else if (arg == "--seed") {
        Expected<std::vector<int64_t>> n = parseCounts(arg, sampling, "seeds");
        if (!n)
          return n.status();
        seeds = std::move(*n);
      } else {
        bool fraction = arg == "--top-p" || arg == "--min-p";
        Expected<double> x =
            parseNumber(arg, sampling, arg == "--min-p", fraction);
        if (!x)
          return x.status();
        (arg == "--temperature" ? temperature
         : arg == "--top-p"     ? topP
         : arg == "--min-p"     ? minP
                                : penalty) = *x;
      }
    } else if (value == &input) {
      f.inputs.push_back(parseInput(input));
    } else if (value == &function) {
      f.functions.push_back(function);
    } else if (value) {
      continue;
    } else if (arg == "-h" || arg == "--help") {
      o.help = true;
    } else if (arg == "--quiet") {
      o.quiet = true;
    } else if (arg == "--cuda-graph") {
      o.cudaGraph = true;
    } else if (arg == "--ignore-eos") {
      o.ignoreEos = true;
    } else if (arg == "--sample") {
      sample = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return bad("unknown option '" + arg + "'");
    } else if (!f.model.empty()) {
      return bad("unexpected argument '" + arg + "' (the model is '" + f.model +
                 "')");
    } else {
      f.model = arg;
    }
  }
  if (o.help)
    return o;
  if (f.model.empty())
    return bad("no model .so given");
  if (f.functions.size() > 1)
    return bad("--function is given more than once");
  bool generating = o.generate > 0;
  if (generating != !o.prompts.empty())
    return bad(generating ? "--generate needs --prompt IDS.npy"
                          : "--prompt needs --generate K");
  if (!o.eos.empty() && !generating)
    return bad("--eos needs --generate K");
  if (o.ignoreEos && (!generating || !o.eos.empty()))
    return bad(generating ? "--ignore-eos and --eos exclude each other"
                          : "--ignore-eos needs --generate K");
  if ((topK || topP || minP || !seeds.empty()) && !temperature && !sample)
    return bad("--top-k, --top-p, --min-p and --seed shape the draws of "
               "--temperature T or --sample; give one");
  // A penalty of 1 penalizes nothing.
  o.samplingOption = temperature                ? "--temperature"
                     : sample                   ? "--sample"
                     : penalty && *penalty != 1 ? "--repetition-penalty"
                                                : "";
  if (!o.samplingOption.empty() && !generating)
    return bad(o.samplingOption + " needs --generate K");
  if (!o.samplingOption.empty()) {
    tprt::Sampling &s = o.sampling.emplace();
    if (sample) {
      Expected<tprt::Sampling> config = generationConfig(f.weights);
      if (!config)
        return config.status();
      s = *config;
    } else if (!temperature) {
      s.temperature = 0; // a repetition penalty alone: greedy
    }
    s.temperature = temperature.value_or(s.temperature);
    s.topK = topK.value_or(s.topK);
    s.topP = topP.value_or(s.topP);
    s.minP = minP.value_or(s.minP);
    s.repetitionPenalty = penalty.value_or(s.repetitionPenalty);
    if (seeds.size() == 1)
      s.seed = uint64_t(seeds.front());
    else
      s.seeds.assign(seeds.begin(), seeds.end());
    if (sample && !s.draws())
      return bad("--sample: the generation_config.json's temperature is 0 "
                 "(nothing to draw with); give --temperature T");
  }
  if (o.cudaGraph && !generating)
    return bad("--cuda-graph needs --generate K (it replays @decode)");
  if (generating && (!f.inputs.empty() || !f.functions.empty()))
    return bad(std::string(f.inputs.empty() ? "--function" : "--input") +
               " does not go with --generate (the prompt is the input; "
               "@prefill and @decode are called)");
  if (generating) {
    f.functions = {"prefill", "decode"};
    f.optionalFunctions = {"extend"};
    // One generation is long; warm-up and repeats only when asked.
    o.warmup = warmupGiven ? o.warmup : 0;
    o.iters = itersGiven ? o.iters : 1;
  }
  return o;
}

void orAbort(const Status &status) {
  if (!status)
    tprt_abort(status.message().c_str());
}

/// This rank's arguments, on the backend's device; `seconds` the time it
/// took. Validation checked every shard, so slicing cannot differ between
/// ranks: a failure here ends them all.
tprt::ModelArguments sliceAndPlace(tprt::LoadedModel &loaded,
                                   const tprt::Backend &backend,
                                   double &seconds) {
  double start = now();
  Expected<tprt::ModelArguments> args =
      loaded.slice(tprt_rank(), tprt_world_size());
  if (!args) {
    printError(args.status().message());
    tprt_abort("slicing failed after validation");
  }
  orAbort(args->place(backend));
  seconds = now() - start;
  return std::move(*args);
}

/// Each value the largest over the ranks (the slowest rank's time).
void maxOverRanks(std::initializer_list<std::vector<double> *> values) {
  for (std::vector<double> *v : values)
    MPI_Allreduce(MPI_IN_PLACE, v->data(), int(v->size()), MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
}

/// Rank 0 prints `report` (unless quiet) and runs `write`, which returns
/// the messages of the writes that failed; a failed write fails the run on
/// every rank, not on rank 0 alone. The exit status.
int finish(const Options &options, const std::string &report,
           const std::function<std::vector<std::string>()> &write) {
  int status = 0;
  if (tprt_rank() == 0) {
    if (!options.quiet)
      std::cout << report << std::flush;
    std::vector<std::string> errors = write();
    for (const std::string &error : errors)
      printError(error);
    status = errors.empty() ? 0 : 1;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status != 0 && tprt_rank() != 0)
    printError("rank 0 could not write the results");
  return status;
}

/// Slices, runs and reports; every rank reaches the same collectives.
int run(const Options &options, tprt::LoadedModel &loaded,
        const tprt::Backend &backend, double loadSeconds) {
  const tprt::Manifest &manifest = loaded.manifest();
  tprt::RunReport r(options.files.model, manifest, loaded.function(),
                    loaded.inputs(), tprt_world_size(), options.warmup,
                    options.iters);
  double sliceSeconds = 0;
  tprt::ModelArguments args = sliceAndPlace(loaded, backend, sliceSeconds);

  double heapBefore = tprt::heapBytes();
  for (int i = 0; i < options.warmup; ++i)
    orAbort(loaded.call(args));
  tprt_reset_counters();
  for (int i = 0; i < options.iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    orAbort(loaded.call(args));
    r.forwardSeconds.push_back(now() - start);
  }
  tprt_get_counters(&r.counters);
  orAbort(args.fetchResults());

  // The slowest rank per iteration and per phase; memory in MiB.
  double mib = 1024.0 * 1024.0;
  std::vector<double> phases = {loadSeconds, sliceSeconds, tprt::peakRssMib(),
                                double(args.weightBytes()) / mib,
                                std::max(0.0, tprt::heapBytes() - heapBefore) /
                                    mib};
  maxOverRanks({&r.forwardSeconds, &phases});
  std::tie(r.loadSeconds, r.sliceSeconds, r.peakRssMib, r.weightsLocalMib,
           r.activationsMib) =
      std::tie(phases[0], phases[1], phases[2], phases[3], phases[4]);

  return finish(options, tprt::reportText(r), [&] {
    return tprt::writeResults(options.files, loaded.function(), args, r);
  });
}

/// tp-run --generate: slices, generates, reports; every rank reaches the
/// same collectives (every rank computes the same ids).
int runGenerate(const Options &options, tprt::LoadedModel &loaded,
                const tprt::Backend &backend, double loadSeconds,
                const tprt::GenerationSignature &signature,
                const tprt::Prompt &prompt) {
  const tprt::Manifest &manifest = loaded.manifest();
  tprt::GenerationReport r;
  r.model = options.files.model;
  r.backend = manifest.backend;
  r.tpSize = manifest.tpSize;
  r.worldSize = tprt_world_size();
  r.batch = signature.batch;
  r.promptTokens = prompt.length;
  r.promptPadding = prompt.padding;
  for (auto [function, first] : tprt::promptCalls(signature, prompt.length))
    ++r.promptCalls[function];
  r.eosTokenIds = options.eos;
  r.sampling = options.sampling;
  r.warmup = options.warmup;
  r.iterations = options.iters;
  double sliceSeconds = 0;
  tprt::ModelArguments args = sliceAndPlace(loaded, backend, sliceSeconds);

  std::optional<tprt::DrawnIds> drawn;
  if (options.sampling)
    drawn = tprt::DrawnIds{*options.sampling, [](std::vector<int64_t> &ids) {
                             MPI_Bcast(ids.data(), int(ids.size()), MPI_INT64_T,
                                       0, MPI_COMM_WORLD);
                           }};
  tprt::GenerationResult last;
  for (int i = 0; i < options.warmup + options.iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    Expected<tprt::GenerationResult> generated = tprt::generate(
        loaded, args, signature, prompt, options.generate, options.eos,
        tprt_reset_counters, options.cudaGraph, drawn);
    if (!generated)
      orAbort(generated.status());
    if (i < options.warmup)
      continue;
    r.firstTokenSeconds.push_back(generated->firstTokenSeconds);
    r.stepSeconds.insert(r.stepSeconds.end(), generated->stepSeconds.begin(),
                         generated->stepSeconds.end());
    last = std::move(*generated);
  }
  tprt_get_counters(&r.decodeCounters);
  r.decodeSteps = int64_t(last.stepSeconds.size());
  r.newTokens = last.steps;
  r.cudaGraph = options.cudaGraph;
  r.decodeCalls = last.decodeCalls;
  r.replayedCalls = last.replayedCalls;
  r.graphWhyNot = last.graphWhyNot;

  // The slowest rank per step and per phase; memory in MiB. Every rank ran
  // the same steps: the ids, and so the stops, are the same on all.
  double mib = 1024.0 * 1024.0;
  std::vector<double> phases = {loadSeconds, sliceSeconds, tprt::peakRssMib(),
                                double(args.weightBytes()) / mib,
                                double(signature.cacheBytes) / mib};
  maxOverRanks({&r.firstTokenSeconds, &r.stepSeconds, &phases});
  std::tie(r.loadSeconds, r.sliceSeconds, r.peakRssMib, r.weightsLocalMib,
           r.cacheMib) =
      std::tie(phases[0], phases[1], phases[2], phases[3], phases[4]);

  return finish(options, tprt::reportText(r), [&] {
    return tprt::writeGeneration(options.files, last.ids, last.logits,
                                 {signature.batch, last.steps}, r);
  });
}

int launch(int argc, char **argv) {
  double start = now();
  Expected<Options> options = parseOptions(argc, argv);
  if (!options || options->help) {
    if (!options)
      printError(options.status().message());
    if (tprt_rank() == 0)
      (options ? std::cout : std::cerr) << kUsage;
    return options ? 0 : 1;
  }
  tprt::Backend backend = tprt::Backend::ofThisProcess();
  tprt::LoadedModel loaded;
  // A model directory or its index stands for its safetensors files.
  std::vector<std::string> errors, weights;
  for (const std::string &path : options->files.weights) {
    Expected<std::vector<std::string>> files = tprt::checkpointFiles(path);
    if (!files)
      errors.push_back(files.status().message());
    else
      weights.insert(weights.end(), files->begin(), files->end());
  }
  options->files.weights = std::move(weights);
  if (errors.empty())
    errors =
        loaded.load(options->files, backend, tprt_rank(), tprt_world_size());
  // Generation: the roles of @prefill's and @decode's tensors, the prompt.
  std::optional<tprt::GenerationSignature> signature;
  std::optional<tprt::Prompt> prompt;
  if (errors.empty() && options->generate) {
    Expected<tprt::GenerationSignature> found = tprt::generationSignature(
        loaded.function(0), loaded.inputs(0), loaded.function(1),
        loaded.inputs(1),
        loaded.functionCount() > 2 ? &loaded.function(2) : nullptr,
        loaded.functionCount() > 2 ? loaded.inputs(2) : std::vector<size_t>{});
    if (!found) {
      errors.push_back("'" + options->files.model + "' cannot generate:\n" +
                       found.status().message());
    } else {
      signature = *found;
      prompt = tprt::readPrompt(options->prompts, *signature, options->generate,
                                errors);
      // The model's end ids unless the command line says.
      bool model = options->eos.empty() && !options->ignoreEos;
      if (model)
        options->eos = loaded.manifest().eosTokenIds;
      for (int64_t eos : options->eos)
        if (signature->vocab && eos >= *signature->vocab)
          errors.push_back((model ? "the model's end id " : "--eos ") +
                           std::to_string(eos) +
                           " is outside the vocabulary [0, " +
                           std::to_string(*signature->vocab) + ") of '" +
                           options->files.model + "'" +
                           (model ? " (give --eos ID or --ignore-eos)" : ""));
      bool logits = signature->prefill.logits || signature->decode.logits;
      if (options->sampling && !signature->returnsLogits())
        errors.push_back(options->samplingOption + ": '" +
                         options->files.model +
                         "' returns no logits to draw from (build it with "
                         "tpmlir.build --keep-logits)");
      if (std::optional<std::string> why =
              options->sampling ? options->sampling->whyNotFor(signature->batch)
                                : std::nullopt)
        errors.push_back("--seed: " + *why);
      // Rank 0 writes the ids, and the logits when the model returns them.
      if (tprt_rank() == 0) {
        std::vector<std::string> found =
            tprt::checkOutputs(options->files, logits ? 2 : 1);
        errors.insert(errors.end(), found.begin(), found.end());
      }
      std::optional<std::string> notReplayable;
      if (options->cudaGraph && !backend.hasGraphs())
        errors.push_back("--cuda-graph needs the cuda backend (tp-run-cuda); "
                         "this is the " +
                         backend.name() + " backend");
      else if (options->cudaGraph &&
               (notReplayable = loaded.whyNotReplayable(1)))
        errors.push_back("--cuda-graph: '" + options->files.model +
                         "': " + *notReplayable);
    }
  }
  // This rank's own time; waiting for the others below is not loading.
  double loadSeconds = now() - start;
  // Every rank learns whether any failed, and the lowest that did: the only
  // communication before the forward passes.
  struct {
    int failed, rank;
  } local{errors.empty() ? 0 : 1, tprt_rank()}, global{0, 0};
  if (MPI_Allreduce(&local, &global, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD) !=
      MPI_SUCCESS) {
    printError("MPI_Allreduce failed while the ranks agreed on validation");
    return 1;
  }
  if (!global.failed && signature)
    return runGenerate(*options, loaded, backend, loadSeconds, *signature,
                       *prompt);
  if (!global.failed)
    return run(*options, loaded, backend, loadSeconds);
  for (const std::string &error : errors)
    printError(error);
  if (errors.empty())
    printError("stopping: rank " + std::to_string(global.rank) +
               " failed validation");
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  // Every forward pass allocates and frees the same large temporaries. Keep
  // them in the heap: glibc would otherwise mmap and munmap each one, and
  // the page faults of fresh pages are a visible part of a CPU forward pass
  // (docs/lowering.md).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (tprt_init(&argc, &argv) != TPRT_OK) {
    std::cerr << "tp-run: " << tprt_last_error() << "\n";
    return 1;
  }
  int status = launch(argc, argv);
  tprt_finalize();
  return status;
}

//===- tp-run.cpp - SPMD launcher for compiled tp models ------------------===//
//
//   mpirun -np N tp-run model.so --weights model.safetensors --input x.npy
//          --output y.npy [--warmup K] [--iters K] [--quiet]
//          [--report-json FILE]
//
// Every rank loads the model, checks it against the checkpoints, the input
// and the world size (tprt/launch.h), and then all ranks agree (one
// MPI_Allreduce) before any collective runs: if one rank failed, every rank
// prints its message and exits 1. Then each rank slices its weights, runs
// the forward passes and rank 0 writes the output and the report. The
// backend is the runtime this executable is linked with (tp-run: libtprt,
// tp-run-cuda: libtprt_cuda; docs/gpu.md).
//
//===----------------------------------------------------------------------===//

#include "tprt/launch.h"
#include "tprt/report.h"

#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using tprt::Expected;
using tprt::Status;

const char *kUsage =
    "usage: mpirun -np N tp-run MODEL.so [--weights FILE.safetensors]...\n"
    "              --input X.npy [--output Y.npy] [--warmup K] [--iters K]\n"
    "              [--quiet] [--report-json FILE]\n";

struct Options {
  tprt::LaunchFiles files;
  int warmup = 1;
  int iters = 5;
  bool quiet = false;
  bool help = false;
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

Expected<int> parseCount(const std::string &flag, const std::string &text,
                         int minimum) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < minimum || value > 1000000)
    return bad(flag + " takes an integer >= " + std::to_string(minimum) +
               ", not '" + text + "'");
  return static_cast<int>(value);
}

Expected<Options> parseOptions(int argc, char **argv) {
  Options o;
  tprt::LaunchFiles &f = o.files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      o.help = true;
      continue;
    }
    if (arg == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (arg.empty() || arg[0] != '-') {
      if (!f.model.empty())
        return bad("unexpected argument '" + arg + "' (the model is '" +
                   f.model + "')");
      f.model = arg;
      continue;
    }
    std::string *into = arg == "--weights"       ? &f.weights.emplace_back()
                        : arg == "--input"       ? &f.input
                        : arg == "--output"      ? &f.output
                        : arg == "--report-json" ? &f.reportJson
                                                 : nullptr;
    bool count = arg == "--warmup" || arg == "--iters";
    if (!into && !count)
      return bad("unknown option '" + arg + "'");
    if (i + 1 >= argc)
      return bad(arg + " needs a value");
    if (into) {
      *into = argv[++i];
      continue;
    }
    Expected<int> n = parseCount(arg, argv[++i], arg == "--iters" ? 1 : 0);
    if (!n)
      return n.status();
    (arg == "--iters" ? o.iters : o.warmup) = *n;
  }
  if (o.help)
    return o;
  if (f.model.empty())
    return bad("no model .so given");
  if (f.input.empty())
    return bad("no --input given");
  return o;
}

/// The maximum of `values` over the ranks, in place.
void maxOverRanks(double *values, int count) {
  MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
}

/// Slices, runs and reports; every rank reaches the same collectives.
int run(const Options &options, tprt::LoadedModel &loaded,
        const tprt::Backend &backend, double loadSeconds) {
  const tprt::Manifest &manifest = loaded.manifest();
  tprt::RunReport r;
  r.model = options.files.model;
  r.backend = manifest.backend;
  r.tpSize = manifest.tpSize;
  r.worldSize = tprt_world_size();
  r.inputShape = manifest.args[0].shape;
  r.warmup = options.warmup;
  r.iterations = options.iters;
  r.loadSeconds = loadSeconds;
  double sliceStart = now();
  // Validation checked every shard, so slicing cannot differ between ranks.
  Expected<tprt::ModelArguments> args = loaded.slice(tprt_rank(), r.worldSize);
  if (!args) {
    printError(args.status().message());
    tprt_abort("slicing failed after validation");
  }
  auto orAbort = [](const Status &status) {
    if (!status)
      tprt_abort(status.message().c_str());
  };
  orAbort(args->place(backend));
  r.sliceSeconds = now() - sliceStart;
  r.weightsLocalMib = double(args->weightBytes()) / (1024.0 * 1024.0);

  double heapBefore = tprt::heapBytes();
  for (int i = 0; i < options.warmup; ++i)
    orAbort(loaded.forward(*args));
  tprt_reset_counters();
  for (int i = 0; i < options.iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    orAbort(loaded.forward(*args));
    r.forwardSeconds.push_back(now() - start);
  }
  tprt_get_counters(&r.counters);
  orAbort(args->fetchResults());
  r.activationsMib =
      std::max(0.0, tprt::heapBytes() - heapBefore) / (1024.0 * 1024.0);

  // The slowest rank per iteration and per phase.
  maxOverRanks(r.forwardSeconds.data(), int(r.forwardSeconds.size()));
  double phases[] = {r.loadSeconds, r.sliceSeconds, tprt::peakRssMib(),
                     r.weightsLocalMib, r.activationsMib};
  maxOverRanks(phases, 5);
  r.loadSeconds = phases[0];
  r.sliceSeconds = phases[1];
  r.peakRssMib = phases[2];
  r.weightsLocalMib = phases[3];
  r.activationsMib = phases[4];

  int status = 0;
  if (tprt_rank() == 0) {
    std::vector<std::string> errors;
    if (!options.files.output.empty())
      errors = tprt::writeResults(options.files.output, manifest, *args);
    for (const std::string &error : errors)
      printError(error);
    if (!options.quiet)
      std::cout << tprt::reportText(r) << std::flush;
    if (const std::string &json = options.files.reportJson; !json.empty()) {
      std::ofstream file(json);
      file << tprt::reportJson(r);
      if (!file)
        errors.push_back("cannot write the report '" + json + "'");
      if (!file)
        printError(errors.back());
    }
    status = errors.empty() ? 0 : 1;
  }
  // A failed write fails the run on every rank, not on rank 0 alone.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status != 0 && tprt_rank() != 0)
    printError("rank 0 could not write the results");
  return status;
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
  std::vector<std::string> errors =
      loaded.load(options->files, backend, tprt_rank(), tprt_world_size());
  // This rank's own time; waiting for the others below is not loading.
  double loadSeconds = now() - start;
  // Every rank learns whether any failed, and the lowest that did: the only
  // communication before the forward passes.
  struct {
    int failed, rank;
  } local{errors.empty() ? 0 : 1, tprt_rank()}, global{0, 0};
  if (MPI_Allreduce(&local, &global, 1, MPI_2INT, MPI_MAXLOC,
                    MPI_COMM_WORLD) != MPI_SUCCESS) {
    printError("MPI_Allreduce failed while the ranks agreed on validation");
    return 1;
  }
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
  // the page faults of the fresh pages cost ~10% of a CPU forward pass.
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

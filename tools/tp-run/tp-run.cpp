//===- tp-run.cpp - SPMD launcher for compiled tp models ------------------===//
//
//   mpirun -np N tp-run model.so --weights model.safetensors --input x.npy
//          --output y.npy [--warmup K] [--iters K] [--quiet]
//          [--report-json FILE]
//
// --weights may be repeated (a model that has weight arguments and weights
// tp-compile --weights-out moved out of its constants reads two files) or
// left out (a model without weight arguments).
// Every rank loads the model, checks it against the checkpoints, the input
// and the world size, and then all ranks agree (one MPI_Allreduce) before
// any collective runs: if one rank failed, every rank prints its message and
// exits 1. Then each rank slices its weights, runs the forward pass and rank
// 0 writes the output and the report.
//
//===----------------------------------------------------------------------===//

#include "tprt/loader.h"
#include "tprt/manifest.h"
#include "tprt/model.h"
#include "tprt/tprt.h"
#ifdef TP_RUN_CUDA
#include "tprt/tprt_cuda.h"
#endif

#include <malloc.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using tprt::Expected;
using tprt::Status;

// The backend this launcher runs: tp-run links libtprt ("cpu"), tp-run-cuda
// is the same source linked against libtprt_cuda ("cuda"); see docs/gpu.md.
#ifdef TP_RUN_CUDA
const std::string kBackend = "cuda";
#else
const std::string kBackend = "cpu";
#endif
// tp-compile --dtype bf16 (cuda only) stores the weights only GEMMs read in
// bf16: the manifest says so and the launcher converts the checkpoint's f32.
#ifdef TP_RUN_CUDA
constexpr bool kBf16Weights = true;
#else
constexpr bool kBf16Weights = false;
#endif

/// `f32` rounded to bf16 (to nearest, ties to even; NaN stays NaN), as
/// arith.truncf rounds on the GPU.
tprt::AlignedBuffer toBf16(const tprt::AlignedBuffer &f32, size_t count) {
  tprt::AlignedBuffer out(count * sizeof(uint16_t));
  const uint32_t *in = f32.as<uint32_t>();
  uint16_t *bf16 = out.as<uint16_t>();
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = in[i];
    if ((bits & 0x7fffffffu) > 0x7f800000u)
      bf16[i] = uint16_t((bits >> 16) | 0x40); // quiet NaN
    else
      bf16[i] = uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
  return out;
}

const char *kUsage =
    "usage: mpirun -np N tp-run MODEL.so [--weights FILE.safetensors]...\n"
    "              --input X.npy [--output Y.npy] [--warmup K] [--iters K]\n"
    "              [--quiet] [--report-json FILE]\n";

int rank() { return tprt_rank(); }

/// Prints "tp-run[rank R]: <line>" for every line of `message`.
void printError(const std::string &message) {
  std::istringstream lines(message);
  std::string line;
  std::ostringstream out;
  while (std::getline(lines, line))
    out << "tp-run[rank " << rank() << "]: " << line << "\n";
  std::cerr << out.str() << std::flush;
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

struct Options {
  std::string model, input, output, reportJson;
  /// Checkpoints, in the order given (--weights may be repeated).
  std::vector<std::string> weights;
  int warmup = 1;
  int iters = 5;
  bool quiet = false;
  bool help = false;
};

Expected<int> parseCount(const std::string &flag, const std::string &text,
                         int minimum) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < minimum || value > 1000000)
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  flag + " takes an integer >= " + std::to_string(minimum) +
                      ", not '" + text + "'");
  return static_cast<int>(value);
}

Expected<Options> parseOptions(int argc, char **argv) {
  Options options;
  auto bad = [](const std::string &what) {
    return Status(TPRT_ERR_INVALID_ARGUMENT, what);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &into) -> Status {
      if (i + 1 >= argc)
        return bad(arg + " needs a value");
      into = argv[++i];
      return Status::success();
    };
    Status status;
    std::string text;
    if (arg == "-h" || arg == "--help") {
      options.help = true;
    } else if (arg == "--weights") {
      status = value(options.weights.emplace_back());
    } else if (arg == "--input") {
      status = value(options.input);
    } else if (arg == "--output") {
      status = value(options.output);
    } else if (arg == "--report-json") {
      status = value(options.reportJson);
    } else if (arg == "--warmup" || arg == "--iters") {
      status = value(text);
      if (status) {
        Expected<int> count = parseCount(arg, text, arg == "--iters" ? 1 : 0);
        if (!count)
          return count.status();
        (arg == "--iters" ? options.iters : options.warmup) = *count;
      }
    } else if (arg == "--quiet") {
      options.quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return bad("unknown option '" + arg + "'");
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      return bad("unexpected argument '" + arg + "' (the model is '" +
                 options.model + "')");
    }
    if (!status)
      return status;
  }
  if (options.help)
    return options;
  if (options.model.empty())
    return bad("no model .so given");
  if (options.input.empty())
    return bad("no --input given");
  return options;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

/// A dlopen'ed model; closed on destruction.
class ModelLibrary {
public:
  using ManifestFn = const char *(*)();
  using ForwardFn = void (*)(void **);

  static Expected<ModelLibrary> open(const std::string &path) {
    // A name without a slash would be searched on the library path.
    std::string file = path.find('/') == std::string::npos ? "./" + path : path;
    // dlopen of a truncated object dies of SIGBUS, of a FIFO waits forever.
    if (Status whole = tprt::checkSharedObject(path); !whole)
      return Status(whole.code(), "cannot load model " + whole.message());
    dlerror();
    void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return Status(TPRT_ERR_IO,
                    "cannot load model '" + path + "': " + dlerror());
    ModelLibrary library(handle);
    library.manifest = reinterpret_cast<ManifestFn>(
        dlsym(handle, "tp_model_manifest"));
    library.forward =
        reinterpret_cast<ForwardFn>(dlsym(handle, "tp_model_forward"));
    if (!library.manifest || !library.forward)
      return Status(TPRT_ERR_IO,
                    "'" + path +
                        "' does not export tp_model_manifest and "
                        "tp_model_forward (not built by tp-compile?)");
    return library;
  }

  ModelLibrary(ModelLibrary &&other) noexcept
      : manifest(other.manifest), forward(other.forward),
        handle(other.handle) {
    other.handle = nullptr;
  }
  ModelLibrary &operator=(ModelLibrary &&) = delete;
  ModelLibrary(const ModelLibrary &) = delete;
  ~ModelLibrary() {
    if (handle)
      dlclose(handle);
  }

  ManifestFn manifest = nullptr;
  ForwardFn forward = nullptr;

private:
  explicit ModelLibrary(void *handle) : handle(handle) {}
  void *handle;
};

/// Everything validated before the ranks agree to go on.
struct Loaded {
  std::optional<ModelLibrary> library;
  tprt::Manifest manifest;
  std::vector<tprt::SafetensorsFile> checkpoints;
  /// The checkpoint tensor of each argument and its file (null for the
  /// input).
  std::vector<const tprt::TensorInfo *> bound;
  std::vector<const tprt::SafetensorsFile *> boundFile;
  std::optional<tprt::NpyArray> input;
};

/// A result file name: y.npy for result 0, y.1.npy for result 1, ...
std::string resultPath(const std::string &output, size_t index) {
  if (index == 0)
    return output;
  std::string stem = output, suffix;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".npy") == 0) {
    stem.resize(stem.size() - 4);
    suffix = ".npy";
  }
  return stem + "." + std::to_string(index) + suffix;
}

/// Why rank 0 could not create or overwrite `path` at the end of the run
/// (none if it can). Checked before the run, which may take long.
std::optional<std::string> whyNotWritable(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    // fopen would refuse a directory only after the forward passes.
    if (S_ISDIR(info.st_mode))
      return "it is a directory";
    return std::nullopt;
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty())
    dir = "/";
  if (access(dir.c_str(), W_OK) != 0)
    return "its directory is missing or not writable";
  return std::nullopt;
}

/// `names` quoted and joined with ", ".
std::string quotedList(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

/// Binds every weight argument to its tensor in the checkpoints, checking
/// dtype and shape (problems go to `errors`); returns the one error that
/// stops the validation (an unreadable checkpoint). A named argument binds
/// to the tensor of that name, which one checkpoint alone must hold; an
/// argument the IR left unnamed to the tensor at its position among the
/// weights (the checkpoints in the order given, each by data offset).
std::optional<std::string> bindCheckpoints(const Options &options,
                                           Loaded &loaded,
                                           std::vector<std::string> &errors) {
  const std::vector<tprt::ManifestArg> &args = loaded.manifest.args;
  loaded.checkpoints.reserve(options.weights.size()); // stable addresses
  std::vector<
      std::pair<const tprt::SafetensorsFile *, const tprt::TensorInfo *>>
      inFileOrder;
  for (const std::string &path : options.weights) {
    Expected<tprt::SafetensorsFile> file = tprt::SafetensorsFile::open(path);
    if (!file)
      return "checkpoint " + file.status().message();
    const tprt::SafetensorsFile &checkpoint =
        loaded.checkpoints.emplace_back(std::move(*file));
    size_t first = inFileOrder.size();
    for (const auto &entry : checkpoint.tensors())
      inFileOrder.push_back({&checkpoint, &entry.second});
    std::sort(inFileOrder.begin() + first, inFileOrder.end(),
              [](auto a, auto b) { return a.second->data < b.second->data; });
  }
  const std::vector<std::string> &paths = options.weights;
  std::string checkpoints =
      (paths.size() == 1 ? "checkpoint " : "checkpoints ") + quotedList(paths);
  loaded.boundFile.assign(args.size(), nullptr);
  for (size_t i = 1; i < args.size(); ++i) {
    const tprt::ManifestArg &arg = args[i];
    std::string where =
        "tensor '" + arg.name + "' (argument " + std::to_string(i) + ")";
    std::vector<std::string> holders;
    if (!arg.named) {
      if (i - 1 < inFileOrder.size())
        std::tie(loaded.boundFile[i], loaded.bound[i]) = inFileOrder[i - 1];
    } else {
      for (const tprt::SafetensorsFile &checkpoint : loaded.checkpoints)
        if (const tprt::TensorInfo *tensor = checkpoint.find(arg.name)) {
          holders.push_back(checkpoint.path());
          loaded.bound[i] = tensor;
          loaded.boundFile[i] = &checkpoint;
        }
    }
    if (holders.size() > 1) {
      errors.push_back(where + " is in " + quotedList(holders) +
                       ": give it once");
      continue;
    }
    const tprt::TensorInfo *tensor = loaded.bound[i];
    if (!tensor) {
      // A renamed tensor usually keeps its shape: name the candidates.
      std::vector<std::string> candidates;
      for (auto [checkpoint, info] : inFileOrder) {
        const std::string &name = info->name;
        bool used = std::any_of(
            args.begin(), args.end(),
            [&](const tprt::ManifestArg &a) { return a.name == name; });
        if (!used && info->shape == arg.shape)
          candidates.push_back(name);
      }
      errors.push_back(
          checkpoints + (paths.size() == 1 ? " has no " : " have no ") + where +
          (candidates.empty()
               ? ""
               : "; unused tensors of shape " + tprt::formatShape(arg.shape) +
                     ": " + quotedList(candidates)));
      continue;
    }
    const std::string &path = loaded.boundFile[i]->path();
    if (tensor->dtype != "F32")
      errors.push_back(where + " in '" + path + "' is " + tensor->dtype +
                       ", the model takes F32");
    else if (tensor->shape != arg.shape)
      errors.push_back(where + " in '" + path + "' has shape " +
                       tprt::formatShape(tensor->shape) + ", the model takes " +
                       tprt::formatShape(arg.shape));
  }
  return std::nullopt;
}

/// Loads and checks everything on this rank without communicating; returns
/// the problems found (empty when all is well).
std::vector<std::string> loadAndValidate(const Options &options,
                                         Loaded &loaded) {
  std::vector<std::string> errors;
  const std::string &model = options.model;

  Expected<ModelLibrary> library = ModelLibrary::open(model);
  if (!library)
    return {library.status().message()};
  loaded.library.emplace(std::move(*library));
  const char *text = loaded.library->manifest();
  Expected<tprt::Manifest> parsed =
      tprt::parseManifest(text ? text : "");
  if (!parsed)
    return {"'" + model + "': " + parsed.status().message()};
  loaded.manifest = std::move(*parsed);
  const tprt::Manifest &manifest = loaded.manifest;

  // The model as a whole.
  if (manifest.abiVersion != TPRT_ABI_VERSION)
    return {model + " was built for tprt ABI version " +
            std::to_string(manifest.abiVersion) +
            ", this tp-run implements version " +
            std::to_string(TPRT_ABI_VERSION)};
  if (manifest.backend != kBackend)
    return {model + " was built for backend '" + manifest.backend +
            "', this tp-run runs '" + kBackend + "'"};
  if (manifest.tpSize != tprt_world_size())
    return {"world size " + std::to_string(tprt_world_size()) + " but " +
            model + " was compiled for tp " + std::to_string(manifest.tpSize)};
  if (manifest.args.empty() || manifest.args[0].role != "input")
    return {"'" + model + "': manifest argument 0 must be the input"};
  if (manifest.results.empty())
    errors.push_back("'" + model + "': manifest has no results");
  for (size_t i = 0; i < manifest.args.size(); ++i) {
    const tprt::ManifestArg &arg = manifest.args[i];
    std::string where = "'" + model + "': argument " + std::to_string(i) +
                        " ('" + arg.name + "')";
    if (i > 0 && arg.role != "weight")
      errors.push_back(where + " has role '" + arg.role +
                       "'; only argument 0 is the input");
    if (arg.dtype != "f32" && !(kBf16Weights && i > 0 && arg.dtype == "bf16"))
      errors.push_back(where + " has dtype '" + arg.dtype + "'; the " +
                       kBackend + " runtime takes f32" +
                       (kBf16Weights ? " (and bf16 weights)" : ""));
    Expected<std::vector<int64_t>> local =
        tprt::shardShape(arg.shape, arg.shard, manifest.tpSize);
    if (!local)
      errors.push_back(where + ": " + local.status().message());
    else if (*local != arg.localShape)
      errors.push_back(where + ": local_shape " +
                       tprt::formatShape(arg.localShape) + " is not the shard " +
                       tprt::formatShape(*local) + " of " +
                       tprt::formatShape(arg.shape));
  }
  for (const tprt::ManifestResult &result : manifest.results)
    if (result.dtype != "f32")
      errors.push_back("'" + model + "': result '" + result.name +
                       "' has dtype '" + result.dtype + "'; the " + kBackend +
                       " runtime takes f32");
  if (!errors.empty())
    return errors;

  // The checkpoint: every weight present, F32, with the full shape. A model
  // compiled with its weights inline takes none.
  loaded.bound.assign(manifest.args.size(), nullptr);
  if (options.weights.empty() && manifest.args.size() > 1)
    return {"no --weights given; '" + model + "' takes " +
            std::to_string(manifest.args.size() - 1) + " weights (the first '" +
            manifest.args[1].name + "')"};
  if (!options.weights.empty())
    if (std::optional<std::string> fatal =
            bindCheckpoints(options, loaded, errors))
      return {*fatal};

  // The input.
  Expected<tprt::NpyArray> input = tprt::readNpy(options.input);
  if (!input) {
    errors.push_back("input " + input.status().message());
  } else {
    const tprt::ManifestArg &arg = manifest.args[0];
    if (input->shape != arg.shape)
      errors.push_back("input '" + options.input + "' has shape " +
                       tprt::formatShape(input->shape) + ", the model takes " +
                       tprt::formatShape(arg.shape));
    loaded.input.emplace(std::move(*input));
  }

  // Only rank 0 writes, so only it checks; the others learn of a problem
  // in agree().
  if (rank() == 0 && !options.output.empty())
    for (size_t j = 0; j < manifest.results.size(); ++j) {
      std::string path = resultPath(options.output, j);
      if (std::optional<std::string> why = whyNotWritable(path))
        errors.push_back("cannot write the output '" + path + "': " + *why);
    }
  if (rank() == 0 && !options.reportJson.empty())
    if (std::optional<std::string> why = whyNotWritable(options.reportJson))
      errors.push_back("cannot write the report '" + options.reportJson +
                       "': " + *why);
  return errors;
}

/// Every rank learns whether any rank failed, and the lowest such rank (-1
/// if none). The only communication before the forward pass.
Expected<int> agree(bool failed) {
  struct {
    int failed;
    int rank;
  } local{failed ? 1 : 0, rank()}, global{0, 0};
  int rc = MPI_Allreduce(&local, &global, 1, MPI_2INT, MPI_MAXLOC,
                         MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS)
    return Status(TPRT_ERR_COMM, "MPI_Allreduce failed while the ranks "
                                 "agreed on validation");
  return global.failed ? global.rank : -1;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// A memref descriptor of any rank over a contiguous buffer:
/// { allocated, aligned, offset, sizes[R], strides[R] }, all 8 bytes wide.
std::vector<int64_t> makeDescriptor(void *data,
                                    const std::vector<int64_t> &shape) {
  static_assert(sizeof(void *) == sizeof(int64_t), "64-bit pointers");
  size_t rank = shape.size();
  std::vector<int64_t> descriptor(3 + 2 * rank);
  std::memcpy(&descriptor[0], &data, sizeof(void *));
  std::memcpy(&descriptor[1], &data, sizeof(void *));
  descriptor[2] = 0;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    descriptor[3 + i] = shape[i];
    descriptor[3 + rank + i] = stride;
    stride *= shape[i];
  }
  return descriptor;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Timings {
  double loadSeconds = 0, sliceSeconds = 0;
  std::vector<double> forwardSeconds; // per iteration, slowest rank
  tprt_counters counters{};           // rank 0, timed iterations
  // Memory, MiB, the largest over ranks: peak resident set (getrusage
  // ru_maxrss), this rank's weight shards, and the growth of the malloc heap
  // over the forward passes (the compiled code's temporaries).
  double peakRssMib = 0, weightsLocalMib = 0, activationsMib = 0;
};

/// Bytes the malloc heap has taken from the system (sbrk arena + mmapped
/// chunks). main() keeps freed memory in the heap, so its growth over the
/// forward passes is their high-water mark of temporaries.
double heapBytes() {
  struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.arena) + static_cast<double>(info.hblkhd);
}

double peakRssMib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0; // KiB on Linux
}

nlohmann::json makeReport(const Options &options, const Loaded &loaded,
                          const Timings &timings) {
  const tprt::Manifest &manifest = loaded.manifest;
  const std::vector<int64_t> &inputShape = manifest.args[0].shape;
  int64_t tokens = 1;
  for (size_t i = 0; i + 1 < inputShape.size(); ++i)
    tokens *= inputShape[i];
  double iters = static_cast<double>(timings.forwardSeconds.size());
  double fwdMin = *std::min_element(timings.forwardSeconds.begin(),
                                    timings.forwardSeconds.end());
  double fwdMedian = median(timings.forwardSeconds);
  double fwdTotal = 0;
  for (double t : timings.forwardSeconds)
    fwdTotal += t;
  const tprt_counters &c = timings.counters;
  auto perForward = [&](int64_t value) {
    return static_cast<double>(value) / iters;
  };
  nlohmann::json report = {
      {"model", options.model},
      {"backend", manifest.backend},
      {"tp_size", manifest.tpSize},
      {"world_size", tprt_world_size()},
      {"input_shape", inputShape},
      {"tokens", tokens},
      {"warmup", options.warmup},
      {"iterations", options.iters},
      {"load_validate_s", timings.loadSeconds},
      {"slice_s", timings.sliceSeconds},
      {"forward_s",
       {{"min", fwdMin},
        {"median", fwdMedian},
        {"mean", fwdTotal / iters},
        {"all", timings.forwardSeconds}}},
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
      {"peak_rss_mib", timings.peakRssMib},
      {"weights_local_mib", timings.weightsLocalMib},
      {"activations_mib", timings.activationsMib},
      {"comm_share", fwdTotal > 0 ? c.comm_seconds / fwdTotal : 0.0},
      {"gemm",
       {{"calls_per_forward", perForward(c.gemm_calls)},
        {"flops_per_forward", c.gemm_flops / iters},
        {"s_per_forward", c.gemm_seconds / iters},
        {"share_of_forward", fwdTotal > 0 ? c.gemm_seconds / fwdTotal : 0.0},
        {"gflops", c.gemm_seconds > 0 ? c.gemm_flops / c.gemm_seconds / 1e9
                                      : 0.0}}},
  };
  return report;
}

void printReport(const nlohmann::json &r) {
  const nlohmann::json &fwd = r["forward_s"];
  const nlohmann::json &coll = r["collectives_per_forward"];
  const nlohmann::json &gemm = r["gemm"];
  auto ms = [](const nlohmann::json &seconds) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f ms",
                  seconds.get<double>() * 1e3);
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
     << r["backend"].get<std::string>() << ", tp " << r["tp_size"]
     << ", input " << r["input_shape"].dump() << " (" << r["tokens"]
     << " tokens)\n";
  os << "  load+validate  " << ms(r["load_validate_s"]) << "\n";
  os << "  slice          " << ms(r["slice_s"]) << "\n";
  os << "  forward        min " << ms(fwd["min"]) << ", median "
     << ms(fwd["median"]) << " (" << r["iterations"] << " iterations after "
     << r["warmup"] << " warmup; slowest rank)\n";
  std::snprintf(line, sizeof(line), "  tokens/s       %.1f\n",
                r["tokens_per_s"].get<double>());
  os << line;
  os << "  collectives    per forward: " << collective("all_reduce") << ", "
     << collective("all_gather") << ", " << collective("reduce_scatter")
     << "; " << ms(r["comm_s_per_forward"]) << "\n";
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
  std::cout << os.str() << std::flush;
}

/// Rank 0's end of the run: the outputs, the report, the report file; 1 if
/// any of them could not be written.
int writeResults(const Options &options, const Loaded &loaded,
                 const Timings &timings,
                 const std::vector<tprt::AlignedBuffer> &buffers) {
  const tprt::Manifest &manifest = loaded.manifest;
  int status = 0;
  if (!options.output.empty()) {
    size_t firstResult = manifest.args.size();
    for (size_t j = 0; j < manifest.results.size(); ++j) {
      Status written = tprt::writeNpy(
          resultPath(options.output, j),
          buffers[firstResult + j].as<float>(), manifest.results[j].localShape);
      if (!written) {
        printError(written.message());
        status = 1;
      }
    }
  }
  nlohmann::json report = makeReport(options, loaded, timings);
  if (!options.quiet)
    printReport(report);
  if (!options.reportJson.empty()) {
    std::ofstream file(options.reportJson);
    file << report.dump(2) << "\n";
    if (!file) {
      printError("cannot write the report '" + options.reportJson + "'");
      status = 1;
    }
  }
  return status;
}

/// Slices, runs and reports; every rank reaches the same collectives.
int run(const Options &options, Loaded &loaded, double loadSeconds) {
  const tprt::Manifest &manifest = loaded.manifest;
  int worldSize = tprt_world_size();
  Timings timings;
  timings.loadSeconds = loadSeconds;

  // Slice: the input is a tensor like the weights.
  double sliceStart = now();
  std::vector<tprt::AlignedBuffer> buffers;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<std::string> errors;
  tprt::TensorInfo inputTensor;
  inputTensor.name = manifest.args[0].name;
  inputTensor.dtype = "F32";
  inputTensor.shape = loaded.input->shape;
  inputTensor.elementSize = sizeof(float);
  inputTensor.data =
      reinterpret_cast<const uint8_t *>(loaded.input->buffer.data());
  inputTensor.byteSize = loaded.input->buffer.size();
  for (size_t i = 0; i < manifest.args.size(); ++i) {
    const tprt::ManifestArg &arg = manifest.args[i];
    const tprt::TensorInfo &tensor =
        i == 0 ? inputTensor : *loaded.bound[i];
    Expected<tprt::SlicedTensor> slice =
        tprt::sliceTensor(tensor, arg.shard, rank(), worldSize);
    if (i > 0)
      loaded.boundFile[i]->release(tensor);
    if (!slice) {
      errors.push_back(slice.status().message());
      continue;
    }
    if (arg.dtype == "bf16")
      slice->buffer =
          toBf16(slice->buffer, size_t(tprt::numElements(slice->shape)));
    if (i > 0)
      timings.weightsLocalMib +=
          static_cast<double>(slice->buffer.size()) / (1024.0 * 1024.0);
    descriptors.push_back(makeDescriptor(slice->buffer.data(), slice->shape));
    buffers.push_back(std::move(slice->buffer));
  }
  // Validation checked every shard, so this cannot differ between ranks.
  if (!errors.empty()) {
    for (const std::string &error : errors)
      printError(error);
    tprt_abort("slicing failed after validation");
  }
  for (const tprt::ManifestResult &result : manifest.results) {
    tprt::AlignedBuffer buffer(
        size_t(tprt::numElements(result.localShape)) * sizeof(float),
        /*zero=*/true);
    descriptors.push_back(makeDescriptor(buffer.data(), result.localShape));
    buffers.push_back(std::move(buffer));
  }
#ifdef TP_RUN_CUDA
  // Every buffer the model sees is device memory: upload each slice (and the
  // zeroed results) once; the descriptors point to the device copies.
  std::vector<void *> device(buffers.size(), nullptr);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (tprt_device_alloc(buffers[i].size(), 0, &device[i]) != TPRT_OK ||
        tprt_copy_to_device(device[i], buffers[i].data(), buffers[i].size()) !=
            TPRT_OK)
      tprt_abort(tprt_last_error());
    std::memcpy(&descriptors[i][0], &device[i], sizeof(void *));
    std::memcpy(&descriptors[i][1], &device[i], sizeof(void *));
  }
  // A forward pass is asynchronous on the rank's stream: wait for it.
  auto forward = [&](void **a) {
    loaded.library->forward(a);
    if (tprt_device_synchronize() != TPRT_OK)
      tprt_abort(tprt_last_error());
  };
#else
  auto forward = [&](void **a) { loaded.library->forward(a); };
#endif
  std::vector<void *> args;
  for (std::vector<int64_t> &descriptor : descriptors)
    args.push_back(descriptor.data());
  timings.sliceSeconds = now() - sliceStart;

  // Forward.
  double heapBefore = heapBytes();
  for (int i = 0; i < options.warmup; ++i)
    forward(args.data());
  tprt_reset_counters();
  std::vector<double> local;
  for (int i = 0; i < options.iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    forward(args.data());
    local.push_back(now() - start);
  }
  tprt_get_counters(&timings.counters);
#ifdef TP_RUN_CUDA
  for (size_t i = manifest.args.size(); i < buffers.size(); ++i)
    if (tprt_copy_to_host(buffers[i].data(), device[i], buffers[i].size()) !=
        TPRT_OK)
      tprt_abort(tprt_last_error());
  for (void *pointer : device)
    tprt_device_free(pointer);
#endif
  timings.activationsMib =
      std::max(0.0, heapBytes() - heapBefore) / (1024.0 * 1024.0);

  // Slowest rank per iteration and per phase.
  timings.forwardSeconds.resize(local.size());
  MPI_Allreduce(local.data(), timings.forwardSeconds.data(),
                static_cast<int>(local.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  timings.peakRssMib = peakRssMib();
  double phases[5] = {timings.loadSeconds, timings.sliceSeconds,
                      timings.peakRssMib, timings.weightsLocalMib,
                      timings.activationsMib};
  MPI_Allreduce(MPI_IN_PLACE, phases, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  timings.loadSeconds = phases[0];
  timings.sliceSeconds = phases[1];
  timings.peakRssMib = phases[2];
  timings.weightsLocalMib = phases[3];
  timings.activationsMib = phases[4];

  int status = 0;
  if (rank() == 0)
    status = writeResults(options, loaded, timings, buffers);
  // A failed write fails the run on every rank, not on rank 0 alone.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status != 0 && rank() != 0)
    printError("rank 0 could not write the results");
  return status;
}

int launch(int argc, char **argv) {
  double start = now();
  Expected<Options> options = parseOptions(argc, argv);
  if (!options) {
    printError(options.status().message());
    if (rank() == 0)
      std::cerr << kUsage;
    return 1;
  }
  if (options->help) {
    if (rank() == 0)
      std::cout << kUsage;
    return 0;
  }

  Loaded loaded;
  std::vector<std::string> errors = loadAndValidate(*options, loaded);
  // This rank's own time; waiting for the others in agree() is not loading.
  double loadSeconds = now() - start;
  Expected<int> failedRank = agree(!errors.empty());
  if (!failedRank) {
    printError(failedRank.status().message());
    return 1;
  }
  if (*failedRank >= 0) {
    for (const std::string &error : errors)
      printError(error);
    if (errors.empty())
      printError("stopping: rank " + std::to_string(*failedRank) +
                 " failed validation");
    return 1;
  }
  return run(*options, loaded, loadSeconds);
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

//===- Launch.cpp - loading, checking and calling a compiled model --------===//

#include "tprt/launch.h"
#include "tprt/generate.h"

#include "Panels.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tprt {

//===----------------------------------------------------------------------===//
// Backends, descriptors, bf16, files
//===----------------------------------------------------------------------===//

Backend Backend::cpu() { return Backend("cpu", std::nullopt); }

Backend Backend::cuda(const DeviceCalls &calls) {
  return Backend("cuda", calls);
}

Backend Backend::ofThisProcess() {
  // A launcher is linked with one runtime; libtprt_cuda alone has these.
  auto find = [](const char *name) { return dlsym(RTLD_DEFAULT, name); };
  DeviceCalls calls;
  void *symbols[] = {find("tprt_device_alloc"),       find("tprt_device_free"),
                     find("tprt_copy_to_device"),     find("tprt_copy_to_host"),
                     find("tprt_device_synchronize"), find("tprt_last_error")};
  for (void *symbol : symbols)
    if (!symbol)
      return cpu();
  std::memcpy(&calls.alloc, &symbols[0], sizeof(void *));
  std::memcpy(&calls.free, &symbols[1], sizeof(void *));
  std::memcpy(&calls.copyToDevice, &symbols[2], sizeof(void *));
  std::memcpy(&calls.copyToHost, &symbols[3], sizeof(void *));
  std::memcpy(&calls.synchronize, &symbols[4], sizeof(void *));
  std::memcpy(&calls.lastError, &symbols[5], sizeof(void *));
  void *graphs[] = {find("tprt_graph_begin"), find("tprt_graph_end"),
                    find("tprt_graph_launch"), find("tprt_graph_destroy")};
  if (graphs[0] && graphs[1] && graphs[2] && graphs[3]) {
    std::memcpy(&calls.graphBegin, &graphs[0], sizeof(void *));
    std::memcpy(&calls.graphEnd, &graphs[1], sizeof(void *));
    std::memcpy(&calls.graphLaunch, &graphs[2], sizeof(void *));
    std::memcpy(&calls.graphDestroy, &graphs[3], sizeof(void *));
  }
  return cuda(calls);
}

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

uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40); // quiet NaN
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// The row-major matrix in `rows` (`shape`) laid out as `layout` says:
/// itself in column panels, or its transpose.
AlignedBuffer inPanels(const AlignedBuffer &rows,
                       const std::vector<int64_t> &shape,
                       ManifestArg::Layout layout) {
  AlignedBuffer panels(rows.size());
  if (layout == ManifestArg::Layout::Panels)
    tprt::detail::packPanels(rows.as<float>(), shape[1], shape[0], shape[1],
                             panels.as<float>());
  else
    tprt::detail::packTransposedPanels(rows.as<float>(), shape[1], shape[0],
                                       shape[1], panels.as<float>());
  return panels;
}

AlignedBuffer toBf16(const AlignedBuffer &f32, size_t count) {
  AlignedBuffer out(count * sizeof(uint16_t));
  const float *in = f32.as<float>();
  uint16_t *bf16 = out.as<uint16_t>();
  for (size_t i = 0; i < count; ++i)
    bf16[i] = toBf16(in[i]);
  return out;
}

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

/// Whether writing `a` would overwrite `b`: one regular file (one inode),
/// or one name that is not there yet. Devices such as /dev/null take any.
static bool sameFile(const std::string &a, const std::string &b) {
  struct stat infoA, infoB;
  bool hasA = ::stat(a.c_str(), &infoA) == 0;
  bool hasB = ::stat(b.c_str(), &infoB) == 0;
  if (hasA && hasB)
    return S_ISREG(infoA.st_mode) && infoA.st_dev == infoB.st_dev &&
           infoA.st_ino == infoB.st_ino;
  return !hasA && !hasB && a == b;
}

std::optional<std::string> whyNotWritable(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    // fopen would refuse these only after the forward passes.
    if (S_ISDIR(info.st_mode))
      return "it is a directory";
    if (access(path.c_str(), W_OK) != 0)
      return "it is not writable";
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

std::vector<std::string> checkOutputs(const LaunchFiles &files,
                                      size_t outputs) {
  std::vector<std::pair<std::string, std::string>> writes; // what, path
  for (size_t j = 0; !files.output.empty() && j < outputs; ++j)
    writes.emplace_back("output", resultPath(files.output, j));
  if (!files.reportJson.empty())
    writes.emplace_back("report", files.reportJson);
  // What the run maps while it runs; an input .npy is copied when read.
  std::vector<std::string> mapped = files.weights;
  mapped.push_back(files.model);
  std::vector<std::string> errors;
  for (size_t k = 0; k < writes.size(); ++k) {
    const auto &[what, path] = writes[k];
    std::optional<std::string> why = whyNotWritable(path);
    for (const std::string &read : mapped)
      if (!why && sameFile(path, read))
        why = "it is '" + read + "', which this run reads";
    for (size_t e = 0; e < k && !why; ++e)
      if (sameFile(path, writes[e].second))
        why =
            "it is the " + writes[e].first + " '" + writes[e].second + "' too";
    if (why)
      errors.push_back("cannot write the " + what + " '" + path + "': " + *why);
  }
  return errors;
}

//===----------------------------------------------------------------------===//
// Checks and binding
//===----------------------------------------------------------------------===//

/// `names` quoted and joined with ", ".
static std::string quotedList(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

std::vector<std::string> checkManifest(const Manifest &manifest,
                                       const std::string &model,
                                       const Backend &backend, int worldSize) {
  const std::string &name = backend.name();
  bool bf16 = backend.takesBf16Weights();
  if (manifest.abiVersion != TPRT_ABI_VERSION)
    return {model + " was built for tprt ABI version " +
            std::to_string(manifest.abiVersion) +
            ", this tp-run implements version " +
            std::to_string(TPRT_ABI_VERSION)};
  if (manifest.backend != name)
    return {model + " was built for backend '" + manifest.backend +
            "', this tp-run runs '" + name + "'"};
  if (manifest.tpSize != worldSize)
    return {"world size " + std::to_string(worldSize) + " but " + model +
            " was compiled for tp " + std::to_string(manifest.tpSize)};
  std::vector<std::string> errors;
  for (const ManifestFunction &function : manifest.functions) {
    // A function's name is worth saying only where there are several.
    std::string in = "'" + model + "': " +
                     (manifest.functions.size() > 1 ? "@" + function.name + " "
                                                    : std::string());
    if (function.results.empty())
      errors.push_back(in + (manifest.functions.size() > 1
                                 ? "has no results"
                                 : "manifest has no results"));
    for (size_t i = 0; i < function.args.size(); ++i) {
      const ManifestArg &arg = function.args[i];
      std::string where =
          in + "argument " + std::to_string(i) + " ('" + arg.name + "')";
      // Integer buffers (token ids, positions, masks) are passed as they
      // are, on a device backend uploaded like the others.
      bool integer =
          arg.dtype == "i64" || arg.dtype == "i32" || arg.dtype == "i1";
      if (arg.dtype != "f32" && !integer &&
          !(bf16 && arg.role != "input" && arg.dtype == "bf16"))
        errors.push_back(where + " has dtype '" + arg.dtype + "'; the " + name +
                         " runtime takes f32, i64, i32, i1" +
                         (bf16 ? " (and bf16 weights)" : ""));
      if (arg.layout != ManifestArg::Layout::Rows && name != "cpu")
        errors.push_back(where + " is laid out in panels, which the " + name +
                         " runtime does not read");
      // A stack's parts are cut as the arguments they were.
      std::vector<std::pair<const ManifestArg *, std::string>> cut{
          {&arg, where}};
      for (const ManifestArg &part : arg.stack)
        cut.push_back({&part, where + ": part '" + part.name + "'"});
      for (auto [tensor, at] : cut) {
        Expected<std::vector<int64_t>> local =
            shardShape(tensor->shape, tensor->shard, manifest.tpSize);
        if (!local)
          errors.push_back(at + ": " + local.status().message());
        else if (*local != tensor->localShape)
          errors.push_back(at + ": local_shape " +
                           formatShape(tensor->localShape) +
                           " is not the shard " + formatShape(*local) + " of " +
                           formatShape(tensor->shape));
      }
    }
    // Results (next token ids among them) are fetched as bytes.
    for (const ManifestResult &result : function.results) {
      if (!npyElementSize(result.dtype))
        errors.push_back(in + "result '" + result.name + "' has dtype '" +
                         result.dtype + "'; the " + name +
                         " runtime takes f32, i64, i32, i1");
      const ManifestArg *updated =
          result.inPlace ? &function.args[*result.inPlace] : nullptr;
      if (updated && (updated->dtype != result.dtype ||
                      updated->localShape != result.localShape))
        errors.push_back(in + "result '" + result.name +
                         "' is updated in argument " +
                         std::to_string(*result.inPlace) + " ('" +
                         updated->name + "'), of another dtype or shape");
    }
  }
  return errors;
}

/// The checkpoint dtype of a manifest dtype (bf16 is converted from F32;
/// F32 may be stored narrower: widensToF32).
static std::string checkpointDtype(const std::string &dtype) {
  if (dtype == "i64")
    return "I64";
  if (dtype == "i32")
    return "I32";
  if (dtype == "i1")
    return "BOOL";
  return "F32";
}

using TensorsInOrder =
    std::vector<std::pair<const SafetensorsFile *, const TensorInfo *>>;

/// Every tensor of `checkpoints`: the files in order, each by data offset.
static TensorsInOrder
tensorsInFileOrder(const std::vector<SafetensorsFile> &checkpoints) {
  TensorsInOrder inFileOrder;
  for (const SafetensorsFile &checkpoint : checkpoints) {
    size_t first = inFileOrder.size();
    for (const auto &entry : checkpoint.tensors())
      inFileOrder.push_back({&checkpoint, &entry.second});
    std::sort(inFileOrder.begin() + first, inFileOrder.end(),
              [](auto a, auto b) { return a.second->data < b.second->data; });
  }
  return inFileOrder;
}

/// The shape a checkpoint holds `arg` in: padded by the loader to the
/// model's when the manifest says so (a checkpoint stored padded, as
/// Megatron-LM stores one, is taken as it is too).
static const std::vector<int64_t> &storedShape(const ManifestArg &arg) {
  return arg.checkpointShape ? *arg.checkpointShape : arg.shape;
}

/// "; unused tensors of shape [16, 8]: 'a', 'b'" for the checkpoint tensors
/// of `arg`'s shape that no argument is named after (a renamed tensor
/// usually keeps its shape); empty if there are none.
static std::string unusedOfShape(const std::vector<ManifestArg> &args,
                                 const ManifestArg &arg,
                                 const TensorsInOrder &inFileOrder) {
  std::vector<std::string> candidates;
  for (auto [checkpoint, info] : inFileOrder) {
    const std::string &name = info->name;
    bool used =
        std::any_of(args.begin(), args.end(), [&](const ManifestArg &a) {
          return (a.named && a.name == name) ||
                 std::any_of(
                     a.stack.begin(), a.stack.end(),
                     [&](const ManifestArg &p) { return p.name == name; });
        });
    if (!used && info->shape == storedShape(arg))
      candidates.push_back(name);
  }
  if (candidates.empty())
    return "";
  return "; unused tensors of shape " + formatShape(storedShape(arg)) + ": " +
         quotedList(candidates);
}

std::optional<std::string>
openCheckpoints(const std::vector<std::string> &paths,
                std::vector<SafetensorsFile> &checkpoints) {
  checkpoints.clear();
  checkpoints.reserve(paths.size()); // stable addresses
  for (const std::string &path : paths) {
    Expected<SafetensorsFile> file = SafetensorsFile::open(path);
    if (!file)
      return "checkpoint " + file.status().message();
    checkpoints.emplace_back(std::move(*file));
  }
  return std::nullopt;
}

/// The tensor named like `arg` and the checkpoint holding it (nulls when
/// none does, and when several do: an error).
static std::pair<const SafetensorsFile *, const TensorInfo *>
findNamed(const ManifestArg &arg,
          const std::vector<SafetensorsFile> &checkpoints,
          const std::string &where, std::vector<std::string> &errors) {
  std::pair<const SafetensorsFile *, const TensorInfo *> found{};
  std::vector<std::string> holders;
  for (const SafetensorsFile &checkpoint : checkpoints)
    if (const TensorInfo *tensor = checkpoint.find(arg.name)) {
      holders.push_back(checkpoint.path());
      found = {&checkpoint, tensor};
    }
  if (holders.size() <= 1)
    return found;
  errors.push_back(where + " is in " + quotedList(holders) + ": give it once");
  return {};
}

/// The checks of `tensor`, from `path`, bound to `arg`: dtype and shape.
static void checkBound(const ManifestArg &arg, const TensorInfo &tensor,
                       const std::string &path, const std::string &where,
                       std::vector<std::string> &errors) {
  std::string dtype = checkpointDtype(arg.dtype);
  if (tensor.dtype != dtype && !(dtype == "F32" && widensToF32(tensor.dtype)))
    errors.push_back(where + " in '" + path + "' is " + tensor.dtype +
                     ", the model takes " + dtype +
                     (dtype == "F32" ? " (or BF16, F16)" : ""));
  else if (tensor.shape != storedShape(arg) &&
           (arg.checkpointOffset || tensor.shape != arg.shape))
    errors.push_back(
        where + " in '" + path + "' has shape " + formatShape(tensor.shape) +
        ", the model takes " + formatShape(storedShape(arg)) +
        (arg.checkpointOffset
             ? " (its rows from " + std::to_string(*arg.checkpointOffset) +
                   " are the model's " + formatShape(arg.shape) + ")"
         : arg.checkpointShape ? " (or " + formatShape(arg.shape) + ", padded)"
                               : ""));
}

void bindWeights(const ManifestFunction &function,
                 const std::vector<SafetensorsFile> &checkpoints,
                 WeightBinding &binding, std::vector<std::string> &errors) {
  const std::vector<ManifestArg> &args = function.args;
  binding.tensors.assign(args.size(), nullptr);
  binding.files.assign(args.size(), nullptr);
  binding.parts.assign(args.size(), {});
  binding.inputs.clear();
  std::vector<std::string> paths;
  for (const SafetensorsFile &checkpoint : checkpoints)
    paths.push_back(checkpoint.path());
  TensorsInOrder inFileOrder = tensorsInFileOrder(checkpoints);
  std::string holdersText =
      (paths.size() == 1 ? "checkpoint " : "checkpoints ") + quotedList(paths);
  // A packed tensor missing, or of the wrong shape or dtype, is one
  // mistake however many weights read rows of it (buddy-mlir's LLaMA: 355):
  // said once, with a count.
  std::map<std::string, std::pair<size_t, size_t>> packedErrors;
  auto report = [&](const ManifestArg &arg, std::vector<std::string> found) {
    if (found.empty())
      return;
    if (arg.checkpointOffset) {
      auto [it, first] = packedErrors.try_emplace(arg.name, errors.size(), 0);
      if (!first) {
        ++it->second.second;
        return;
      }
    }
    errors.insert(errors.end(), found.begin(), found.end());
  };
  auto missing = [&](const ManifestArg &arg, const std::string &where) {
    report(arg, {holdersText + (paths.size() == 1 ? " has no " : " have no ") +
                 where + unusedOfShape(args, arg, inFileOrder)});
  };
  auto check = [&](const ManifestArg &arg, const TensorInfo &tensor,
                   const std::string &path, const std::string &where) {
    std::vector<std::string> found;
    checkBound(arg, tensor, path, where, found);
    report(arg, std::move(found));
  };
  // The tensor named like `arg`; false when several checkpoints hold it.
  auto find = [&](const ManifestArg &arg, const std::string &where,
                  std::pair<const SafetensorsFile *, const TensorInfo *> &at) {
    std::vector<std::string> found;
    at = findNamed(arg, checkpoints, where, found);
    report(arg, found);
    return found.empty();
  };
  size_t positional = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const ManifestArg &arg = args[i];
    if (arg.role == "input" || (!arg.named && arg.role.empty())) {
      binding.inputs.push_back(i);
      continue;
    }
    std::string where =
        "tensor '" + arg.name + "' (argument " + std::to_string(i) + ")";
    // Stacked weights: each part is its own tensor, which must be there.
    if (!arg.stack.empty()) {
      for (const ManifestArg &part : arg.stack) {
        std::string at = "tensor '" + part.name + "' (argument " +
                         std::to_string(i) + ", stacked in '" + arg.name + "')";
        std::pair<const SafetensorsFile *, const TensorInfo *> bound;
        bool once = find(part, at, bound);
        if (bound.second)
          check(part, *bound.second, bound.first->path(), at);
        else if (once)
          missing(part, at);
        binding.parts[i].push_back({bound.first, bound.second});
      }
      continue;
    }
    if (!arg.named) {
      if (positional < inFileOrder.size())
        std::tie(binding.files[i], binding.tensors[i]) =
            inFileOrder[positional];
      ++positional;
    } else {
      std::pair<const SafetensorsFile *, const TensorInfo *> bound;
      if (!find(arg, where, bound))
        continue;
      std::tie(binding.files[i], binding.tensors[i]) = bound;
    }
    const TensorInfo *tensor = binding.tensors[i];
    if (!tensor && arg.role.empty()) {
      binding.inputs.push_back(i);
      continue;
    }
    if (!tensor) {
      missing(arg, where);
      continue;
    }
    check(arg, *tensor, binding.files[i]->path(), where);
  }
  for (const auto &[name, error] : packedErrors)
    if (error.second)
      errors[error.first] +=
          "; " + std::to_string(error.second) + " more weights read rows of it";
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

Expected<ModelLibrary> ModelLibrary::open(const std::string &path) {
  // A name without a slash would be searched on the library path.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // dlopen of a truncated object dies of SIGBUS, of a FIFO waits forever.
  if (Status whole = checkSharedObject(path); !whole)
    return Status(whole.code(), "cannot load model " + whole.message());
  dlerror();
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status(TPRT_ERR_IO,
                  "cannot load model '" + path + "': " + dlerror());
  ModelLibrary library(handle);
  library.manifest =
      reinterpret_cast<ManifestFn>(dlsym(handle, "tp_model_manifest"));
  if (!library.manifest)
    return Status(TPRT_ERR_IO, "'" + path +
                                   "' does not export tp_model_manifest (not "
                                   "built by tp-compile?)");
  return library;
}

ModelLibrary::EntryFn ModelLibrary::entry(const std::string &symbol) const {
  return reinterpret_cast<EntryFn>(dlsym(handle, symbol.c_str()));
}

ModelLibrary::ModelLibrary(ModelLibrary &&other) noexcept
    : manifest(other.manifest), handle(other.handle) {
  other.handle = nullptr;
}

ModelLibrary::~ModelLibrary() {
  if (handle)
    dlclose(handle);
}

/// "'prefill', 'decode'".
static std::string functionNames(const Manifest &manifest) {
  std::vector<std::string> names;
  for (const ManifestFunction &function : manifest.functions)
    names.push_back(function.name);
  return quotedList(names);
}

std::vector<std::string> LoadedModel::load(const LaunchFiles &files,
                                           const Backend &backend, int rank,
                                           int worldSize) {
  this->backend = backend;
  const std::string &model = files.model;
  Expected<ModelLibrary> opened = ModelLibrary::open(model);
  if (!opened)
    return {opened.status().message()};
  library.emplace(std::move(*opened));
  const char *text = library->manifest();
  Expected<Manifest> parsed = parseManifest(text ? text : "");
  if (!parsed)
    return {"'" + model + "': " + parsed.status().message()};
  manifest_ = std::move(*parsed);
  std::vector<std::string> errors =
      checkManifest(manifest_, model, backend, worldSize);
  if (!errors.empty())
    return errors;

  // The functions to call: those named, or the model's only one.
  std::vector<std::string> names = files.functions;
  if (names.empty() && manifest_.functions.size() == 1)
    names.push_back(manifest_.functions.front().name);
  if (names.empty())
    return {"'" + model + "' has functions " + functionNames(manifest_) +
            ": choose one with --function, or generate with --generate"};
  selected.clear();
  entries.clear();
  auto select = [&](const std::string &name, bool required) {
    const ManifestFunction *function = manifest_.find(name);
    if (!function) {
      if (required)
        errors.push_back("'" + model + "' has no function '" + name +
                         "' (it has " + functionNames(manifest_) + ")");
      return;
    }
    ModelLibrary::EntryFn entry = library->entry(function->symbol);
    if (!entry)
      errors.push_back("'" + model + "' does not export " + function->symbol +
                       ", the entry of @" + name);
    selected.push_back(function);
    entries.push_back(entry);
  };
  for (const std::string &name : names)
    select(name, true);
  for (const std::string &name : files.optionalFunctions)
    select(name, false);
  if (!errors.empty())
    return errors;

  // The checkpoints: every weight present, of its dtype and full shape. A
  // model compiled with its weights inline takes none.
  if (files.weights.empty()) {
    std::vector<std::string> weightArgs;
    for (const ManifestFunction *function : selected)
      for (const ManifestArg &arg : function->args)
        if (arg.role == "weight")
          weightArgs.push_back(arg.name);
    if (!weightArgs.empty())
      return {"no --weights given; '" + model + "' takes " +
              std::to_string(weightArgs.size()) + " weights (the first '" +
              weightArgs.front() + "')"};
  }
  if (std::optional<std::string> fatal =
          openCheckpoints(files.weights, checkpoints))
    return {*fatal};
  // The functions share their weights: a problem with one is said once,
  // under the argument number of the first function that takes it.
  auto withoutArgument = [](std::string message) {
    size_t at = message.find(" (argument ");
    size_t end = at == std::string::npos ? at : message.find(')', at);
    return end == std::string::npos ? message : message.erase(at, end + 1 - at);
  };
  std::vector<std::string> said;
  bindings = std::vector<WeightBinding>(selected.size());
  for (size_t k = 0; k < selected.size(); ++k) {
    std::vector<std::string> found;
    bindWeights(*selected[k], checkpoints, bindings[k], found);
    for (std::string &error : found)
      if (std::find(said.begin(), said.end(), withoutArgument(error)) ==
          said.end()) {
        said.push_back(withoutArgument(error));
        errors.push_back(std::move(error));
      }
  }
  // One function runs on the --input files; generation makes its own.
  if (selected.size() == 1)
    readInputs(files, errors);

  // Only rank 0 writes, so only it checks: one file per result (generation's
  // files are checked once its signature says whether logits come too).
  if (rank == 0 && selected.size() == 1) {
    std::vector<std::string> found =
        checkOutputs(files, selected.front()->results.size());
    errors.insert(errors.end(), found.begin(), found.end());
  }
  return errors;
}

/// "'ids' i64 [1, 12], 'mask' i1 [1, 12]".
static std::string describeInputs(const ManifestFunction &function,
                                  const std::vector<size_t> &inputs) {
  std::string text;
  for (size_t i : inputs) {
    const ManifestArg &arg = function.args[i];
    text += (text.empty() ? "'" : ", '") + arg.name + "' " + arg.dtype + " " +
            formatShape(arg.shape);
  }
  return text;
}

/// Why the integer input `i` of `function` cannot run: an id outside the
/// vocabulary its lookup reads, a position past the caches the function
/// writes at it (a write there would land outside their buffers), or
/// @extend's count of the prompt's tokens outside 1 to its tokens.
static std::optional<std::string>
whyOutOfRange(const ManifestFunction &function, size_t i,
              const NpyArray &array) {
  const ManifestArg &arg = function.args[i];
  if (arg.dtype != "i64" && arg.dtype != "i32")
    return std::nullopt;
  std::vector<int64_t> values = integerValues(array);
  if (arg.tokens && arg.vocab)
    if (std::optional<std::string> why =
            idOutsideVocabulary(values, array.shape, *arg.vocab))
      return ": " + *why;
  // A ragged batch's left padding of each sequence: positions of its
  // caches (a negative one would read learned positions past the table).
  if (arg.name == "padding" && arg.shape.size() == 1)
    for (const ManifestResult &result : function.results) {
      if (!result.inPlace || function.args[*result.inPlace].shape.size() != 4)
        continue;
      const ManifestArg &cache = function.args[*result.inPlace];
      int64_t positions = cachePositions(cache);
      for (size_t b = 0; b < values.size(); ++b)
        if (values[b] < 0 || values[b] >= positions)
          return " is " + std::to_string(values[b]) + " at [" +
                 std::to_string(b) + "]; a sequence's left padding is 0 to " +
                 std::to_string(positions - 1) + " (the positions cache '" +
                 cache.name + "' holds)";
      break;
    }
  // A position beside caches [B, kv_heads, S_max, head_dim] that the
  // function updates in place: its S tokens go to positions [pos, pos + S).
  if (!isPosition(arg))
    return std::nullopt;
  int64_t tokens = 1;
  for (const ManifestArg &ids : function.args)
    if (ids.tokens && ids.shape.size() == 2)
      tokens = ids.shape[1];
  if (&arg !=
      &*std::find_if(function.args.begin(), function.args.end(), isPosition)) {
    if (arg.name == "valid" && (values[0] < 1 || values[0] > tokens))
      return " is " + std::to_string(values[0]) +
             "; it counts the step's tokens of the prompt, 1 to " +
             std::to_string(tokens);
    return std::nullopt;
  }
  for (const ManifestResult &result : function.results) {
    if (!result.inPlace)
      continue;
    const ManifestArg &cache = function.args[*result.inPlace];
    if (cache.shape.size() == 4 &&
        (values[0] < 0 || values[0] > cachePositions(cache) - tokens))
      return " is " + std::to_string(values[0]) + "; the cache '" + cache.name +
             "' " + formatShape(cache.shape) + " holds positions [0, " +
             std::to_string(cachePositions(cache)) + ")" +
             (tokens > 1 ? " and the step writes " + std::to_string(tokens)
                         : std::string());
  }
  return std::nullopt;
}

void LoadedModel::readInputs(const LaunchFiles &files,
                             std::vector<std::string> &errors) {
  const std::vector<ManifestArg> &args = selected.front()->args;
  const WeightBinding &weights = bindings.front();
  const std::vector<size_t> &inputs = weights.inputs;
  std::string model = "'" + files.model + "'";
  std::string wanted =
      inputs.empty() ? model + " takes no inputs: every argument is a weight"
                     : model + " takes inputs " +
                           describeInputs(*selected.front(), inputs);
  inputArrays.clear();
  inputArrays.resize(args.size());
  if (files.inputs.empty()) {
    if (!inputs.empty())
      errors.push_back("no --input given; " + wanted);
    return;
  }

  // Which file each input takes (an index into files.inputs).
  std::vector<std::optional<size_t>> given(args.size());
  // An input left without a file is named below, unless a file without a
  // name was refused: that file may well be the one missing.
  bool matched = true, unnamedRefused = false;
  for (size_t k = 0; k < files.inputs.size(); ++k) {
    const InputFile &file = files.inputs[k];
    if (file.name.empty()) {
      if (files.inputs.size() == 1 && inputs.size() == 1) {
        given[inputs.front()] = k;
        continue;
      }
      matched = false;
      unnamedRefused = true;
      errors.push_back("--input '" + file.path + "' has no name" +
                       (inputs.size() > 1 ? "; give each input as --input "
                                            "NAME=FILE.npy"
                                          : ""));
      continue;
    }
    auto input = std::find_if(inputs.begin(), inputs.end(), [&](size_t i) {
      return args[i].name == file.name;
    });
    if (input == inputs.end()) {
      matched = false;
      auto weight =
          std::find_if(args.begin(), args.end(), [&](const ManifestArg &arg) {
            return arg.name == file.name;
          });
      const SafetensorsFile *holder =
          weight == args.end() ? nullptr
                               : weights.files[size_t(weight - args.begin())];
      if (holder)
        errors.push_back("--input '" + file.name + "': a weight of " + model +
                         ", read from '" + holder->path() + "', not an input");
      else
        errors.push_back("--input '" + file.name + "': " + model +
                         " has no input of that name");
    } else if (given[*input]) {
      matched = false;
      errors.push_back("--input '" + file.name + "' is given twice");
    } else {
      given[*input] = k;
    }
  }
  TensorsInOrder inFileOrder = tensorsInFileOrder(checkpoints);
  for (size_t i : inputs) {
    if (given[i] || unnamedRefused)
      continue;
    matched = false;
    const ManifestArg &arg = args[i];
    std::string missing =
        "no --input '" + arg.name + "' (argument " + std::to_string(i) + ")";
    // A named argument is an input only because no checkpoint holds it:
    // perhaps a weight renamed or a checkpoint left out.
    if (arg.named && arg.role.empty())
      missing += files.weights.empty()
                     ? " and no --weights"
                     : " and no tensor of that name in " +
                           quotedList(files.weights) +
                           unusedOfShape(args, arg, inFileOrder);
    errors.push_back(missing);
  }
  if (!matched) {
    errors.push_back(wanted);
    return;
  }

  for (size_t i : inputs) {
    const ManifestArg &arg = args[i];
    const std::string &path = files.inputs[*given[i]].path;
    std::string where = "input '" + arg.name + "' ('" + path + "')";
    Expected<NpyArray> read = readNpy(path);
    if (!read) {
      errors.push_back("input " + read.status().message());
      continue;
    }
    // bf16 arguments are converted from f32 (as from the checkpoint).
    std::string dtype = arg.dtype == "bf16" ? "f32" : arg.dtype;
    if (read->dtype != dtype)
      errors.push_back(where + " has dtype " + read->dtype + " ('" +
                       npyDescr(read->dtype) + "'), the model takes " + dtype +
                       " ('" + npyDescr(dtype) + "')");
    else if (read->shape != arg.shape)
      errors.push_back(where + " has shape " + formatShape(read->shape) +
                       ", the model takes " + formatShape(arg.shape));
    else if (std::optional<std::string> why =
                 whyOutOfRange(*selected.front(), i, *read))
      errors.push_back(where + *why);
    inputArrays[i].emplace(std::move(*read));
  }
}

/// Rank `rank`'s part of `tensor` as `arg` takes it: its rows of a packed
/// tensor, padded, sliced, widened (or narrowed to bf16); the panels come
/// after. `file` (null for an input) holds the tensor and releases its pages.
static Expected<AlignedBuffer> sliceFor(const ManifestArg &arg,
                                        const TensorInfo *tensor,
                                        const SafetensorsFile *file, int rank,
                                        int worldSize) {
  // A weight packed with others in one tensor is its rows of it.
  TensorInfo rows;
  if (arg.checkpointOffset) {
    rows = rowsOf(*tensor, *arg.checkpointOffset, arg.shape);
    tensor = &rows;
  }
  // A padded weight (a vocabulary the ranks divide only padded) is
  // padded whole, then sliced.
  bool pad = file && arg.checkpointShape && tensor->shape != arg.shape;
  Expected<AlignedBuffer> padded = AlignedBuffer();
  TensorInfo paddedTensor;
  if (pad) {
    padded = padTensor(*tensor, arg.shape);
    if (!padded)
      return padded.status();
    paddedTensor = *tensor;
    paddedTensor.shape = arg.shape;
    paddedTensor.data = padded->as<uint8_t>();
    paddedTensor.byteSize = padded->size();
    file->release(*tensor);
    tensor = &paddedTensor;
  }
  Expected<SlicedTensor> slice =
      sliceTensor(*tensor, arg.shard, rank, worldSize);
  if (file && !pad)
    file->release(*tensor);
  if (!slice)
    return slice.status();
  // A BF16 checkpoint's tensor is a bf16 weight as it is; other
  // narrow floats are widened (and narrowed again for a bf16 one).
  size_t count = size_t(numElements(slice->shape));
  bool asIs = arg.dtype == "bf16" && tensor->dtype == "BF16";
  if (widensToF32(tensor->dtype) && !asIs)
    slice->buffer = widenToF32(slice->buffer, count, tensor->dtype);
  if (arg.dtype == "bf16" && !asIs)
    slice->buffer = toBf16(slice->buffer, count);
  return std::move(slice->buffer);
}

Expected<AlignedBuffer> stackSlices(const ManifestArg &arg,
                                    const std::vector<BoundTensor> &parts,
                                    int rank, int worldSize) {
  std::vector<AlignedBuffer> slices;
  size_t bytes = 0;
  for (size_t j = 0; j < arg.stack.size(); ++j) {
    if (j >= parts.size() || !parts[j].second)
      return Status(TPRT_ERR_INVALID_ARGUMENT,
                    "'" + arg.name + "': no tensor for its part '" +
                        arg.stack[j].name + "'");
    Expected<AlignedBuffer> slice = sliceFor(arg.stack[j], parts[j].second,
                                             parts[j].first, rank, worldSize);
    if (!slice)
      return slice.status();
    bytes += slice->size();
    slices.push_back(std::move(*slice));
  }
  // Each slice is `outer` rows (the dimensions before the stacked one) of
  // its own width; the stack's rows are theirs side by side.
  int64_t outer = 1;
  for (int64_t d = 0; d < arg.stackDim; ++d)
    outer *= arg.localShape[size_t(d)];
  AlignedBuffer stacked(bytes);
  uint8_t *at = stacked.as<uint8_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (const AlignedBuffer &slice : slices) {
      size_t width = slice.size() / size_t(outer);
      std::memcpy(at, slice.as<uint8_t>() + size_t(o) * width, width);
      at += width;
    }
  return stacked;
}

Expected<AlignedBuffer> sliceArgument(const ManifestArg &arg,
                                      const TensorInfo *tensor,
                                      const SafetensorsFile *file,
                                      const std::vector<BoundTensor> &parts,
                                      int rank, int worldSize) {
  Expected<AlignedBuffer> slice =
      !arg.stack.empty() ? stackSlices(arg, parts, rank, worldSize)
                         : sliceFor(arg, tensor, file, rank, worldSize);
  if (slice && arg.layout != ManifestArg::Layout::Rows)
    *slice = inPanels(*slice, arg.localShape, arg.layout);
  return slice;
}

Expected<ModelArguments> LoadedModel::slice(int rank, int worldSize) {
  ModelArguments out;
  std::vector<std::string> errors;
  // Per selected function, the buffer of each argument.
  std::vector<std::vector<size_t>> argBuffers(selected.size());
  // The buffers made so far, by the argument that made them: another
  // function's argument of the same name, dtype and cut shares them (the
  // weights, and the caches of @prefill and @decode).
  std::vector<const ManifestArg *> owners;
  for (size_t k = 0; k < selected.size(); ++k) {
    const ManifestFunction &function = *selected[k];
    const WeightBinding &binding = bindings[k];
    for (size_t i = 0; i < function.args.size(); ++i) {
      const ManifestArg &arg = function.args[i];
      auto shared = std::find_if(
          owners.begin(), owners.end(),
          [&](const ManifestArg *owner) { return sameTensor(*owner, arg); });
      if (shared != owners.end()) {
        argBuffers[k].push_back(size_t(shared - owners.begin()));
        continue;
      }
      const std::optional<NpyArray> *input =
          k == 0 && !inputArrays.empty() && inputArrays[i] ? &inputArrays[i]
                                                           : nullptr;
      const TensorInfo *weight = binding.tensors[i];
      argBuffers[k].push_back(owners.size());
      owners.push_back(&arg);
      if (!input && !weight && arg.stack.empty()) {
        // An input the launcher fills (generation: ids, positions,
        // caches), zeroed until then.
        out.buffers.emplace_back(size_t(numElements(arg.localShape)) *
                                     npyElementSize(arg.dtype).value_or(4),
                                 /*zero=*/true);
        continue;
      }
      // An input is sliced like a weight.
      TensorInfo inputTensor;
      if (input) {
        const NpyArray &array = **input;
        inputTensor.name = arg.name;
        inputTensor.dtype = array.dtype;
        inputTensor.shape = array.shape;
        inputTensor.elementSize = array.elementSize;
        inputTensor.data =
            reinterpret_cast<const uint8_t *>(array.buffer.data());
        inputTensor.byteSize = array.buffer.size();
      }
      Expected<AlignedBuffer> slice =
          sliceArgument(arg, input ? &inputTensor : weight,
                        input ? nullptr : binding.files[i], binding.parts[i],
                        rank, worldSize);
      if (!slice) {
        errors.push_back(slice.status().message());
        out.buffers.emplace_back();
        continue;
      }
      if (!input)
        out.weightBytes_ += slice->size();
      out.buffers.push_back(std::move(*slice));
    }
  }
  if (!errors.empty()) {
    std::string message;
    for (const std::string &error : errors)
      message += (message.empty() ? "" : "\n") + error;
    return Status(TPRT_ERR_INVALID_ARGUMENT, message);
  }
  for (size_t k = 0; k < selected.size(); ++k) {
    const ManifestFunction &function = *selected[k];
    ModelArguments::Call &call = out.calls.emplace_back();
    for (size_t i = 0; i < function.args.size(); ++i)
      call.slots.push_back({argBuffers[k][i], function.args[i].localShape});
    // A result updated in place is its argument's buffer: the entry
    // ignores its slot, and reading the result reads that buffer.
    for (const ManifestResult &result : function.results) {
      if (result.inPlace) {
        call.slots.push_back(
            {argBuffers[k][*result.inPlace], result.localShape});
        continue;
      }
      call.slots.push_back({out.buffers.size(), result.localShape});
      out.buffers.emplace_back(size_t(numElements(result.localShape)) *
                                   npyElementSize(result.dtype).value_or(4),
                               /*zero=*/true);
    }
    call.firstResult = function.args.size();
  }
  out.pointTo([&](size_t b) { return out.buffers[b].data(); });
  return out;
}

Status LoadedModel::call(ModelArguments &arguments, size_t function) const {
  entries[function](arguments.pointers(function));
  // A call on a device is asynchronous on the rank's stream.
  if (const DeviceCalls *calls = backend->device())
    if (calls->synchronize() != TPRT_OK)
      return Status(TPRT_ERR_NO_DEVICE, calls->lastError());
  return Status::success();
}

std::optional<std::string> LoadedModel::whyNotReplayable(size_t k) const {
  const ManifestFunction &fn = function(k);
  if (!fn.hostReads)
    return "its manifest does not say whether @" + fn.name +
           " reads device memory on the host (compiled before manifests "
           "said so): compile it again";
  if (*fn.hostReads)
    return "@" + fn.name +
           " reads device memory on the host within a call (the length of "
           "a decode step's attention), which a CUDA graph cannot replay; "
           "build it with tpmlir.build --decode-attention masked";
  return std::nullopt;
}

Expected<LoadedModel::Replay> LoadedModel::replay(ModelArguments &arguments,
                                                  size_t function) const {
  const DeviceCalls *calls = backend->device();
  if (!backend->hasGraphs())
    return Replay{false, "the " + backend->name() + " backend has no graphs"};
  if (std::optional<std::string> why = whyNotReplayable(function))
    return Replay{false, *why};
  arguments.graphs.resize(arguments.calls.size());
  auto &graph = arguments.graphs[function];
  if (!graph) {
    if (calls->graphBegin() != TPRT_OK)
      return Replay{false, calls->lastError()};
    entries[function](arguments.pointers(function));
    void *captured = nullptr;
    if (calls->graphEnd(&captured) != TPRT_OK)
      return Replay{false, calls->lastError()};
    graph = {captured, {calls}};
  }
  if (calls->graphLaunch(graph.get()) != TPRT_OK) {
    graph.reset();
    return Replay{false, calls->lastError()};
  }
  if (calls->synchronize() != TPRT_OK)
    return Status(TPRT_ERR_NO_DEVICE, calls->lastError());
  return Replay{true, ""};
}

void ModelArguments::pointTo(
    const std::function<void *(size_t buffer)> &address) {
  for (Call &call : calls) {
    call.descriptors.clear();
    call.pointers.clear();
    for (const Slot &slot : call.slots)
      call.descriptors.push_back(
          makeDescriptor(address(slot.buffer), slot.shape));
    for (std::vector<int64_t> &descriptor : call.descriptors)
      call.pointers.push_back(descriptor.data());
  }
}

Status ModelArguments::place(const Backend &backend) {
  device_ = backend.device();
  if (!device_)
    return Status::success();
  // Every buffer the model sees is device memory: upload each (the results
  // zeroed) once; the descriptors point to the device copies.
  for (AlignedBuffer &buffer : buffers) {
    void *pointer = nullptr;
    if (device_->alloc(buffer.size(), 0, &pointer) != TPRT_OK)
      return Status(TPRT_ERR_NO_DEVICE, device_->lastError());
    device.emplace_back(pointer, DeviceFree{device_});
    if (device_->copyToDevice(pointer, buffer.data(), buffer.size()) != TPRT_OK)
      return Status(TPRT_ERR_NO_DEVICE, device_->lastError());
  }
  pointTo([&](size_t b) { return device[b].get(); });
  return Status::success();
}

Status ModelArguments::fetchResults() {
  if (!device_)
    return Status::success();
  // Every call's results, those in place in an argument too.
  for (const Call &call : calls)
    for (size_t s = call.firstResult; s < call.slots.size(); ++s) {
      size_t b = call.slots[s].buffer;
      if (device_->copyToHost(buffers[b].data(), device[b].get(),
                              buffers[b].size()) != TPRT_OK)
        return Status(TPRT_ERR_NO_DEVICE, device_->lastError());
    }
  return Status::success();
}

Status ModelArguments::write(size_t function, size_t arg, const void *data) {
  size_t b = calls[function].slots[arg].buffer;
  std::memcpy(buffers[b].data(), data, buffers[b].size());
  if (device_ && device_->copyToDevice(device[b].get(), data,
                                       buffers[b].size()) != TPRT_OK)
    return Status(TPRT_ERR_NO_DEVICE, device_->lastError());
  return Status::success();
}

Status ModelArguments::read(size_t function, size_t result, void *data) {
  const Call &call = calls[function];
  size_t b = call.slots[call.firstResult + result].buffer;
  if (device_ && device_->copyToHost(buffers[b].data(), device[b].get(),
                                     buffers[b].size()) != TPRT_OK)
    return Status(TPRT_ERR_NO_DEVICE, device_->lastError());
  std::memcpy(data, buffers[b].data(), buffers[b].size());
  return Status::success();
}

namespace {

/// A run's files, written one after the other; if any fails, those already
/// written are removed: a failed run leaves no output.
class OutputWriter {
public:
  void npy(const std::string &path, const void *data,
           const std::vector<int64_t> &shape, const std::string &dtype) {
    if (Status status = writeNpy(path, data, shape, dtype))
      written.push_back(path);
    else
      errors.push_back(status.message());
  }

  void report(const std::string &path, const std::string &text) {
    std::ofstream file(path);
    bool opened = file.is_open();
    file << text;
    // A full disk shows only once the buffer is written out.
    file.close();
    if (file) {
      written.push_back(path);
      return;
    }
    if (opened)
      removeWrittenFile(path);
    errors.push_back("cannot write the report '" + path + "'");
  }

  /// The messages of the writes that failed.
  std::vector<std::string> finish() {
    if (!errors.empty())
      for (const std::string &path : written)
        removeWrittenFile(path);
    return std::move(errors);
  }

private:
  std::vector<std::string> written, errors;
};

} // namespace

std::vector<std::string> writeResults(const LaunchFiles &files,
                                      const ManifestFunction &function,
                                      const ModelArguments &arguments,
                                      const RunReport &report) {
  OutputWriter writer;
  for (size_t j = 0; !files.output.empty() && j < function.results.size(); ++j)
    writer.npy(resultPath(files.output, j), arguments.result(j).data(),
               function.results[j].localShape, function.results[j].dtype);
  if (!files.reportJson.empty())
    writer.report(files.reportJson, reportJson(report));
  return writer.finish();
}

std::vector<std::string> writeGeneration(const LaunchFiles &files,
                                         const std::vector<int64_t> &ids,
                                         const std::vector<float> &logits,
                                         const std::vector<int64_t> &shape,
                                         const GenerationReport &report) {
  OutputWriter writer;
  if (!files.output.empty())
    writer.npy(files.output, ids.data(), shape, "i64");
  if (!files.output.empty() && !logits.empty()) {
    int64_t count = shape[0] * shape[1];
    writer.npy(resultPath(files.output, 1), logits.data(),
               {shape[0], shape[1], int64_t(logits.size()) / count}, "f32");
  }
  if (!files.reportJson.empty())
    writer.report(files.reportJson, reportJson(report));
  return writer.finish();
}

} // namespace tprt

//===- launch.h - loading, checking and calling a compiled model -*- C++
//-*-===//
//
// What a launcher (tp-run) does on each rank between its command line and
// the forward passes, without communicating (library tprt_loader): open the
// model .so and parse its manifest, check it against the backend and the
// world size, bind its weight arguments to checkpoint tensors, read the
// input, and then slice every argument for the rank, convert bf16 weights,
// put the buffers where the backend's runtime wants them and build the
// memref descriptors tp_model_forward takes. Every problem comes back as a
// message; nothing here ends the process.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LAUNCH_H
#define TPRT_LAUNCH_H

#include "tprt/loader.h"
#include "tprt/manifest.h"
#include "tprt/report.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tprt {

/// tprt_cuda.h's launcher calls: how a launcher moves buffers to and from
/// the device of a runtime that runs on one.
struct DeviceCalls {
  tprt_status (*alloc)(size_t bytes, int zero, void **out);
  tprt_status (*free)(void *pointer);
  tprt_status (*copyToDevice)(void *device, const void *host, size_t bytes);
  tprt_status (*copyToHost)(void *host, const void *device, size_t bytes);
  tprt_status (*synchronize)(void);
  const char *(*lastError)(void);
};

/// The backend a launcher runs models on: the runtime (libtprt, "cpu";
/// libtprt_cuda, "cuda") the process is linked with, whose C ABI the
/// model's calls resolve against.
class Backend {
public:
  /// Host buffers; f32 only.
  static Backend cpu();
  /// Device buffers moved with `calls`; also takes bf16 weights
  /// (tp-compile --dtype bf16).
  static Backend cuda(const DeviceCalls &calls);
  /// The runtime this process is linked with: cuda when it exports
  /// tprt_cuda.h's launcher calls, cpu otherwise.
  static Backend ofThisProcess();

  /// The manifest's name for it ("cpu", "cuda").
  const std::string &name() const { return name_; }
  /// Whether weight arguments may be bf16 (converted from the
  /// checkpoint's f32); every other buffer is f32.
  bool takesBf16Weights() const { return device_.has_value(); }
  /// Null for a backend on host memory.
  const DeviceCalls *device() const { return device_ ? &*device_ : nullptr; }

private:
  Backend(std::string name, std::optional<DeviceCalls> device)
      : name_(std::move(name)), device_(device) {}
  std::string name_;
  std::optional<DeviceCalls> device_;
};

/// A memref descriptor over a contiguous buffer of `shape`:
/// { allocated, aligned, offset, sizes[R], strides[R] }, 8 bytes each.
std::vector<int64_t> makeDescriptor(void *data,
                                    const std::vector<int64_t> &shape);

/// `value` rounded to bf16 (to nearest, ties to even; NaN stays a quiet
/// NaN), as arith.truncf rounds on the GPU.
uint16_t toBf16(float value);
/// `count` floats of `f32` as bf16.
AlignedBuffer toBf16(const AlignedBuffer &f32, size_t count);

/// A result file name: `output` for result 0, y.1.npy for result 1 of
/// y.npy (y.1 for y), ...
std::string resultPath(const std::string &output, size_t index);

/// Why `path` could not be created or overwritten (none if it can): a
/// directory, or a missing or read-only directory.
std::optional<std::string> whyNotWritable(const std::string &path);

/// The model-level checks of `manifest` (loaded from `model`): ABI version,
/// backend, world size == tp size, argument dtypes, local shapes against
/// the shards, result dtypes. The first three stop the checks (one
/// message); the others are all reported.
std::vector<std::string> checkManifest(const Manifest &manifest,
                                       const std::string &model,
                                       const Backend &backend, int worldSize);

/// The checkpoint tensors bound to a model's weight arguments.
struct WeightBinding {
  /// The checkpoints, in the order given.
  std::vector<SafetensorsFile> checkpoints;
  /// Per manifest argument: its tensor and the checkpoint holding it (null
  /// for an input and for a weight left unbound).
  std::vector<const TensorInfo *> tensors;
  std::vector<const SafetensorsFile *> files;
  /// The arguments that are inputs, in order: role "input", and the named
  /// ones without a role that no checkpoint holds.
  std::vector<size_t> inputs;

  WeightBinding() = default;
  // `tensors` and `files` point into `checkpoints`.
  WeightBinding(const WeightBinding &) = delete;
  WeightBinding &operator=(const WeightBinding &) = delete;
};

/// Opens `paths` and sorts the arguments of `manifest` into weights and
/// inputs: a named argument is a weight when a checkpoint holds a tensor of
/// its name (with role "weight" it must), an input otherwise; an unnamed
/// one is what its role says. Binds every weight to its tensor, checking
/// dtype (the checkpoint's F32, I64, I32, BOOL for f32 or bf16, i64, i32,
/// i1) and shape; problems go to `errors`. A named weight binds to the
/// tensor of that name, which exactly one checkpoint must hold (a missing
/// one names the unused tensors of its shape); an unnamed one to the tensor
/// at its position among the unnamed weights (the checkpoints in order,
/// each by data offset). Returns the error that stops the checks, an
/// unreadable checkpoint, if any.
std::optional<std::string> bindWeights(const Manifest &manifest,
                                       const std::vector<std::string> &paths,
                                       WeightBinding &binding,
                                       std::vector<std::string> &errors);

/// A dlopen'ed model (model.h); closed on destruction.
class ModelLibrary {
public:
  using ManifestFn = const char *(*)();
  using ForwardFn = void (*)(void **);

  /// Checks that `path` is a whole shared object (checkSharedObject), opens
  /// it and finds both symbols.
  static Expected<ModelLibrary> open(const std::string &path);
  ModelLibrary(ModelLibrary &&other) noexcept;
  ModelLibrary &operator=(ModelLibrary &&) = delete;
  ModelLibrary(const ModelLibrary &) = delete;
  ~ModelLibrary();

  ManifestFn manifest = nullptr;
  ForwardFn forward = nullptr;

private:
  explicit ModelLibrary(void *handle) : handle(handle) {}
  void *handle;
};

/// One --input: `name` is empty in the form without a name (--input
/// FILE.npy), which a model of one input takes.
struct InputFile {
  std::string name, path;
};

/// The files a launch reads and writes, as given on the command line.
struct LaunchFiles {
  std::string model;
  /// Checkpoints, in order; none for a model without weight arguments.
  std::vector<std::string> weights;
  std::vector<InputFile> inputs;
  /// Written by rank 0 at the end (empty: not written).
  std::string output, reportJson;
};

/// The buffers of one rank's forward pass: its slice of every argument and
/// a zeroed buffer per result, each with its descriptor; on a device
/// backend, after place(), device copies the descriptors point to.
class ModelArguments {
public:
  /// Uploads every buffer to the backend's device (nothing on the host
  /// backend) and points the descriptors there; the message on failure is
  /// the runtime's.
  Status place(const Backend &backend);
  /// After the forward passes: copies the results back from the device.
  Status fetchResults();

  /// What tp_model_forward takes: one descriptor per argument, then per
  /// result.
  void **pointers() { return pointers_.data(); }
  /// Result `j`'s host buffer.
  const AlignedBuffer &result(size_t j) const {
    return buffers[firstResult + j];
  }
  /// Bytes of this rank's weight slices.
  size_t weightBytes() const { return weightBytes_; }

private:
  friend class LoadedModel;
  struct DeviceFree {
    const DeviceCalls *calls;
    void operator()(void *pointer) const { calls->free(pointer); }
  };
  std::vector<AlignedBuffer> buffers;
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> pointers_;
  std::vector<std::unique_ptr<void, DeviceFree>> device;
  const DeviceCalls *calls = nullptr;
  size_t firstResult = 0;
  size_t weightBytes_ = 0;
};

/// Everything one rank loads and checks before the ranks agree to go on.
class LoadedModel {
public:
  /// Loads the model, its manifest, the checkpoints and the input and
  /// checks them against each other, `backend` and `worldSize`; on rank 0
  /// also that the outputs can be written. Returns the problems found
  /// (empty when all is well); the messages are tp-run's.
  std::vector<std::string> load(const LaunchFiles &files,
                                const Backend &backend, int rank,
                                int worldSize);

  /// After a load() that found nothing wrong: rank `rank`'s slice of every
  /// argument (read from the mapped checkpoints, whose pages are released
  /// after), bf16 weights converted, and zeroed results. Fails (every
  /// message on its own line) only where load() did not check.
  Expected<ModelArguments> slice(int rank, int worldSize);

  /// One forward pass; on a device backend it waits for the rank's stream.
  Status forward(ModelArguments &arguments) const;

  const Manifest &manifest() const { return manifest_; }
  /// After load(): the arguments that are inputs, in order.
  const std::vector<size_t> &inputs() const { return weights.inputs; }

private:
  /// Matches `files` to the model's inputs and reads them; problems go to
  /// `errors`.
  void readInputs(const LaunchFiles &files, std::vector<std::string> &errors);

  std::optional<Backend> backend;
  std::optional<ModelLibrary> library;
  Manifest manifest_;
  WeightBinding weights;
  /// Per manifest argument: the array read for an input.
  std::vector<std::optional<NpyArray>> inputArrays;
};

/// Rank 0's last step: each result to its file (resultPath of
/// `files.output`) and `report` to `files.reportJson`, those that are set;
/// the messages of the writes that failed.
std::vector<std::string> writeResults(const LaunchFiles &files,
                                      const Manifest &manifest,
                                      const ModelArguments &arguments,
                                      const RunReport &report);

} // namespace tprt

#endif // TPRT_LAUNCH_H

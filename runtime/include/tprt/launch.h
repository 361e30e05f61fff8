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
#include <functional>
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
  /// CUDA graphs (tprt_graph_*); null when the runtime has none.
  tprt_status (*graphBegin)(void) = nullptr;
  tprt_status (*graphEnd)(void **graph) = nullptr;
  tprt_status (*graphLaunch)(void *graph) = nullptr;
  void (*graphDestroy)(void *graph) = nullptr;
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
  /// Whether a call can be captured once and replayed (CUDA graphs).
  bool hasGraphs() const { return device_ && device_->graphBegin; }

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
/// directory, a file not writable, a missing or read-only directory.
std::optional<std::string> whyNotWritable(const std::string &path);

/// The model-level checks of `manifest` (loaded from `model`): ABI version,
/// backend, world size == tp size, and per function argument dtypes, local
/// shapes against the shards, result dtypes and in-place results. The
/// first three stop the checks (one message); the others are all reported.
std::vector<std::string> checkManifest(const Manifest &manifest,
                                       const std::string &model,
                                       const Backend &backend, int worldSize);

/// A checkpoint tensor bound to an argument, and the checkpoint holding it.
using BoundTensor = std::pair<const SafetensorsFile *, const TensorInfo *>;

/// The checkpoint tensors bound to one function's weight arguments.
struct WeightBinding {
  /// Per argument of the function: its tensor and the checkpoint holding
  /// it (null for an input and for a weight left unbound).
  std::vector<const TensorInfo *> tensors;
  std::vector<const SafetensorsFile *> files;
  /// Per argument, its stacked parts' checkpoints and tensors (a stack's
  /// own `tensors` entry is null).
  std::vector<std::vector<BoundTensor>> parts;
  /// The arguments that are inputs, in order: role "input", and the named
  /// ones without a role that no checkpoint holds.
  std::vector<size_t> inputs;
};

/// Opens the checkpoints at `paths`, in order, into `checkpoints`; the
/// error of the first that cannot be read.
std::optional<std::string>
openCheckpoints(const std::vector<std::string> &paths,
                std::vector<SafetensorsFile> &checkpoints);

/// The stacked argument `arg` (a manifest "stack"), as the launcher builds
/// it: each part's slice of its tensor in `parts` for rank `rank` of
/// `worldSize` (its rows of a packed tensor, padded, cut, widened or
/// narrowed to bf16), one after the other along `arg.stackDim`. A part
/// without a tensor is an error.
Expected<AlignedBuffer> stackSlices(const ManifestArg &arg,
                                    const std::vector<BoundTensor> &parts,
                                    int rank, int worldSize);

/// Rank `rank`'s buffer of argument `arg` as the entry takes it: a stack
/// built from its `parts` (stackSlices), any other argument its part of
/// `tensor` (of checkpoint `file`; null for an input read from a file): its
/// rows of a packed tensor, padded, cut, widened or narrowed to bf16; then
/// laid out in panels where `arg.layout` says. The errors are those load()
/// does not check.
Expected<AlignedBuffer> sliceArgument(const ManifestArg &arg,
                                      const TensorInfo *tensor,
                                      const SafetensorsFile *file,
                                      const std::vector<BoundTensor> &parts,
                                      int rank, int worldSize);

/// Sorts the arguments of `function` into weights and inputs: a named
/// argument is a weight when a checkpoint holds a tensor of its name (with
/// role "weight" it must), an input otherwise; an unnamed one is what its
/// role says. Binds every weight to its tensor, checking dtype (the
/// checkpoint's F32, I64, I32, BOOL for f32 or bf16, i64, i32, i1) and
/// shape; problems go to `errors`. A named weight binds to the tensor of
/// that name, which exactly one checkpoint must hold (a missing one names
/// the unused tensors of its shape); an unnamed one to the tensor at its
/// position among the unnamed weights (the checkpoints in order, each by
/// data offset). `binding` points into `checkpoints`.
void bindWeights(const ManifestFunction &function,
                 const std::vector<SafetensorsFile> &checkpoints,
                 WeightBinding &binding, std::vector<std::string> &errors);

/// A dlopen'ed model (model.h); closed on destruction.
class ModelLibrary {
public:
  using ManifestFn = const char *(*)();
  using EntryFn = void (*)(void **);

  /// Checks that `path` is a whole shared object (checkSharedObject), opens
  /// it and finds tp_model_manifest.
  static Expected<ModelLibrary> open(const std::string &path);
  ModelLibrary(ModelLibrary &&other) noexcept;
  ModelLibrary &operator=(ModelLibrary &&) = delete;
  ModelLibrary(const ModelLibrary &) = delete;
  ~ModelLibrary();

  /// The entry exported as `symbol` (a manifest function's), or null.
  EntryFn entry(const std::string &symbol) const;

  ManifestFn manifest = nullptr;

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
  /// The functions to call: one, run on `inputs` (--function; none: the
  /// model's only function), or "prefill" and "decode" for generation,
  /// whose inputs the launcher fills.
  std::vector<std::string> functions;
  /// Selected after `functions` when the model has them (generation:
  /// "extend", a chunked prefill's).
  std::vector<std::string> optionalFunctions;
};

/// Rank 0's checks of what a run writes: `outputs` results (resultPath of
/// files.output) and the report, each writable (whyNotWritable), none the
/// model or a checkpoint (which the run maps while it runs), none another
/// of them. One message per file refused.
std::vector<std::string> checkOutputs(const LaunchFiles &files, size_t outputs);

/// The buffers of one rank's calls: its slice of every argument and a
/// zeroed buffer per result, each with its descriptor, per selected
/// function; the functions share the buffers of arguments of one name and
/// cut (weights, caches), and a result updated in place is its argument's
/// buffer. On a device backend, after place(), device copies the
/// descriptors point to.
class ModelArguments {
public:
  /// Uploads every buffer to the backend's device (nothing on the host
  /// backend) and points the descriptors there; the message on failure is
  /// the runtime's.
  Status place(const Backend &backend);
  /// After the calls: copies every function's results back from the device.
  Status fetchResults();
  /// Sets argument `arg` of function `function` (all its bytes) from
  /// `data`, on the device too.
  Status write(size_t function, size_t arg, const void *data);
  /// Copies result `result` of function `function` (from the device) into
  /// `data`.
  Status read(size_t function, size_t result, void *data);

  /// What the entry of function `function` takes: one descriptor per
  /// argument, then per result.
  void **pointers(size_t function = 0) {
    return calls[function].pointers.data();
  }
  /// Result `j`'s host buffer (after fetchResults on a device).
  const AlignedBuffer &result(size_t j, size_t function = 0) const {
    const Call &call = calls[function];
    return buffers[call.slots[call.firstResult + j].buffer];
  }
  /// Bytes of this rank's weight slices.
  size_t weightBytes() const { return weightBytes_; }

private:
  friend class LoadedModel;
  struct DeviceFree {
    const DeviceCalls *calls;
    void operator()(void *pointer) const { calls->free(pointer); }
  };
  struct GraphDestroy {
    const DeviceCalls *calls;
    void operator()(void *graph) const { calls->graphDestroy(graph); }
  };
  struct Slot {
    size_t buffer;
    std::vector<int64_t> shape;
  };
  struct Call {
    /// Per argument, then per result: its buffer and shape.
    std::vector<Slot> slots;
    std::vector<std::vector<int64_t>> descriptors;
    std::vector<void *> pointers;
    size_t firstResult = 0;
  };
  /// (Re)builds every call's descriptors over the buffers at `address`.
  void pointTo(const std::function<void *(size_t buffer)> &address);

  std::vector<AlignedBuffer> buffers;
  std::vector<Call> calls;
  std::vector<std::unique_ptr<void, DeviceFree>> device;
  /// Per function, its call captured by LoadedModel::replay (over these
  /// buffers), once captured; declared after `device`, so destroyed before
  /// the buffers.
  std::vector<std::unique_ptr<void, GraphDestroy>> graphs;
  const DeviceCalls *device_ = nullptr;
  size_t weightBytes_ = 0;
};

/// Everything one rank loads and checks before the ranks agree to go on.
class LoadedModel {
public:
  /// Loads the model, its manifest, the checkpoints and, for one function,
  /// its inputs, and checks them against each other, `backend` and
  /// `worldSize`; on rank 0 also that the outputs can be written. Returns
  /// the problems found (empty when all is well); the messages are
  /// tp-run's.
  std::vector<std::string> load(const LaunchFiles &files,
                                const Backend &backend, int rank,
                                int worldSize);

  /// After a load() that found nothing wrong: rank `rank`'s slice of every
  /// argument of the selected functions (read from the mapped checkpoints,
  /// whose pages are released after), bf16 weights converted, and zeroed
  /// results and inputs without a file. Fails (every message on its own
  /// line) only where load() did not check.
  Expected<ModelArguments> slice(int rank, int worldSize);

  /// One call of selected function `function`; on a device backend it
  /// waits for the rank's stream.
  Status call(ModelArguments &arguments, size_t function = 0) const;
  /// The same through a CUDA graph (Backend::hasGraphs): the first replay
  /// of `function` captures its call over `arguments`' buffers, and every
  /// replay launches that; the buffers' contents may change in between
  /// (ModelArguments::write), not where they are. When the function may not
  /// be captured (whyNotReplayable), or its graph not instantiated or
  /// launched, nothing of the call ran on the device, no graph is kept and
  /// `whyNot` says why (the caller may call() instead); a failed status when
  /// the launched call failed. A call that breaks the capture ends the run
  /// with its message, as a failed call does.
  struct Replay {
    bool launched = false;
    std::string whyNot;
  };
  Expected<Replay> replay(ModelArguments &arguments, size_t function) const;
  /// Why replay() would not capture selected function `k` (its manifest:
  /// it reads device memory on the host, or does not say), if it would not.
  std::optional<std::string> whyNotReplayable(size_t k) const;

  const Manifest &manifest() const { return manifest_; }
  /// After load(): the selected functions, in the order asked for.
  const ManifestFunction &function(size_t k = 0) const { return *selected[k]; }
  size_t functionCount() const { return selected.size(); }
  /// After load(): the arguments of selected function `k` that are inputs.
  const std::vector<size_t> &inputs(size_t k = 0) const {
    return bindings[k].inputs;
  }

private:
  /// Matches `files` to the first function's inputs and reads them;
  /// problems go to `errors`.
  void readInputs(const LaunchFiles &files, std::vector<std::string> &errors);

  std::optional<Backend> backend;
  std::optional<ModelLibrary> library;
  Manifest manifest_;
  std::vector<const ManifestFunction *> selected;
  std::vector<ModelLibrary::EntryFn> entries;
  /// The checkpoints, in the order given; `bindings` point into them.
  std::vector<SafetensorsFile> checkpoints;
  std::vector<WeightBinding> bindings;
  /// Per argument of the first function: the array read for an input.
  std::vector<std::optional<NpyArray>> inputArrays;
};

/// Rank 0's last step: each result to its file (resultPath of
/// `files.output`) and `report` to `files.reportJson`, those that are set;
/// the messages of the writes that failed.
std::vector<std::string> writeResults(const LaunchFiles &files,
                                      const ManifestFunction &function,
                                      const ModelArguments &arguments,
                                      const RunReport &report);

/// The same for a generation: the new ids (int64 of `shape`, [B, T]) to
/// `files.output`, their logits (f32 [B, T, V]; none: not written) to its
/// result 1 (y.1.npy), `report` to `files.reportJson`.
std::vector<std::string> writeGeneration(const LaunchFiles &files,
                                         const std::vector<int64_t> &ids,
                                         const std::vector<float> &logits,
                                         const std::vector<int64_t> &shape,
                                         const GenerationReport &report);

} // namespace tprt

#endif // TPRT_LAUNCH_H

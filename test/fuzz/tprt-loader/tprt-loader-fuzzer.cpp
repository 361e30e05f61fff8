//===- tprt-loader-fuzzer.cpp - libFuzzer target for tp-run's readers -----===//
//
// Feeds each input to what tp-run does with the files a user hands it before
// any model code runs: a prompt or input (.npy), a checkpoint (.safetensors)
// and, through the model's manifest, the binding and slicing of its weights.
// Built only with -DTP_ENABLE_FUZZER=ON (scripts/asan.sh); run by
// scripts/fuzz.sh tprt-loader, its seeds written by seeds.py beside it.
//
// The first byte of an input says what the rest is:
//   'n'  a .npy file: readNpy, then its integers (integerValues);
//   's'  a .safetensors file: SafetensorsFile::open, then each tensor cut
//        for 2 and 3 ranks along each dimension (the slices checked to
//        make up the tensor), its rows, padded by one in every dimension,
//        widened when BF16 or F16;
//   'i'  a checkpoint index (model.safetensors.index.json), in a directory
//        beside two shards: checkpointFiles on the directory and on the
//        index, every file it lists checked to lie beside the index;
//   'm'  a manifest (JSON text), a NUL byte, a .safetensors file: the
//        manifest's checks (checkManifest, the CPU backend at its tp size),
//        then for every function the binding of its weights (bindWeights)
//        and, where that found nothing wrong, every rank's slice of each
//        weight (sliceArgument), as LoadedModel::load and ::slice do.
// Any other first byte is skipped. Files are memfds, opened by their
// /proc/self/fd path: the readers take paths and map what they open.
//
// A finding is a sanitizer report, an uncaught exception (a bad_alloc
// included: every size a reader allocates comes from a file that was
// checked to hold it), slices of a tensor that, put side by side, are not
// the tensor (checkPartition), or an index listing a file elsewhere. Error
// statuses are the expected outcome on bad input. The manifest is the
// compiler's (tp-model-manifest), not the user's: its sizes are trusted as a
// model's, so inputs whose arguments are larger than kMaxElements are skipped,
// which only bounds memory.
//
//===----------------------------------------------------------------------===//

#include "tprt/launch.h"
#include "tprt/loader.h"
#include "tprt/manifest.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace tprt;

namespace {

/// The most elements an argument of a fuzzed manifest may have.
constexpr int64_t kMaxElements = int64_t(1) << 20;

/// A memfd holding some bytes, and the path that opens it.
class MemoryFile {
public:
  MemoryFile(const uint8_t *data, size_t size) {
    fd = memfd_create("tprt-loader-fuzzer", MFD_CLOEXEC);
    if (fd < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    for (size_t done = 0; done < size;) {
      ssize_t n = write(fd, data + done, size - done);
      if (n <= 0) {
        std::perror("write");
        std::abort();
      }
      done += size_t(n);
    }
  }
  ~MemoryFile() { close(fd); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd); }

private:
  int fd;
};

void readNpyFile(const uint8_t *data, size_t size) {
  MemoryFile file(data, size);
  Expected<NpyArray> array = readNpy(file.path());
  if (array && (array->dtype == "i64" || array->dtype == "i32"))
    (void)integerValues(*array);
}

/// Whether a tensor of `shape` has at most kMaxElements elements.
bool small(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    if (__builtin_mul_overflow(count, size, &count) || count > kMaxElements)
      return false;
  return true;
}

/// Reads every byte of `buffer`, so that ASan sees a slice that is short.
void touch(const AlignedBuffer &buffer) {
  const uint8_t *bytes = buffer.as<uint8_t>();
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < buffer.size(); ++i)
    sum = sum + bytes[i];
}

/// Aborts unless `slices`, one per rank, put side by side along `dim` are
/// `tensor` byte for byte: a cut loses or repeats nothing.
void checkPartition(const TensorInfo &tensor, int64_t dim,
                    const std::vector<SlicedTensor> &slices) {
  size_t before = 1, after = tensor.elementSize;
  for (int64_t d = 0; d < dim; ++d)
    before *= size_t(tensor.shape[d]);
  for (size_t d = size_t(dim) + 1; d < tensor.shape.size(); ++d)
    after *= size_t(tensor.shape[d]);
  size_t width = size_t(tensor.shape[dim]) / slices.size() * after;
  const uint8_t *whole = tensor.data;
  for (size_t b = 0; b < before; ++b)
    for (const SlicedTensor &slice : slices) {
      if (slice.buffer.size() != before * width ||
          std::memcmp(slice.buffer.as<uint8_t>() + b * width, whole, width)) {
        std::fprintf(stderr,
                     "tensor '%s' %s: the slices along dimension "
                     "%lld are not the tensor\n",
                     tensor.name.c_str(), formatShape(tensor.shape).c_str(),
                     static_cast<long long>(dim));
        std::abort();
      }
      whole += width;
    }
}

void readSafetensorsFile(const uint8_t *data, size_t size) {
  MemoryFile file(data, size);
  Expected<SafetensorsFile> opened = SafetensorsFile::open(file.path());
  if (!opened)
    return;
  for (const auto &[name, tensor] : opened->tensors()) {
    int64_t rank = int64_t(tensor.shape.size());
    for (int64_t world : {2, 3})
      for (int64_t dim = 0; dim < rank; ++dim) {
        std::vector<SlicedTensor> slices;
        for (int64_t r = 0; r < world; ++r)
          if (Expected<SlicedTensor> slice =
                  sliceTensor(tensor, Shard{dim, 1, 1}, int(r), int(world)))
            slices.push_back(std::move(*slice));
        if (int64_t(slices.size()) == world)
          checkPartition(tensor, dim, slices);
      }
    // All rows but the first, as a weight packed with others is read: in
    // the tensor's shape and flat (buddy-mlir's parameters).
    if (rank > 0 && tensor.shape[0] > 0) {
      std::vector<int64_t> rest = tensor.shape;
      --rest[0];
      for (const std::vector<int64_t> &shape :
           {rest, std::vector<int64_t>{numElements(rest)}})
        if (holdsRows(tensor.shape, 1, shape))
          if (Expected<SlicedTensor> rows =
                  sliceTensor(rowsOf(tensor, 1, shape), std::nullopt, 0, 1))
            touch(rows->buffer);
    }
    std::vector<int64_t> padded = tensor.shape;
    for (int64_t &s : padded)
      ++s;
    if (small(padded) && padsTo(tensor.shape, padded))
      if (Expected<AlignedBuffer> buffer = padTensor(tensor, padded))
        touch(*buffer);
    if (widensToF32(tensor.dtype))
      if (Expected<SlicedTensor> whole =
              sliceTensor(tensor, std::nullopt, 0, 1))
        touch(widenToF32(whole->buffer, size_t(numElements(whole->shape)),
                         tensor.dtype));
    opened->release(tensor);
  }
}

/// A directory of this process holding two shards, named as save_pretrained
/// names them, where an index is written; removed at exit.
const std::filesystem::path &indexDirectory() {
  static const std::filesystem::path dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string name =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/tprt-loader-fuzzer.XXXXXX";
    if (!mkdtemp(name.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    for (const char *shard : {"model-00001-of-00002.safetensors",
                              "model-00002-of-00002.safetensors"})
      std::ofstream(std::filesystem::path(name) / shard) << "";
    return std::filesystem::path(name);
  }();
  // Registered once `dir` is made, so that it runs before `dir` is
  // destroyed.
  static const bool removedAtExit = [] {
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(indexDirectory(), ec);
    });
    return true;
  }();
  (void)removedAtExit;
  return dir;
}

void readIndexFile(const uint8_t *data, size_t size) {
  namespace fs = std::filesystem;
  const fs::path &dir = indexDirectory();
  fs::path index = dir / "model.safetensors.index.json";
  std::ofstream(index, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(data), std::streamsize(size));
  for (const fs::path &given : {dir, index}) {
    Expected<std::vector<std::string>> files = checkpointFiles(given.string());
    if (!files)
      continue;
    for (const std::string &file : *files) {
      fs::path listed(file);
      if (listed.parent_path() != dir || listed.filename() == "." ||
          listed.filename() == "..") {
        std::fprintf(stderr, "index lists '%s', not a file beside it\n",
                     file.c_str());
        std::abort();
      }
    }
  }
}

/// Whether `arg`, its checkpoint's tensor and its stacked parts are small().
bool smallArg(const ManifestArg &arg) {
  if (!small(arg.shape) || !small(arg.localShape) ||
      (arg.checkpointShape && !small(*arg.checkpointShape)))
    return false;
  return std::all_of(arg.stack.begin(), arg.stack.end(), smallArg);
}

/// Whether every argument and result of `manifest` is small().
bool smallModel(const Manifest &manifest) {
  for (const ManifestFunction &function : manifest.functions) {
    if (!std::all_of(function.args.begin(), function.args.end(), smallArg))
      return false;
    for (const ManifestResult &result : function.results)
      if (!small(result.shape) || !small(result.localShape))
        return false;
  }
  return true;
}

void loadModelWeights(const uint8_t *data, size_t size) {
  const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
  if (!nul)
    return;
  Expected<Manifest> manifest = parseManifest(
      std::string(reinterpret_cast<const char *>(data), size_t(nul - data)));
  if (!manifest || manifest->tpSize < 1 || manifest->tpSize > 8 ||
      !smallModel(*manifest))
    return;
  int world = int(manifest->tpSize);
  if (!checkManifest(*manifest, "fuzz.so", Backend::cpu(), world).empty())
    return;
  MemoryFile file(nul + 1, size_t(data + size - nul - 1));
  std::vector<SafetensorsFile> checkpoints;
  if (openCheckpoints({file.path()}, checkpoints))
    return;
  for (const ManifestFunction &function : manifest->functions) {
    WeightBinding binding;
    std::vector<std::string> errors;
    bindWeights(function, checkpoints, binding, errors);
    if (!errors.empty())
      continue;
    for (size_t i = 0; i < function.args.size(); ++i) {
      if (!binding.tensors[i] && function.args[i].stack.empty())
        continue;
      for (int rank = 0; rank < world; ++rank) {
        Expected<AlignedBuffer> slice =
            sliceArgument(function.args[i], binding.tensors[i],
                          binding.files[i], binding.parts[i], rank, world);
        if (slice)
          touch(*slice);
      }
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  switch (data[0]) {
  case 'n':
    readNpyFile(data + 1, size - 1);
    break;
  case 's':
    readSafetensorsFile(data + 1, size - 1);
    break;
  case 'i':
    readIndexFile(data + 1, size - 1);
    break;
  case 'm':
    loadModelWeights(data + 1, size - 1);
    break;
  default:
    break;
  }
  return 0;
}

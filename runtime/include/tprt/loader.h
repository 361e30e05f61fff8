//===- loader.h - checkpoint, array and buffer helpers ----------*- C++ -*-===//
//
// The C++ side of the runtime that launchers and tests use (library
// tprt_loader): 64-byte-aligned buffers, read-only file mappings, a
// safetensors reader, slicing a tensor for one rank, .npy input/output, and
// the check that a model .so is whole before dlopen. Nothing here throws;
// failures come back as a Status whose message names the file and the
// tensor.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LOADER_H
#define TPRT_LOADER_H

#include "tprt/tprt.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tprt {

/// A status code and its message (empty when ok).
class Status {
public:
  Status() = default;
  Status(tprt_status code, std::string message)
      : code_(code), message_(std::move(message)) {}
  static Status success() { return Status(); }

  bool ok() const { return code_ == TPRT_OK; }
  explicit operator bool() const { return ok(); }
  tprt_status code() const { return code_; }
  const std::string &message() const { return message_; }

private:
  tprt_status code_ = TPRT_OK;
  std::string message_;
};

/// A value or the Status saying why there is none.
template <typename T> class Expected {
public:
  Expected(T value) : storage(std::move(value)) {}
  Expected(Status error) : storage(std::move(error)) {}

  bool ok() const { return storage.index() == 0; }
  explicit operator bool() const { return ok(); }
  T &operator*() { return std::get<0>(storage); }
  const T &operator*() const { return std::get<0>(storage); }
  T *operator->() { return &std::get<0>(storage); }
  const T *operator->() const { return &std::get<0>(storage); }
  const Status &status() const { return std::get<1>(storage); }

private:
  std::variant<T, Status> storage;
};

/// Memory aligned to 64 bytes (from a huge page on, mapped on its own and on
/// a huge page boundary), freed on destruction; move-only.
class AlignedBuffer {
public:
  static constexpr size_t kAlignment = 64;

  AlignedBuffer() = default;
  /// `bytes` bytes (at least one cache line is allocated), zero-filled when
  /// `zero`.
  explicit AlignedBuffer(size_t bytes, bool zero = false);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer &&other) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;

  void *data() const { return data_; }
  template <typename T> T *as() const { return static_cast<T *>(data_); }
  size_t size() const { return size_; }

private:
  void release();

  void *data_ = nullptr;
  size_t size_ = 0;
  /// Bytes mapped with mmap (buffers of a huge page or more); 0: malloc'd.
  size_t mapped_ = 0;
};

/// A whole file mapped read-only; unmapped on destruction; move-only.
class MappedFile {
public:
  /// Refuses anything but a regular file, naming what it is; a FIFO is
  /// refused at once, not read (which would wait for a writer).
  static Expected<MappedFile> open(const std::string &path);
  ~MappedFile();
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }

private:
  MappedFile() = default;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

/// Checks that `path` is a regular file holding a whole 64-bit little-endian
/// ELF shared object (ET_DYN) for this machine: the program header table,
/// every PT_LOAD segment's bytes and the section header table lie within
/// the file. A launcher calls it before dlopen, which dies of SIGBUS on a
/// truncated object instead of returning an error. Messages name the file.
Status checkSharedObject(const std::string &path);

/// Bytes per element of a safetensors dtype ("F32" -> 4), none if unknown.
std::optional<size_t> dtypeSize(const std::string &dtype);

/// Whether a checkpoint's floats of safetensors dtype `dtype` are widened to
/// float32 for a model that takes F32: "BF16" and "F16", the dtypes Hugging
/// Face checkpoints (Llama, Qwen2, Mistral) ship in.
bool widensToF32(const std::string &dtype);

/// `count` elements of `narrow` (BF16 or F16, widensToF32) as float32, each
/// exactly (both are subsets of float32).
AlignedBuffer widenToF32(const AlignedBuffer &narrow, size_t count,
                         const std::string &dtype);

/// "[2, 3]".
std::string formatShape(const std::vector<int64_t> &shape);

/// Product of the sizes (1 for a scalar).
int64_t numElements(const std::vector<int64_t> &shape);

/// One tensor of a safetensors file.
struct TensorInfo {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  size_t elementSize = 0;
  /// The tensor's bytes inside the mapping (begin .. begin + byteSize).
  const uint8_t *data = nullptr;
  size_t byteSize = 0;
};

/// The safetensors files `path` names, as a Hugging Face model directory
/// holds them: a directory gives the files its model.safetensors.index.json
/// lists (sharded, model-0000k-of-0000n.safetensors) or else its
/// model.safetensors; an index (*.safetensors.index.json) the files of its
/// weight_map, in name order, beside it (each must be there); anything else
/// is itself. Errors name the directory or the index.
Expected<std::vector<std::string>> checkpointFiles(const std::string &path);

/// A safetensors file (8-byte little-endian header length, JSON header,
/// data) mapped read-only; tensors point into the mapping.
class SafetensorsFile {
public:
  /// Maps and validates `path`: header length inside the file, JSON object,
  /// every tensor with a known dtype, a shape and data_offsets inside the
  /// data area whose length is numel * dtype size, and the tensors, ordered
  /// by offset, covering the data area back to back (no overlap, no unused
  /// bytes). `__metadata__` is skipped.
  static Expected<SafetensorsFile> open(const std::string &path);

  const std::string &path() const { return file.path(); }
  /// Null if there is no tensor of that name.
  const TensorInfo *find(const std::string &name) const;
  /// Drops this file's pages of `tensor` from the process's memory (they
  /// are read again from the file if touched). A launcher that has sliced
  /// a tensor calls it, so that no rank keeps the whole checkpoint resident.
  void release(const TensorInfo &tensor) const;
  const std::map<std::string, TensorInfo> &tensors() const { return table; }

private:
  explicit SafetensorsFile(MappedFile file) : file(std::move(file)) {}
  MappedFile file;
  std::map<std::string, TensorInfo> table;
};

/// How a full tensor is cut (model.h): dimension `dim` read as
/// [outer, D / outer]; rank r of N takes part r / replicas of N / replicas
/// of every outer block.
struct Shard {
  int64_t dim = 0;
  int64_t outer = 1;
  int64_t replicas = 1;
};

/// The shape rank `r` of `worldSize` holds, or why `shard` does not apply to
/// `shape` (dimension out of range, replicas not dividing N, size not
/// divisible by outer * N / replicas).
Expected<std::vector<int64_t>> shardShape(const std::vector<int64_t> &shape,
                                          const std::optional<Shard> &shard,
                                          int64_t worldSize);

/// Whether `shape` holds `inner` at its start: the same rank, no size
/// smaller, every size of `inner` positive (a padded tensor's).
bool padsTo(const std::vector<int64_t> &inner,
            const std::vector<int64_t> &shape);

/// Whether whole rows from row `offset` of a tensor of shape `stored`,
/// read in row-major order, are a tensor of `shape`, inside it: of the
/// same rank, rows [offset, offset + shape[0]) with the same sizes after
/// the first; of another rank, as many elements as `shape` holds (a flat
/// tensor's elements as a matrix).
bool holdsRows(const std::vector<int64_t> &stored, int64_t offset,
               const std::vector<int64_t> &shape);

/// The rows of `tensor` from `offset` as a tensor of `shape` (holdsRows),
/// a view of its bytes: a weight packed with others in one checkpoint
/// tensor.
TensorInfo rowsOf(const TensorInfo &tensor, int64_t offset,
                  const std::vector<int64_t> &shape);

/// `tensor` at the start of a zeroed buffer of `shape` (padsTo the
/// tensor's): a checkpoint's tensor as a model that takes it padded reads
/// it.
Expected<AlignedBuffer> padTensor(const TensorInfo &tensor,
                                  const std::vector<int64_t> &shape);

/// A tensor slice in its own buffer.
struct SlicedTensor {
  std::vector<int64_t> shape;
  AlignedBuffer buffer;
};

/// Copies rank `rank`'s part of `tensor` (all of it without a shard) into a
/// fresh aligned buffer, reading only that part of the file.
Expected<SlicedTensor> sliceTensor(const TensorInfo &tensor,
                                   const std::optional<Shard> &shard,
                                   int64_t rank, int64_t worldSize);

/// An array read from a .npy file.
struct NpyArray {
  /// The manifest's name of its element type: "f32", "i64", "i32", "i1".
  std::string dtype = "f32";
  size_t elementSize = sizeof(float);
  std::vector<int64_t> shape;
  AlignedBuffer buffer;
  const float *data() const { return buffer.as<float>(); }
};

/// Reads a version 1.0/2.0/3.0 .npy file in C order of dtype '<f4', '<i8',
/// '<i4' or '|b1' (numpy's float32, int64, int32, bool).
Expected<NpyArray> readNpy(const std::string &path);

/// The .npy descriptor of a manifest dtype readNpy reads ("i64" -> "<i8"),
/// "?" for another.
std::string npyDescr(const std::string &dtype);

/// Bytes per element of a manifest dtype readNpy reads ("i64" -> 8), none
/// for another.
std::optional<size_t> npyElementSize(const std::string &dtype);

/// The elements of an i64 or i32 array as int64 (C order).
std::vector<int64_t> integerValues(const NpyArray &array);

/// Removes `path` if it is a regular file, not a link (what a failed write
/// leaves; never a device such as /dev/full).
void removeWrittenFile(const std::string &path);

/// Writes `data` (C order) as a version 1.0 .npy file of the manifest dtype
/// `dtype` ("f32" -> '<f4', "i64" -> '<i8', ...); a write that fails leaves
/// no file.
Status writeNpy(const std::string &path, const void *data,
                const std::vector<int64_t> &shape,
                const std::string &dtype = "f32");

} // namespace tprt

#endif // TPRT_LOADER_H

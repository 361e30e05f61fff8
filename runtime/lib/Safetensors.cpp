//===- Safetensors.cpp - safetensors reader and per-rank slicing ----------===//
//
// Format: an 8-byte little-endian header length N, N bytes of JSON mapping
// tensor names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// relative to the data area right after the header), then the data area.
// The file is mapped, never read whole; a slice copies only its own bytes.
//
//===----------------------------------------------------------------------===//

#include "tprt/loader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/mman.h>
#include <tuple>
#include <unistd.h>

namespace tprt {

std::optional<size_t> dtypeSize(const std::string &dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
      {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1},
  };
  auto it = sizes.find(dtype);
  if (it == sizes.end())
    return std::nullopt;
  return it->second;
}

bool widensToF32(const std::string &dtype) {
  return dtype == "BF16" || dtype == "F16";
}

AlignedBuffer widenToF32(const AlignedBuffer &narrow, size_t count,
                         const std::string &dtype) {
  assert(widensToF32(dtype) && "BF16 or F16");
  AlignedBuffer wide(count * sizeof(float));
  const uint16_t *in = narrow.as<uint16_t>();
  float *out = wide.as<float>();
  if (dtype == "BF16") {
    // The top half of a float32.
    for (size_t i = 0; i < count; ++i) {
      uint32_t bits = uint32_t(in[i]) << 16;
      std::memcpy(&out[i], &bits, sizeof(float));
    }
    return wide;
  }
  for (size_t i = 0; i < count; ++i) {
    _Float16 half;
    std::memcpy(&half, &in[i], sizeof(half));
    out[i] = float(half);
  }
  return wide;
}

namespace {

/// Reads one tensor entry of the header; `dataSize` is the data area's
/// length. Errors name the file and the tensor.
Expected<TensorInfo> readEntry(const std::string &path, const std::string &name,
                               const nlohmann::json &entry,
                               const uint8_t *dataArea, size_t dataSize) {
  auto error = [&](const std::string &what) {
    return Status(TPRT_ERR_IO,
                  "'" + path + "': tensor '" + name + "': " + what);
  };
  if (!entry.is_object())
    return error("entry is not a JSON object");

  TensorInfo info;
  info.name = name;
  auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string())
    return error("missing string 'dtype'");
  info.dtype = dtype->get<std::string>();
  std::optional<size_t> elementSize = dtypeSize(info.dtype);
  if (!elementSize)
    return error("unknown dtype '" + info.dtype + "'");
  info.elementSize = *elementSize;

  auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array())
    return error("missing array 'shape'");
  uint64_t count = 1;
  for (const nlohmann::json &size : *shape) {
    if (!size.is_number_unsigned())
      return error("'shape' " + shape->dump() +
                   " is not a list of non-negative integers");
    uint64_t value = size.get<uint64_t>();
    if (value > uint64_t(INT64_MAX) ||
        __builtin_mul_overflow(count, value, &count))
      return error("'shape' " + shape->dump() + " is too large");
    info.shape.push_back(static_cast<int64_t>(value));
  }

  auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    return error("missing 'data_offsets' [begin, end]");
  uint64_t begin = (*offsets)[0].get<uint64_t>();
  uint64_t end = (*offsets)[1].get<uint64_t>();
  if (begin > end || end > dataSize)
    return error("data_offsets [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] are outside the data area of " +
                 std::to_string(dataSize) + " bytes");
  uint64_t bytes;
  if (__builtin_mul_overflow(count, uint64_t(info.elementSize), &bytes) ||
      end - begin != bytes)
    return error("data_offsets [" + std::to_string(begin) + ", " +
                 std::to_string(end) + "] hold " + std::to_string(end - begin) +
                 " bytes but " + info.dtype + " " + formatShape(info.shape) +
                 " needs " + std::to_string(count * info.elementSize));
  info.data = dataArea + begin;
  info.byteSize = static_cast<size_t>(bytes);
  return info;
}

/// The format's rule for the data area: the tensors, in the order of their
/// offsets, cover it back to back from byte 0 to its end. Each entry alone
/// is in bounds (readEntry); two entries sharing bytes, or bytes between
/// them, would still be read as weights and give wrong results, not errors.
Status checkLayout(const std::string &path,
                   const std::map<std::string, TensorInfo> &table,
                   const uint8_t *dataArea, size_t dataSize) {
  struct Range {
    size_t begin, end;
    const std::string *name;
  };
  std::vector<Range> ranges;
  ranges.reserve(table.size());
  for (const auto &[name, info] : table) {
    size_t begin = size_t(info.data - dataArea);
    ranges.push_back({begin, begin + info.byteSize, &name});
  }
  // Ties by end: an empty tensor goes before one that starts where it is.
  std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  auto bytes = [](size_t begin, size_t end) {
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
  };
  auto unused = [&](size_t begin, size_t end, const std::string &where) {
    return Status(TPRT_ERR_IO, "'" + path + "': bytes " + bytes(begin, end) +
                                   " of the data area" + where +
                                   " belong to no tensor");
  };
  size_t covered = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const Range &range = ranges[i];
    if (range.begin < covered)
      return Status(TPRT_ERR_IO,
                    "'" + path + "': tensors '" + *ranges[i - 1].name + "' " +
                        bytes(ranges[i - 1].begin, ranges[i - 1].end) +
                        " and '" + *range.name + "' " +
                        bytes(range.begin, range.end) +
                        " overlap in the data area");
    if (range.begin > covered)
      return unused(covered, range.begin,
                    i == 0 ? ", before the first tensor '" + *range.name + "',"
                           : ", between tensors '" + *ranges[i - 1].name +
                                 "' and '" + *range.name + "',");
    covered = range.end;
  }
  if (covered < dataSize)
    return unused(covered, dataSize,
                  ranges.empty() ? " (the file has no tensors)"
                                 : ", after the last tensor '" +
                                       *ranges.back().name + "',");
  return Status::success();
}

} // namespace

Expected<std::vector<std::string>> checkpointFiles(const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path given(path);
  if (fs::is_directory(given, ec)) {
    if (fs::exists(given / "model.safetensors.index.json", ec))
      return checkpointFiles((given / "model.safetensors.index.json").string());
    if (fs::exists(given / "model.safetensors", ec))
      return std::vector<std::string>{(given / "model.safetensors").string()};
    return Status(TPRT_ERR_IO, "checkpoint directory '" + path +
                                   "' holds neither model.safetensors nor "
                                   "model.safetensors.index.json");
  }
  const std::string suffix = ".safetensors.index.json";
  if (path.size() < suffix.size() ||
      path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::vector<std::string>{path};
  auto error = [&](const std::string &what) {
    return Status(TPRT_ERR_IO, "checkpoint index '" + path + "': " + what);
  };
  std::ifstream in(path);
  if (!in)
    return error("cannot open: " + std::string(std::strerror(errno)));
  nlohmann::json index = nlohmann::json::parse(in, nullptr, false);
  if (index.is_discarded())
    return error("not valid JSON");
  if (!index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object() || index["weight_map"].empty())
    return error("no 'weight_map' of tensor names to files");
  std::set<std::string> names;
  for (const auto &[tensor, file] : index["weight_map"].items()) {
    // A file beside the index, as save_pretrained writes them: a name, not
    // a path (".." would name the index's parent directory).
    std::string name = file.is_string() ? file.get<std::string>() : "";
    if (name.empty() || name == "." || name == ".." ||
        name.find('/') != std::string::npos)
      return error("tensor '" + tensor + "' maps to " + file.dump() +
                   ", not a file name beside the index");
    names.insert(name);
  }
  std::vector<std::string> files;
  for (const std::string &name : names) {
    files.push_back((given.parent_path() / name).string());
    if (!fs::exists(files.back(), ec))
      return error("it lists '" + name + "', which is missing");
  }
  return files;
}

Expected<SafetensorsFile> SafetensorsFile::open(const std::string &path) {
  Expected<MappedFile> mapped = MappedFile::open(path);
  if (!mapped)
    return mapped.status();
  SafetensorsFile file(std::move(*mapped));
  const uint8_t *bytes = file.file.data();
  size_t size = file.file.size();
  auto error = [&](const std::string &what) {
    return Status(TPRT_ERR_IO, "'" + path + "': " + what);
  };

  if (size < 8)
    return error("file of " + std::to_string(size) +
                 " bytes is too short for a safetensors header length");
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i)
    headerLength = (headerLength << 8) | bytes[i];
  if (headerLength > size - 8)
    return error("header length " + std::to_string(headerLength) +
                 " goes beyond the end of the file (" + std::to_string(size) +
                 " bytes)");

  nlohmann::json header =
      nlohmann::json::parse(bytes + 8, bytes + 8 + headerLength, /*cb=*/nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded())
    return error("header is not valid JSON");
  if (!header.is_object())
    return error("header is not a JSON object");

  const uint8_t *dataArea = bytes + 8 + headerLength;
  size_t dataSize = size - 8 - headerLength;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__")
      continue;
    Expected<TensorInfo> info =
        readEntry(path, it.key(), it.value(), dataArea, dataSize);
    if (!info)
      return info.status();
    file.table.emplace(it.key(), std::move(*info));
  }
  if (Status layout = checkLayout(path, file.table, dataArea, dataSize);
      !layout)
    return layout;
  return file;
}

const TensorInfo *SafetensorsFile::find(const std::string &name) const {
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

//===----------------------------------------------------------------------===//
// Slicing
//===----------------------------------------------------------------------===//

Expected<std::vector<int64_t>> shardShape(const std::vector<int64_t> &shape,
                                          const std::optional<Shard> &shard,
                                          int64_t worldSize) {
  if (!shard)
    return shape;
  int64_t rank = static_cast<int64_t>(shape.size());
  if (shard->dim < 0 || shard->dim >= rank)
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "shard dimension " + std::to_string(shard->dim) +
                      " is out of range for shape " + formatShape(shape));
  if (shard->outer < 1 || worldSize < 1)
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "shard outer " + std::to_string(shard->outer) +
                      " and world size " + std::to_string(worldSize) +
                      " must be positive");
  if (shard->replicas < 1 || worldSize % shard->replicas != 0)
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "shard replicas " + std::to_string(shard->replicas) +
                      " does not divide world size " +
                      std::to_string(worldSize));
  int64_t parts = worldSize / shard->replicas;
  int64_t size = shape[shard->dim];
  if (size % (shard->outer * parts) != 0)
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "dimension " + std::to_string(shard->dim) + " of " +
                      formatShape(shape) + " (" + std::to_string(size) +
                      ") does not split into " + std::to_string(shard->outer) +
                      " blocks of " + std::to_string(parts) + " parts");
  std::vector<int64_t> local = shape;
  local[shard->dim] = size / parts;
  return local;
}

void SafetensorsFile::release(const TensorInfo &tensor) const {
  const uint8_t *begin = tensor.data, *end = tensor.data + tensor.byteSize;
  if (begin < file.data() || end > file.data() + file.size() || begin == end)
    return;
  uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t first = uintptr_t(begin) & ~(page - 1);
  // A private read-only file mapping: dropped pages are re-read on access.
  (void)madvise(reinterpret_cast<void *>(first), uintptr_t(end) - first,
                MADV_DONTNEED);
}

bool padsTo(const std::vector<int64_t> &inner,
            const std::vector<int64_t> &shape) {
  if (inner.size() != shape.size() || inner.empty())
    return false;
  for (size_t d = 0; d < inner.size(); ++d)
    if (inner[d] < 1 || inner[d] > shape[d])
      return false;
  return true;
}

bool holdsRows(const std::vector<int64_t> &stored, int64_t offset,
               const std::vector<int64_t> &shape) {
  if (stored.empty() || stored[0] < 1 || shape.empty() || offset < 0)
    return false;
  if (stored.size() == shape.size() &&
      !std::equal(shape.begin() + 1, shape.end(), stored.begin() + 1))
    return false;
  int64_t row = numElements(stored) / stored[0];
  // The shape comes from a manifest: its count may overflow.
  int64_t count = 1;
  for (int64_t size : shape)
    if (size < 1 || __builtin_mul_overflow(count, size, &count))
      return false;
  return row >= 1 && count % row == 0 && offset <= stored[0] &&
         count / row <= stored[0] - offset;
}

TensorInfo rowsOf(const TensorInfo &tensor, int64_t offset,
                  const std::vector<int64_t> &shape) {
  size_t row =
      size_t(numElements(tensor.shape) / tensor.shape[0]) * tensor.elementSize;
  TensorInfo view = tensor;
  view.shape = shape;
  view.data = tensor.data + size_t(offset) * row;
  view.byteSize = size_t(numElements(shape)) * tensor.elementSize;
  return view;
}

Expected<AlignedBuffer> padTensor(const TensorInfo &tensor,
                                  const std::vector<int64_t> &shape) {
  size_t rank = shape.size();
  if (!padsTo(tensor.shape, shape))
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "tensor '" + tensor.name + "' of shape " +
                      formatShape(tensor.shape) + " does not pad to " +
                      formatShape(shape));
  AlignedBuffer padded(size_t(numElements(shape)) * tensor.elementSize,
                       /*zero=*/true);
  // Row by row of the last dimension: `at` counts through the tensor's
  // leading dimensions.
  size_t row = size_t(tensor.shape[rank - 1]) * tensor.elementSize;
  std::vector<int64_t> at(rank - 1, 0);
  for (int64_t r = 0, rows = numElements(tensor.shape) / tensor.shape[rank - 1];
       r < rows; ++r) {
    int64_t target = 0;
    for (size_t d = 0; d + 1 < rank; ++d)
      target = target * shape[d] + at[d];
    std::memcpy(padded.as<uint8_t>() +
                    size_t(target * shape[rank - 1]) * tensor.elementSize,
                tensor.data + size_t(r) * row, row);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++at[d] < tensor.shape[d])
        break;
      at[d] = 0;
    }
  }
  return padded;
}

Expected<SlicedTensor> sliceTensor(const TensorInfo &tensor,
                                   const std::optional<Shard> &shard,
                                   int64_t rank, int64_t worldSize) {
  Expected<std::vector<int64_t>> local =
      shardShape(tensor.shape, shard, worldSize);
  if (!local)
    return Status(local.status().code(),
                  "tensor '" + tensor.name + "': " + local.status().message());
  if (rank < 0 || rank >= worldSize)
    return Status(TPRT_ERR_INVALID_ARGUMENT, "rank " + std::to_string(rank) +
                                                 " is not in a world of " +
                                                 std::to_string(worldSize));

  SlicedTensor slice;
  slice.shape = *local;
  size_t bytes = size_t(numElements(slice.shape)) * tensor.elementSize;
  slice.buffer = AlignedBuffer(bytes);
  if (!shard || worldSize == 1) {
    std::memcpy(slice.buffer.data(), tensor.data, bytes);
    return slice;
  }

  // View the tensor as [before, outer, parts, part, after]; copy
  // [:, :, rank / replicas, :, :].
  int64_t dim = shard->dim;
  int64_t before = 1, after = 1;
  for (int64_t i = 0; i < dim; ++i)
    before *= tensor.shape[i];
  for (size_t i = dim + 1; i < tensor.shape.size(); ++i)
    after *= tensor.shape[i];
  int64_t outer = shard->outer;
  int64_t parts = worldSize / shard->replicas;
  int64_t index = rank / shard->replicas;
  int64_t part = tensor.shape[dim] / (outer * parts);
  size_t chunk = size_t(part * after) * tensor.elementSize;
  const uint8_t *source = tensor.data;
  uint8_t *target = slice.buffer.as<uint8_t>();
  for (int64_t b = 0; b < before; ++b)
    for (int64_t o = 0; o < outer; ++o) {
      int64_t sourceIndex = ((b * outer + o) * parts + index) * part * after;
      std::memcpy(target, source + size_t(sourceIndex) * tensor.elementSize,
                  chunk);
      target += chunk;
    }
  return slice;
}

} // namespace tprt

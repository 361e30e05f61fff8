//===- Npy.cpp - .npy reader and float32 writer ---------------------------===//
//
// Format: "\x93NUMPY", major and minor version bytes, a little-endian header
// length (2 bytes in version 1, 4 in versions 2 and 3), then a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded
// with spaces and a newline, then the data.
//
//===----------------------------------------------------------------------===//

#include "tprt/loader.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <sys/stat.h>

namespace tprt {
namespace {

/// A cursor over the header dict.
class HeaderParser {
public:
  explicit HeaderParser(std::string text) : text(std::move(text)) {}

  /// Moves past `key` and the colon after it; false if absent.
  bool seekKey(const std::string &key) {
    for (const char *quote : {"'", "\""}) {
      size_t at = text.find(quote + key + quote);
      if (at == std::string::npos)
        continue;
      pos = at + key.size() + 2;
      skipSpace();
      if (pos < text.size() && text[pos] == ':') {
        ++pos;
        skipSpace();
        return true;
      }
    }
    return false;
  }

  std::optional<std::string> readString() {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return std::nullopt;
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      return std::nullopt;
    std::string value = text.substr(pos, end - pos);
    pos = end + 1;
    return value;
  }

  std::optional<bool> readBool() {
    if (text.compare(pos, 4, "True") == 0)
      return true;
    if (text.compare(pos, 5, "False") == 0)
      return false;
    return std::nullopt;
  }

  /// A tuple of non-negative integers: "()", "(3,)", "(2, 3)".
  std::optional<std::vector<int64_t>> readShape() {
    if (pos >= text.size() || text[pos] != '(')
      return std::nullopt;
    ++pos;
    std::vector<int64_t> shape;
    while (true) {
      skipSpace();
      if (pos < text.size() && text[pos] == ')')
        return shape;
      if (pos >= text.size() ||
          !std::isdigit(static_cast<unsigned char>(text[pos])))
        return std::nullopt;
      int64_t value = 0;
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos]))) {
        if (__builtin_mul_overflow(value, int64_t(10), &value) ||
            __builtin_add_overflow(value, int64_t(text[pos] - '0'), &value))
          return std::nullopt;
        ++pos;
      }
      shape.push_back(value);
      skipSpace();
      // Python's tuple: a comma after each element but the last.
      if (pos < text.size() && text[pos] == ',')
        ++pos;
      else if (pos >= text.size() || text[pos] != ')')
        return std::nullopt;
    }
  }

private:
  void skipSpace() {
    while (pos < text.size() &&
           std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }

  std::string text;
  size_t pos = 0;
};

/// The .npy descriptors of the element types a model takes, with the
/// manifest's names; numpy writes '<' on little-endian machines, '|' where
/// byte order does not apply, '=' only when asked to.
struct NpyType {
  const char *descr, *dtype;
  size_t size;
};
constexpr NpyType kNpyTypes[] = {
    {"<f4", "f32", 4}, {"=f4", "f32", 4}, {"<i8", "i64", 8}, {"=i8", "i64", 8},
    {"<i4", "i32", 4}, {"=i4", "i32", 4}, {"|b1", "i1", 1}};

} // namespace

std::optional<size_t> npyElementSize(const std::string &dtype) {
  for (const NpyType &type : kNpyTypes)
    if (dtype == type.dtype)
      return type.size;
  return std::nullopt;
}

std::string npyDescr(const std::string &dtype) {
  for (const NpyType &type : kNpyTypes)
    if (dtype == type.dtype)
      return type.descr;
  return "?";
}

Expected<NpyArray> readNpy(const std::string &path) {
  Expected<MappedFile> file = MappedFile::open(path);
  if (!file)
    return file.status();
  const uint8_t *bytes = file->data();
  size_t size = file->size();
  auto error = [&](const std::string &what) {
    return Status(TPRT_ERR_IO, "'" + path + "': " + what);
  };

  if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0)
    return error("not a .npy file (no \\x93NUMPY magic)");
  uint8_t major = bytes[6];
  size_t headerStart, headerLength;
  if (major == 1) {
    headerStart = 10;
    headerLength = size_t(bytes[8]) | size_t(bytes[9]) << 8;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return error("truncated .npy header");
    headerStart = 12;
    headerLength = size_t(bytes[8]) | size_t(bytes[9]) << 8 |
                   size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
  } else {
    return error("unsupported .npy version " + std::to_string(major) + "." +
                 std::to_string(bytes[7]));
  }
  if (headerLength > size - headerStart)
    return error("truncated .npy header");

  HeaderParser header(std::string(
      reinterpret_cast<const char *>(bytes + headerStart), headerLength));
  std::optional<std::string> descr;
  if (header.seekKey("descr"))
    descr = header.readString();
  if (!descr)
    return error("header has no 'descr'");
  const NpyType *type = nullptr;
  for (const NpyType &known : kNpyTypes)
    if (*descr == known.descr)
      type = &known;
  if (!type)
    return error("dtype '" + *descr +
                 "' is none of float32 ('<f4'), int64 ('<i8'), int32 "
                 "('<i4'), bool ('|b1')");
  std::optional<bool> fortran;
  if (header.seekKey("fortran_order"))
    fortran = header.readBool();
  if (!fortran)
    return error("header has no 'fortran_order'");
  if (*fortran)
    return error("array is in Fortran order; write it in C order "
                 "(numpy.ascontiguousarray)");
  std::optional<std::vector<int64_t>> shape;
  if (header.seekKey("shape"))
    shape = header.readShape();
  if (!shape)
    return error("header has no valid 'shape'");

  uint64_t count = 1;
  size_t bytesNeeded = 0;
  for (int64_t dim : *shape)
    if (__builtin_mul_overflow(count, uint64_t(dim), &count))
      return error("shape " + formatShape(*shape) + " is too large");
  if (__builtin_mul_overflow(count, uint64_t(type->size), &bytesNeeded))
    return error("shape " + formatShape(*shape) + " is too large");
  size_t dataStart = headerStart + headerLength;
  if (count > (size - dataStart) / type->size)
    return error("data is truncated: shape " + formatShape(*shape) + " needs " +
                 std::to_string(bytesNeeded) + " bytes, the file has " +
                 std::to_string(size - dataStart));

  NpyArray array;
  array.dtype = type->dtype;
  array.elementSize = type->size;
  array.shape = std::move(*shape);
  array.buffer = AlignedBuffer(bytesNeeded);
  std::memcpy(array.buffer.data(), bytes + dataStart, bytesNeeded);
  return array;
}

std::vector<int64_t> integerValues(const NpyArray &array) {
  std::vector<int64_t> values(size_t(numElements(array.shape)));
  for (size_t k = 0; k < values.size(); ++k)
    values[k] = array.dtype == "i64" ? array.buffer.as<int64_t>()[k]
                                     : int64_t(array.buffer.as<int32_t>()[k]);
  return values;
}

void removeWrittenFile(const std::string &path) {
  // lstat: a link (/dev/stdout to a file) stays, and so does its target.
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode))
    std::remove(path.c_str());
}

Status writeNpy(const std::string &path, const void *data,
                const std::vector<int64_t> &shape, const std::string &dtype) {
  std::optional<size_t> elementSize = npyElementSize(dtype);
  if (!elementSize)
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "'" + path + "': no .npy type for dtype '" + dtype + "'");
  std::string dict =
      "{'descr': '" + npyDescr(dtype) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  // Pad so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xffff)
    return Status(TPRT_ERR_INVALID_ARGUMENT,
                  "'" + path + "': shape " + formatShape(shape) +
                      " makes a header too long for .npy version 1.0");

  std::unique_ptr<FILE, int (*)(FILE *)> file(std::fopen(path.c_str(), "wb"),
                                              &std::fclose);
  if (!file)
    return Status(TPRT_ERR_IO,
                  "cannot create '" + path + "': " + std::strerror(errno));
  uint8_t prefix[10] = {0x93,
                        'N',
                        'U',
                        'M',
                        'P',
                        'Y',
                        1,
                        0,
                        uint8_t(dict.size() & 0xff),
                        uint8_t(dict.size() >> 8)};
  size_t count = size_t(numElements(shape));
  bool ok =
      std::fwrite(prefix, 1, sizeof(prefix), file.get()) == sizeof(prefix) &&
      std::fwrite(dict.data(), 1, dict.size(), file.get()) == dict.size() &&
      std::fwrite(data, *elementSize, count, file.get()) == count;
  if (!ok || std::fclose(file.release()) != 0) {
    std::string why = std::strerror(errno);
    removeWrittenFile(path);
    return Status(TPRT_ERR_IO, "cannot write '" + path + "': " + why);
  }
  return Status::success();
}

} // namespace tprt

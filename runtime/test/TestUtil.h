//===- TestUtil.h - helpers for the runtime unit tests ----------*- C++ -*-===//

#ifndef TPRT_TEST_TESTUTIL_H
#define TPRT_TEST_TESTUTIL_H

#include "tprt/loader.h"
#include "tprt/tprt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace tprt::test {

/// A fresh path in the test temporary directory.
inline std::string tempPath(const std::string &name) {
  const testing::TestInfo *info =
      testing::UnitTest::GetInstance()->current_test_info();
  return testing::TempDir() + "tprt-" + info->test_suite_name() + "-" +
         info->name() + "-" + name;
}

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// A safetensors file: `header` JSON (as given) and `data`.
inline std::string safetensorsBytes(const std::string &header,
                                    const std::string &data) {
  std::string bytes(8, '\0');
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return bytes + header + data;
}

inline std::string floatBytes(const std::vector<float> &values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// 0, 1, 2, ... as floats.
inline std::vector<float> iota(size_t count, float start = 0) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = start + static_cast<float>(i);
  return values;
}

/// An F32 tensor over `values` (which must outlive it), as a checkpoint
/// would give it.
inline tprt::TensorInfo tensorOf(const std::vector<float> &values,
                                 std::vector<int64_t> shape) {
  tprt::TensorInfo info;
  info.name = "t";
  info.dtype = "F32";
  info.shape = std::move(shape);
  info.elementSize = 4;
  info.data = reinterpret_cast<const uint8_t *>(values.data());
  info.byteSize = values.size() * 4;
  return info;
}

} // namespace tprt::test

#endif // TPRT_TEST_TESTUTIL_H

//===- NpyTest.cpp - .npy reader and writer -------------------------------===//

#include "TestUtil.h"

#include "tprt/loader.h"

namespace {

using namespace tprt::test;

TEST(Npy, RoundTrips) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, {5}, {2, 3, 4}, {1, 0, 3}}) {
    SCOPED_TRACE(tprt::formatShape(shape));
    std::vector<float> values = iota(size_t(tprt::numElements(shape)), 0.5f);
    std::string path = tempPath("roundtrip.npy");
    tprt::Status written = tprt::writeNpy(path, values.data(), shape);
    ASSERT_TRUE(written) << written.message();
    auto array = tprt::readNpy(path);
    ASSERT_TRUE(array) << array.status().message();
    EXPECT_EQ(array->shape, shape);
    EXPECT_EQ(std::vector<float>(array->data(), array->data() + values.size()),
              values);
  }
}

TEST(Npy, RoundTripsIntegers) {
  std::vector<int64_t> ids = {3, -1, 1 << 30, 7};
  std::string path = tempPath("ids.npy");
  tprt::Status written = tprt::writeNpy(path, ids.data(), {2, 2}, "i64");
  ASSERT_TRUE(written) << written.message();
  auto array = tprt::readNpy(path);
  ASSERT_TRUE(array) << array.status().message();
  EXPECT_EQ(array->dtype, "i64");
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 2}));
  const int64_t *read = array->buffer.as<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(read, read + 4), ids);
  EXPECT_FALSE(tprt::writeNpy(path, ids.data(), {4}, "f16"));
}

TEST(Npy, WritesTheHeaderNumpyWrites) {
  std::vector<float> values = iota(6);
  std::string path = tempPath("header.npy");
  ASSERT_TRUE(tprt::writeNpy(path, values.data(), {2, 3}));
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)),
                    std::istreambuf_iterator<char>());
  // numpy's layout: the data starts at a multiple of 64 bytes, after a
  // header padded with spaces and ended by a newline.
  ASSERT_EQ((bytes.size() - 24) % 64, 0u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes[bytes.size() - 25], '\n');
  size_t headerLength = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8;
  EXPECT_EQ(10 + headerLength, bytes.size() - 24);
}

/// A .npy file with `dict` as its header (version `major`.0).
std::string npyBytes(const std::string &dict, const std::string &data,
                     int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY", 6) + char(major) + '\0';
  size_t length = header.size();
  bytes += char(length & 0xff);
  bytes += char((length >> 8) & 0xff);
  if (major != 1)
    bytes += std::string(2, '\0');
  return bytes + header + data;
}

TEST(Npy, ReadsVersion2) {
  std::string path = tempPath("v2.npy");
  writeBytes(path, npyBytes("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (3,), }",
                            floatBytes(iota(3)), 2));
  auto array = tprt::readNpy(path);
  ASSERT_TRUE(array) << array.status().message();
  EXPECT_EQ(array->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(array->data()[2], 2.0f);
}

TEST(Npy, ReadsIntegersAndBools) {
  std::string path = tempPath("ids.npy");
  int64_t ids[3] = {7, -1, 1LL << 40};
  writeBytes(path,
             npyBytes("{'descr': '<i8', 'fortran_order': False, "
                      "'shape': (1, 3), }",
                      std::string(reinterpret_cast<char *>(ids), sizeof(ids))));
  auto array = tprt::readNpy(path);
  ASSERT_TRUE(array) << array.status().message();
  EXPECT_EQ(array->dtype, "i64");
  EXPECT_EQ(array->shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(array->buffer.as<int64_t>()[2], 1LL << 40);

  path = tempPath("mask.npy");
  writeBytes(path, npyBytes("{'descr': '|b1', 'fortran_order': False, "
                            "'shape': (2,), }",
                            std::string("\x01\x00", 2)));
  array = tprt::readNpy(path);
  ASSERT_TRUE(array) << array.status().message();
  EXPECT_EQ(array->dtype, "i1");
  EXPECT_EQ(array->elementSize, 1u);
  EXPECT_EQ(array->buffer.as<uint8_t>()[0], 1);
  EXPECT_EQ(tprt::npyDescr("i32"), "<i4");
}

void expectRejected(const std::string &path, const std::string &bytes,
                    const std::string &what) {
  writeBytes(path, bytes);
  auto array = tprt::readNpy(path);
  ASSERT_FALSE(array) << "accepted " << path;
  EXPECT_NE(array.status().message().find("'" + path + "'"), std::string::npos)
      << array.status().message();
  EXPECT_NE(array.status().message().find(what), std::string::npos)
      << array.status().message();
}

TEST(Npy, RejectsOtherDtypesOrdersAndDamage) {
  std::string data = floatBytes(iota(6));
  expectRejected(tempPath("fortran.npy"),
                 npyBytes("{'descr': '<f4', 'fortran_order': True, "
                          "'shape': (2, 3), }",
                          data),
                 "array is in Fortran order");
  expectRejected(tempPath("f8.npy"),
                 npyBytes("{'descr': '<f8', 'fortran_order': False, "
                          "'shape': (3,), }",
                          data),
                 "dtype '<f8' is none of float32 ('<f4'), int64");
  expectRejected(tempPath("big.npy"),
                 npyBytes("{'descr': '>f4', 'fortran_order': False, "
                          "'shape': (6,), }",
                          data),
                 "dtype '>f4' is none of float32");
  expectRejected(tempPath("short.npy"),
                 npyBytes("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (2, 4), }",
                          data),
                 "data is truncated");
  expectRejected(tempPath("magic.npy"), "PK\x03\x04 not an npy file",
                 "no \\x93NUMPY magic");
  expectRejected(tempPath("noshape.npy"),
                 npyBytes("{'descr': '<f4', 'fortran_order': False, }", data),
                 "no valid 'shape'");
  expectRejected(tempPath("nocomma.npy"),
                 npyBytes("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (2 3), }",
                          data),
                 "no valid 'shape'");
  // Elements that fit in 64 bits, bytes that do not.
  expectRejected(tempPath("huge.npy"),
                 npyBytes("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (2, 4611686018427387904), }",
                          data),
                 "shape [2, 4611686018427387904] is too large");
}

} // namespace

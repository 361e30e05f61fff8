//===- SafetensorsTest.cpp - safetensors reader and slicing ---------------===//

#include "TestUtil.h"

#include "tprt/loader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace tprt::test;

/// Writes `header` + `data` and opens the result.
tprt::Expected<tprt::SafetensorsFile> openBytes(const std::string &path,
                                                const std::string &bytes) {
  writeBytes(path, bytes);
  return tprt::SafetensorsFile::open(path);
}

/// A valid file: "a" F32 [2, 3] = 0..5, "b" F16 [2] (4 bytes), metadata.
std::string validFile() {
  std::string header =
      R"({"__metadata__": {"format": "pt"},)"
      R"( "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},)"
      R"( "b": {"dtype": "F16", "shape": [2], "data_offsets": [24, 28]}})";
  return safetensorsBytes(header, floatBytes(iota(6)) + std::string(4, '\1'));
}

TEST(Safetensors, ReadsAValidFile) {
  auto file = openBytes(tempPath("valid.safetensors"), validFile());
  ASSERT_TRUE(file) << file.status().message();
  EXPECT_EQ(file->tensors().size(), 2u);
  const tprt::TensorInfo *a = file->find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, "F32");
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->byteSize, 24u);
  std::vector<float> values(6);
  std::memcpy(values.data(), a->data, 24);
  EXPECT_EQ(values, iota(6));
  const tprt::TensorInfo *b = file->find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->elementSize, 2u);
  EXPECT_EQ(file->find("__metadata__"), nullptr);
  EXPECT_EQ(file->find("c"), nullptr);
}

/// Opens `bytes` and expects a failure whose message contains `what`.
void expectRejected(const std::string &path, const std::string &bytes,
                    const std::string &what) {
  auto file = openBytes(path, bytes);
  ASSERT_FALSE(file) << "accepted " << path;
  EXPECT_EQ(file.status().code(), TPRT_ERR_IO);
  EXPECT_NE(file.status().message().find(path), std::string::npos)
      << file.status().message();
  EXPECT_NE(file.status().message().find(what), std::string::npos)
      << file.status().message();
}

TEST(Safetensors, RejectsATruncatedFile) {
  std::string bytes = validFile();
  expectRejected(tempPath("truncated.safetensors"),
                 bytes.substr(0, bytes.size() - 2),
                 "tensor 'b': data_offsets [24, 28] are outside the data area "
                 "of 26 bytes");
  expectRejected(tempPath("short.safetensors"), bytes.substr(0, 5),
                 "too short for a safetensors header length");
  expectRejected(tempPath("empty.safetensors"), "",
                 "too short for a safetensors header length");
}

TEST(Safetensors, RejectsAHeaderLengthBeyondTheFile) {
  std::string bytes = validFile();
  bytes[5] = 1; // header length += 2^40
  expectRejected(tempPath("length.safetensors"), bytes,
                 "goes beyond the end of the file");
}

TEST(Safetensors, RejectsBadJson) {
  expectRejected(tempPath("json.safetensors"),
                 safetensorsBytes(R"({"a": {"dtype": "F32", )", ""),
                 "header is not valid JSON");
  expectRejected(tempPath("array.safetensors"), safetensorsBytes("[1, 2]", ""),
                 "header is not a JSON object");
}

TEST(Safetensors, RejectsBadEntries) {
  auto one = [](const std::string &entry, const std::string &data) {
    return safetensorsBytes(R"({"w": )" + entry + "}", data);
  };
  std::string data = floatBytes(iota(4));
  expectRejected(
      tempPath("range.safetensors"),
      one(R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 32]})", data),
      "tensor 'w': data_offsets [0, 32] are outside the data area "
      "of 16 bytes");
  expectRejected(
      tempPath("size.safetensors"),
      one(R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 16]})", data),
      "tensor 'w': data_offsets [0, 16] hold 16 bytes but F32 [3] "
      "needs 12");
  expectRejected(
      tempPath("dtype.safetensors"),
      one(R"({"dtype": "Q4", "shape": [4], "data_offsets": [0, 16]})", data),
      "tensor 'w': unknown dtype 'Q4'");
  expectRejected(tempPath("noshape.safetensors"),
                 one(R"({"dtype": "F32", "data_offsets": [0, 16]})", data),
                 "tensor 'w': missing array 'shape'");
  expectRejected(
      tempPath("negative.safetensors"),
      one(R"({"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]})", data),
      "tensor 'w': 'shape' [-4] is not a list of non-negative");
  expectRejected(tempPath("nooffsets.safetensors"),
                 one(R"({"dtype": "F32", "shape": [4]})", data),
                 "tensor 'w': missing 'data_offsets'");
}

/// A file of tensors "a" and "b" at the given offsets (F32, sized to fit
/// them) over `dataBytes` bytes of data.
std::string twoTensors(int a0, int a1, int b0, int b1, int dataBytes) {
  auto entry = [](const char *name, int begin, int end) {
    return std::string("\"") + name + R"(": {"dtype": "F32", "shape": [)" +
           std::to_string((end - begin) / 4) + R"(], "data_offsets": [)" +
           std::to_string(begin) + ", " + std::to_string(end) + "]}";
  };
  return safetensorsBytes("{" + entry("a", a0, a1) + ", " + entry("b", b0, b1) +
                              "}",
                          std::string(size_t(dataBytes), '\1'));
}

TEST(Safetensors, RejectsOverlappingTensors) {
  expectRejected(tempPath("overlap.safetensors"), twoTensors(0, 16, 8, 24, 24),
                 "tensors 'a' [0, 16] and 'b' [8, 24] overlap in the data "
                 "area");
  // The same bytes twice.
  expectRejected(tempPath("same.safetensors"), twoTensors(0, 16, 0, 16, 16),
                 "tensors 'a' [0, 16] and 'b' [0, 16] overlap");
  // Inside another tensor, listed first in the header.
  expectRejected(tempPath("inside.safetensors"), twoTensors(4, 8, 0, 16, 16),
                 "tensors 'b' [0, 16] and 'a' [4, 8] overlap");
}

TEST(Safetensors, RejectsUncoveredBytes) {
  expectRejected(tempPath("shifted.safetensors"), twoTensors(4, 20, 20, 36, 36),
                 "bytes [0, 4] of the data area, before the first tensor "
                 "'a', belong to no tensor");
  expectRejected(tempPath("gap.safetensors"), twoTensors(0, 16, 20, 36, 36),
                 "bytes [16, 20] of the data area, between tensors 'a' and "
                 "'b', belong to no tensor");
  expectRejected(tempPath("trailing.safetensors"),
                 twoTensors(0, 16, 16, 32, 40),
                 "bytes [32, 40] of the data area, after the last tensor 'b', "
                 "belong to no tensor");
  expectRejected(tempPath("notensors.safetensors"),
                 safetensorsBytes(R"({"__metadata__": {}})", "12345678"),
                 "bytes [0, 8] of the data area (the file has no tensors) "
                 "belong to no tensor");
}

TEST(Safetensors, AcceptsTensorsOutOfHeaderOrder) {
  // Order in the header (a JSON object) says nothing about order in the
  // data area; empty tensors take no bytes, even where another one starts.
  std::string header =
      R"({"b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
      R"( "e": {"dtype": "F32", "shape": [0], "data_offsets": [8, 8]},)"
      R"( "a": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})";
  auto file = openBytes(tempPath("order.safetensors"),
                        safetensorsBytes(header, floatBytes(iota(6))));
  ASSERT_TRUE(file) << file.status().message();
  EXPECT_EQ(file->tensors().size(), 3u);
  auto empty =
      openBytes(tempPath("none.safetensors"), safetensorsBytes("{}", ""));
  ASSERT_TRUE(empty) << empty.status().message();
  EXPECT_TRUE(empty->tensors().empty());
}

TEST(Safetensors, RefusesAFifoAndADirectoryAtOnce) {
  // Reading a FIFO with no writer would block for good.
  std::string fifo = tempPath("fifo.safetensors");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto file = tprt::SafetensorsFile::open(fifo);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.status().message(),
            "'" + fifo + "': is a FIFO, not a regular file");
  ::unlink(fifo.c_str());

  std::string dir = tempPath("dir.safetensors");
  ::rmdir(dir.c_str());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0) << std::strerror(errno);
  file = tprt::SafetensorsFile::open(dir);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.status().message(),
            "'" + dir + "': is a directory, not a regular file");
  ::rmdir(dir.c_str());
}

TEST(Safetensors, NamesAMissingFile) {
  auto file = tprt::SafetensorsFile::open(tempPath("absent.safetensors"));
  ASSERT_FALSE(file);
  EXPECT_NE(file.status().message().find("cannot open"), std::string::npos);
}

TEST(Safetensors, FilesOfAModelDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = tempPath("hf-model");
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Neither file: refused; model.safetensors alone: itself.
  auto files = tprt::checkpointFiles(dir.string());
  ASSERT_FALSE(files);
  EXPECT_EQ(files.status().message(),
            "checkpoint directory '" + dir.string() +
                "' holds neither model.safetensors nor "
                "model.safetensors.index.json");
  writeBytes((dir / "model.safetensors").string(), "x");
  files = tprt::checkpointFiles(dir.string());
  ASSERT_TRUE(files) << files.status().message();
  EXPECT_EQ(*files,
            std::vector<std::string>{(dir / "model.safetensors").string()});
  // An index: its files, each once, in name order, beside it; the
  // directory prefers it.
  std::string index = (dir / "model.safetensors.index.json").string();
  writeBytes(index, R"({"metadata": {}, "weight_map": {
      "b": "model-00002-of-00002.safetensors",
      "a": "model-00001-of-00002.safetensors",
      "c": "model-00002-of-00002.safetensors"}})");
  std::vector<std::string> shards = {
      (dir / "model-00001-of-00002.safetensors").string(),
      (dir / "model-00002-of-00002.safetensors").string()};
  writeBytes(shards[0], "x");
  files = tprt::checkpointFiles(index);
  ASSERT_FALSE(files);
  EXPECT_EQ(files.status().message(),
            "checkpoint index '" + index +
                "': it lists 'model-00002-of-00002.safetensors', which is "
                "missing");
  writeBytes(shards[1], "x");
  for (const std::string &path : {dir.string(), index}) {
    files = tprt::checkpointFiles(path);
    ASSERT_TRUE(files) << files.status().message();
    EXPECT_EQ(*files, shards);
  }
  // Any other path is itself (opening it says what is wrong).
  files = tprt::checkpointFiles("w.safetensors");
  ASSERT_TRUE(files);
  EXPECT_EQ(*files, std::vector<std::string>{"w.safetensors"});
  // Broken indexes name the index.
  for (auto [text, what] : std::vector<std::pair<std::string, std::string>>{
           {"{", "not valid JSON"},
           {"[]", "no 'weight_map' of tensor names to files"},
           {R"({"weight_map": {}})",
            "no 'weight_map' of tensor names to files"},
           {R"({"weight_map": {"a": 3}})",
            "tensor 'a' maps to 3, not a file name beside the index"},
           {R"({"weight_map": {"a": "../w.safetensors"}})",
            "tensor 'a' maps to \"../w.safetensors\", not a file name beside "
            "the index"},
           {R"({"weight_map": {"a": ".."}})",
            "tensor 'a' maps to \"..\", not a file name beside the index"}}) {
    writeBytes(index, text);
    files = tprt::checkpointFiles(index);
    ASSERT_FALSE(files) << text;
    EXPECT_EQ(files.status().message(),
              "checkpoint index '" + index + "': " + what);
  }
  files =
      tprt::checkpointFiles((dir / "absent.safetensors.index.json").string());
  ASSERT_FALSE(files);
  EXPECT_NE(files.status().message().find("cannot open"), std::string::npos);
  fs::remove_all(dir);
}

//===----------------------------------------------------------------------===//
// Slicing
//===----------------------------------------------------------------------===//

/// Rank r's slice by the definition in model.h, for a 2-D tensor.
std::vector<float> expectedSlice(const std::vector<float> &values, int64_t rows,
                                 int64_t cols, tprt::Shard shard, int64_t rank,
                                 int64_t n) {
  int64_t size = shard.dim == 0 ? rows : cols;
  int64_t block = size / shard.outer, part = block / n;
  auto kept = [&](int64_t index) { return (index % block) / part == rank; };
  std::vector<float> out;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (kept(shard.dim == 0 ? i : j))
        out.push_back(values[i * cols + j]);
  return out;
}

TEST(Slice, MatchesTheDefinition) {
  struct Case {
    int64_t rows, cols;
    tprt::Shard shard;
    int64_t n;
  } cases[] = {
      {2, 4, {1, 1}, 2}, {2, 12, {1, 3}, 2}, {4, 3, {0, 1}, 2},
      {6, 2, {0, 3}, 2}, {8, 24, {1, 3}, 4}, {4, 6, {1, 1}, 1},
  };
  for (const Case &c : cases)
    for (int64_t rank = 0; rank < c.n; ++rank) {
      SCOPED_TRACE(testing::Message()
                   << "[" << c.rows << ", " << c.cols << "] dim " << c.shard.dim
                   << " outer " << c.shard.outer << " rank " << rank << " of "
                   << c.n);
      std::vector<float> values = iota(size_t(c.rows * c.cols));
      auto slice = tprt::sliceTensor(tensorOf(values, {c.rows, c.cols}),
                                     c.shard, rank, c.n);
      ASSERT_TRUE(slice) << slice.status().message();
      std::vector<int64_t> shape = {c.rows, c.cols};
      shape[c.shard.dim] /= c.n;
      EXPECT_EQ(slice->shape, shape);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(slice->buffer.data()) % 64, 0u);
      std::vector<float> got(slice->buffer.as<float>(),
                             slice->buffer.as<float>() + c.rows * c.cols / c.n);
      EXPECT_EQ(got, expectedSlice(values, c.rows, c.cols, c.shard, rank, c.n));
    }
}

TEST(Pad, PutsTheTensorAtTheStartOfZeros) {
  // [2, 3] padded to [3, 4] (a vocabulary's rows and, to check the rows'
  // placement, its columns), then a 3-D one padded in its middle dimension.
  std::vector<float> values = iota(6);
  auto padded = tprt::padTensor(tensorOf(values, {2, 3}), {3, 4});
  ASSERT_TRUE(padded) << padded.status().message();
  std::vector<float> got(padded->as<float>(), padded->as<float>() + 12);
  EXPECT_EQ(got,
            (std::vector<float>{values[0], values[1], values[2], 0, values[3],
                                values[4], values[5], 0, 0, 0, 0, 0}));
  values = iota(8);
  padded = tprt::padTensor(tensorOf(values, {2, 2, 2}), {2, 3, 2});
  ASSERT_TRUE(padded) << padded.status().message();
  got.assign(padded->as<float>(), padded->as<float>() + 12);
  EXPECT_EQ(got, (std::vector<float>{values[0], values[1], values[2], values[3],
                                     0, 0, values[4], values[5], values[6],
                                     values[7], 0, 0}));
}

TEST(Pad, RefusesAShapeThatDoesNotHoldTheTensor) {
  std::vector<float> values = iota(6);
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{1, 3}, std::vector<int64_t>{6}}) {
    auto padded = tprt::padTensor(tensorOf(values, {2, 3}), shape);
    ASSERT_FALSE(padded);
    EXPECT_NE(padded.status().message().find("of shape [2, 3] does not pad to"),
              std::string::npos)
        << padded.status().message();
  }
}

TEST(Rows, OfAPackedTensor) {
  // q [4, 2], k [1, 2], v [1, 2] packed as rows of one [6, 2]; v's row is
  // the last, and q's part at tp 2 its rows [2, 4).
  std::vector<float> values = iota(12);
  tprt::TensorInfo packed = tensorOf(values, {6, 2});
  EXPECT_TRUE(tprt::holdsRows({6, 2}, 5, {1, 2}));
  EXPECT_FALSE(tprt::holdsRows({6, 2}, 5, {2, 2}));
  EXPECT_FALSE(tprt::holdsRows({6, 2}, 0, {4, 3}));
  EXPECT_FALSE(tprt::holdsRows({6, 2}, -1, {1, 2}));
  tprt::TensorInfo v = tprt::rowsOf(packed, 5, {1, 2});
  EXPECT_EQ(v.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(v.byteSize, 2 * sizeof(float));
  EXPECT_EQ(reinterpret_cast<const float *>(v.data)[0], values[10]);
  auto q =
      tprt::sliceTensor(tprt::rowsOf(packed, 0, {4, 2}), tprt::Shard{0, 1, 1},
                        /*rank=*/1, /*worldSize=*/2);
  ASSERT_TRUE(q) << q.status().message();
  EXPECT_EQ(
      std::vector<float>(q->buffer.as<float>(), q->buffer.as<float>() + 4),
      (std::vector<float>{values[4], values[5], values[6], values[7]}));
  // A packed bias: rows of a vector.
  tprt::TensorInfo bias = tprt::rowsOf(tensorOf(values, {12}), 10, {2});
  EXPECT_EQ(bias.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(reinterpret_cast<const float *>(bias.data)[1], values[11]);
}

TEST(Rows, AFlatTensorsElementsAsAMatrix) {
  // buddy-mlir's parameters: one flat tensor; a [2, 4] weight from element
  // 4, its columns cut at tp 2 (rank 1 takes columns 2 and 3).
  std::vector<float> values = iota(12);
  EXPECT_TRUE(tprt::holdsRows({12}, 4, {2, 4}));
  EXPECT_TRUE(tprt::holdsRows({12}, 0, {3, 4}));
  EXPECT_FALSE(tprt::holdsRows({12}, 5, {2, 4}));
  // Whole rows only: 8 elements are 4 rows of a [6, 2], 3 are not; a tensor
  // of the same rank must be as wide.
  EXPECT_TRUE(tprt::holdsRows({6, 2}, 1, {8}));
  EXPECT_FALSE(tprt::holdsRows({6, 2}, 1, {3}));
  EXPECT_FALSE(tprt::holdsRows({6, 2}, 1, {2, 3}));
  EXPECT_FALSE(tprt::holdsRows({0, 2}, 0, {2}));
  tprt::TensorInfo w = tprt::rowsOf(tensorOf(values, {12}), 4, {2, 4});
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(w.byteSize, 8 * sizeof(float));
  auto part = tprt::sliceTensor(w, tprt::Shard{1, 1, 1}, /*rank=*/1,
                                /*worldSize=*/2);
  ASSERT_TRUE(part) << part.status().message();
  EXPECT_EQ(std::vector<float>(part->buffer.as<float>(),
                               part->buffer.as<float>() + 4),
            (std::vector<float>{values[6], values[7], values[10], values[11]}));
}

TEST(Widen, Bf16AndF16ToFloat32Exactly) {
  // Normal, negative, signed zero, the smallest subnormal, the largest
  // finite, infinities and NaN of each.
  auto widen = [](std::vector<uint16_t> bits, const std::string &dtype) {
    tprt::AlignedBuffer narrow(bits.size() * sizeof(uint16_t));
    std::memcpy(narrow.data(), bits.data(), narrow.size());
    tprt::AlignedBuffer wide = tprt::widenToF32(narrow, bits.size(), dtype);
    return std::vector<float>(wide.as<float>(), wide.as<float>() + bits.size());
  };
  std::vector<float> got =
      widen({0x3f80, 0xc020, 0x8000, 0x0001, 0x7f7f, 0xff80, 0x7fc0}, "BF16");
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[1], -2.5f);
  EXPECT_TRUE(got[2] == 0.0f && std::signbit(got[2]));
  EXPECT_EQ(got[3], std::ldexp(1.0f, -133));
  EXPECT_EQ(got[4], std::ldexp(255.0f, 120));
  EXPECT_EQ(got[5], -INFINITY);
  EXPECT_TRUE(std::isnan(got[6]));
  got = widen({0x3c00, 0xc100, 0x8000, 0x0001, 0x03ff, 0x7bff, 0x7c00, 0x7e00},
              "F16");
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[1], -2.5f);
  EXPECT_TRUE(got[2] == 0.0f && std::signbit(got[2]));
  EXPECT_EQ(got[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(got[4], std::ldexp(1023.0f, -24));
  EXPECT_EQ(got[5], 65504.0f);
  EXPECT_EQ(got[6], INFINITY);
  EXPECT_TRUE(std::isnan(got[7]));
  EXPECT_TRUE(tprt::widensToF32("BF16") && tprt::widensToF32("F16"));
  EXPECT_FALSE(tprt::widensToF32("F32") || tprt::widensToF32("F64") ||
               tprt::widensToF32("F8_E4M3"));
}

TEST(Slice, WithoutAShardCopiesTheWholeTensor) {
  std::vector<float> values = iota(12);
  auto slice = tprt::sliceTensor(tensorOf(values, {3, 4}), std::nullopt, 1, 2);
  ASSERT_TRUE(slice);
  EXPECT_EQ(slice->shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(std::memcmp(slice->buffer.data(), values.data(), 48), 0);
}

TEST(Slice, ThreeDimensionalMiddleDim) {
  // [2, 6, 2] cut along dim 1 with outer 3 for 2 ranks: rank 1 keeps middle
  // indices 1, 3, 5.
  std::vector<float> values = iota(24);
  auto slice =
      tprt::sliceTensor(tensorOf(values, {2, 6, 2}), tprt::Shard{1, 3}, 1, 2);
  ASSERT_TRUE(slice) << slice.status().message();
  std::vector<float> got(slice->buffer.as<float>(),
                         slice->buffer.as<float>() + 12);
  std::vector<float> expected;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b : {1, 3, 5})
      for (int64_t c = 0; c < 2; ++c)
        expected.push_back(values[(a * 6 + b) * 2 + c]);
  EXPECT_EQ(got, expected);
}

TEST(Slice, ReplicatedParts) {
  // [4, 3] cut along dim 0 into 2 parts, each held by 2 of 4 ranks: ranks 2
  // and 3 both keep rows 2 and 3.
  std::vector<float> values = iota(12);
  for (int64_t rank : {2, 3}) {
    auto slice = tprt::sliceTensor(tensorOf(values, {4, 3}),
                                   tprt::Shard{0, 1, 2}, rank, 4);
    ASSERT_TRUE(slice) << slice.status().message();
    EXPECT_EQ(slice->shape, (std::vector<int64_t>{2, 3}));
    std::vector<float> got(slice->buffer.as<float>(),
                           slice->buffer.as<float>() + 6);
    EXPECT_EQ(got, std::vector<float>(values.begin() + 6, values.end()));
  }
  auto bad =
      tprt::sliceTensor(tensorOf(values, {4, 3}), tprt::Shard{0, 1, 3}, 0, 4);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find(
                "shard replicas 3 does not divide world size 4"),
            std::string::npos)
      << bad.status().message();
}

TEST(Slice, RefusesShardsThatDoNotFit) {
  std::vector<float> values = iota(12);
  auto indivisible =
      tprt::sliceTensor(tensorOf(values, {3, 4}), tprt::Shard{1, 3}, 0, 2);
  ASSERT_FALSE(indivisible);
  EXPECT_NE(indivisible.status().message().find(
                "tensor 't': dimension 1 of [3, 4] (4) does not split into 3 "
                "blocks of 2 parts"),
            std::string::npos)
      << indivisible.status().message();
  auto badDim =
      tprt::sliceTensor(tensorOf(values, {3, 4}), tprt::Shard{2, 1}, 0, 2);
  ASSERT_FALSE(badDim);
  EXPECT_NE(badDim.status().message().find("shard dimension 2 is out of range"),
            std::string::npos);
}

} // namespace

//===- LaunchTest.cpp - checks, binding and buffers of tprt/launch.h ------===//

#include "TestUtil.h"

#include "tprt/launch.h"
#include "tprt/report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include <sys/stat.h>

namespace {

using namespace tprt::test;

//===----------------------------------------------------------------------===//
// Descriptors, bf16, result files
//===----------------------------------------------------------------------===//

TEST(Launch, DescriptorOfAContiguousBuffer) {
  float data[24];
  std::vector<int64_t> d = tprt::makeDescriptor(data, {2, 3, 4});
  ASSERT_EQ(d.size(), 9u);
  void *allocated, *aligned;
  std::memcpy(&allocated, &d[0], sizeof(void *));
  std::memcpy(&aligned, &d[1], sizeof(void *));
  EXPECT_EQ(allocated, data);
  EXPECT_EQ(aligned, data);
  EXPECT_EQ(d[2], 0);
  EXPECT_EQ(std::vector<int64_t>(d.begin() + 3, d.begin() + 6),
            (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(d.begin() + 6, d.end()),
            (std::vector<int64_t>{12, 4, 1}));
  // A scalar: no sizes, no strides.
  EXPECT_EQ(tprt::makeDescriptor(data, {}).size(), 3u);
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

TEST(Launch, Bf16RoundsToNearestEven) {
  EXPECT_EQ(tprt::toBf16(1.0f), 0x3f80);
  EXPECT_EQ(tprt::toBf16(-2.0f), 0xc000);
  // Halfway between two bf16 values: to the even one.
  EXPECT_EQ(tprt::toBf16(fromBits(0x3f808000u)), 0x3f80);
  EXPECT_EQ(tprt::toBf16(fromBits(0x3f818000u)), 0x3f82);
  // Above halfway rounds up, below down.
  EXPECT_EQ(tprt::toBf16(fromBits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(tprt::toBf16(fromBits(0x3f807fffu)), 0x3f80);
  // The largest float rounds to infinity; infinity and NaN stay.
  EXPECT_EQ(tprt::toBf16(fromBits(0x7f7fffffu)), 0x7f80);
  EXPECT_EQ(tprt::toBf16(INFINITY), 0x7f80);
  EXPECT_EQ(tprt::toBf16(fromBits(0x7f800001u)) & 0x7fc0, 0x7fc0);
  EXPECT_EQ(tprt::toBf16(-NAN) & 0xffc0, 0xffc0);

  tprt::AlignedBuffer f32(3 * sizeof(float));
  f32.as<float>()[0] = 1.0f;
  f32.as<float>()[1] = 0.5f;
  f32.as<float>()[2] = -3.0f;
  tprt::AlignedBuffer bf16 = tprt::toBf16(f32, 3);
  ASSERT_EQ(bf16.size(), 3 * sizeof(uint16_t));
  EXPECT_EQ(bf16.as<uint16_t>()[0], 0x3f80);
  EXPECT_EQ(bf16.as<uint16_t>()[1], 0x3f00);
  EXPECT_EQ(bf16.as<uint16_t>()[2], 0xc040);
}

TEST(Launch, StacksThePartsOfEachRank) {
  // a [2, 4] cut by columns and b [2, 2] whole (its 2 columns, one kv head,
  // shared by both ranks: replicas 2), stacked along the columns of rank 1:
  // each row is a's two columns of rank 1, then b's row.
  std::vector<float> a = {0, 1, 2, 3, 10, 11, 12, 13}, b = {20, 21, 30, 31};
  tprt::TensorInfo ta = tensorOf(a, {2, 4}), tb = tensorOf(b, {2, 2});
  tprt::ManifestArg stacked;
  stacked.name = "{a,b}";
  stacked.dtype = "f32";
  stacked.shape = stacked.localShape = {2, 4};
  stacked.stackDim = 1;
  tprt::ManifestArg pa, pb;
  pa.name = "a", pb.name = "b";
  pa.dtype = pb.dtype = "f32";
  pa.shape = {2, 4}, pa.localShape = {2, 2}, pa.shard = tprt::Shard{1, 1, 1};
  pb.shape = pb.localShape = {2, 2}, pb.shard = tprt::Shard{1, 1, 2};
  stacked.stack = {pa, pb};
  tprt::Expected<tprt::AlignedBuffer> built =
      tprt::stackSlices(stacked, {{nullptr, &ta}, {nullptr, &tb}}, 1, 2);
  ASSERT_TRUE(built.ok()) << built.status().message();
  ASSERT_EQ(built->size(), 8 * sizeof(float));
  std::vector<float> got(built->as<float>(), built->as<float>() + 8);
  EXPECT_EQ(got, (std::vector<float>{2, 3, 20, 21, 12, 13, 30, 31}));

  // In bf16, each part narrowed as it is read: 2 bytes an element.
  for (tprt::ManifestArg *arg :
       {&stacked, &stacked.stack[0], &stacked.stack[1]})
    arg->dtype = "bf16";
  built = tprt::stackSlices(stacked, {{nullptr, &ta}, {nullptr, &tb}}, 0, 2);
  ASSERT_TRUE(built.ok()) << built.status().message();
  ASSERT_EQ(built->size(), 8 * sizeof(uint16_t));
  const uint16_t *bits = built->as<uint16_t>();
  EXPECT_EQ(bits[1], tprt::toBf16(1.0f));
  EXPECT_EQ(bits[2], tprt::toBf16(20.0f));
  EXPECT_EQ(bits[7], tprt::toBf16(31.0f));

  // A part without its tensor is an error, not a read.
  tprt::Expected<tprt::AlignedBuffer> missing =
      tprt::stackSlices(stacked, {{nullptr, &ta}, {nullptr, nullptr}}, 0, 2);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "'{a,b}': no tensor for its part 'b'");
}

TEST(Launch, AlignedBuffers) {
  // Small ones at 64 bytes; one of several huge pages starts on one and is
  // not rounded up to a whole number of them; both zeroed on request.
  for (size_t bytes : {size_t(1), size_t(100), (size_t(5) << 20) + 100}) {
    tprt::AlignedBuffer buffer(bytes, /*zero=*/true);
    auto address = reinterpret_cast<uintptr_t>(buffer.data());
    EXPECT_EQ(address % tprt::AlignedBuffer::kAlignment, 0u) << bytes;
    if (bytes > (size_t(2) << 20))
      EXPECT_EQ(address % (size_t(2) << 20), 0u) << bytes;
    EXPECT_EQ(buffer.size(), bytes);
    const auto *data = buffer.as<unsigned char>();
    EXPECT_TRUE(std::all_of(data, data + bytes, [](unsigned char c) {
      return c == 0;
    })) << bytes;
    std::memset(buffer.data(), 0xff, bytes);
    tprt::AlignedBuffer moved = std::move(buffer);
    EXPECT_EQ(moved.as<unsigned char>()[bytes - 1], 0xff);
  }
}

TEST(Launch, ResultPaths) {
  EXPECT_EQ(tprt::resultPath("out/y.npy", 0), "out/y.npy");
  EXPECT_EQ(tprt::resultPath("out/y.npy", 1), "out/y.1.npy");
  EXPECT_EQ(tprt::resultPath("y", 2), "y.2");
}

TEST(Launch, WhyNotWritable) {
  std::string dir = tempPath("dir");
  ::mkdir(dir.c_str(), 0755);
  EXPECT_EQ(tprt::whyNotWritable(dir), "it is a directory");
  EXPECT_EQ(tprt::whyNotWritable(dir + "/missing/y.npy"),
            "its directory is missing or not writable");
  EXPECT_EQ(tprt::whyNotWritable(dir + "/y.npy"), std::nullopt);
}

//===----------------------------------------------------------------------===//
// A fake device: host memory apart from the host buffers, counted.
//===----------------------------------------------------------------------===//

struct FakeDevice {
  static inline std::set<void *> live;
  static inline int uploads = 0, downloads = 0, syncs = 0;
  static inline bool failAlloc = false;

  static tprt_status alloc(size_t bytes, int, void **out) {
    if (failAlloc)
      return TPRT_ERR_NO_DEVICE;
    *out = std::calloc(1, bytes ? bytes : 1);
    live.insert(*out);
    return TPRT_OK;
  }
  static tprt_status release(void *pointer) {
    live.erase(pointer);
    std::free(pointer);
    return TPRT_OK;
  }
  static tprt_status toDevice(void *device, const void *host, size_t bytes) {
    ++uploads;
    std::memcpy(device, host, bytes);
    return TPRT_OK;
  }
  static tprt_status toHost(void *host, const void *device, size_t bytes) {
    ++downloads;
    std::memcpy(host, device, bytes);
    return TPRT_OK;
  }
  static tprt_status synchronize() {
    ++syncs;
    return TPRT_OK;
  }
  static const char *lastError() { return "fake device: out of memory"; }

  static tprt::Backend backend() {
    return tprt::Backend::cuda(
        {alloc, release, toDevice, toHost, synchronize, lastError});
  }
};

TEST(Launch, TheUnitTestsRunOnTheCpuRuntime) {
  tprt::Backend backend = tprt::Backend::ofThisProcess();
  EXPECT_EQ(backend.name(), "cpu");
  EXPECT_EQ(backend.device(), nullptr);
  EXPECT_FALSE(backend.takesBf16Weights());
  EXPECT_TRUE(FakeDevice::backend().takesBf16Weights());
}

//===----------------------------------------------------------------------===//
// Manifest checks and weight binding
//===----------------------------------------------------------------------===//

/// x [2, 4] (input), w1 [4, 6] cut by columns, w2 [6, 4] cut by rows, at
/// tp 2 on `backend`.
tprt::Manifest smallManifest(const std::string &backend = "cpu") {
  tprt::Manifest m;
  m.abiVersion = TPRT_ABI_VERSION;
  m.backend = backend;
  m.tpSize = 2;
  tprt::ManifestFunction &f = m.functions.emplace_back();
  f.name = "forward";
  f.symbol = "tp_model_forward";
  f.args.push_back({"x", "input", "f32", {2, 4}, {2, 4}, std::nullopt});
  f.args.push_back({"w1", "weight", "f32", {4, 6}, {4, 3}, tprt::Shard{1, 1}});
  f.args.push_back({"w2", "weight", "f32", {6, 4}, {3, 4}, tprt::Shard{0, 1}});
  f.results.push_back({"result0", "f32", {2, 4}, {2, 4}});
  return m;
}

/// Opens `paths` and binds the only function of `m`; the error that stops
/// the binding, if any. The checkpoints stay open for the test.
std::optional<std::string> bind(const tprt::Manifest &m,
                                const std::vector<std::string> &paths,
                                tprt::WeightBinding &binding,
                                std::vector<std::string> &errors) {
  static std::vector<std::vector<tprt::SafetensorsFile>> open;
  std::vector<tprt::SafetensorsFile> &checkpoints = open.emplace_back();
  if (std::optional<std::string> fatal =
          tprt::openCheckpoints(paths, checkpoints))
    return fatal;
  tprt::bindWeights(m.functions[0], checkpoints, binding, errors);
  return std::nullopt;
}

TEST(Launch, ManifestChecksAgainstBackendAndWorld) {
  tprt::Backend cpu = tprt::Backend::cpu();
  tprt::Manifest m = smallManifest();
  EXPECT_TRUE(tprt::checkManifest(m, "m.so", cpu, 2).empty());

  using Errors = std::vector<std::string>;
  EXPECT_EQ(tprt::checkManifest(m, "m.so", cpu, 4),
            Errors{"world size 4 but m.so was compiled for tp 2"});
  EXPECT_EQ(tprt::checkManifest(m, "m.so", FakeDevice::backend(), 2),
            Errors{"m.so was built for backend 'cpu', this tp-run runs "
                   "'cuda'"});
  m.abiVersion = 99;
  EXPECT_EQ(tprt::checkManifest(m, "m.so", cpu, 2),
            Errors{"m.so was built for tprt ABI version 99, this tp-run "
                   "implements version " +
                   std::to_string(TPRT_ABI_VERSION)});

  // bf16 weights: the cuda backend takes them, the cpu one does not.
  m = smallManifest();
  m.functions[0].args[1].dtype = "bf16";
  EXPECT_EQ(tprt::checkManifest(m, "m.so", cpu, 2),
            Errors{"'m.so': argument 1 ('w1') has dtype 'bf16'; the cpu "
                   "runtime takes f32, i64, i32, i1"});
  m.backend = "cuda";
  EXPECT_TRUE(tprt::checkManifest(m, "m.so", FakeDevice::backend(), 2).empty());
  m.functions[0].args[0].dtype = "bf16";
  EXPECT_EQ(tprt::checkManifest(m, "m.so", FakeDevice::backend(), 2),
            Errors{"'m.so': argument 0 ('x') has dtype 'bf16'; the cuda "
                   "runtime takes f32, i64, i32, i1 (and bf16 weights)"});

  // Weights in panels: only the cpu runtime lays them out and reads them.
  m = smallManifest();
  m.functions[0].args[1].layout = tprt::ManifestArg::Layout::Panels;
  EXPECT_TRUE(tprt::checkManifest(m, "m.so", cpu, 2).empty());
  m.backend = "cuda";
  EXPECT_EQ(tprt::checkManifest(m, "m.so", FakeDevice::backend(), 2),
            Errors{"'m.so': argument 1 ('w1') is laid out in panels, which "
                   "the cuda runtime does not read"});

  // Integer arguments: both backends take them.
  m = smallManifest();
  m.functions[0].args[0].dtype = "i64";
  m.functions[0].args[2].dtype = "i1";
  EXPECT_TRUE(tprt::checkManifest(m, "m.so", cpu, 2).empty());
  m.backend = "cuda";
  EXPECT_TRUE(tprt::checkManifest(m, "m.so", FakeDevice::backend(), 2).empty());

  // Every other problem is listed.
  m = smallManifest();
  m.functions[0].args[1].localShape = {4, 6};
  m.functions[0].args[2].dtype = "f64";
  m.functions[0].results[0].dtype = "f16";
  Errors errors = tprt::checkManifest(m, "m.so", cpu, 2);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "'m.so': argument 1 ('w1'): local_shape [4, 6] is not "
                       "the shard [4, 3] of [4, 6]");
  EXPECT_EQ(errors[1], "'m.so': argument 2 ('w2') has dtype 'f64'; the cpu "
                       "runtime takes f32, i64, i32, i1");
  EXPECT_EQ(errors[2], "'m.so': result 'result0' has dtype 'f16'; the cpu "
                       "runtime takes f32, i64, i32, i1");

  // Integer results (next token ids) on the cpu backend.
  m = smallManifest();
  m.functions[0].results[0].dtype = "i64";
  EXPECT_TRUE(tprt::checkManifest(m, "m.so", cpu, 2).empty());
}

/// A checkpoint of F32 tensors {name, shape}, each filled with `fill`.
std::string writeCheckpoint(
    const std::string &path,
    const std::vector<std::pair<std::string, std::vector<int64_t>>> &tensors,
    float fill = 1, const std::string &dtype = "F32") {
  std::string header = "{", data;
  for (const auto &[name, shape] : tensors) {
    size_t count = size_t(tprt::numElements(shape));
    std::string bytes = floatBytes(std::vector<float>(count, fill));
    bytes.resize(count * *tprt::dtypeSize(dtype));
    header += std::string(header.size() > 1 ? ", " : "") + "\"" + name +
              "\": {\"dtype\": \"" + dtype +
              "\", \"shape\": " + tprt::formatShape(shape) +
              ", \"data_offsets\": [" + std::to_string(data.size()) + ", " +
              std::to_string(data.size() + bytes.size()) + "]}";
    data += bytes;
  }
  writeBytes(path, safetensorsBytes(header + "}", data));
  return path;
}

TEST(Launch, BindsNamedWeightsAcrossCheckpoints) {
  tprt::Manifest m = smallManifest();
  std::string a = writeCheckpoint(tempPath("a.safetensors"), {{"w1", {4, 6}}});
  std::string b = writeCheckpoint(tempPath("b.safetensors"), {{"w2", {6, 4}}});
  tprt::WeightBinding binding;
  std::vector<std::string> errors;
  EXPECT_EQ(bind(m, {a, b}, binding, errors), std::nullopt);
  EXPECT_TRUE(errors.empty()) << errors[0];
  ASSERT_EQ(binding.tensors.size(), 3u);
  EXPECT_EQ(binding.tensors[0], nullptr);
  EXPECT_EQ(binding.tensors[1]->name, "w1");
  EXPECT_EQ(binding.files[1]->path(), a);
  EXPECT_EQ(binding.tensors[2]->name, "w2");
  EXPECT_EQ(binding.files[2]->path(), b);
}

TEST(Launch, BindingProblemsNameTheTensor) {
  tprt::Manifest m = smallManifest();
  // w2 renamed; w1 with the wrong shape.
  std::string path = writeCheckpoint(tempPath("w.safetensors"),
                                     {{"w1", {4, 5}}, {"mlp.w2", {6, 4}}});
  tprt::WeightBinding binding;
  std::vector<std::string> errors;
  EXPECT_EQ(bind(m, {path}, binding, errors), std::nullopt);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "tensor 'w1' (argument 1) in '" + path +
                           "' has shape [4, 5], the model takes [4, 6]");
  EXPECT_EQ(errors[1], "checkpoint '" + path +
                           "' has no tensor 'w2' (argument 2); unused "
                           "tensors of shape [6, 4]: 'mlp.w2'");

  // In two checkpoints; F64 (BF16 and F16 are widened, F64 is not
  // narrowed).
  std::string a = writeCheckpoint(tempPath("a.safetensors"),
                                  {{"w1", {4, 6}}, {"w2", {6, 4}}});
  std::string b =
      writeCheckpoint(tempPath("b.safetensors"), {{"w2", {6, 4}}}, 1, "F64");
  errors.clear();
  EXPECT_EQ(bind(m, {a, b}, binding, errors), std::nullopt);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "tensor 'w2' (argument 2) is in '" + a + "', '" + b +
                           "': give it once");
  errors.clear();
  EXPECT_EQ(bind(m, {b}, binding, errors), std::nullopt);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[1], "tensor 'w2' (argument 2) in '" + b +
                           "' is F64, the model takes F32 (or BF16, F16)");
  for (const char *narrow : {"BF16", "F16"}) {
    b = writeCheckpoint(tempPath("b.safetensors"),
                        {{"w1", {4, 6}}, {"w2", {6, 4}}}, 1, narrow);
    errors.clear();
    EXPECT_EQ(bind(m, {b}, binding, errors), std::nullopt);
    EXPECT_TRUE(errors.empty()) << narrow << ": " << errors[0];
  }

  // An unreadable checkpoint stops the binding.
  std::optional<std::string> fatal =
      bind(m, {tempPath("missing.safetensors")}, binding, errors);
  ASSERT_TRUE(fatal.has_value());
  EXPECT_EQ(fatal->rfind("checkpoint '", 0), 0u) << *fatal;
}

TEST(Launch, NamedArgumentsNoCheckpointHoldsAreInputs) {
  // Roles left to the checkpoint, as tp-compile writes named arguments.
  tprt::Manifest m = smallManifest();
  for (tprt::ManifestArg &arg : m.functions[0].args)
    arg.role.clear();
  m.functions[0].args[0].dtype = "i64";
  std::string path = writeCheckpoint(tempPath("w.safetensors"),
                                     {{"w1", {4, 6}}, {"w2", {6, 4}}});
  tprt::WeightBinding binding;
  std::vector<std::string> errors;
  EXPECT_EQ(bind(m, {path}, binding, errors), std::nullopt);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(binding.inputs, (std::vector<size_t>{0}));
  EXPECT_EQ(binding.tensors[2]->name, "w2");

  // Without w2 in the checkpoint, w2 is an input too.
  path = writeCheckpoint(tempPath("w1.safetensors"), {{"w1", {4, 6}}});
  EXPECT_EQ(bind(m, {path}, binding, errors), std::nullopt);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(binding.inputs, (std::vector<size_t>{0, 2}));

  // An integer weight is read from an I64 tensor.
  m.functions[0].args[2].dtype = "i64";
  path = writeCheckpoint(tempPath("w2.safetensors"),
                         {{"w1", {4, 6}}, {"w2", {6, 4}}});
  EXPECT_EQ(bind(m, {path}, binding, errors), std::nullopt);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "tensor 'w2' (argument 2) in '" + path +
                           "' is F32, the model takes I64");
}

TEST(Launch, TheTokensInput) {
  tprt::Manifest m = smallManifest();
  m.functions[0].args[0].shape = {2, 4, 8};
  m.functions[0].args[2].dtype = "i64";
  m.functions[0].args[2].shape = {3, 5};
  EXPECT_EQ(tprt::tokenInput(m.functions[0], {0, 2}),
            std::make_pair(std::optional<size_t>(2), int64_t(15)));
  EXPECT_EQ(tprt::tokenInput(m.functions[0], {0}),
            std::make_pair(std::optional<size_t>(0), int64_t(8)));
  EXPECT_EQ(tprt::tokenInput(m.functions[0], {}),
            std::make_pair(std::optional<size_t>(), int64_t(1)));
  // The input the manifest marks as the lookup's ids wins over the first
  // rank-2 integer input (a position-ids buffer).
  m.functions[0].args[1].dtype = "i64";
  m.functions[0].args[1].shape = {1, 7};
  m.functions[0].args[1].tokens = true;
  EXPECT_EQ(tprt::tokenInput(m.functions[0], {0, 2, 1}),
            std::make_pair(std::optional<size_t>(1), int64_t(7)));
}

TEST(Launch, UnnamedWeightsBindByPosition) {
  tprt::Manifest m = smallManifest();
  m.functions[0].args[1].name = "arg1";
  m.functions[0].args[1].named = false;
  m.functions[0].args[2].name = "arg2";
  m.functions[0].args[2].named = false;
  // File order, each file by data offset: b's tensor follows a's.
  std::string a = writeCheckpoint(tempPath("a.safetensors"), {{"z", {4, 6}}});
  std::string b = writeCheckpoint(tempPath("b.safetensors"), {{"a", {6, 4}}});
  tprt::WeightBinding binding;
  std::vector<std::string> errors;
  EXPECT_EQ(bind(m, {a, b}, binding, errors), std::nullopt);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(binding.tensors[1]->name, "z");
  EXPECT_EQ(binding.tensors[2]->name, "a");
}

//===----------------------------------------------------------------------===//
// The fake models (FakeModel.c): load, slice, place, run
//===----------------------------------------------------------------------===//

/// fc1 [8, 16] and fc2 [16, 8] of FakeModel.c, and its input x [2, 4, 8].
struct FakeModelFiles {
  tprt::LaunchFiles files;
  std::vector<float> x, fc1, fc2;

  explicit FakeModelFiles(const std::string &model) {
    files.model = std::string(TPRT_TEST_MODEL_DIR) + "/" + model;
    x = iota(2 * 4 * 8, -3);
    fc1 = iota(8 * 16, 0.5f);
    fc2 = iota(16 * 8, -1);
    for (float &v : fc1)
      v = std::fmod(v, 7.0f) - 3;
    for (float &v : fc2)
      v = std::fmod(v, 5.0f) - 2;
    files.weights = {tempPath("weights.safetensors")};
    std::string header =
        "{\"fc1.weight\": {\"dtype\": \"F32\", \"shape\": [8, 16], "
        "\"data_offsets\": [0, 512]}, \"fc2.weight\": {\"dtype\": \"F32\", "
        "\"shape\": [16, 8], \"data_offsets\": [512, 1024]}}";
    writeBytes(files.weights[0],
               safetensorsBytes(header, floatBytes(fc1) + floatBytes(fc2)));
    files.inputs = {{"", tempPath("x.npy")}};
    EXPECT_TRUE(tprt::writeNpy(files.inputs[0].path, x.data(), {2, 4, 8}).ok());
  }

  /// y = (x @ fc1[:, columns]) @ fc2[rows, :], over the hidden indices
  /// `keep` (all of them: the whole model).
  std::vector<float> expected(const std::set<int> &keep) const {
    std::vector<float> y(8 * 8, 0);
    for (int t = 0; t < 8; ++t)
      for (int j : keep) {
        float h = 0;
        for (int i = 0; i < 8; ++i)
          h += x[t * 8 + i] * fc1[i * 16 + j];
        for (int o = 0; o < 8; ++o)
          y[t * 8 + o] += h * fc2[j * 8 + o];
      }
    return y;
  }
};

void expectNear(const float *got, const std::vector<float> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-3f * (1 + std::fabs(want[i])))
        << "element " << i;
}

TEST(Launch, RunsTheFakeModelOnTheHost) {
  ASSERT_EQ(tprt_init(nullptr, nullptr), TPRT_OK) << tprt_last_error();
  FakeModelFiles fake("fake-model-tp1.so");
  fake.files.output = tempPath("y.npy");
  tprt::LoadedModel loaded;
  std::vector<std::string> errors =
      loaded.load(fake.files, tprt::Backend::cpu(), 0, 1);
  ASSERT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(loaded.function().args.size(), 3u);

  tprt::Expected<tprt::ModelArguments> args = loaded.slice(0, 1);
  ASSERT_TRUE(args.ok()) << args.status().message();
  EXPECT_EQ(args->weightBytes(), 2 * 8 * 16 * sizeof(float));
  ASSERT_TRUE(args->place(tprt::Backend::cpu()).ok());
  ASSERT_TRUE(loaded.call(*args).ok());
  ASSERT_TRUE(args->fetchResults().ok());
  std::set<int> all;
  for (int j = 0; j < 16; ++j)
    all.insert(j);
  expectNear(args->result(0).as<float>(), fake.expected(all));

  fake.files.reportJson = tempPath("report.json");
  tprt::RunReport report("m.so", loaded.manifest(), loaded.function(),
                         loaded.inputs(), 1, 0, 1);
  report.forwardSeconds = {0.5};
  EXPECT_TRUE(
      tprt::writeResults(fake.files, loaded.function(), *args, report).empty());
  std::ifstream json(fake.files.reportJson);
  std::string text((std::istreambuf_iterator<char>(json)), {});
  EXPECT_NE(text.find("\"model\": \"m.so\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"input_shape\": [\n    2,\n    4,\n    8\n  ]"),
            std::string::npos)
      << text;
  tprt::Expected<tprt::NpyArray> written = tprt::readNpy(fake.files.output);
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(written->shape, (std::vector<int64_t>{2, 4, 8}));
  expectNear(written->data(), fake.expected(all));
  // A report that cannot be written fails the run: no output is left.
  fake.files.reportJson = tempPath("missing/report.json");
  EXPECT_EQ(tprt::writeResults(fake.files, loaded.function(), *args, report),
            std::vector<std::string>{"cannot write the report '" +
                                     fake.files.reportJson + "'"});
  EXPECT_FALSE(tprt::readNpy(fake.files.output).ok());
}

TEST(Launch, PlacesEveryBufferOnTheDevice) {
  ASSERT_EQ(tprt_init(nullptr, nullptr), TPRT_OK) << tprt_last_error();
  FakeModelFiles fake("fake-model-cuda.so");
  tprt::Backend device = FakeDevice::backend();
  tprt::LoadedModel loaded;
  // Rank 0 of 2 (the fake model's tp); the all-reduce runs at world size 1,
  // so the result is rank 0's partial sum.
  std::vector<std::string> errors = loaded.load(fake.files, device, 0, 2);
  ASSERT_TRUE(errors.empty()) << errors[0];
  {
    tprt::Expected<tprt::ModelArguments> args = loaded.slice(0, 2);
    ASSERT_TRUE(args.ok()) << args.status().message();
    FakeDevice::uploads = FakeDevice::downloads = FakeDevice::syncs = 0;
    ASSERT_TRUE(args->place(device).ok());
    // Input, two weights and the result, each uploaded once; the
    // descriptors point to the device copies.
    EXPECT_EQ(FakeDevice::live.size(), 4u);
    EXPECT_EQ(FakeDevice::uploads, 4);
    for (int i = 0; i < 4; ++i) {
      void *aligned;
      std::memcpy(&aligned, static_cast<int64_t *>(args->pointers()[i]) + 1,
                  sizeof(void *));
      EXPECT_EQ(FakeDevice::live.count(aligned), 1u) << "argument " << i;
    }
    ASSERT_TRUE(loaded.call(*args).ok());
    EXPECT_EQ(FakeDevice::syncs, 1);
    ASSERT_TRUE(args->fetchResults().ok());
    EXPECT_EQ(FakeDevice::downloads, 1);
    // Outer 2: rank 0 holds hidden columns 0-3 and 8-11.
    expectNear(args->result(0).as<float>(),
               fake.expected({0, 1, 2, 3, 8, 9, 10, 11}));
  }
  // Freed with the arguments.
  EXPECT_TRUE(FakeDevice::live.empty());

  // A failing allocation comes back with the runtime's message.
  tprt::Expected<tprt::ModelArguments> args = loaded.slice(0, 2);
  ASSERT_TRUE(args.ok());
  FakeDevice::failAlloc = true;
  tprt::Status placed = args->place(device);
  FakeDevice::failAlloc = false;
  EXPECT_EQ(placed.message(), "fake device: out of memory");
}

TEST(Launch, LoadRefusesTheWrongWorldAndMissingWeights) {
  FakeModelFiles fake("fake-model-tp2.so");
  tprt::LoadedModel loaded;
  std::vector<std::string> errors =
      loaded.load(fake.files, tprt::Backend::cpu(), 0, 3);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "world size 3 but " + fake.files.model + " was compiled for tp 2");

  fake.files.weights.clear();
  tprt::LoadedModel again;
  errors = again.load(fake.files, tprt::Backend::cpu(), 0, 2);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "no --weights given; '" + fake.files.model +
                           "' takes 2 weights (the first 'fc1.weight')");
}

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

TEST(Launch, ReportTextAndJson) {
  tprt::RunReport r;
  r.model = "m.so";
  r.backend = "cpu";
  r.tpSize = 2;
  r.worldSize = 2;
  r.inputShape = {1, 128, 768};
  r.tokens = 128;
  r.warmup = 1;
  r.iterations = 2;
  r.forwardSeconds = {0.004, 0.002};
  r.counters.all_reduce_calls = 48;
  r.counters.all_reduce_bytes = 4800;
  r.counters.gemm_calls = 10;
  r.counters.gemm_flops = 4e9;
  r.counters.gemm_seconds = 0.002;
  std::string text = tprt::reportText(r);
  EXPECT_NE(text.find("tp-run: m.so, backend cpu, tp 2, input [1,128,768] "
                      "(128 tokens)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("forward        min 2.000 ms, median 3.000 ms "
                      "(2 iterations after 1 warmup; slowest rank)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("all_reduce 24 (2400 B)"), std::string::npos) << text;
  EXPECT_NE(text.find("5 calls, 2 GFLOP, 33.3% of forward, 2000.00 GFLOP/s"),
            std::string::npos)
      << text;
  std::string json = tprt::reportJson(r);
  EXPECT_NE(json.find("\"tokens_per_s\": "), std::string::npos) << json;
  EXPECT_NE(json.find("\"world_size\": 2"), std::string::npos) << json;
}

} // namespace

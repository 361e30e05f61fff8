//===- CudaRuntimeTest.cpp - libtprt_cuda on one GPU ----------------------===//
//
// Needs a GPU (lit: test/Cuda/runtime-unittests.test, REQUIRES: cuda). GEMM
// against a naive host loop for row-major, column-major (transposed
// storage) and strided (two non-unit strides: the device copy) views of a,
// b and c with both transpositions; batches with a batch stride; all-reduce
// and all-gather with one rank through NCCL; counters; device allocation
// functions; the device copies of constants; a call captured as a CUDA
// graph and replayed. Without a GPU, tprt_init must say "no GPU".
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"
#include "tprt/tprt_cuda.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes);
extern "C" void _mlir_memref_to_llvm_free(void *pointer);

namespace {

/// A device copy of `host`, freed at the end of the scope.
template <typename T> struct DeviceCopy {
  T *data = nullptr;
  explicit DeviceCopy(const std::vector<T> &host) {
    void *p = nullptr;
    EXPECT_EQ(tprt_device_alloc(host.size() * sizeof(T), 0, &p), TPRT_OK)
        << tprt_last_error();
    data = static_cast<T *>(p);
    EXPECT_EQ(tprt_copy_to_device(data, host.data(), host.size() * sizeof(T)),
              TPRT_OK);
  }
  DeviceCopy(const DeviceCopy &) = delete;
  DeviceCopy &operator=(const DeviceCopy &) = delete;
  ~DeviceCopy() { tprt_device_free(data); }
  /// The device contents, read back.
  std::vector<T> download(size_t count) const {
    std::vector<T> out(count);
    EXPECT_EQ(tprt_copy_to_host(out.data(), data, count * sizeof(T)), TPRT_OK);
    return out;
  }
};

/// A host matrix stored in `storage` with the given strides, mirrored on
/// the device.
struct Matrix {
  int64_t rows, cols, s0, s1, span;
  std::vector<float> host;
  std::optional<DeviceCopy<float>> copy;
  float *device = nullptr;

  Matrix(int64_t rows, int64_t cols, char layout, std::mt19937 &rng)
      : rows(rows), cols(cols) {
    if (layout == 'r') { // row-major, padded rows
      s0 = cols + 3;
      s1 = 1;
    } else if (layout == 'c') { // column-major
      s0 = 1;
      s1 = rows + 2;
    } else { // two non-unit strides
      s0 = 2 * cols + 1;
      s1 = 2;
    }
    span = (rows - 1) * s0 + (cols - 1) * s1 + 1;
    host.resize(size_t(span));
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float &v : host)
      v = dist(rng);
    device = copy.emplace(host).data;
  }
  float at(int64_t i, int64_t j) const { return host[i * s0 + j * s1]; }
  tprt_memref2d_f32 descriptor() const {
    return {device, device, 0, {rows, cols}, {s0, s1}};
  }
  std::vector<float> download() const { return copy->download(host.size()); }
};

class CudaRuntime : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(tprt_init(nullptr, nullptr), TPRT_OK) << tprt_last_error();
  }
};

TEST_F(CudaRuntime, MatmulEveryLayout) {
  std::mt19937 rng(7);
  const int64_t m = 37, n = 29, k = 41;
  for (char la : {'r', 'c', 's'})
    for (char lb : {'r', 'c', 's'})
      for (char lc : {'r', 'c', 's'})
        for (int ta = 0; ta < 2; ++ta)
          for (int tb = 0; tb < 2; ++tb)
            for (int acc = 0; acc < 2; ++acc) {
              Matrix a(ta ? k : m, ta ? m : k, la, rng);
              Matrix b(tb ? n : k, tb ? k : n, lb, rng);
              Matrix c(m, n, lc, rng);
              tprt_memref2d_f32 da = a.descriptor(), db = b.descriptor(),
                                dc = c.descriptor();
              _mlir_ciface_tprt_matmul_f32(&da, &db, &dc, ta, tb, acc);
              std::vector<float> got = c.download();
              double worst = 0;
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  // Without accumulation c's (random) values must not count.
                  double want = acc ? c.at(i, j) : 0.0;
                  for (int64_t p = 0; p < k; ++p)
                    want += double(ta ? a.at(p, i) : a.at(i, p)) *
                            double(tb ? b.at(j, p) : b.at(p, j));
                  worst = std::max(worst,
                                   std::abs(want - got[i * c.s0 + j * c.s1]));
                }
              EXPECT_LT(worst, 1e-3)
                  << "layouts a " << la << " b " << lb << " c " << lc
                  << ", trans " << ta << tb << ", accumulate " << acc;
            }
}

TEST_F(CudaRuntime, BatchMatmulWithBatchStride) {
  std::mt19937 rng(3);
  const int64_t batch = 4, m = 8, n = 16, k = 12;
  // a: [batch, k, m] read transposed; b: [batch, k, n]; c: [batch, m, n].
  std::vector<float> a(batch * k * m), b(batch * k * n), c(batch * m * n, 1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float &v : a)
    v = dist(rng);
  for (float &v : b)
    v = dist(rng);
  DeviceCopy<float> da(a), db(b), dc(c);
  tprt_memref3d_f32 ma{da.data, da.data, 0, {batch, k, m}, {k * m, m, 1}};
  tprt_memref3d_f32 mb{db.data, db.data, 0, {batch, k, n}, {k * n, n, 1}};
  tprt_memref3d_f32 mc{dc.data, dc.data, 0, {batch, m, n}, {m * n, n, 1}};
  tprt_reset_counters();
  _mlir_ciface_tprt_batch_matmul_f32(&ma, &mb, &mc, 1, 0, 1);
  std::vector<float> got = dc.download(c.size());
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 1;
        for (int64_t p = 0; p < k; ++p)
          want += double(a[s * k * m + p * m + i]) * b[s * k * n + p * n + j];
        EXPECT_NEAR(got[s * m * n + i * n + j], want, 1e-3);
      }
  tprt_counters counters;
  tprt_get_counters(&counters);
  EXPECT_EQ(counters.gemm_calls, 1);
  EXPECT_DOUBLE_EQ(counters.gemm_flops, 2.0 * batch * m * n * k);
  EXPECT_GT(counters.gemm_seconds, 0);
}

/// Rounds to bf16 (nearest even), as the kernels of --dtype bf16 do.
uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}
float fromBf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST_F(CudaRuntime, Bf16MatmulRowAndColumnMajorOperands) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t m = 24, n = 40, k = 56;
  for (int layout = 0; layout < 4; ++layout) {
    bool aCol = layout & 1, bCol = layout & 2;
    // a: m x k, b: k x n (logical); stored row- or column-major.
    std::vector<uint16_t> a(m * k), b(k * n);
    std::vector<float> c(m * n, 0.5f);
    for (auto &v : a)
      v = toBf16(dist(rng));
    for (auto &v : b)
      v = toBf16(dist(rng));
    auto at = [&](int64_t i, int64_t p) {
      return fromBf16(aCol ? a[p * m + i] : a[i * k + p]);
    };
    auto bt = [&](int64_t p, int64_t j) {
      return fromBf16(bCol ? b[j * k + p] : b[p * n + j]);
    };
    DeviceCopy<uint16_t> da(a), db(b);
    DeviceCopy<float> dc(c);
    tprt_memref2d_bf16 ma{
        da.data, da.data, 0, {m, k}, {aCol ? 1 : k, aCol ? m : 1}};
    tprt_memref2d_bf16 mb{
        db.data, db.data, 0, {k, n}, {bCol ? 1 : n, bCol ? k : 1}};
    tprt_memref2d_f32 mc{dc.data, dc.data, 0, {m, n}, {n, 1}};
    _mlir_ciface_tprt_matmul_bf16(&ma, &mb, &mc, 0, 0, 1);
    std::vector<float> got = dc.download(c.size());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0.5;
        for (int64_t p = 0; p < k; ++p)
          want += double(at(i, p)) * bt(p, j);
        EXPECT_NEAR(got[i * n + j], want, 1e-3) << "layout " << layout;
      }
  }
}

TEST_F(CudaRuntime, CollectivesOneRank) {
  ASSERT_EQ(tprt_world_size(), 1);
  std::vector<float> x(2 * 3 * 4);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i);
  DeviceCopy<float> dx(x), dy(std::vector<float>(x.size(), 0));
  float *px = dx.data, *py = dy.data;
  tprt_memref3d_f32 in{px, px, 0, {2, 3, 4}, {12, 4, 1}};
  tprt_memref3d_f32 out{py, py, 0, {2, 3, 4}, {12, 4, 1}};
  tprt_unranked_memref uin{3, &in}, uout{3, &out};
  tprt_reset_counters();
  _mlir_ciface_tprt_all_reduce_sum_f32(&uin);
  _mlir_ciface_tprt_all_gather_f32(&uin, &uout, 1);
  EXPECT_EQ(dy.download(x.size()), x);
  EXPECT_EQ(dx.download(x.size()), x);
  tprt_counters c;
  tprt_get_counters(&c);
  EXPECT_EQ(c.all_reduce_calls, 1);
  EXPECT_EQ(c.all_reduce_bytes, int64_t(x.size() * 4));
  EXPECT_EQ(c.all_gather_calls, 1);
}

TEST_F(CudaRuntime, GenericAllocationIsDeviceMemory) {
  void *p = _mlir_memref_to_llvm_alloc(1 << 20);
  ASSERT_NE(p, nullptr);
  std::vector<float> ones(1 << 18, 1.0f), back(1 << 18);
  EXPECT_EQ(tprt_copy_to_device(p, ones.data(), 1 << 20), TPRT_OK);
  EXPECT_EQ(tprt_copy_to_host(back.data(), p, 1 << 20), TPRT_OK);
  EXPECT_EQ(back, ones);
  _mlir_memref_to_llvm_free(p);
  EXPECT_EQ(tprt_device_synchronize(), TPRT_OK);
}

TEST_F(CudaRuntime, ConstantsCopiedToDeviceOnce) {
  // A model's constant array (a memref.global in its .rodata).
  static const float weights[6] = {1, -2, 3.5f, 0, 7, -0.25f};
  float *host = const_cast<float *>(weights);
  tprt_memref1d_any in{host, host, 2, {4}, {1}}, first{}, again{};
  _mlir_ciface_tprt_device_constant_f32(&first, &in);
  _mlir_ciface_tprt_device_constant_f32(&again, &in);
  ASSERT_NE(first.aligned, host + 2);
  EXPECT_EQ(again.aligned, first.aligned) << "uploaded twice";
  EXPECT_EQ(first.offset, 0);
  EXPECT_EQ(first.sizes[0], 4);
  EXPECT_EQ(first.strides[0], 1);
  std::vector<float> back(4);
  ASSERT_EQ(tprt_copy_to_host(back.data(), first.aligned, 16), TPRT_OK);
  EXPECT_EQ(back, std::vector<float>(weights + 2, weights + 6));
}

// Integer constants (position ids, masks) by their element size; two
// arrays at one address but of different sizes are two copies.
TEST_F(CudaRuntime, IntegerConstantsCopiedByTheirSize) {
  static const int64_t ids[5] = {0, 1, 2, 3, 1 << 30};
  auto *host = const_cast<int64_t *>(ids);
  tprt_memref1d_any in{host, host, 1, {4}, {1}}, copy{};
  _mlir_ciface_tprt_device_constant_i64(&copy, &in);
  std::vector<int64_t> back(4);
  ASSERT_EQ(tprt_copy_to_host(back.data(), copy.aligned, 32), TPRT_OK);
  EXPECT_EQ(back, std::vector<int64_t>(ids + 1, ids + 5));

  static const bool mask[4] = {true, false, false, true};
  auto *bytes = const_cast<bool *>(mask);
  tprt_memref1d_any whole{bytes, bytes, 0, {4}, {1}},
      part{bytes, bytes, 0, {2}, {1}}, wholeCopy{}, partCopy{};
  _mlir_ciface_tprt_device_constant_i1(&wholeCopy, &whole);
  _mlir_ciface_tprt_device_constant_i1(&partCopy, &part);
  EXPECT_NE(wholeCopy.aligned, partCopy.aligned);
  std::vector<char> maskBack(4);
  ASSERT_EQ(tprt_copy_to_host(maskBack.data(), wholeCopy.aligned, 4), TPRT_OK);
  EXPECT_EQ(maskBack, (std::vector<char>{1, 0, 0, 1}));
}

// A call captured as a CUDA graph: nothing runs while capturing and nothing
// is counted; each launch runs it once and counts it. The host stand-ins run
// captured work at once and cannot launch a graph (FakeCuda.cpp): there the
// test ends once the launch is refused, and only a GPU checks the replay.
TEST_F(CudaRuntime, GraphReplaysACapturedCall) {
  std::mt19937 rng(3);
  Matrix a(3, 4, 'r', rng), b(4, 2, 'r', rng), c(3, 2, 'r', rng);
  tprt_memref2d_f32 da = a.descriptor(), db = b.descriptor(),
                    dc = c.descriptor();
  tprt_reset_counters();
  ASSERT_EQ(tprt_graph_begin(), TPRT_OK) << tprt_last_error();
  _mlir_ciface_tprt_matmul_f32(&da, &db, &dc, 0, 0, /*accumulate=*/1);
  void *graph = nullptr;
  ASSERT_EQ(tprt_graph_end(&graph), TPRT_OK) << tprt_last_error();
  tprt_counters counts;
  tprt_get_counters(&counts);
  EXPECT_EQ(counts.gemm_calls, 0) << "a captured call was counted";
  std::vector<float> afterCapture = c.download();
#ifdef TPRT_HOST_STAND_INS
  EXPECT_NE(tprt_graph_launch(graph), TPRT_OK);
  EXPECT_STREQ(tprt_last_error(), "tprt_graph_launch: cudaGraphLaunch failed: "
                                  "operation not supported");
  tprt_graph_destroy(graph);
  return;
#endif
  EXPECT_EQ(afterCapture, c.host) << "the capture ran the call";
  ASSERT_EQ(tprt_graph_launch(graph), TPRT_OK) << tprt_last_error();
  ASSERT_EQ(tprt_graph_launch(graph), TPRT_OK) << tprt_last_error();
  std::vector<float> got = c.download();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      double ab = 0;
      for (int64_t p = 0; p < 4; ++p)
        ab += double(a.at(i, p)) * double(b.at(p, j));
      EXPECT_NEAR(got[i * c.s0 + j], c.at(i, j) + 2 * ab, 1e-4);
    }
  tprt_get_counters(&counts);
  EXPECT_EQ(counts.gemm_calls, 2);
  tprt_graph_destroy(graph);
}

// Reading device memory on the host within a capture fails, and so does
// the capture: nothing is instantiated, and the stream works on.
TEST_F(CudaRuntime, GraphRefusesAHostReadInside) {
  DeviceCopy<float> x(std::vector<float>{1, 2, 3});
  std::vector<float> back(3);
  ASSERT_EQ(tprt_graph_begin(), TPRT_OK) << tprt_last_error();
  EXPECT_NE(tprt_copy_to_host(back.data(), x.data, 12), TPRT_OK);
  void *graph = nullptr;
  EXPECT_NE(tprt_graph_end(&graph), TPRT_OK);
  EXPECT_EQ(graph, nullptr);
  EXPECT_NE(std::string(tprt_last_error()).find("cudaStreamEndCapture"),
            std::string::npos)
      << tprt_last_error();
  EXPECT_EQ(x.download(3), (std::vector<float>{1, 2, 3}));
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int status = RUN_ALL_TESTS();
  tprt_finalize();
  return status;
}

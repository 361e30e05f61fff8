//===- GemmTest.cpp - matmul entry points against a naive loop ------------===//

#include "Panels.h"
#include "tprt/tprt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <unistd.h>

namespace {

enum class Layout { RowMajor, ColumnMajor, Strided };

const char *name(Layout layout) {
  switch (layout) {
  case Layout::RowMajor:
    return "row-major";
  case Layout::ColumnMajor:
    return "column-major";
  case Layout::Strided:
    return "strided";
  }
  return "?";
}

/// A logical rows x cols matrix stored with `layout`, at an offset and with
/// padding, so that ld != cols is exercised.
struct Matrix {
  Matrix(int64_t rows, int64_t cols, Layout layout, std::mt19937 &rng)
      : rows(rows), cols(cols) {
    offset = 3;
    switch (layout) {
    case Layout::RowMajor:
      strides[0] = cols + 1;
      strides[1] = 1;
      break;
    case Layout::ColumnMajor:
      strides[0] = 1;
      strides[1] = rows + 2;
      break;
    case Layout::Strided:
      strides[0] = 2 * cols + 1;
      strides[1] = 2;
      break;
    }
    storage.assign(offset + rows * strides[0] + cols * strides[1] + 1, -1e9f);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        at(i, j) = dist(rng);
  }

  float &at(int64_t i, int64_t j) {
    return storage[offset + i * strides[0] + j * strides[1]];
  }

  tprt_memref2d_f32 descriptor() {
    return {storage.data(),
            storage.data(),
            offset,
            {rows, cols},
            {strides[0], strides[1]}};
  }

  int64_t rows, cols, offset;
  int64_t strides[2];
  std::vector<float> storage;
};

/// The logical values of a matrix, row-major.
std::vector<float> values(Matrix &m) {
  std::vector<float> out;
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j)
      out.push_back(m.at(i, j));
  return out;
}

/// c + op(a) op(b) by the definition (op(a) op(b) when !accumulate).
std::vector<float> reference(Matrix &a, Matrix &b, Matrix &c, bool ta, bool tb,
                             bool accumulate = true) {
  std::vector<float> out = values(c);
  if (!accumulate)
    std::fill(out.begin(), out.end(), 0.0f);
  int64_t k = ta ? a.rows : a.cols;
  for (int64_t i = 0; i < c.rows; ++i)
    for (int64_t j = 0; j < c.cols; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < k; ++l)
        sum += double(ta ? a.at(l, i) : a.at(i, l)) *
               double(tb ? b.at(j, l) : b.at(l, j));
      out[i * c.cols + j] += float(sum);
    }
  return out;
}

const Layout kLayouts[] = {Layout::RowMajor, Layout::ColumnMajor,
                           Layout::Strided};

/// The tolerance of a product over k terms: a float sum's rounding grows
/// with the square root of its terms (sgemv's over the 3077 of a 48 KiB
/// L1's long row was 1.1e-4 off, values near 32).
float sumTolerance(int64_t k) {
  return 1e-4f * std::max(1.0f, std::sqrt(float(k) / 256));
}

/// One product `multiply(a, b, c)` on fresh operands of the given layouts
/// against the reference; without accumulation NaN in c must not show, and
/// c outside its view must stay untouched.
template <typename Multiply>
void checkProduct(int64_t m, int64_t n, int64_t k, Layout la, Layout lb,
                  Layout lc, int ta, int tb, int acc, std::mt19937 &rng,
                  float tolerance, Multiply multiply) {
  SCOPED_TRACE(testing::Message()
               << "m " << m << ", n " << n << ", k " << k << ", a " << name(la)
               << ", b " << name(lb) << ", c " << name(lc) << ", trans_a " << ta
               << ", trans_b " << tb << ", accumulate " << acc);
  Matrix a(ta ? k : m, ta ? m : k, la, rng);
  Matrix b(tb ? n : k, tb ? k : n, lb, rng);
  Matrix c(m, n, lc, rng);
  std::vector<float> expected = reference(a, b, c, ta, tb, acc);
  if (!acc)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c.at(i, j) = std::nanf("");
  std::vector<float> before = c.storage;
  multiply(a, b, c);
  std::vector<float> got = values(c);
  for (size_t i = 0; i < expected.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], tolerance) << "element " << i;
  for (size_t i = 0; i < before.size(); ++i)
    if (before[i] == -1e9f)
      ASSERT_EQ(c.storage[i], -1e9f) << "storage " << i;
}

/// One matmul_f32 call (checkProduct).
void checkMatmul(int64_t m, int64_t n, int64_t k, Layout la, Layout lb,
                 Layout lc, int ta, int tb, int acc, std::mt19937 &rng,
                 float tolerance) {
  checkProduct(m, n, k, la, lb, lc, ta, tb, acc, rng, tolerance,
               [&](Matrix &a, Matrix &b, Matrix &c) {
                 auto da = a.descriptor(), db = b.descriptor(),
                      dc = c.descriptor();
                 _mlir_ciface_tprt_matmul_f32(&da, &db, &dc, ta, tb, acc);
               });
}

/// checkMatmul for every layout of a, b and c, both transpositions and
/// both betas.
void checkEveryLayout(int64_t m, int64_t n, int64_t k, std::mt19937 &rng,
                      float tolerance) {
  for (Layout la : kLayouts)
    for (Layout lb : kLayouts)
      for (Layout lc : kLayouts)
        for (int ta = 0; ta < 2; ++ta)
          for (int tb = 0; tb < 2; ++tb)
            for (int acc = 0; acc < 2; ++acc)
              ASSERT_NO_FATAL_FAILURE(checkMatmul(m, n, k, la, lb, lc, ta, tb,
                                                  acc, rng, tolerance));
}

TEST(Gemm, EveryLayoutAndTransposition) {
  std::mt19937 rng(42);
  // One row of c (a decode step) takes the matrix-vector path.
  for (int64_t m : {5, 1})
    ASSERT_NO_FATAL_FAILURE(checkEveryLayout(m, 7, 3, rng, 1e-5));
}

TEST(Gemm, OneRowAgainstRowsOfB) {
  // One row of c against b stored [n, k] takes Gemv.cpp's dot products, and
  // against b stored [k, n] its sums of scaled rows: 64 floats per step,
  // then 16 at a time, then one at a time; rows of [n, k] longer than a
  // quarter of the L1, and of [k, n] longer than half of it, go to sgemv.
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  int64_t l1Floats = (l1 > 0 ? l1 : 32 << 10) / int64_t(sizeof(float));
  int64_t longRow = l1Floats / 4 + 5, longSum = l1Floats / 2 + 3;
  std::mt19937 rng(5);
  const int64_t shapes[][2] = {{1, 1},       {17, 15},         {67, 211},
                               {85, 9},      {5, 64},          {3, longRow},
                               {longSum, 4}, {l1Floats / 2, 2}};
  for (auto [n, k] : shapes)
    ASSERT_NO_FATAL_FAILURE(checkEveryLayout(1, n, k, rng, sumTolerance(k)));
}

TEST(Gemm, FewRowsGoThroughBlocksOfB) {
  // A few rows of c (a decode step's batch) take b in blocks of a quarter of
  // the L2 (Gemm.cpp): of k rows of n floats when b is [k, n], of n rows of
  // k floats when it is [n, k]. These n and k give three blocks, the
  // last one partial; 15 rows and more take one sgemm. Into a row-major c,
  // a few rows go through TiledRows.cpp's register tiles where the CPU has
  // AVX-512: 6-14 with b stored [k, n], 2-14 with b stored [n, k] (n = 1003
  // leaves 11 rows past the last 16 x 16 transpose; the shape below none);
  // KernelsTest.cpp takes the tiles through their edges.
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  int64_t blockFloats = (l2 > 0 ? l2 : 1 << 20) / 4 / int64_t(sizeof(float));
  const int64_t n = 1003, k = 2 * (blockFloats / n) + 3;
  ASSERT_GT(n, 2 * (blockFloats / k));
  std::mt19937 rng(11);
  for (int64_t m : {2, 3, 6, 7, 8, 9, 11, 14, 15, 16, 17})
    ASSERT_NO_FATAL_FAILURE(checkEveryLayout(m, n, k, rng, 1e-4));
  for (int64_t m : {2, 14})
    ASSERT_NO_FATAL_FAILURE(checkEveryLayout(m, 64, 32, rng, 1e-4));
}

TEST(Gemm, VectorShapesAndEmptyK) {
  std::mt19937 rng(1);
  // 1 x k times k x 1, where every stride of a size-1 dimension is odd.
  Matrix a(1, 4, Layout::RowMajor, rng), b(4, 1, Layout::ColumnMajor, rng);
  Matrix c(1, 1, Layout::Strided, rng);
  std::vector<float> expected = reference(a, b, c, false, false);
  auto da = a.descriptor(), db = b.descriptor(), dc = c.descriptor();
  _mlir_ciface_tprt_matmul_f32(&da, &db, &dc, 0, 0, 1);
  EXPECT_NEAR(c.at(0, 0), expected[0], 1e-5);

  // k = 0 leaves c as it was.
  Matrix e(3, 0, Layout::RowMajor, rng), f(0, 2, Layout::RowMajor, rng);
  Matrix g(3, 2, Layout::RowMajor, rng);
  std::vector<float> unchanged = values(g);
  auto de = e.descriptor(), df = f.descriptor(), dg = g.descriptor();
  _mlir_ciface_tprt_matmul_f32(&de, &df, &dg, 0, 0, 1);
  EXPECT_EQ(values(g), unchanged);
}

/// One batch_matmul_f32 call over `batch` matrices packed in one buffer
/// each (batch stride = one matrix's storage), against each matrix's
/// reference.
void checkBatch(int64_t batch, int64_t m, int64_t n, int64_t k, int ta, int tb,
                std::mt19937 &rng) {
  SCOPED_TRACE(testing::Message()
               << "m " << m << ", trans_a " << ta << ", trans_b " << tb);
  std::vector<Matrix> as, bs, cs;
  for (int64_t i = 0; i < batch; ++i) {
    as.emplace_back(ta ? k : m, ta ? m : k, Layout::RowMajor, rng);
    bs.emplace_back(tb ? n : k, tb ? k : n, Layout::ColumnMajor, rng);
    cs.emplace_back(m, n, Layout::RowMajor, rng);
  }
  auto pack = [](std::vector<Matrix> &ms, std::vector<float> &storage) {
    int64_t size = static_cast<int64_t>(ms[0].storage.size());
    storage.clear();
    for (Matrix &mat : ms)
      storage.insert(storage.end(), mat.storage.begin(), mat.storage.end());
    return tprt_memref3d_f32{storage.data(),
                             storage.data(),
                             ms[0].offset,
                             {int64_t(ms.size()), ms[0].rows, ms[0].cols},
                             {size, ms[0].strides[0], ms[0].strides[1]}};
  };
  std::vector<float> sa, sb, sc;
  tprt_memref3d_f32 da = pack(as, sa), db = pack(bs, sb), dc = pack(cs, sc);
  std::vector<std::vector<float>> expected;
  for (int64_t i = 0; i < batch; ++i)
    expected.push_back(reference(as[i], bs[i], cs[i], ta, tb));

  _mlir_ciface_tprt_batch_matmul_f32(&da, &db, &dc, ta, tb, 1);
  int64_t size = static_cast<int64_t>(cs[0].storage.size());
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col)
        ASSERT_NEAR(
            sc[i * size + dc.offset + r * dc.strides[1] + col * dc.strides[2]],
            expected[i][r * n + col], 1e-5)
            << "batch " << i << " [" << r << ", " << col << "]";
}

TEST(Gemm, BatchMatchesEachMatrix) {
  std::mt19937 rng(7);
  // One row of c takes the row products, each prefetching the next
  // matrix's b (a decode step's attention).
  for (int64_t m : {4, 1})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        ASSERT_NO_FATAL_FAILURE(checkBatch(3, m, 6, 5, ta, tb, rng));
}

/// One matmul_panels_f32 call (checkProduct): op(b), k x n, laid out in
/// panels from a row-major b (with `tb`, b^T), as the loader lays them out.
void checkPanels(int64_t m, int64_t n, int64_t k, int ta, int tb, int acc,
                 Layout lc, std::mt19937 &rng) {
  checkProduct(
      m, n, k, Layout::Strided, Layout::RowMajor, lc, ta, tb, acc, rng,
      sumTolerance(k), [&](Matrix &a, Matrix &b, Matrix &c) {
        std::vector<float> panels(size_t(k * n));
        if (tb)
          tprt::detail::packTransposedPanels(&b.at(0, 0), b.strides[0], n, k,
                                             panels.data());
        else
          tprt::detail::packPanels(&b.at(0, 0), b.strides[0], k, n,
                                   panels.data());
        tprt_memref2d_f32 db{
            panels.data(), panels.data(), 0, {b.rows, b.cols}, {b.cols, 1}};
        auto da = a.descriptor(), dc = c.descriptor();
        _mlir_ciface_tprt_matmul_panels_f32(&da, &db, &dc, ta, tb, acc);
      });
}

TEST(Gemm, PanelsMatchTheRowMajorWeight) {
  std::mt19937 rng(17);
  // 1-14 rows: one tile; 15 and 33: several, the last one short; a last
  // panel narrower than 32 columns (n 5, 47, 100) or none (32, 64).
  for (int64_t m : {1, 2, 7, 8, 14, 15, 33})
    for (int64_t n : {5, 32, 47, 64, 100})
      for (int64_t k : {1, 3, 17})
        for (int ta = 0; ta < 2; ++ta)
          for (int tb = 0; tb < 2; ++tb)
            for (int acc = 0; acc < 2; ++acc)
              ASSERT_NO_FATAL_FAILURE(
                  checkPanels(m, n, k, ta, tb, acc, Layout::RowMajor, rng));
  // Groups of panels: with 33 rows the panels are taken an L2-sized group
  // at a time; k this deep makes a group narrower than n.
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  int64_t k = std::max<int64_t>(64, (l2 > 0 ? l2 : 1 << 20) / 4 / (4 * 32 * 3));
  ASSERT_NO_FATAL_FAILURE(
      checkPanels(33, 200, k, 0, 0, 1, Layout::RowMajor, rng));
  // A c that is not row-major takes the general path on the unpacked b.
  for (Layout lc : {Layout::ColumnMajor, Layout::Strided})
    for (int tb = 0; tb < 2; ++tb)
      ASSERT_NO_FATAL_FAILURE(checkPanels(8, 47, 17, 0, tb, 0, lc, rng));
  // k = 0 adds nothing, over several tiles of rows too.
  ASSERT_NO_FATAL_FAILURE(
      checkPanels(20, 47, 0, 0, 0, 1, Layout::RowMajor, rng));
}

TEST(GemmDeathTest, PanelsOfPartOfABufferEndTheRank) {
  std::vector<float> storage(64, 0.f);
  tprt_memref2d_f32 a{storage.data(), storage.data(), 0, {2, 4}, {4, 1}};
  tprt_memref2d_f32 b{storage.data(), storage.data(), 0, {4, 3}, {8, 1}};
  tprt_memref2d_f32 c{storage.data(), storage.data(), 0, {2, 3}, {3, 1}};
  EXPECT_EXIT(_mlir_ciface_tprt_matmul_panels_f32(&a, &b, &c, 0, 0, 1),
              testing::ExitedWithCode(1),
              "matmul_panels_f32: b in panels must be a whole contiguous "
              "buffer, got offset 0, strides \\[8, 1\\]");
  b = {storage.data(), storage.data(), 4, {4, 3}, {3, 1}};
  EXPECT_EXIT(_mlir_ciface_tprt_matmul_panels_f32(&a, &b, &c, 0, 0, 1),
              testing::ExitedWithCode(1), "got offset 4, strides \\[3, 1\\]");
}

TEST(Gemm, CountsCallsAndFlops) {
  std::mt19937 rng(3);
  Matrix a(2, 3, Layout::RowMajor, rng), b(3, 4, Layout::RowMajor, rng),
      c(2, 4, Layout::RowMajor, rng);
  tprt_reset_counters();
  auto da = a.descriptor(), db = b.descriptor(), dc = c.descriptor();
  _mlir_ciface_tprt_matmul_f32(&da, &db, &dc, 0, 0, 1);
  _mlir_ciface_tprt_matmul_f32(&da, &db, &dc, 0, 0, 0);
  tprt_counters counters;
  tprt_get_counters(&counters);
  EXPECT_EQ(counters.gemm_calls, 2);
  EXPECT_DOUBLE_EQ(counters.gemm_flops, 2 * 2.0 * 2 * 4 * 3);
  EXPECT_GE(counters.gemm_seconds, 0.0);
}

TEST(GemmDeathTest, MismatchedShapesEndTheRankWithAMessage) {
  std::mt19937 rng(5);
  Matrix a(2, 3, Layout::RowMajor, rng), b(4, 5, Layout::RowMajor, rng),
      c(2, 5, Layout::RowMajor, rng);
  auto da = a.descriptor(), db = b.descriptor(), dc = c.descriptor();
  EXPECT_EXIT(_mlir_ciface_tprt_matmul_f32(&da, &db, &dc, 0, 0, 1),
              testing::ExitedWithCode(1),
              "tprt\\[rank 0\\]: matmul_f32: shapes do not agree: op\\(a\\) "
              "is 2x3, op\\(b\\) is 4x5, c is 2x5");
}

TEST(GemmDeathTest, MismatchedBatchEndsTheRank) {
  std::vector<float> storage(64, 0.f);
  tprt_memref3d_f32 a{storage.data(), storage.data(), 0, {2, 2, 2}, {4, 2, 1}};
  tprt_memref3d_f32 b{storage.data(), storage.data(), 0, {3, 2, 2}, {4, 2, 1}};
  tprt_memref3d_f32 c{storage.data(), storage.data(), 0, {2, 2, 2}, {4, 2, 1}};
  EXPECT_EXIT(_mlir_ciface_tprt_batch_matmul_f32(&a, &b, &c, 0, 0, 1),
              testing::ExitedWithCode(1),
              "batch_matmul_f32: batch sizes do not agree");
}

TEST(GemmDeathTest, OverwritingWithEmptyKEndsTheRank) {
  std::mt19937 rng(9);
  Matrix a(3, 0, Layout::RowMajor, rng), b(0, 2, Layout::RowMajor, rng),
      c(3, 2, Layout::RowMajor, rng);
  auto da = a.descriptor(), db = b.descriptor(), dc = c.descriptor();
  EXPECT_EXIT(_mlir_ciface_tprt_matmul_f32(&da, &db, &dc, 0, 0, 0),
              testing::ExitedWithCode(1),
              "matmul_f32: k = 0 without accumulation");
}

} // namespace

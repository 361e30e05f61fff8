//===- KernelsTest.cpp - the few-row GEMM kernels at their limits ---------===//
//
// GemmTest.cpp checks the values every path of matmul_f32 computes; here each
// kernel's own refusal is checked where it lies (a wrong limit would give
// right values through another path and only a slower decode step), and the
// register tiles' values at the edges of their tiles and blocks.
//
//===----------------------------------------------------------------------===//

#include "Gemv.h"
#include "Panels.h"
#include "TiledRows.h"

#include <utility>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <unistd.h>

using namespace tprt::detail;

namespace {

int64_t l1Floats() {
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  return (l1 > 0 ? l1 : 32 << 10) / int64_t(sizeof(float));
}

std::vector<float> randomFloats(size_t count, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> values(count);
  for (float &v : values)
    v = dist(rng);
  return values;
}

/// Whether `call` took the product: a y that stays all-NaN was left alone.
template <typename Call> bool takes(std::vector<float> &y, Call call) {
  y.assign(y.size(), std::nanf(""));
  bool taken = call();
  bool untouched = true;
  for (float v : y)
    untouched = untouched && std::isnan(v);
  EXPECT_NE(taken, untouched)
      << "the return value says " << (taken ? "taken" : "refused");
  return taken;
}

TEST(Kernels, DotRowsTakeRowsUpToAQuarterOfTheL1) {
  std::mt19937 rng(1);
  int64_t limit = l1Floats() / 4, n = 3;
  std::vector<float> b = randomFloats(n * (limit + 1), rng);
  std::vector<float> x = randomFloats(limit + 1, rng), y(n);
  for (int64_t k : {limit, limit + 1})
    EXPECT_EQ(takes(y,
                    [&] {
                      return dotRows(b.data(), k, x.data(), y.data(), n, k,
                                     false);
                    }),
              k == limit)
        << "k " << k;
}

TEST(Kernels, CombineRowsTakeSumsUpToHalfTheL1) {
  std::mt19937 rng(2);
  int64_t limit = l1Floats() / 2, k = 3;
  std::vector<float> b = randomFloats(k * (limit + 1), rng);
  std::vector<float> x = randomFloats(k, rng), y(limit + 1);
  for (int64_t n : {limit, limit + 1}) {
    y.resize(n);
    EXPECT_EQ(takes(y,
                    [&] {
                      return combineRows(b.data(), n, x.data(), y.data(), n, k,
                                         false);
                    }),
              n == limit)
        << "n " << n;
  }
  EXPECT_FALSE(combineRows(b.data(), 1, x.data(), y.data(), 1, 0, false));
}

bool hasAvx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

TEST(Kernels, TiledRowsTakeTheirRowsOnAvx512) {
  std::mt19937 rng(3);
  const int64_t n = 48, k = 16;
  std::vector<float> a = randomFloats(15 * k, rng);
  std::vector<float> b = randomFloats(k * n, rng), c(15 * n);
  for (bool storedNK : {false, true})
    for (int64_t m = 1; m <= kMaxTiledRows + 1; ++m) {
      c.resize(m * n);
      EXPECT_EQ(takes(c,
                      [&] {
                        return tiledRows(a.data(), k, 1, b.data(),
                                         storedNK ? k : n, storedNK, c.data(),
                                         n, m, n, k, false);
                      }),
                hasAvx512() && m <= kMaxTiledRows &&
                    m >= (storedNK ? kMinTiledRowsNK : kMinTiledRowsKN))
          << "m " << m << (storedNK ? ", b stored [n, k]" : "");
    }
}

TEST(Kernels, TiledRowsRefuseWhatTheirBlocksDoNotCover) {
  if (!hasAvx512())
    GTEST_SKIP() << "no AVX-512: tiledRows takes nothing";
  std::mt19937 rng(4);
  // [k, n]: c no larger than a quarter of the L2.
  const int64_t m = kMaxTiledRows, k = 5;
  int64_t wide = blockBytes() / m / int64_t(sizeof(float));
  std::vector<float> a = randomFloats(m * 32, rng);
  std::vector<float> b = randomFloats(32 * (wide + 1), rng), c;
  for (int64_t n : {wide, wide + 1}) {
    c.resize(m * n);
    EXPECT_EQ(takes(c,
                    [&] {
                      return tiledRows(a.data(), k, 1, b.data(), n, false,
                                       c.data(), n, m, n, k, false);
                    }),
              n == wide)
        << "n " << n;
  }
  // Both: b's rows less than a cache line (16 floats) apart.
  for (bool storedNK : {false, true})
    for (int64_t gap : {15, 16}) {
      const int64_t n = 32, kk = 16, stored = storedNK ? kk : n;
      std::vector<float> strided = randomFloats(32 * (stored + gap), rng);
      c.resize(m * n);
      EXPECT_EQ(takes(c,
                      [&] {
                        return tiledRows(a.data(), kk, 1, strided.data(),
                                         stored + gap, storedNK, c.data(), n, m,
                                         n, kk, false);
                      }),
                gap < 16)
          << "rows " << gap << " floats apart"
          << (storedNK ? ", b stored [n, k]" : "");
    }
}

/// tiledRows against the definition for every m it takes, with strided
/// operands, both layouts of a and b, and with and without accumulation;
/// c's padding must stay untouched.
TEST(Kernels, TiledRowsAgainstTheDefinition) {
  if (!hasAvx512())
    GTEST_SKIP() << "no AVX-512: tiledRows takes nothing";
  std::mt19937 rng(5);
  // [k, n]: vector panels of every width, single vectors, n % 16 columns.
  // [n, k]: k of one and of several transposes and with k % 16 columns left;
  // n of one and several panels of 16 rows, with n % 16 rows left, and of
  // several blocks of rows (a quarter of the L2 each), the last one partial.
  int64_t nkBlock = blockBytes() / (16 * int64_t(sizeof(float)));
  struct Shape {
    bool storedNK;
    int64_t n, k;
  };
  std::vector<Shape> shapes;
  for (int64_t n : {1, 17, 47, 64, 97, 113})
    for (int64_t k : {1, 5, 40})
      shapes.push_back({false, n, k});
  for (int64_t n : {1, 16, 17, 48, 63})
    for (int64_t k : {1, 16, 21, 64})
      shapes.push_back({true, n, k});
  shapes.push_back({true, 2 * nkBlock + 32, 16});
  shapes.push_back({true, 2 * nkBlock + 7, 19});
  for (const Shape &s : shapes)
    for (int64_t m = s.storedNK ? kMinTiledRowsNK : kMinTiledRowsKN;
         m <= kMaxTiledRows; ++m)
      for (bool aTransposed : {false, true})
        for (bool accumulate : {false, true}) {
          SCOPED_TRACE(testing::Message()
                       << "m " << m << ", n " << s.n << ", k " << s.k
                       << (s.storedNK ? ", b [n, k]" : ", b [k, n]")
                       << (aTransposed ? ", a stored [k, m]" : "")
                       << (accumulate ? ", accumulating" : ""));
          int64_t lda = (aTransposed ? m : s.k) + 2;
          int64_t bRows = s.storedNK ? s.n : s.k;
          int64_t ldb = (s.storedNK ? s.k : s.n) + 3, ldc = s.n + 5;
          std::vector<float> a =
              randomFloats((aTransposed ? s.k : m) * lda, rng);
          std::vector<float> b = randomFloats(bRows * ldb, rng);
          std::vector<float> c = randomFloats(m * ldc, rng), expected = c;
          auto aAt = [&](int64_t i, int64_t l) {
            return aTransposed ? a[l * lda + i] : a[i * lda + l];
          };
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < s.n; ++j) {
              double sum = accumulate ? c[i * ldc + j] : 0.0;
              for (int64_t l = 0; l < s.k; ++l)
                sum += double(aAt(i, l)) *
                       (s.storedNK ? b[j * ldb + l] : b[l * ldb + j]);
              expected[i * ldc + j] = float(sum);
              if (!accumulate)
                c[i * ldc + j] = std::nanf("");
            }
          ASSERT_TRUE(tiledRows(
              a.data(), aTransposed ? 1 : lda, aTransposed ? lda : 1, b.data(),
              ldb, s.storedNK, c.data(), ldc, m, s.n, s.k, accumulate));
          for (size_t e = 0; e < c.size(); ++e)
            ASSERT_NEAR(c[e], expected[e], 1e-4) << "c storage " << e;
        }
}

TEST(Panels, EveryTileHeightMatchesTheDefinition) {
  // The heights the CPUs take (14: AVX-512; 2: the others) and one that
  // leaves a short last tile; 40 rows are several tiles and groups of
  // panels (k deep enough that a group is narrower than n).
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t m = 40, n = 100;
  int64_t k = std::max<int64_t>(64, blockBytes() / (4 * 32 * 2));
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), panels(b.size());
  for (float &x : a)
    x = dist(rng);
  for (float &x : b)
    x = dist(rng);
  packPanels(b.data(), n, k, n, panels.data());
  for (int64_t tileRows : {14, 2, 3}) {
    std::vector<float> c(size_t(m * n), std::nanf(""));
    multiplyPanels(a.data(), k, 1, panels.data(), c.data(), n, m, n, k,
                   /*accumulate=*/false, tileRows);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += double(a[i * k + l]) * double(b[l * n + j]);
        ASSERT_NEAR(c[i * n + j], sum, 1e-3)
            << "tile rows " << tileRows << ", c[" << i << ", " << j << "]";
      }
  }
}

TEST(Panels, LayOutColumnPanelsOfKRowsEach) {
  // 3 x 40: columns 0-31 as a 3 x 32 panel, then columns 32-39 as 3 x 8.
  int64_t k = 3, n = 40, ld = 41;
  std::vector<float> rows(size_t(k * ld), -1.0f);
  for (int64_t l = 0; l < k; ++l)
    for (int64_t j = 0; j < n; ++j)
      rows[l * ld + j] = float(l * 100 + j);
  std::vector<float> panels(size_t(k * n), -2.0f);
  packPanels(rows.data(), ld, k, n, panels.data());
  EXPECT_EQ(panels[0], 0.0f);
  EXPECT_EQ(panels[31], 31.0f);
  EXPECT_EQ(panels[32], 100.0f); // row 1 of the first panel
  EXPECT_EQ(panels[2 * 32 + 31], 231.0f);
  EXPECT_EQ(panels[3 * 32], 32.0f); // the second panel, 8 wide
  EXPECT_EQ(panels[3 * 32 + 8], 132.0f);
  EXPECT_EQ(panels[3 * 32 + 2 * 8 + 7], 239.0f);
  std::vector<float> back(size_t(k * ld), -1.0f);
  unpackPanels(panels.data(), k, n, back.data(), ld);
  EXPECT_EQ(back, rows);
  // The same k x n matrix given as its n x k transpose (a torch Linear
  // weight) lays out the same.
  std::vector<float> transposed(size_t(n * (k + 1)), -1.0f);
  for (int64_t l = 0; l < k; ++l)
    for (int64_t j = 0; j < n; ++j)
      transposed[j * (k + 1) + l] = rows[l * ld + j];
  std::vector<float> fromTransposed(size_t(k * n), -2.0f);
  packTransposedPanels(transposed.data(), k + 1, n, k, fromTransposed.data());
  EXPECT_EQ(fromTransposed, panels);
}

} // namespace

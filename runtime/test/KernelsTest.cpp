//===- KernelsTest.cpp - the few-row GEMM kernels at their limits ---------===//
//
// GemmTest.cpp checks the values every path of matmul_f32 computes; here each
// kernel's own refusal is checked where it lies, since a wrong limit would
// give right values through another path and only a slower decode step.
//
//===----------------------------------------------------------------------===//

#include "Gemv.h"
#include "TiledRows.h"

#include <gtest/gtest.h>

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

TEST(Kernels, TiledRowsTakeSixToFourteenRowsOnAvx512) {
  bool avx512 = false;
#if defined(__x86_64__)
  avx512 = __builtin_cpu_supports("avx512f");
#endif
  std::mt19937 rng(3);
  const int64_t n = 40, k = 5;
  std::vector<float> a = randomFloats(15 * k, rng);
  std::vector<float> b = randomFloats(k * n, rng), c(15 * n);
  for (int64_t m = 4; m <= 15; ++m) {
    c.resize(m * n);
    EXPECT_EQ(takes(c,
                    [&] {
                      return tiledRows(a.data(), k, 1, b.data(), n, c.data(), n,
                                       m, n, k, false);
                    }),
              avx512 && m >= 6 && m <= 14)
        << "m " << m;
  }
  // c no larger than a quarter of the L2: 14 rows of n floats.
  int64_t wide = l2CacheBytes() / 4 / 14 / int64_t(sizeof(float));
  std::vector<float> bWide = randomFloats(k * (wide + 1), rng);
  for (int64_t cols : {wide, wide + 1}) {
    c.resize(14 * cols);
    EXPECT_EQ(takes(c,
                    [&] {
                      return tiledRows(a.data(), k, 1, bWide.data(), cols,
                                       c.data(), cols, 14, cols, k, false);
                    }),
              avx512 && cols == wide)
        << "n " << cols;
  }
}

} // namespace

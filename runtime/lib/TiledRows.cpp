//===- TiledRows.cpp - a few rows of c against a weight stored [k, n] -----===//
//
// With 6-14 rows of c, each element of b takes as many multiply-adds as
// there are rows, and a step must stream b from DRAM and keep the FMA units
// busy at the same time. OpenBLAS's sgemm (Gemm.cpp's smallM) does one after
// the other: it packs a block of b, then multiplies it. Here b is not packed:
// a tile of c (MR rows x NR vectors of 16 floats) stays in registers while
// the rows of one block of b pass under it (one vector load of b serves MR
// multiply-adds; a's values are broadcast from a packed transpose of a),
// and the same loop prefetches the next block into the L2 in address order,
// as many cache lines per step as the step reads from the current one, so
// that the read of block r + 1 overlaps the arithmetic on block r. With
// fewer rows the read is most of the work and smallM, which streams each
// block in before packing it, was as fast or faster. Measured against smallM
// in docs/bench-small-m-gemm.md.
//
// The tiles need 32 vector registers of 16 floats (MR x NR accumulators, NR
// for b, one for a): AVX-512. Other CPUs keep smallM.
//
//===----------------------------------------------------------------------===//

#include "TiledRows.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <unistd.h>

int64_t tprt::detail::l2CacheBytes() {
  static const int64_t bytes = [] {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return static_cast<int64_t>(l2 > 0 ? l2 : 1 << 20);
  }();
  return bytes;
}

#if defined(__x86_64__)

#define TPRT_AVX512 __attribute__((target("avx512f")))

namespace {

constexpr int64_t kLanes = 16;
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

TPRT_AVX512 inline Vec load(const float *p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

TPRT_AVX512 inline void store(float *p, Vec v) { std::memcpy(p, &v, sizeof v); }

/// The cache lines of the block after the current one, prefetched into the
/// L2 a few at a time, in address order.
struct NextBlock {
  const char *at, *end;

  TPRT_AVX512 inline void fetch(int lines) {
    for (int q = 0; q < lines && at < end; ++q, at += 64)
      __builtin_prefetch(at, /*rw=*/0, /*locality=*/2);
  }
};

/// c[i, 0:16 NR] = (c[i, 0:16 NR] if `load`) + sum over l < rows of
/// at[l * MR + i] * b[l * ldb, 0:16 NR], for i < MR.
template <int MR, int NR>
TPRT_AVX512 inline void panel(const float *at, const float *b, int64_t ldb,
                              int64_t rows, float *c, int64_t ldc, bool load,
                              NextBlock &next) {
  Vec acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int q = 0; q < NR; ++q)
      acc[i][q] = load ? ::load(c + i * ldc + q * kLanes) : Vec{};
  for (int64_t l = 0; l < rows; ++l) {
    Vec bv[NR];
    for (int q = 0; q < NR; ++q)
      bv[q] = ::load(b + l * ldb + q * kLanes);
    for (int i = 0; i < MR; ++i)
      for (int q = 0; q < NR; ++q)
        acc[i][q] += at[l * MR + i] * bv[q];
    next.fetch(NR);
  }
  for (int i = 0; i < MR; ++i)
    for (int q = 0; q < NR; ++q)
      store(c + i * ldc + q * kLanes, acc[i][q]);
}

/// The last n % 16 columns of c, as panel() does for vectors.
template <int MR>
TPRT_AVX512 void tail(const float *at, const float *b, int64_t ldb,
                      int64_t rows, float *c, int64_t ldc, int64_t cols,
                      bool load) {
  for (int i = 0; i < MR; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      float sum = load ? c[i * ldc + j] : 0.0f;
      for (int64_t l = 0; l < rows; ++l)
        sum += at[l * MR + i] * b[l * ldb + j];
      c[i * ldc + j] = sum;
    }
}

/// c (MR x n) (+)= a b over blocks of `blockRows` rows of b; `at` is a
/// transposed (k x MR).
template <int MR, int NR>
TPRT_AVX512 void multiply(const float *at, const float *b, int64_t ldb,
                          float *c, int64_t ldc, int64_t n, int64_t k,
                          bool accumulate, int64_t blockRows) {
  auto span = [&](int64_t first, int64_t rows) {
    const char *start = reinterpret_cast<const char *>(b + first * ldb);
    return NextBlock{start, rows > 0 ? start + ((rows - 1) * ldb + n) *
                                                   int64_t(sizeof(float))
                                     : start};
  };
  // Nothing to overlap the first block's read with: ask for all of it.
  NextBlock first = span(0, std::min(blockRows, k));
  first.fetch(INT32_MAX);
  int64_t vectors = n / kLanes * kLanes;
  for (int64_t r = 0; r < k; r += blockRows) {
    int64_t rows = std::min(blockRows, k - r);
    NextBlock next = span(r + rows, std::min(blockRows, k - r - rows));
    const float *block = b + r * ldb, *tile = at + r * MR;
    bool load = r > 0 || accumulate;
    int64_t j = 0;
    for (; j + NR * kLanes <= vectors; j += NR * kLanes)
      panel<MR, NR>(tile, block + j, ldb, rows, c + j, ldc, load, next);
    for (; j < vectors; j += kLanes)
      panel<MR, 1>(tile, block + j, ldb, rows, c + j, ldc, load, next);
    tail<MR>(tile, block + j, ldb, rows, c + j, ldc, n - j, load);
  }
}

/// multiply<m, NR> for the m given, NR as wide as the registers allow
/// (MR x NR + NR + 1 <= 32 vectors), up to 6.
template <int MR>
void multiplyRows(int64_t m, const float *at, const float *b, int64_t ldb,
                  float *c, int64_t ldc, int64_t n, int64_t k, bool accumulate,
                  int64_t blockRows) {
  if (m == MR)
    return multiply<MR, std::min(6, 31 / (MR + 1))>(at, b, ldb, c, ldc, n, k,
                                                    accumulate, blockRows);
  if constexpr (MR < 14)
    multiplyRows<MR + 1>(m, at, b, ldb, c, ldc, n, k, accumulate, blockRows);
}

} // namespace

bool tprt::detail::tiledRows(const float *a, int64_t aRowStride,
                             int64_t aColStride, const float *b, int64_t ldb,
                             float *c, int64_t ldc, int64_t m, int64_t n,
                             int64_t k, bool accumulate) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  // c stays in the L2 next to two blocks of b (a quarter of it each).
  int64_t l2 = l2CacheBytes();
  if (!avx512 || m < 6 || m > 14 || n < 1 || k < 1 ||
      m * n * int64_t(sizeof(float)) > l2 / 4)
    return false;
  thread_local std::vector<float> packed;
  packed.resize(size_t(k * m));
  for (int64_t l = 0; l < k; ++l)
    for (int64_t i = 0; i < m; ++i)
      packed[l * m + i] = a[i * aRowStride + l * aColStride];
  int64_t blockRows =
      std::max<int64_t>(1, l2 / 4 / (n * int64_t(sizeof(float))));
  multiplyRows<6>(m, packed.data(), b, ldb, c, ldc, n, k, accumulate,
                  blockRows);
  return true;
}

#else

bool tprt::detail::tiledRows(const float *, int64_t, int64_t, const float *,
                             int64_t, float *, int64_t, int64_t, int64_t,
                             int64_t, bool) {
  return false;
}

#endif

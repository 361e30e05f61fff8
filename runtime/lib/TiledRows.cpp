//===- TiledRows.cpp - a few rows of c against a weight ----------------===//
//
// With a few rows of c, each element of b takes as many multiply-adds as
// there are rows, and a step must stream b from DRAM and keep the FMA units
// busy at the same time. OpenBLAS's sgemm (Gemm.cpp's smallM) does one after
// the other: it packs a block of b, then multiplies it. Here b is not packed:
// a tile of c stays in registers while one block of b's rows passes under it
// (a's values broadcast from a packed transpose of a), and the same loop
// prefetches the next block into the L2 in address order, as many cache
// lines per step as the step reads from the current one, so that the read
// of block r + 1 overlaps the arithmetic on block r.
//
// b stored [k, n] (GPT-2's Conv1D): the tile is MR rows x NR vectors of 16
// columns of c, and one vector load of b serves MR multiply-adds. b stored
// [n, k] (torch's Linear, a tied LM head read transposed; n and k multiples
// of 16, a vocabulary padded as Megatron pads it): 16 rows of b are loaded
// 16 columns at a time and transposed in registers (64 shuffles per
// 16 x 16, which run beside the 16 MR multiply-adds they feed), then taken
// as the [k, n] case takes its rows; dot products over b's rows instead ran
// at two thirds of that rate, their sums reduced across the vector at the
// end. Against [k, n] with fewer rows than 6 the read is most of the work
// and smallM, which streams each block in before packing it, was as fast or
// faster; against [n, k] the tiles were faster from 2 rows. Measured in
// docs/bench-small-m-gemm.md.
//
// The tiles need 32 vector registers of 16 floats: AVX-512. Other CPUs keep
// smallM.
//
//===----------------------------------------------------------------------===//

#include "TiledRows.h"
#include "Lanes.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <unistd.h>

int64_t tprt::detail::blockBytes() {
  static const int64_t bytes = [] {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return static_cast<int64_t>(l2 > 0 ? l2 : 1 << 20) / 4;
  }();
  return bytes;
}

#if defined(__x86_64__)

#define TPRT_AVX512 __attribute__((target("avx512f")))

namespace {

using tprt::detail::kMaxTiledRows;
using tprt::detail::kMinTiledRowsKN;
using tprt::detail::kMinTiledRowsNK;

using tprt::detail::kLanes;
using tprt::detail::Vec;

TPRT_AVX512 inline Vec loadVec(const float *p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

TPRT_AVX512 inline void storeVec(float *p, Vec v) {
  std::memcpy(p, &v, sizeof v);
}

/// The cache lines of some rows of b, prefetched into the L2 a few at a
/// time, in address order (the gaps between rows `ldb` apart skipped).
struct NextBlock {
  const char *row;
  int64_t rowBytes, strideBytes, rowsLeft;
  /// The next line of the current row (the one holding its first byte at
  /// first), and the row's end; `line` null between rows.
  const char *line = nullptr, *rowEnd = nullptr;

  TPRT_AVX512 inline void fetch(int64_t lines) {
    constexpr uintptr_t kLine = 64;
    for (; lines > 0 && rowsLeft > 0; --lines) {
      if (!line) {
        line = row - reinterpret_cast<uintptr_t>(row) % kLine;
        rowEnd = row + rowBytes;
      }
      __builtin_prefetch(line, /*rw=*/0, /*locality=*/2);
      line += kLine;
      if (line >= rowEnd) {
        line = nullptr;
        if (--rowsLeft > 0)
          row += strideBytes;
      }
    }
  }
};

/// body(r, rows, next) for each block of `blockRows` rows of b as stored
/// (`storedRows` rows of `cols` floats, `ldb` apart), where `next` holds the
/// cache lines of the block after it. Nothing overlaps the first block's
/// read: all of it is asked for before.
template <typename Body>
TPRT_AVX512 inline void forEachBlock(const float *b, int64_t ldb,
                                     int64_t storedRows, int64_t cols,
                                     int64_t blockRows, Body body) {
  auto span = [&](int64_t first, int64_t rows) {
    int64_t floatBytes = sizeof(float);
    return NextBlock{reinterpret_cast<const char *>(b) +
                         (rows > 0 ? first * ldb * floatBytes : 0),
                     cols * floatBytes, ldb * floatBytes, rows};
  };
  NextBlock first = span(0, std::min(blockRows, storedRows));
  first.fetch(INT64_MAX);
  for (int64_t r = 0; r < storedRows; r += blockRows) {
    int64_t rows = std::min(blockRows, storedRows - r);
    NextBlock next = span(r + rows, std::min(blockRows, storedRows - r - rows));
    body(r, rows, next);
    // Whatever the body's steps did not ask for (the columns past the last
    // whole vector, lines split between rows).
    next.fetch(INT64_MAX);
  }
}

/// c[i, 0:16 NR] = (c[i, 0:16 NR] if `load`) + sum over l < rows of
/// at[l * MR + i] * b[l * ldb, 0:16 NR], for i < MR.
template <int MR, int NR>
TPRT_AVX512 inline void panel(const float *at, const float *b, int64_t ldb,
                              int64_t rows, float *c, int64_t ldc, bool load,
                              NextBlock &next) {
  // The tile lives in registers only if these loops are unrolled, which
  // -O2 alone does not always do.
  Vec acc[MR][NR];
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int q = 0; q < NR; ++q)
      acc[i][q] = load ? loadVec(c + i * ldc + q * kLanes) : Vec{};
  for (int64_t l = 0; l < rows; ++l) {
    Vec bv[NR];
#pragma unroll
    for (int q = 0; q < NR; ++q)
      bv[q] = loadVec(b + l * ldb + q * kLanes);
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
      for (int q = 0; q < NR; ++q)
        acc[i][q] += at[l * MR + i] * bv[q];
    next.fetch(NR);
  }
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int q = 0; q < NR; ++q)
      storeVec(c + i * ldc + q * kLanes, acc[i][q]);
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

/// c (MR x n) (+)= a b for b stored [k, n], over blocks of `blockRows` rows
/// of b; `at` is a transposed (k x MR).
template <int MR, int NR>
TPRT_AVX512 void multiply(const float *at, const float *b, int64_t ldb,
                          float *c, int64_t ldc, int64_t n, int64_t k,
                          bool accumulate, int64_t blockRows) {
  int64_t vectors = n / kLanes * kLanes;
  forEachBlock(
      b, ldb, k, n, blockRows, [&](int64_t r, int64_t rows, NextBlock &next) {
        const float *block = b + r * ldb, *tile = at + r * MR;
        bool load = r > 0 || accumulate;
        int64_t j = 0;
        for (; j + NR * kLanes <= vectors; j += NR * kLanes)
          panel<MR, NR>(tile, block + j, ldb, rows, c + j, ldc, load, next);
        for (; j < vectors; j += kLanes)
          panel<MR, 1>(tile, block + j, ldb, rows, c + j, ldc, load, next);
        tail<MR>(tile, block + j, ldb, rows, c + j, ldc, n - j, load);
      });
}

/// r[q] = (r[0][q], ..., r[15][q]): a 16 x 16 transpose in four rounds of
/// shuffles, each pairing vectors a power of two apart.
TPRT_AVX512 inline void transpose(__m512 r[16]) {
  __m512 t[16];
  for (int p = 0; p < 16; p += 2) {
    t[p] = _mm512_unpacklo_ps(r[p], r[p + 1]);
    t[p + 1] = _mm512_unpackhi_ps(r[p], r[p + 1]);
  }
  for (int p = 0; p < 16; p += 4)
    for (int s = 0; s < 2; ++s) {
      __m512d lo = _mm512_castps_pd(t[p + s]);
      __m512d hi = _mm512_castps_pd(t[p + s + 2]);
      r[p + 2 * s] = _mm512_castpd_ps(_mm512_unpacklo_pd(lo, hi));
      r[p + 2 * s + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(lo, hi));
    }
  for (int p = 0; p < 16; p += 8)
    for (int s = 0; s < 4; ++s) {
      t[p + s] = _mm512_shuffle_f32x4(r[p + s], r[p + s + 4], 0x88);
      t[p + s + 4] = _mm512_shuffle_f32x4(r[p + s], r[p + s + 4], 0xdd);
    }
  for (int s = 0; s < 8; ++s) {
    r[s] = _mm512_shuffle_f32x4(t[s], t[s + 8], 0x88);
    r[s + 8] = _mm512_shuffle_f32x4(t[s], t[s + 8], 0xdd);
  }
}

/// c[i, 0:16] = (c[i, 0:16] if `load`) + sum over l < k of at[l * MR + i] *
/// b[0:16, l], for i < MR: 16 rows of b (`ldb` apart) taken 16 columns at a
/// time and transposed in registers (k a multiple of 16).
template <int MR>
TPRT_AVX512 inline void
transposedPanel(const float *at, const float *b, int64_t ldb, int64_t k,
                float *c, int64_t ldc, bool load, NextBlock &next) {
  Vec acc[MR];
#pragma unroll
  for (int i = 0; i < MR; ++i)
    acc[i] = load ? loadVec(c + i * ldc) : Vec{};
  for (int64_t l0 = 0; l0 < k; l0 += kLanes) {
    __m512 columns[kLanes];
#pragma unroll
    for (int p = 0; p < kLanes; ++p)
      columns[p] = loadVec(b + p * ldb + l0);
    transpose(columns);
#pragma unroll
    for (int q = 0; q < kLanes; ++q)
#pragma unroll
      for (int i = 0; i < MR; ++i)
        acc[i] += at[(l0 + q) * MR + i] * columns[q];
    next.fetch(kLanes);
  }
#pragma unroll
  for (int i = 0; i < MR; ++i)
    storeVec(c + i * ldc, acc[i]);
}

/// c (MR x n) (+)= a b^T for b stored [n, k] (n and k multiples of 16), over
/// blocks of `blockRows` rows of b (a multiple of 16).
template <int MR>
TPRT_AVX512 void multiplyTransposed(const float *at, const float *b,
                                    int64_t ldb, float *c, int64_t ldc,
                                    int64_t n, int64_t k, bool accumulate,
                                    int64_t blockRows) {
  forEachBlock(b, ldb, n, k, blockRows,
               [&](int64_t r, int64_t rows, NextBlock &next) {
                 for (int64_t j = r; j < r + rows; j += kLanes)
                   transposedPanel<MR>(at, b + j * ldb, ldb, k, c + j, ldc,
                                       accumulate, next);
               });
}

/// The kernel for the m given; for b stored [k, n], NR as wide as the
/// registers allow (MR x NR + NR + 1 <= 32 vectors).
template <int MR>
void multiplyRows(int64_t m, bool storedNK, const float *at, const float *b,
                  int64_t ldb, float *c, int64_t ldc, int64_t n, int64_t k,
                  bool accumulate, int64_t blockRows) {
  if (m != MR) {
    if constexpr (MR < kMaxTiledRows)
      multiplyRows<MR + 1>(m, storedNK, at, b, ldb, c, ldc, n, k, accumulate,
                           blockRows);
    return;
  }
  if (storedNK)
    multiplyTransposed<MR>(at, b, ldb, c, ldc, n, k, accumulate, blockRows);
  else if constexpr (MR >= kMinTiledRowsKN)
    multiply<MR, 31 / (MR + 1)>(at, b, ldb, c, ldc, n, k, accumulate,
                                blockRows);
  else
    __builtin_unreachable(); // tiledRows refuses these m for [k, n]
}

} // namespace

bool tprt::detail::tiledRows(const float *a, int64_t aRowStride,
                             int64_t aColStride, const float *b, int64_t ldb,
                             bool storedNK, float *c, int64_t ldc, int64_t m,
                             int64_t n, int64_t k, bool accumulate) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  int64_t floatBytes = int64_t(sizeof(float));
  if (!avx512 || m < (storedNK ? kMinTiledRowsNK : kMinTiledRowsKN) ||
      m > kMaxTiledRows || n < 1 || k < 1)
    return false;
  // [n, k]: whole transposes of 16 x 16. [k, n]: c, no larger than a block,
  // stays in the L2 next to two blocks of b.
  if (storedNK ? n % kLanes != 0 || k % kLanes != 0
               : m * n * floatBytes > blockBytes())
    return false;
  thread_local std::vector<float> packed;
  packed.resize(size_t(k * m));
  for (int64_t l = 0; l < k; ++l)
    for (int64_t i = 0; i < m; ++i)
      packed[l * m + i] = a[i * aRowStride + l * aColStride];
  int64_t blockRows = blockBytes() / ((storedNK ? k : n) * floatBytes);
  blockRows = storedNK ? std::max(kLanes, blockRows / kLanes * kLanes)
                       : std::max<int64_t>(1, blockRows);
  multiplyRows<kMinTiledRowsNK>(m, storedNK, packed.data(), b, ldb, c, ldc, n,
                                k, accumulate, blockRows);
  return true;
}

#else

bool tprt::detail::tiledRows(const float *, int64_t, int64_t, const float *,
                             int64_t, bool, float *, int64_t, int64_t, int64_t,
                             int64_t, bool) {
  return false;
}

#endif

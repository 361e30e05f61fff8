//===- TiledRows.cpp - a few rows of c against a weight ----------------===//
//
// With a few rows of c, each element of b takes as many multiply-adds as
// there are rows, and a step must stream b from DRAM and keep the FMA units
// busy at the same time. OpenBLAS's sgemm (Gemm.cpp's smallM) does one after
// the other: it packs a block of b, then multiplies it. Here b is not packed:
// a tile of c stays in registers while one block of b's rows passes under it
// (a's values broadcast from a packed transpose of a), and the same loop
// prefetches the next block in address order, as many cache lines per step
// as the step reads from the current one, so that the read of block r + 1
// overlaps the arithmetic on block r. The panels read their block across
// its rows, which the hardware's prefetchers do not follow: every line of b
// is asked for by a prefetch instruction (asking for every second one and
// leaving the rest to the hardware ran at half the rate), so they must be
// cheap (see blockLines).
//
// b stored [k, n] (GPT-2's Conv1D): the tile is MR rows x NR vectors of 16
// columns of c, and one vector load of b serves MR multiply-adds. b stored
// [n, k] (torch's Linear, a tied LM head read transposed): 16 rows of b are
// loaded 16 columns at a time and transposed in registers (64 shuffles per
// 16 x 16, which run beside the 16 MR multiply-adds they feed; n % 16 rows
// and k % 16 columns padded with zeros in registers), then taken as the
// [k, n] case takes its rows; dot products over b's rows instead ran
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
#include "Prefetch.h"

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
using tprt::detail::kLineBytes;
using tprt::detail::LineStream;
using tprt::detail::Vec;

// Built for AVX-512 alone, unlike Lanes.h's helpers (see there).
TPRT_AVX512 inline Vec loadVec(const float *p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

TPRT_AVX512 inline void storeVec(float *p, Vec v) {
  std::memcpy(p, &v, sizeof v);
}

/// The cache lines of rows [first, first + rows) of b (`ldb` apart, `cols`
/// floats each), to be prefetched a few at a time in address order. The rows
/// are taken as one span, which is why tiledRows wants them less than a line
/// apart: a span with gaps would fetch the gaps too, and a walk that skips
/// them (tried) cost as many instructions per line as the multiply-adds it
/// ran beside, halving the tiles' rate from the L2.
LineStream blockLines(const float *b, int64_t ldb, int64_t cols, int64_t first,
                      int64_t rows) {
  if (rows < 1)
    return {0, 0};
  uintptr_t floatBytes = sizeof(float);
  uintptr_t start = reinterpret_cast<uintptr_t>(b) + first * ldb * floatBytes;
  return LineStream::of(start, start + ((rows - 1) * ldb + cols) * floatBytes);
}

/// body(r, rows, next) for each block of `blockRows` rows of b as stored
/// (`storedRows` rows of `cols` floats, `ldb` apart), where `next` holds the
/// cache lines of the block after it. Nothing overlaps the first block's
/// read: all of it is asked for before.
template <typename Body>
TPRT_AVX512 inline void forEachBlock(const float *b, int64_t ldb,
                                     int64_t storedRows, int64_t cols,
                                     int64_t blockRows, Body body) {
  blockLines(b, ldb, cols, 0, std::min(blockRows, storedRows)).fetchAll();
  for (int64_t r = 0; r < storedRows; r += blockRows) {
    int64_t rows = std::min(blockRows, storedRows - r);
    LineStream next = blockLines(b, ldb, cols, r + rows,
                                 std::min(blockRows, storedRows - r - rows));
    body(r, rows, next);
    // Whatever the body's steps did not ask for (the columns past the last
    // whole vector, the lines of a row's ends).
    next.fetchAll();
  }
}

/// c[i, 0:16 NR] = (c[i, 0:16 NR] if `load`) + sum over l < rows of
/// at[l * MR + i] * b[l * ldb, 0:16 NR], for i < MR.
template <int MR, int NR>
TPRT_AVX512 inline void panel(const float *at, const float *b, int64_t ldb,
                              int64_t rows, float *c, int64_t ldc, bool load,
                              LineStream &next) {
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
      b, ldb, k, n, blockRows, [&](int64_t r, int64_t rows, LineStream &next) {
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

/// c[i, 0:rows] = (c[i, 0:rows] if `load`) + sum over l < k of
/// at[l * MR + i] * b[0:rows, l], for i < MR: `rows` (16 where `Whole`,
/// fewer in a last panel) rows of b, `ldb` apart, taken 16 columns at a
/// time and transposed in registers. The rows past `rows` and the columns
/// past k read as zeros: the last columns by masked loads, which do not
/// touch what they mask (`at` holds zeros past k too, up to a multiple of
/// 16).
template <int MR, bool Whole>
TPRT_AVX512 inline void transposedPanel(const float *at, const float *b,
                                        int64_t ldb, int64_t k, int64_t rows,
                                        float *c, int64_t ldc, bool load,
                                        LineStream &next) {
  __mmask16 rowMask = Whole ? 0xffff : __mmask16((1u << rows) - 1);
  Vec acc[MR];
#pragma unroll
  for (int i = 0; i < MR; ++i)
    acc[i] = load ? _mm512_maskz_loadu_ps(rowMask, c + i * ldc) : Vec{};
  for (int64_t l0 = 0; l0 < k; l0 += kLanes) {
    __mmask16 columnMask =
        l0 + kLanes <= k ? 0xffff : __mmask16((1u << (k - l0)) - 1);
    __m512 columns[kLanes];
#pragma unroll
    for (int p = 0; p < kLanes; ++p)
      columns[p] = Whole || p < rows
                       ? _mm512_maskz_loadu_ps(columnMask, b + p * ldb + l0)
                       : _mm512_setzero_ps();
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
    _mm512_mask_storeu_ps(c + i * ldc, rowMask, acc[i]);
}

/// c (MR x n) (+)= a b^T for b stored [n, k], over blocks of `blockRows`
/// rows of b (a multiple of 16).
template <int MR>
TPRT_AVX512 void multiplyTransposed(const float *at, const float *b,
                                    int64_t ldb, float *c, int64_t ldc,
                                    int64_t n, int64_t k, bool accumulate,
                                    int64_t blockRows) {
  forEachBlock(
      b, ldb, n, k, blockRows, [&](int64_t r, int64_t rows, LineStream &next) {
        int64_t j = r;
        for (; j + kLanes <= r + rows; j += kLanes)
          transposedPanel<MR, true>(at, b + j * ldb, ldb, k, kLanes, c + j, ldc,
                                    accumulate, next);
        if (j < r + rows)
          transposedPanel<MR, false>(at, b + j * ldb, ldb, k, r + rows - j,
                                     c + j, ldc, accumulate, next);
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
  // [k, n]: c, no larger than a block, stays in the L2 next to two blocks
  // of b. Both: b's rows less than a line apart, since blockLines fetches the
  // span they lie in.
  int64_t storedCols = storedNK ? k : n;
  if (!storedNK && m * n * floatBytes > blockBytes())
    return false;
  if ((ldb - storedCols) * floatBytes >= int64_t(kLineBytes))
    return false;
  // a transposed, k x m; for [n, k] padded with zeros to a multiple of 16
  // rows, the transposes' width.
  int64_t paddedK = storedNK ? (k + kLanes - 1) / kLanes * kLanes : k;
  thread_local std::vector<float> packed;
  packed.assign(size_t(paddedK * m), 0.0f);
  for (int64_t l = 0; l < k; ++l)
    for (int64_t i = 0; i < m; ++i)
      packed[l * m + i] = a[i * aRowStride + l * aColStride];
  // Rows as laid out, gaps included: the prefetch's span is that long.
  int64_t blockRows = blockBytes() / (ldb * floatBytes);
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

//===- Panels.cpp - rows of c against a weight in panels ------------------===//
//
// A tile of c (up to 14 rows x 32 columns) stays in registers while one
// panel of b passes under it, a's values broadcast from a packed transpose
// of a, and the same loop prefetches a little further on, two lines per
// step, as many as it reads. Over the row-major weight the tiles
// (TiledRows.cpp) must prefetch every line of a block that crosses b's
// rows; over panels the read is one stream, and at 8 rows GPT-2-small's
// [k, n] weights streamed at 35-37 GB/s against 26-30, at one row at 37
// against 33 for combineRows (a /tmp timing on a core reading at 39;
// docs/generation.md, item 10). The arithmetic is plain vector code on
// 16 floats, built for AVX-512, AVX2 with FMA and the baseline
// (`target_clones`, Lanes.h); only the first keeps a 14-row tile in its 32
// registers, so the others take 2 rows at a time (8 of AVX2's 16 for c).
//
//===----------------------------------------------------------------------===//

#include "Panels.h"
#include "Lanes.h"
#include "Prefetch.h"
#include "TiledRows.h"

#include <vector>

namespace {

using tprt::detail::kLanes;
using tprt::detail::kLineBytes;
using tprt::detail::kPanelCols;
using tprt::detail::LineStream;
using tprt::detail::loadVec;
using tprt::detail::panelWidth;
using tprt::detail::storeVec;
using tprt::detail::Vec;

constexpr int64_t kMaxTileRows = 14;
/// How far ahead of the read the prefetches run: at 4 KiB 1-row products
/// streamed fastest and 14-row ones slowest (39 and 28 GB/s), at a whole
/// panel ahead (96-384 KiB) the deep panels slowed; 16 KiB ran 35-37 GB/s
/// at 1, 8 and 14 rows on GPT-2-small's shapes (a /tmp timing).
constexpr uintptr_t kPrefetchBytes = 16 << 10;
static_assert(kPanelCols == 2 * kLanes, "a tile row is two vectors");

/// c[i, 0:32] = (c[i, 0:32] if `load`) + sum over l < k of at[l * MR + i] *
/// panel[l * 32, 0:32], for i < MR, while `next` is fetched.
template <int MR>
TPRT_INLINE void wideTile(const float *at, const float *panel, int64_t k,
                          float *c, int64_t ldc, bool load, LineStream next) {
  Vec acc[MR][2];
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int q = 0; q < 2; ++q)
      acc[i][q] = load ? loadVec(c + i * ldc + q * kLanes) : Vec{};
  for (int64_t l = 0; l < k; ++l) {
    Vec b0 = loadVec(panel + l * kPanelCols);
    Vec b1 = loadVec(panel + l * kPanelCols + kLanes);
#pragma unroll
    for (int i = 0; i < MR; ++i) {
      acc[i][0] += at[l * MR + i] * b0;
      acc[i][1] += at[l * MR + i] * b1;
    }
    next.fetch(int(kPanelCols * sizeof(float) / kLineBytes));
  }
#pragma unroll
  for (int i = 0; i < MR; ++i)
#pragma unroll
    for (int q = 0; q < 2; ++q)
      storeVec(c + i * ldc + q * kLanes, acc[i][q]);
}

/// The same for a last panel narrower than 32 columns.
template <int MR>
TPRT_INLINE void narrowTile(const float *at, const float *panel, int64_t width,
                            int64_t k, float *c, int64_t ldc, bool load) {
  for (int i = 0; i < MR; ++i)
    for (int64_t j = 0; j < width; ++j) {
      float sum = load ? c[i * ldc + j] : 0.0f;
      for (int64_t l = 0; l < k; ++l)
        sum += at[l * MR + i] * panel[l * width + j];
      c[i * ldc + j] = sum;
    }
}

/// MR rows of c, columns [first, end) (whole panels), against the panels
/// there; `prefetch`: fetch the lines kPrefetchBytes ahead of each panel
/// while it is multiplied.
template <int MR>
TPRT_INLINE void tileRows(const float *at, const float *panels, int64_t n,
                          int64_t k, float *c, int64_t ldc, bool load,
                          int64_t first, int64_t end, bool prefetch) {
  for (int64_t j = first; j < end; j += kPanelCols) {
    int64_t width = panelWidth(n, j);
    const float *panel = panels + j * k;
    if (width < kPanelCols) {
      narrowTile<MR>(at, panel, width, k, c + j, ldc, load);
      continue;
    }
    // The panels follow each other: the span kPrefetchBytes ahead of this
    // one, up to the last panel's end, read at this panel's pace.
    LineStream next{0, 0};
    if (prefetch) {
      uintptr_t start = reinterpret_cast<uintptr_t>(panel) + kPrefetchBytes;
      uintptr_t last = reinterpret_cast<uintptr_t>(panels + n * k);
      next = LineStream::of(
          start, std::min(last, start + uintptr_t(k * width) * sizeof(float)));
    }
    wideTile<MR>(at, panel, k, c + j, ldc, load, next);
  }
}

template <int MR = 1>
TPRT_INLINE void dispatchRows(int64_t rows, const float *at,
                              const float *panels, int64_t n, int64_t k,
                              float *c, int64_t ldc, bool load, int64_t first,
                              int64_t end, bool prefetch) {
  if constexpr (MR < kMaxTileRows)
    if (rows != MR)
      return dispatchRows<MR + 1>(rows, at, panels, n, k, c, ldc, load, first,
                                  end, prefetch);
  tileRows<MR>(at, panels, n, k, c, ldc, load, first, end, prefetch);
}

/// multiplyPanels with tiles of `tileRows` rows and groups of `groupCols`
/// columns (a multiple of kPanelCols); `at` holds a transposed tile by tile
/// (k x rows each).
TPRT_CLONES void multiply(const float *at, const float *panels, float *c,
                          int64_t ldc, int64_t m, int64_t n, int64_t k,
                          bool accumulate, int64_t tileRows,
                          int64_t groupCols) {
  for (int64_t first = 0; first < n; first += groupCols) {
    int64_t end = std::min(n, first + groupCols);
    for (int64_t i = 0; i < m; i += tileRows) {
      int64_t rows = std::min(tileRows, m - i);
      // Only the first tile of rows reads the group from DRAM.
      dispatchRows(rows, at + i * k, panels, n, k, c + i * ldc, ldc, accumulate,
                   first, end, i == 0);
    }
  }
}

} // namespace

void tprt::detail::multiplyPanels(const float *a, int64_t aRowStride,
                                  int64_t aColStride, const float *panels,
                                  float *c, int64_t ldc, int64_t m, int64_t n,
                                  int64_t k, bool accumulate,
                                  int64_t tileRows) {
  if (m < 1 || n < 1)
    return;
  if (k < 1) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  if (tileRows < 1) {
#if defined(__x86_64__)
    static const bool avx512 = __builtin_cpu_supports("avx512f");
#else
    constexpr bool avx512 = false;
#endif
    tileRows = avx512 ? kMaxTileRows : 2;
  }
  tileRows = std::min(tileRows, kMaxTileRows);
  // With a single tile of rows every panel is read once: one group. With
  // more, a group is a quarter of the L2, read from DRAM by the first tile
  // and from the L2 by the others.
  int64_t groupCols = n;
  if (m > tileRows)
    groupCols =
        std::max<int64_t>(1, tprt::detail::blockBytes() /
                                 (k * int64_t(sizeof(float)) * kPanelCols)) *
        kPanelCols;
  // a transposed, tile by tile: tile t's k x rows block at t * tileRows * k.
  thread_local std::vector<float> at;
  at.resize(size_t(m * k));
  for (int64_t i0 = 0; i0 < m; i0 += tileRows) {
    int64_t rows = std::min(tileRows, m - i0);
    float *block = at.data() + i0 * k;
    for (int64_t l = 0; l < k; ++l)
      for (int64_t i = 0; i < rows; ++i)
        block[l * rows + i] = a[(i0 + i) * aRowStride + l * aColStride];
  }
  multiply(at.data(), panels, c, ldc, m, n, k, accumulate, tileRows, groupCols);
}

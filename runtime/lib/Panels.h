//===- Panels.h - a [k, n] weight laid out as column panels ----*- C++ -*-===//
//
// A decode step's few rows of c cross a [k, n] weight stored row-major: the
// register tiles read a strip of columns down all k rows, a stream the
// hardware prefetchers do not follow. The same weight cut into panels of
// kPanelCols columns, each stored as its k rows one after the other, is read
// by the tiles as one stream per panel. tp-compile asks for this layout
// ("layout": "panels" in the manifest; "transposed_panels" for an [n, k]
// weight the GEMMs read transposed, torch's Linear layout, whose transpose
// is laid out so) for a weight that only the runtime's GEMMs read, as
// their b, and the loader lays it out once: the panels hold the same k x n
// floats.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_PANELS_H
#define TPRT_LIB_PANELS_H

#include <algorithm>
#include <cstdint>

namespace tprt {
namespace detail {

/// Columns per panel: two vectors of 16 floats, a tile's width for any of
/// 1-14 rows of c in 32 vector registers. Part of the ABI (TPRT_PANEL_COLS:
/// compiled lookups read panels); Gemm.cpp checks that they agree.
constexpr int64_t kPanelCols = 32;

/// The panel that starts at column `first` (a multiple of kPanelCols) holds
/// `panelWidth(n, first)` columns (the last one may hold fewer) and starts
/// `first * k` floats in; its row l is `panelWidth` floats at `l * width`.
inline int64_t panelWidth(int64_t n, int64_t first) {
  return std::min(kPanelCols, n - first);
}

/// `panels` (k * n floats) = the row-major k x n matrix `rows` (rows `ld`
/// apart) in panels.
inline void packPanels(const float *rows, int64_t ld, int64_t k, int64_t n,
                       float *panels) {
  for (int64_t first = 0; first < n; first += kPanelCols) {
    int64_t width = panelWidth(n, first);
    float *panel = panels + first * k;
    for (int64_t l = 0; l < k; ++l)
      std::copy_n(rows + l * ld + first, width, panel + l * width);
  }
}

/// `panels` (n * k floats) = the transpose of the row-major n x k matrix
/// `rows` (rows `ld` apart), a k x n matrix, in panels.
inline void packTransposedPanels(const float *rows, int64_t ld, int64_t n,
                                 int64_t k, float *panels) {
  for (int64_t first = 0; first < n; first += kPanelCols) {
    int64_t width = panelWidth(n, first);
    float *panel = panels + first * k;
    for (int64_t j = 0; j < width; ++j)
      for (int64_t l = 0; l < k; ++l)
        panel[l * width + j] = rows[(first + j) * ld + l];
  }
}

/// The inverse of packPanels: `rows` (rows `ld` apart) = the k x n matrix
/// in `panels`.
inline void unpackPanels(const float *panels, int64_t k, int64_t n, float *rows,
                         int64_t ld) {
  for (int64_t first = 0; first < n; first += kPanelCols) {
    int64_t width = panelWidth(n, first);
    const float *panel = panels + first * k;
    for (int64_t l = 0; l < k; ++l)
      std::copy_n(panel + l * width, width, rows + l * ld + first);
  }
}

/// c = a b (+ c when `accumulate`; c is not read otherwise) for b, k x n,
/// in panels; element (i, l) of a (m x k) is a[i * aRowStride + l *
/// aColStride] and c is row-major (rows `ldc` apart, contiguous within a
/// row). Each panel passes under register tiles of `tileRows` rows of c (0:
/// 14 on a CPU with AVX-512, 2 otherwise) while the lines 16 KiB further on
/// are prefetched; with more rows, the panels of an L2-sized group pass
/// under every tile of rows before the next group is read.
void multiplyPanels(const float *a, int64_t aRowStride, int64_t aColStride,
                    const float *panels, float *c, int64_t ldc, int64_t m,
                    int64_t n, int64_t k, bool accumulate,
                    int64_t tileRows = 0);

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_PANELS_H

//===- TiledRows.h - a few rows of c against a weight ----------*- C++ -*-===//
//
// A decode step at batch 2-14 multiplies a few activation rows by each
// weight: every weight element meets each row once, so the step does as many
// multiply-adds as it reads bytes, and must do both at once.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_TILEDROWS_H
#define TPRT_LIB_TILEDROWS_H

#include <cstdint>

namespace tprt {
namespace detail {

/// The rows of c tiledRows takes: against b stored [n, k] from 2, against
/// b stored [k, n] from 6 (with fewer its tiles were no faster than
/// OpenBLAS over blocks of b).
constexpr int64_t kMinTiledRowsNK = 2, kMinTiledRowsKN = 6, kMaxTiledRows = 14;

/// c = a op(b) (+ c when `accumulate`; c is not read otherwise) for m rows
/// of c, where element (i, l) of a (m x k) is a[i * aRowStride + l *
/// aColStride], b is stored row-major, [k, n] or, when `storedNK`, [n, k]
/// (op(b) = b^T), its rows `ldb` apart, and c row-major (rows `ldc` apart,
/// contiguous within a row). b is read from DRAM once, in blocks of whole
/// rows, each prefetched in address order while the one before it is
/// multiplied (see TiledRows.cpp). False (nothing done) where m is outside
/// [kMinTiledRowsNK or kMinTiledRowsKN, kMaxTiledRows], n or k is 0 or the
/// CPU lacks AVX-512, where b's rows lie a cache line or more apart (ldb
/// past the stored row by 16 floats or more), and for b stored [k, n] where
/// c is more than blockBytes().
bool tiledRows(const float *a, int64_t aRowStride, int64_t aColStride,
               const float *b, int64_t ldb, bool storedNK, float *c,
               int64_t ldc, int64_t m, int64_t n, int64_t k, bool accumulate);

/// Bytes of b per block, for the tiles and for Gemm.cpp's blocked sgemm: a
/// quarter of the L2 (of 1 MiB where the system does not say), so that two
/// blocks and what is made of them (a tile's c, OpenBLAS's packed copy) stay
/// there.
int64_t blockBytes();

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_TILEDROWS_H

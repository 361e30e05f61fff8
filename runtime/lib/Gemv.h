//===- Gemv.h - one row of c against a weight ------------------*- C++ -*-===//
//
// A decode step at batch 1 multiplies one activation row by every weight:
// each weight is read once from DRAM and the step is as fast as that read.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_GEMV_H
#define TPRT_LIB_GEMV_H

#include <cstdint>

namespace tprt {
namespace detail {

/// y[i] = b[i, :] . x (+ y[i] when `accumulate`; y is not read otherwise)
/// for i < n, where b is stored row-major, n rows of k floats `ld` apart, and
/// x and y are contiguous. b is read once, in address order. Where `ahead`
/// is not 0, the b of the next product (of a batch: as many rows, `ahead`
/// floats further) is prefetched meanwhile, row by row. False (nothing
/// done) where x is more than a quarter of the L1 (see Gemv.cpp).
bool dotRows(const float *b, int64_t ld, const float *x, float *y, int64_t n,
             int64_t k, bool accumulate, int64_t ahead = 0);

/// y = x . b (+ y when `accumulate`; y is not read otherwise), where b is
/// stored row-major [k, n], k rows of n floats `ld` apart, and x (k floats)
/// and y (n floats) are contiguous: b's rows in address order, each times
/// its x, summed in a scratch buffer that stays in the L1; `ahead` as for
/// dotRows. False (nothing done) where y is more than half of the L1, or k
/// is 0 (see Gemv.cpp).
bool combineRows(const float *b, int64_t ld, const float *x, float *y,
                 int64_t n, int64_t k, bool accumulate, int64_t ahead = 0);

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_GEMV_H

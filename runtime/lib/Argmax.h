//===- Argmax.h - the greedy next token over rows of logits ----*- C++ -*-===//
//
// The compiled argmax (tp-argmax-to-runtime) of a decode step: for each row
// of logits, the maximum and the first position where it occurs, with the
// semantics of the loop it replaces.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_ARGMAX_H
#define TPRT_LIB_ARGMAX_H

#include <cstdint>

namespace tprt {
namespace detail {

/// `max` and `index` as the scan over row x (n floats, `stride` apart)
///
///   gt = x[j] > max (ordered); max = maximumf(x[j], max);
///   if (gt) index = offset + j
///
/// leaves them from their values: a NaN in the row (or in max) makes max NaN
/// and keeps the index of the maximum before it; maximumf orders -0 below
/// +0.
void argmaxRow(const float *x, int64_t n, int64_t stride, float &max,
               int64_t &index, int64_t offset);

} // namespace detail
} // namespace tprt

#endif // TPRT_LIB_ARGMAX_H

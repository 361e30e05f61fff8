//===- Argmax.cpp - the greedy next token over rows of logits -------------===//
//
// The loop the compiler would emit compares each element with the running
// maximum, a dependent chain per element (a NaN test, a max, a blend): 0.9
// ms for a GPT-2-small step's 8 x 50304 logits. Here 16 lanes each keep the
// maximum of their own elements and its first position, merged at the end:
// the first position of the row's maximum is the least of the lanes' first
// positions of it. Rows with a NaN, or whose maximum is a zero (the sign of
// maximumf's result then depends on the order), take the scan itself.
//
//===----------------------------------------------------------------------===//

#include "Argmax.h"
#include "Lanes.h"

#include <climits>
#include <cmath>

namespace {

using tprt::detail::kLanes;
using tprt::detail::loadVec;
using tprt::detail::Vec;
using Positions =
    int32_t __attribute__((vector_size(kLanes * sizeof(int32_t))));

/// arith.maximumf: NaN if either is, -0 below +0.
float maximumf(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) ? a : b;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// The scan itself.
void scan(const float *x, int64_t n, int64_t stride, float &max, int64_t &index,
          int64_t offset) {
  for (int64_t j = 0; j < n; ++j) {
    float v = x[j * stride];
    if (v > max)
      index = offset + j;
    max = maximumf(v, max);
  }
}

/// The row's maximum and its first position, over 16 lanes; false where the
/// row holds a NaN.
TPRT_INLINE bool lanesMax(const float *x, int64_t n, float &best, int64_t &at) {
  Vec top = loadVec(x);
  Positions first, lane;
  for (int32_t l = 0; l < kLanes; ++l)
    first[l] = lane[l] = l;
  Positions unordered = top != top;
  int64_t j = kLanes;
  for (; j + kLanes <= n; j += kLanes) {
    lane += kLanes;
    Vec v = loadVec(x + j);
    Positions greater = v > top;
    top = greater ? v : top;
    first = greater ? lane : first;
    unordered |= v != v;
  }
  int32_t anyNaN = 0;
  for (int l = 0; l < kLanes; ++l)
    anyNaN |= unordered[l];
  if (anyNaN)
    return false;
  best = top[0];
  at = first[0];
  for (int l = 1; l < kLanes; ++l)
    if (top[l] > best || (top[l] == best && first[l] < at)) {
      best = top[l];
      at = first[l];
    }
  for (; j < n; ++j) {
    if (std::isnan(x[j]))
      return false;
    if (x[j] > best) {
      best = x[j];
      at = j;
    }
  }
  return true;
}

} // namespace

TPRT_CLONES void tprt::detail::argmaxRow(const float *x, int64_t n,
                                         int64_t stride, float &max,
                                         int64_t &index, int64_t offset) {
  float best;
  int64_t at;
  if (stride != 1 || n < kLanes || n > INT32_MAX || std::isnan(max) ||
      !lanesMax(x, n, best, at) || best == 0)
    return scan(x, n, stride, max, index, offset);
  // No NaN, no zero maximum: maximumf(best, max) is the greater.
  if (best > max) {
    max = best;
    index = offset + at;
  }
}

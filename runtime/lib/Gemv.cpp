//===- Gemv.cpp - one row of c against a weight ---------------------------===//
//
// A decode step at batch 1 reads each weight once: the step is as fast as
// that read. With the weight stored [n, k] (torch's Linear layout, and a tied
// LM head: the embedding read transposed) OpenBLAS 0.3.21's cblas_sgemv read
// GPT-2-small's LM head at 13-14 GB/s where a plain sum of the same bytes ran
// at 25-27; these loops, which read b strictly in address order, one row
// after the other, ran at 22-27 (docs/bench-small-m-gemm.md, m = 1). The same
// loops taking four rows at a time (streams from DRAM side by side) were no
// faster than sgemv, two at a time slower, and software prefetching did not
// help. They need x
// to stay in the L1 while b streams past: with rows of up to 8 KiB (a quarter
// of the 32 KiB L1) they ran at 22-23 GB/s, with rows of 12 KiB at 12-17,
// below sgemv's 17-19; longer rows stay on sgemv. Their arithmetic is
// plain vector code on 16 floats, built three times (`target_clones`: the
// loader picks AVX-512, AVX2 with FMA (x86-64-v3) or the baseline for the
// CPU it runs on; the rounding of a sum differs between them): where
// one core reads at 22-27 GB/s the builds ran alike, but on one that reads
// at 38-40 the baseline's 128-bit loads and stores capped them at 30-33
// GB/s against 36-42 for the AVX2 and AVX-512 builds.
//
// A weight stored [k, n] (GPT-2's Conv1D layout) is read the same way, one
// row after the other, each scaled by its element of x and added into a sum
// of n floats kept in the L1 (combineRows): a scratch buffer of this thread,
// so that where c lies does not matter. At GPT-2-small's four shapes it ran
// at the rate of a plain read, 1.1-1.5x sgemv (docs/bench-small-m-gemm.md).
// Taking two or four rows per pass over the sum was slower (0.5-0.8x
// sgemv): the rows' streams again. An earlier form that added into c itself
// had run from 0.5x to 1.45x sgemv, by shape and by where c lay.
//
// A batch of such products (a decode step's attention: one query row
// against each head's cached K, then the probabilities against its V) reads
// many short operands, an attention head's 48 KiB at position 191, one
// after the other, and each started cold: the hardware prefetchers ramp up
// on every new stream. Prefetching the next operand's row as each row is
// read (`ahead`) ran the attention's reads of a GPT-2-small step at batch 8
// at 31-33 GB/s against 20 without (a /tmp timing of those reads alone);
// prefetching 4 KiB ahead within the operand gave 24-26, the whole next
// operand at once before it 16-17.
//
//===----------------------------------------------------------------------===//

#include "Gemv.h"
#include "Lanes.h"
#include "Prefetch.h"

#include <cstring>
#include <vector>

#include <unistd.h>

namespace {

using tprt::detail::kLanes;
using tprt::detail::loadVec;
using tprt::detail::storeVec;
using tprt::detail::Vec;

/// The sum of v's lanes, halving the vector each step: short rows (an
/// attention head's 64 floats) spend most of their time here, and lane after
/// lane would chain 16 dependent adds per row.
TPRT_INLINE float sumLanes(Vec v) {
  using Half = float __attribute__((vector_size(kLanes / 2 * sizeof(float))));
  using Quarter =
      float __attribute__((vector_size(kLanes / 4 * sizeof(float))));
  Half h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
           __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  Quarter q = __builtin_shufflevector(h, h, 0, 1, 2, 3) +
              __builtin_shufflevector(h, h, 4, 5, 6, 7);
  return (q[0] + q[2]) + (q[1] + q[3]);
}

/// row . x over k floats; four accumulators keep the adds independent.
TPRT_INLINE float dot(const float *row, const float *x, int64_t k) {
  Vec a0 = {}, a1 = {}, a2 = {}, a3 = {};
  int64_t j = 0;
  for (; j + 4 * kLanes <= k; j += 4 * kLanes) {
    a0 += loadVec(row + j) * loadVec(x + j);
    a1 += loadVec(row + j + kLanes) * loadVec(x + j + kLanes);
    a2 += loadVec(row + j + 2 * kLanes) * loadVec(x + j + 2 * kLanes);
    a3 += loadVec(row + j + 3 * kLanes) * loadVec(x + j + 3 * kLanes);
  }
  for (; j + kLanes <= k; j += kLanes)
    a0 += loadVec(row + j) * loadVec(x + j);
  float sum = sumLanes((a0 + a1) + (a2 + a3));
  for (; j < k; ++j)
    sum += row[j] * x[j];
  return sum;
}

/// Floats in the L1.
int64_t l1Floats() {
  static const int64_t floats = [] {
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return static_cast<int64_t>(l1 > 0 ? l1 : 32 << 10) /
           int64_t(sizeof(float));
  }();
  return floats;
}

/// The longest x (in floats) that dotRows takes: a quarter of the L1.
int64_t maxDotLength() { return l1Floats() / 4; }

/// Asks for the cache lines of `floats` floats from `p` on.
TPRT_INLINE void prefetch(const float *p, int64_t floats) {
  uintptr_t first = reinterpret_cast<uintptr_t>(p);
  tprt::detail::prefetchSpan(first, first + uintptr_t(floats) * sizeof(float));
}

/// sum (n floats) = s * row, or sum += s * row when `add`.
TPRT_INLINE void scaleRow(float *sum, const float *row, float s, int64_t n,
                          bool add) {
  Vec sv = {};
  sv += s;
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes)
    for (int64_t q = 0; q < 4; ++q) {
      float *at = sum + j + q * kLanes;
      Vec v = sv * loadVec(row + j + q * kLanes);
      storeVec(at, add ? loadVec(at) + v : v);
    }
  for (; j + kLanes <= n; j += kLanes) {
    Vec v = sv * loadVec(row + j);
    storeVec(sum + j, add ? loadVec(sum + j) + v : v);
  }
  for (; j < n; ++j)
    sum[j] = add ? sum[j] + s * row[j] : s * row[j];
}

} // namespace

TPRT_CLONES bool tprt::detail::dotRows(const float *b, int64_t ld,
                                       const float *x, float *y, int64_t n,
                                       int64_t k, bool accumulate,
                                       int64_t ahead) {
  if (k > maxDotLength())
    return false;
  for (int64_t i = 0; i < n; ++i) {
    if (ahead)
      prefetch(b + i * ld + ahead, k);
    float value = dot(b + i * ld, x, k);
    y[i] = accumulate ? y[i] + value : value;
  }
  return true;
}

TPRT_CLONES bool tprt::detail::combineRows(const float *b, int64_t ld,
                                           const float *x, float *y, int64_t n,
                                           int64_t k, bool accumulate,
                                           int64_t ahead) {
  if (n > l1Floats() / 2 || k < 1)
    return false;
  thread_local std::vector<float> scratch;
  if (scratch.size() < size_t(n))
    scratch.resize(size_t(n));
  float *sum = scratch.data();
  for (int64_t r = 0; r < k; ++r) {
    if (ahead)
      prefetch(b + r * ld + ahead, n);
    scaleRow(sum, b + r * ld, x[r], n, /*add=*/r > 0);
  }
  for (int64_t j = 0; j < n; ++j)
    y[j] = accumulate ? y[j] + sum[j] : sum[j];
  return true;
}

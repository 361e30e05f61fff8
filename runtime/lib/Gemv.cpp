//===- Gemv.cpp - one row of c against a weight stored [n, k] -------------===//
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
// plain vector code on 16 floats: at one multiply-add per float loaded the
// read sets the pace, not the vector width (the baseline x86-64, AVX2 and
// AVX-512 builds ran alike), so the baseline build serves every CPU.
//
// A weight stored [k, n] stays on sgemv (Gemm.cpp): its row-after-row form,
// y += x[r] * b[r, :], stores y once per row of b, and ran from 0.5x to 1.45x
// sgemv here, by shape and by where y lay, where sgemv held 15-22 GB/s.
//
//===----------------------------------------------------------------------===//

#include "Gemv.h"

#include <cstring>

#include <unistd.h>

namespace {

constexpr int64_t kLanes = 16;
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

Vec load(const float *p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// row . x over k floats; four accumulators keep the adds independent.
float dot(const float *row, const float *x, int64_t k) {
  Vec a0 = {}, a1 = {}, a2 = {}, a3 = {};
  int64_t j = 0;
  for (; j + 4 * kLanes <= k; j += 4 * kLanes) {
    a0 += load(row + j) * load(x + j);
    a1 += load(row + j + kLanes) * load(x + j + kLanes);
    a2 += load(row + j + 2 * kLanes) * load(x + j + 2 * kLanes);
    a3 += load(row + j + 3 * kLanes) * load(x + j + 3 * kLanes);
  }
  for (; j + kLanes <= k; j += kLanes)
    a0 += load(row + j) * load(x + j);
  Vec a = (a0 + a1) + (a2 + a3);
  float sum = 0;
  for (int64_t lane = 0; lane < kLanes; ++lane)
    sum += a[lane];
  for (; j < k; ++j)
    sum += row[j] * x[j];
  return sum;
}

/// The longest x (in floats) that dotRows takes: a quarter of the L1.
int64_t maxDotLength() {
  static const int64_t floats = [] {
    long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return static_cast<int64_t>(l1 > 0 ? l1 : 32 << 10) / 4 /
           int64_t(sizeof(float));
  }();
  return floats;
}

} // namespace

bool tprt::detail::dotRows(const float *b, int64_t ld, const float *x, float *y,
                           int64_t n, int64_t k, bool accumulate) {
  if (k > maxDotLength())
    return false;
  for (int64_t i = 0; i < n; ++i) {
    float value = dot(b + i * ld, x, k);
    y[i] = accumulate ? y[i] + value : value;
  }
  return true;
}

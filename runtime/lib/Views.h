//===- Views.h - reading compiled code's memrefs, for both runtimes -*- C++
//-*-===//
//
// The checks and the matrix classification the GEMM and collective entry
// points of libtprt and libtprt_cuda apply to the descriptors they are
// handed: written once so that both backends accept the same views and fail
// with the same messages (see Common.h).
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_LIB_VIEWS_H
#define TPRT_LIB_VIEWS_H

#include "Common.h"

#include <cstdint>
#include <string>

namespace tprt {
namespace common {

/// A 2-D strided view: data points at element [0, 0].
struct MatrixView {
  float *data;
  int64_t sizes[2];
  int64_t strides[2];
};

/// How a view lies in memory: inner stride 1 is a row-major matrix (ld =
/// strides[0]), outer stride 1 is the transpose of one (ld = strides[1]);
/// any other view has to be copied before BLAS can take it.
enum class Layout { RowMajor, ColumnMajor, Other };

Layout layoutOf(const MatrixView &v);
int64_t rowMajorLd(const MatrixView &v);
int64_t columnMajorLd(const MatrixView &v);

MatrixView matrixView(const tprt_memref2d_f32 *m);

/// op(a) is m x k, op(b) k x n, c m x n.
struct GemmShape {
  int64_t m, n, k;
};

/// The GEMM's dimensions; fails when op(a), op(b) and c do not agree.
GemmShape gemmShape(const char *call, const MatrixView &a, const MatrixView &b,
                    const MatrixView &c, bool transA, bool transB);

/// Fails on a null descriptor, a negative size, or a null data pointer on a
/// view that is not empty.
template <typename Memref>
void checkDescriptor(const char *call, const char *name, const Memref *m) {
  if (!m)
    fail(call, std::string("descriptor of ") + name + " is null");
  constexpr int rank = sizeof(m->sizes) / sizeof(m->sizes[0]);
  bool empty = false;
  for (int i = 0; i < rank; ++i) {
    if (m->sizes[i] < 0)
      fail(call, std::string(name) + " has a negative size " +
                     formatList(m->sizes, rank));
    empty |= m->sizes[i] == 0;
  }
  if (!m->aligned && !empty)
    fail(call, std::string(name) + " has a null data pointer");
}

/// The descriptor checks of a (batch) matmul's operands; batches must agree.
template <typename Operand, typename Result>
void checkGemmDescriptors(const char *call, const Operand *a, const Operand *b,
                          const Result *c, int64_t transA, int64_t accumulate) {
  checkDescriptor(call, "a", a);
  checkDescriptor(call, "b", b);
  checkDescriptor(call, "c", c);
  constexpr int rank = sizeof(c->sizes) / sizeof(c->sizes[0]);
  // Without accumulation c must be written even when op(a) has no columns;
  // the compiler never asks for that (it keeps the zero fill then).
  int64_t k = a->sizes[transA ? rank - 2 : rank - 1];
  if (!accumulate && k == 0)
    fail(call, "k = 0 without accumulation (c would not be written)");
  if constexpr (rank == 3) {
    if (a->sizes[0] != c->sizes[0] || b->sizes[0] != c->sizes[0])
      fail(call, "batch sizes do not agree: a " + formatList(a->sizes, 3) +
                     ", b " + formatList(b->sizes, 3) + ", c " +
                     formatList(c->sizes, 3));
  }
}

/// A collective's buffer: an unranked memref with the identity layout.
struct Buffer {
  float *data = nullptr;
  int64_t rank = 0;
  const int64_t *sizes = nullptr;
  const int64_t *strides = nullptr;
  int64_t numElements = 1;
};

/// Reads and checks (contiguous, non-negative sizes, data) a collective's
/// buffer; `name` is the argument's name in messages.
Buffer readBuffer(const char *call, const char *name,
                  const tprt_unranked_memref *memref);

/// Fails unless `out` is `in` with dimension `dim` multiplied by the world
/// size; returns the number of slices before `dim` (the product of the sizes
/// before it), in each of which every rank's block follows those of the
/// ranks before it.
int64_t checkGatheredShape(const char *call, const Buffer &in,
                           const Buffer &out, int64_t dim, int64_t worldSize);

/// Counts an all-reduce of `buffer` / an all-gather of `in` that took
/// `seconds` (the cuda runtime adds its GPU time later: 0).
void countAllReduce(tprt_counters &c, const Buffer &buffer, double seconds);
void countAllGather(tprt_counters &c, const Buffer &in, double seconds);

} // namespace common
} // namespace tprt

#endif // TPRT_LIB_VIEWS_H

//===- Gemm.cpp - matmul entry points on CBLAS ----------------------------===//
//
// c += op(a) * op(b) on fp32 memref views. Each operand view is handed to
// cblas_sgemm(CblasRowMajor) as it lies in memory when it can be: inner
// stride 1 is a row-major matrix (ld = strides[0]); strides[0] == 1 is the
// transpose of a row-major matrix (flip the transposition, ld = strides[1]).
// Any other view (negative, zero or two non-unit strides) is copied to a
// contiguous temporary first.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <sstream>
#include <vector>

using namespace tprt::detail;

namespace {

/// A 2-D strided view: data points at element [0, 0].
struct View2D {
  float *data;
  int64_t sizes[2];
  int64_t strides[2];
};

/// What cblas_sgemm takes for one operand.
struct BlasOperand {
  const float *data;
  int64_t ld;
  bool trans;
};

/// How a view lies in memory.
enum class Layout { RowMajor, ColumnMajor, Other };

Layout layoutOf(const View2D &v) {
  int64_t rows = v.sizes[0], cols = v.sizes[1];
  // A dimension of size 1 has no meaningful stride.
  bool innerUnit = cols == 1 || v.strides[1] == 1;
  bool outerUnit = rows == 1 || v.strides[0] == 1;
  if (innerUnit && (rows == 1 || v.strides[0] >= std::max<int64_t>(1, cols)))
    return Layout::RowMajor;
  if (outerUnit && (cols == 1 || v.strides[1] >= std::max<int64_t>(1, rows)))
    return Layout::ColumnMajor;
  return Layout::Other;
}

int64_t rowMajorLd(const View2D &v) {
  return v.sizes[0] == 1 ? std::max<int64_t>(1, v.sizes[1]) : v.strides[0];
}

int64_t columnMajorLd(const View2D &v) {
  return v.sizes[1] == 1 ? std::max<int64_t>(1, v.sizes[0]) : v.strides[1];
}

/// Copies a view into `storage` as a contiguous row-major matrix.
void copyToContiguous(const View2D &v, std::vector<float> &storage) {
  storage.resize(static_cast<size_t>(v.sizes[0] * v.sizes[1]));
  for (int64_t i = 0; i < v.sizes[0]; ++i)
    for (int64_t j = 0; j < v.sizes[1]; ++j)
      storage[i * v.sizes[1] + j] = v.data[i * v.strides[0] + j * v.strides[1]];
}

/// op(v) as a BLAS operand; uses `scratch` when the view must be copied.
BlasOperand toOperand(const View2D &v, bool trans, std::vector<float> &scratch) {
  switch (layoutOf(v)) {
  case Layout::RowMajor:
    return {v.data, rowMajorLd(v), trans};
  case Layout::ColumnMajor:
    return {v.data, columnMajorLd(v), !trans};
  case Layout::Other:
    break;
  }
  copyToContiguous(v, scratch);
  return {scratch.data(), std::max<int64_t>(1, v.sizes[1]), trans};
}

std::string describe(const char *name, const View2D &v) {
  std::ostringstream os;
  os << name << " " << formatList(v.sizes, 2) << " (strides "
     << formatList(v.strides, 2) << ")";
  return os.str();
}

bool fitsBlasInt(int64_t value) { return value >= 0 && value <= INT_MAX; }

/// c += op(a) * op(b); `call` names the entry point in messages.
void gemm(const char *call, const View2D &a, const View2D &b, const View2D &c,
          bool transA, bool transB) {
  int64_t m = transA ? a.sizes[1] : a.sizes[0];
  int64_t k = transA ? a.sizes[0] : a.sizes[1];
  int64_t kB = transB ? b.sizes[1] : b.sizes[0];
  int64_t n = transB ? b.sizes[0] : b.sizes[1];
  if (k != kB || c.sizes[0] != m || c.sizes[1] != n) {
    std::ostringstream os;
    os << "shapes do not agree: op(a) is " << m << "x" << k << ", op(b) is "
       << kB << "x" << n << ", c is " << c.sizes[0] << "x" << c.sizes[1]
       << " (trans_a " << transA << ", trans_b " << transB << "; "
       << describe("a", a) << ", " << describe("b", b) << ", "
       << describe("c", c) << ")";
    fail(call, os.str());
  }
  if (m == 0 || n == 0 || k == 0)
    return; // c += 0
  if (!fitsBlasInt(m) || !fitsBlasInt(n) || !fitsBlasInt(k))
    fail(call, "dimensions exceed the BLAS integer range (m " +
                   std::to_string(m) + ", n " + std::to_string(n) + ", k " +
                   std::to_string(k) + ")");

  std::vector<float> scratchA, scratchB, scratchC;
  BlasOperand opA = toOperand(a, transA, scratchA);
  BlasOperand opB = toOperand(b, transB, scratchB);
  if (!fitsBlasInt(opA.ld) || !fitsBlasInt(opB.ld))
    fail(call, "leading dimension exceeds the BLAS integer range");
  auto blasTrans = [](bool t) { return t ? CblasTrans : CblasNoTrans; };

  Layout cLayout = layoutOf(c);
  if (cLayout == Layout::ColumnMajor && fitsBlasInt(columnMajorLd(c))) {
    // c is the transpose of a row-major n x m matrix: c^T += op(b)^T op(a)^T.
    cblas_sgemm(CblasRowMajor, blasTrans(!opB.trans), blasTrans(!opA.trans),
                n, m, k, 1.0f, opB.data, opB.ld, opA.data, opA.ld, 1.0f,
                c.data, columnMajorLd(c));
    return;
  }
  if (cLayout == Layout::RowMajor && fitsBlasInt(rowMajorLd(c))) {
    cblas_sgemm(CblasRowMajor, blasTrans(opA.trans), blasTrans(opB.trans), m,
                n, k, 1.0f, opA.data, opA.ld, opB.data, opB.ld, 1.0f, c.data,
                rowMajorLd(c));
    return;
  }
  // Accumulate into a contiguous copy of c and write it back.
  copyToContiguous(c, scratchC);
  cblas_sgemm(CblasRowMajor, blasTrans(opA.trans), blasTrans(opB.trans), m, n,
              k, 1.0f, opA.data, opA.ld, opB.data, opB.ld, 1.0f,
              scratchC.data(), n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c.data[i * c.strides[0] + j * c.strides[1]] = scratchC[i * n + j];
}

template <typename Memref>
void checkDescriptor(const char *call, const char *name, const Memref *m) {
  if (!m)
    fail(call, std::string("descriptor of ") + name + " is null");
  constexpr int rank = sizeof(m->sizes) / sizeof(m->sizes[0]);
  for (int i = 0; i < rank; ++i)
    if (m->sizes[i] < 0)
      fail(call, std::string(name) + " has a negative size " +
                     formatList(m->sizes, rank));
  if (!m->aligned) {
    bool empty = false;
    for (int i = 0; i < rank; ++i)
      empty |= m->sizes[i] == 0;
    if (!empty)
      fail(call, std::string(name) + " has a null data pointer");
  }
}

View2D view(const tprt_memref2d_f32 *m) {
  return {m->aligned + m->offset,
          {m->sizes[0], m->sizes[1]},
          {m->strides[0], m->strides[1]}};
}

/// Matrix `i` of a batch.
View2D view(const tprt_memref3d_f32 *m, int64_t i) {
  return {m->aligned + m->offset + i * m->strides[0],
          {m->sizes[1], m->sizes[2]},
          {m->strides[1], m->strides[2]}};
}

void count(double flops, double seconds) {
  tprt_counters &c = state().counters;
  ++c.gemm_calls;
  c.gemm_flops += flops;
  c.gemm_seconds += seconds;
}

double flopsOf(const View2D &a, const View2D &c, bool transA) {
  double k = static_cast<double>(transA ? a.sizes[0] : a.sizes[1]);
  return 2.0 * static_cast<double>(c.sizes[0]) *
         static_cast<double>(c.sizes[1]) * k;
}

} // namespace

extern "C" void _mlir_ciface_tprt_matmul_f32(tprt_memref2d_f32 *a,
                                             tprt_memref2d_f32 *b,
                                             tprt_memref2d_f32 *c,
                                             int64_t trans_a,
                                             int64_t trans_b) {
  const char *call = "matmul_f32";
  checkDescriptor(call, "a", a);
  checkDescriptor(call, "b", b);
  checkDescriptor(call, "c", c);
  double start = now();
  View2D va = view(a), vb = view(b), vc = view(c);
  gemm(call, va, vb, vc, trans_a != 0, trans_b != 0);
  count(flopsOf(va, vc, trans_a != 0), now() - start);
}

extern "C" void _mlir_ciface_tprt_batch_matmul_f32(tprt_memref3d_f32 *a,
                                                   tprt_memref3d_f32 *b,
                                                   tprt_memref3d_f32 *c,
                                                   int64_t trans_a,
                                                   int64_t trans_b) {
  const char *call = "batch_matmul_f32";
  checkDescriptor(call, "a", a);
  checkDescriptor(call, "b", b);
  checkDescriptor(call, "c", c);
  int64_t batch = c->sizes[0];
  if (a->sizes[0] != batch || b->sizes[0] != batch)
    fail(call, "batch sizes do not agree: a " + formatList(a->sizes, 3) +
                   ", b " + formatList(b->sizes, 3) + ", c " +
                   formatList(c->sizes, 3));
  double start = now();
  double flops = 0;
  for (int64_t i = 0; i < batch; ++i) {
    View2D va = view(a, i), vb = view(b, i), vc = view(c, i);
    gemm(call, va, vb, vc, trans_a != 0, trans_b != 0);
    flops += flopsOf(va, vc, trans_a != 0);
  }
  count(flops, now() - start);
}

//===- Gemm.cpp - matmul entry points on CBLAS ----------------------------===//
//
// c = op(a) * op(b) (+ c when accumulating) on fp32 memref views. Each operand
// view is handed to cblas_sgemm(CblasRowMajor) as it lies in memory when it can
// be: inner stride 1 is a row-major matrix (ld = strides[0]); strides[0] == 1
// is the transpose of a row-major matrix (flip the transposition, ld =
// strides[1]). Any other view (negative, zero or two non-unit strides) is
// copied to a contiguous temporary first. A decode step's few rows of c take
// a matrix-vector product (one row: gemv()), register tiles over b (2-14
// rows into a row-major c: TiledRows.h) or blocks of b (2-14 rows otherwise:
// smallM()); the runtime's own kernels only with one BLAS thread.
//
//===----------------------------------------------------------------------===//

#include "Gemv.h"
#include "Panels.h"
#include "RuntimeState.h"
#include "TiledRows.h"
#include "Views.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <vector>

using namespace tprt::detail;
using namespace tprt::common;

// Compiled code reads a panels weight's elements where the loader put them.
static_assert(kPanelCols == TPRT_PANEL_COLS, "the panel width is ABI");

namespace {

/// What cblas_sgemm takes for one operand.
struct BlasOperand {
  const float *data;
  int64_t ld;
  bool trans;
};

/// Copies a view into `storage` as a contiguous row-major matrix.
void copyToContiguous(const MatrixView &v, std::vector<float> &storage) {
  storage.resize(static_cast<size_t>(v.sizes[0] * v.sizes[1]));
  for (int64_t i = 0; i < v.sizes[0]; ++i)
    for (int64_t j = 0; j < v.sizes[1]; ++j)
      storage[i * v.sizes[1] + j] = v.data[i * v.strides[0] + j * v.strides[1]];
}

/// op(v) as a BLAS operand; uses `scratch` when the view must be copied.
BlasOperand toOperand(const MatrixView &v, bool trans,
                      std::vector<float> &scratch) {
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

/// The runtime's own kernels (all on one thread) run only where OpenBLAS
/// has one thread too (TPRT_BLAS_THREADS); with more, every product is
/// OpenBLAS's.
bool ownKernels() { return state().blasThreads == 1; }

bool fitsBlasInt(int64_t value) { return value >= 0 && value <= INT_MAX; }

/// c = op(a) * op(b) + beta c for a single row of c (m = 1: a decode step's
/// token) as a matrix-vector product on op(b), which reads the weight once
/// (OpenBLAS's sgemm before 0.3.27 packs all of b for one row, reading it
/// twice). With ownKernels() and where the row of a and c are contiguous, b
/// stored [n, k] takes dotRows and b stored [k, n] combineRows (Gemv.h) when
/// its rows are short enough, prefetching the next product's b `ahead`
/// floats further (0: none), everything else cblas_sgemv. False (nothing
/// done) where a stride does not fit.
bool gemv(const MatrixView &c, const BlasOperand &opA, const BlasOperand &opB,
          int64_t n, int64_t k, float beta, int64_t ahead) {
  // op(a)'s row: contiguous unless a is stored as a column (transposed).
  int64_t incA = opA.trans ? opA.ld : 1;
  int64_t incC = c.sizes[1] == 1 ? 1 : c.strides[1];
  if (ownKernels() && (incA == 1 || k == 1) && incC == 1 &&
      (opB.trans
           ? dotRows(opB.data, opB.ld, opA.data, c.data, n, k, beta != 0, ahead)
           : combineRows(opB.data, opB.ld, opA.data, c.data, n, k, beta != 0,
                         ahead)))
    return true;
  if (!fitsBlasInt(incA) || incA == 0 || !fitsBlasInt(incC) || incC == 0)
    return false;
  // c may be fresh memory: NaN patterns there must not survive a scaling
  // by beta = 0.
  if (beta == 0)
    for (int64_t j = 0; j < n; ++j)
      c.data[j * incC] = 0;
  // c^T = op(b)^T a^T: b stored [k, n] (not transposed) is read transposed.
  cblas_sgemv(CblasRowMajor, opB.trans ? CblasNoTrans : CblasTrans,
              opB.trans ? n : k, opB.trans ? k : n, 1.0f, opB.data, opB.ld,
              opA.data, incA, beta, c.data, incC);
  return true;
}

/// The most rows of c that smallM() takes: from 9 to 14 rows it still ran
/// 1.4-1.9x faster than one sgemm at GPT-2-small's shapes, at 16 by 1.1-1.5x
/// and on a busy machine sometimes slower (docs/bench-small-m-gemm.md).
constexpr int64_t kMaxSmallM = 14;

/// Loads `rows` rows of `cols` floats (`ld` apart), one float per cache line,
/// in address order. OpenBLAS packs b a 64-byte column strip at a time down
/// many rows, each row its own stream from DRAM, which ran at about half the
/// streaming rate here; read in address order first, the block streams in and
/// the packing finds it in the L2 (at m = 8, 1.0-1.4x faster than the same
/// blocks without it).
void touch(const float *data, int64_t rows, int64_t cols, int64_t ld) {
  constexpr int64_t floatsPerLine = 64 / sizeof(float);
  float sum = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; j += floatsPerLine)
      sum += data[i * ld + j];
  volatile float sink = sum;
  (void)sink;
}

/// c = op(a) * op(b) + beta c for a few rows of c (a decode step's batch),
/// over blocks of whole rows of b as stored, each read from DRAM by touch()
/// then multiplied by one sgemm. One sgemm on all of b packs it straight from
/// DRAM (see touch()) at a third to a half of the streaming rate, and with a
/// few rows of c that read is the whole cost. False (nothing done) where c
/// is neither row- nor column-major.
bool smallM(const MatrixView &c, const BlasOperand &opA, const BlasOperand &opB,
            int64_t m, int64_t n, int64_t k, float beta) {
  Layout cLayout = layoutOf(c);
  if (cLayout == Layout::Other)
    return false;
  bool rowMajorC = cLayout == Layout::RowMajor;
  int64_t ldc = rowMajorC ? rowMajorLd(c) : columnMajorLd(c);
  if (!fitsBlasInt(ldc))
    return false;
  auto blasTrans = [](bool t) { return t ? CblasTrans : CblasNoTrans; };
  // c[:, 0:cols] (+)= a' b' for a' the columns of op(a) and b' the rows of
  // op(b) given; a column-major c is computed as c^T = b'^T a'^T.
  auto product = [&](int64_t cols, int64_t depth, const float *pa,
                     const float *pb, float blockBeta, float *pc) {
    if (rowMajorC)
      cblas_sgemm(CblasRowMajor, blasTrans(opA.trans), blasTrans(opB.trans), m,
                  cols, depth, 1.0f, pa, opA.ld, pb, opB.ld, blockBeta, pc,
                  ldc);
    else
      cblas_sgemm(CblasRowMajor, blasTrans(!opB.trans), blasTrans(!opA.trans),
                  cols, m, depth, 1.0f, pb, opB.ld, pa, opA.ld, blockBeta, pc,
                  ldc);
  };
  // b as stored is row-major: [k, n] (op(b) = b) or [n, k] (op(b) = b^T).
  int64_t storedRows = opB.trans ? n : k, storedCols = opB.trans ? k : n;
  int64_t blockRows = std::max<int64_t>(
      1, blockBytes() / (storedCols * int64_t(sizeof(float))));
  for (int64_t r = 0; r < storedRows; r += blockRows) {
    int64_t rows = std::min(blockRows, storedRows - r);
    const float *block = opB.data + r * opB.ld;
    touch(block, rows, storedCols, opB.ld);
    if (opB.trans) {
      // Rows r.. of b are columns r.. of c.
      product(rows, k, opA.data, block, beta,
              c.data + r * (rowMajorC ? 1 : ldc));
    } else {
      // Rows r.. of b are the terms r.. of the sum: the first block scales
      // c by beta, the others add to it.
      const float *aColumns = opA.data + (opA.trans ? r * opA.ld : r);
      product(n, rows, aColumns, block, r == 0 ? beta : 1.0f, c.data);
    }
  }
  return true;
}

/// c = op(a) * op(b) + beta c (beta 0 or 1); `call` names the entry point in
/// messages. `nextB`: where the b of the next product of a batch lies, in
/// floats from b (0: none), for the one-row kernels to prefetch.
void gemm(const char *call, const MatrixView &a, const MatrixView &b,
          const MatrixView &c, bool transA, bool transB, float beta,
          int64_t nextB = 0) {
  auto [m, n, k] = gemmShape(call, a, b, c, transA, transB);
  if (m == 0 || n == 0 || k == 0)
    return; // c += 0 (k = 0 without accumulation is refused by the caller)
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

  // A b copied into scratch (neither row- nor column-major) has no next.
  int64_t ahead = opB.data == b.data ? nextB : 0;
  if (m == 1 && gemv(c, opA, opB, n, k, beta, ahead))
    return;
  if (ownKernels() && layoutOf(c) == Layout::RowMajor &&
      tiledRows(opA.data, opA.trans ? 1 : opA.ld, opA.trans ? opA.ld : 1,
                opB.data, opB.ld, opB.trans, c.data, rowMajorLd(c), m, n, k,
                beta != 0))
    return;
  if (m <= kMaxSmallM && smallM(c, opA, opB, m, n, k, beta))
    return;
  Layout cLayout = layoutOf(c);
  if (cLayout == Layout::ColumnMajor && fitsBlasInt(columnMajorLd(c))) {
    // c is the transpose of a row-major n x m matrix: c^T += op(b)^T op(a)^T.
    cblas_sgemm(CblasRowMajor, blasTrans(!opB.trans), blasTrans(!opA.trans), n,
                m, k, 1.0f, opB.data, opB.ld, opA.data, opA.ld, beta, c.data,
                columnMajorLd(c));
    return;
  }
  if (cLayout == Layout::RowMajor && fitsBlasInt(rowMajorLd(c))) {
    cblas_sgemm(CblasRowMajor, blasTrans(opA.trans), blasTrans(opB.trans), m, n,
                k, 1.0f, opA.data, opA.ld, opB.data, opB.ld, beta, c.data,
                rowMajorLd(c));
    return;
  }
  // Compute into a contiguous copy of c (of its values only when
  // accumulating) and write it back.
  if (beta != 0)
    copyToContiguous(c, scratchC);
  else
    scratchC.assign(static_cast<size_t>(m * n), 0.0f);
  cblas_sgemm(CblasRowMajor, blasTrans(opA.trans), blasTrans(opB.trans), m, n,
              k, 1.0f, opA.data, opA.ld, opB.data, opB.ld, beta,
              scratchC.data(), n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c.data[i * c.strides[0] + j * c.strides[1]] = scratchC[i * n + j];
}

/// Matrix `i` of a batch.
MatrixView view(const tprt_memref3d_f32 *m, int64_t i) {
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

double flopsOf(const MatrixView &a, const MatrixView &c, bool transA) {
  double k = static_cast<double>(transA ? a.sizes[0] : a.sizes[1]);
  return 2.0 * static_cast<double>(c.sizes[0]) *
         static_cast<double>(c.sizes[1]) * k;
}

} // namespace

extern "C" void _mlir_ciface_tprt_matmul_f32(tprt_memref2d_f32 *a,
                                             tprt_memref2d_f32 *b,
                                             tprt_memref2d_f32 *c,
                                             int64_t trans_a, int64_t trans_b,
                                             int64_t accumulate) {
  const char *call = "matmul_f32";
  checkGemmDescriptors(call, a, b, c, trans_a, accumulate);
  double start = now();
  MatrixView va = matrixView(a), vb = matrixView(b), vc = matrixView(c);
  gemm(call, va, vb, vc, trans_a != 0, trans_b != 0, accumulate ? 1.0f : 0.0f);
  count(flopsOf(va, vc, trans_a != 0), now() - start);
}

extern "C" void
_mlir_ciface_tprt_matmul_panels_f32(tprt_memref2d_f32 *a, tprt_memref2d_f32 *b,
                                    tprt_memref2d_f32 *c, int64_t trans_a,
                                    int64_t trans_b, int64_t accumulate) {
  const char *call = "matmul_panels_f32";
  checkGemmDescriptors(call, a, b, c, trans_a, accumulate);
  double start = now();
  MatrixView va = matrixView(a), vb = matrixView(b), vc = matrixView(c);
  auto [m, n, k] = gemmShape(call, va, vb, vc, trans_a != 0, trans_b != 0);
  // The panels (of op(b)) fill the weight's buffer: a view of part of it
  // (or of another layout) is not in panels.
  int64_t rows = vb.sizes[0], cols = vb.sizes[1];
  bool whole = b->offset == 0 && (rows < 2 || vb.strides[0] == cols) &&
               (cols < 2 || vb.strides[1] == 1);
  if (!whole)
    fail(call, "b in panels must be a whole contiguous buffer, got offset " +
                   std::to_string(b->offset) + ", strides " +
                   formatList(vb.strides, 2));
  if (ownKernels() && layoutOf(vc) == Layout::RowMajor) {
    int64_t rowStride = trans_a ? va.strides[1] : va.strides[0];
    int64_t colStride = trans_a ? va.strides[0] : va.strides[1];
    multiplyPanels(va.data, rowStride, colStride, vb.data, vc.data,
                   rowMajorLd(vc), m, n, k, accumulate != 0);
  } else {
    // Several BLAS threads or a c the compiler does not pass: op(b) laid
    // out row-major again, then the path of any other product.
    std::vector<float> opB(size_t(k * n));
    unpackPanels(vb.data, k, n, opB.data(), n);
    gemm(call, va, {opB.data(), {k, n}, {n, 1}}, vc, trans_a != 0, false,
         accumulate ? 1.0f : 0.0f);
  }
  count(flopsOf(va, vc, trans_a != 0), now() - start);
}

extern "C" void
_mlir_ciface_tprt_batch_matmul_f32(tprt_memref3d_f32 *a, tprt_memref3d_f32 *b,
                                   tprt_memref3d_f32 *c, int64_t trans_a,
                                   int64_t trans_b, int64_t accumulate) {
  const char *call = "batch_matmul_f32";
  checkGemmDescriptors(call, a, b, c, trans_a, accumulate);
  int64_t batch = c->sizes[0];
  double start = now();
  double flops = 0;
  for (int64_t i = 0; i < batch; ++i) {
    MatrixView va = view(a, i), vb = view(b, i), vc = view(c, i);
    gemm(call, va, vb, vc, trans_a != 0, trans_b != 0, accumulate ? 1.0f : 0.0f,
         i + 1 < batch ? b->strides[0] : 0);
    flops += flopsOf(va, vc, trans_a != 0);
  }
  count(flops, now() - start);
}

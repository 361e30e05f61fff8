//===- Gemm.cpp - matmul entry points on cuBLAS ---------------------------===//
//
// c = op(a) * op(b) (+ c when accumulating) on fp32 or bf16 device memref
// views. cuBLAS is column-major; a
// row-major m x n matrix with leading dimension ld is, read column-major, its
// n x m transpose, so row-major c = op(a) op(b) is computed as column-major
// c^T = op(b)^T op(a)^T: cublasGemmEx(op_b, op_a, n, m, k, b, a, c). Each
// operand is classified as the CPU runtime does (../lib/Views.h): inner
// stride 1 is row-major (ld = strides[0]), strides[0] == 1 is the transpose
// of a row-major matrix (flip op, ld = strides[1]); any other view (two
// non-unit strides) is copied on the device into a contiguous temporary
// (and c copied back). Batches go to cublasGemmStridedBatchedEx with the
// batch stride strides[0]. Every call is asynchronous on the rank's stream;
// its time is measured with events and read by tprt_get_counters.
// TPRT_GEMM_LOG=FILE records every cuBLAS call (bench/gpu/gemm_peak.cu).
//
//===----------------------------------------------------------------------===//

#include "../lib/Views.h"
#include "CudaState.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

using namespace tprt::cuda;
using namespace tprt::common;

namespace {

/// A matrix, or a batch of matrices batchStride elements apart.
struct View : MatrixView {
  int64_t batch = 1;       // number of matrices
  int64_t batchStride = 0; // elements between matrices
};

struct Operand {
  const void *data;
  int64_t ld;
  bool trans;
  int64_t batchStride;
};

/// A stream-ordered device temporary, freed (stream-ordered) when destroyed.
using Scratch = DeviceBuffer<float>;

enum class Copy { In, AllocateOnly, Back };

/// Copies the strided view (every matrix of the batch) into `scratch`, as
/// contiguous row-major matrices (AllocateOnly: only allocates it, for a c
/// that is not read); Back copies scratch into the view.
void copyView(const char *call, const View &v, Scratch &scratch, Copy copy) {
  bool back = copy == Copy::Back;
  cudaStream_t s = state().stream();
  int64_t rows = v.sizes[0], cols = v.sizes[1];
  if (v.strides[0] <= 0 || v.strides[1] <= 0)
    fail(call, "views with zero or negative strides are not supported on "
               "the device (strides " +
                   formatList(v.strides, 2) + ")");
  if (!back) {
    void *pointer = nullptr;
    check(call,
          cudaMallocAsync(&pointer,
                          size_t(v.batch * rows * cols) * sizeof(float), s),
          "cudaMallocAsync");
    scratch = Scratch(static_cast<float *>(pointer), {s});
  }
  if (copy == Copy::AllocateOnly)
    return;
  for (int64_t b = 0; b < v.batch; ++b)
    for (int64_t i = 0; i < rows; ++i) {
      // Row i: `cols` elements `strides[1]` apart.
      float *strided = v.data + b * v.batchStride + i * v.strides[0];
      float *dense = scratch.get() + (b * rows + i) * cols;
      size_t pitch = size_t(v.strides[1]) * sizeof(float);
      cudaError_t rc =
          back ? cudaMemcpy2DAsync(strided, pitch, dense, sizeof(float),
                                   sizeof(float), size_t(cols),
                                   cudaMemcpyDeviceToDevice, s)
               : cudaMemcpy2DAsync(dense, sizeof(float), strided, pitch,
                                   sizeof(float), size_t(cols),
                                   cudaMemcpyDeviceToDevice, s);
      check(call, rc, "cudaMemcpy2DAsync");
    }
}

Operand toOperand(const char *call, const View &v, bool trans, Scratch &scratch,
                  cudaDataType_t type) {
  switch (layoutOf(v)) {
  case Layout::RowMajor:
    return {v.data, rowMajorLd(v), trans, v.batchStride};
  case Layout::ColumnMajor:
    return {v.data, columnMajorLd(v), !trans, v.batchStride};
  case Layout::Other:
    break;
  }
  if (type != CUDA_R_32F)
    fail(call, "bf16 operands must be row- or column-major views (strides " +
                   formatList(v.strides, 2) + ")");
  copyView(call, v, scratch, Copy::In);
  return {scratch.get(), std::max<int64_t>(1, v.sizes[1]), trans,
          v.sizes[0] * v.sizes[1]};
}

bool fitsInt(int64_t value) { return value >= 0 && value <= INT_MAX; }

/// Column-major C(m x n) = op(A) op(B) + beta C, every matrix of the batch.
void blasGemm(const char *call, bool transA, bool transB, int64_t m, int64_t n,
              int64_t k, const Operand &a, const Operand &b, float *c,
              int64_t ldc, int64_t strideC, int64_t batch, cudaDataType_t ab,
              float beta) {
  if (!fitsInt(m) || !fitsInt(n) || !fitsInt(k) || !fitsInt(a.ld) ||
      !fitsInt(b.ld) || !fitsInt(ldc) || !fitsInt(batch))
    fail(call, "dimensions exceed the cuBLAS integer range");
  // TPRT_GEMM_LOG=FILE: one line per cuBLAS call, for bench/gpu/gemm_peak.cu
  // to replay the model's exact calls.
  static FILE *log = [] {
    const char *path = std::getenv("TPRT_GEMM_LOG");
    return path && *path ? std::fopen(path, "w") : nullptr;
  }();
  if (log) {
    std::fprintf(
        log, "%s %lld %lld %lld %lld %d %d %lld %lld %lld %lld %lld %lld %d\n",
        ab == CUDA_R_32F ? "f32" : "bf16", (long long)batch, (long long)m,
        (long long)n, (long long)k, int(transA), int(transB), (long long)a.ld,
        (long long)b.ld, (long long)ldc, (long long)a.batchStride,
        (long long)b.batchStride, (long long)strideC, int(beta));
    std::fflush(log);
  }
  const float one = 1.0f;
  auto op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  cublasHandle_t h = state().blas();
  cublasStatus_t rc;
  if (batch == 1)
    rc = cublasGemmEx(h, op(transA), op(transB), int(m), int(n), int(k), &one,
                      a.data, ab, int(a.ld), b.data, ab, int(b.ld), &beta, c,
                      CUDA_R_32F, int(ldc), CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
  else
    rc = cublasGemmStridedBatchedEx(
        h, op(transA), op(transB), int(m), int(n), int(k), &one, a.data, ab,
        int(a.ld), a.batchStride, b.data, ab, int(b.ld), b.batchStride, &beta,
        c, CUDA_R_32F, int(ldc), strideC, int(batch), CUBLAS_COMPUTE_32F,
        CUBLAS_GEMM_DEFAULT);
  checkBlas(call, rc,
            batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx");
}

/// c = op(a) * op(b) + beta c (row-major logical views, every matrix of the
/// batch; beta 0 or 1).
void gemm(const char *call, const View &a, const View &b, const View &c,
          bool transA, bool transB, cudaDataType_t ab, float beta) {
  auto [m, n, k] = gemmShape(call, a, b, c, transA, transB);
  if (m == 0 || n == 0 || k == 0 || c.batch == 0)
    return;
  Scratch scratchA, scratchB, scratchC;
  Operand opA = toOperand(call, a, transA, scratchA, ab);
  Operand opB = toOperand(call, b, transB, scratchB, ab);
  switch (layoutOf(c)) {
  case Layout::RowMajor:
    // Column-major c^T (n x m) = op(b)^T op(a)^T.
    blasGemm(call, opB.trans, opA.trans, n, m, k, opB, opA, c.data,
             rowMajorLd(c), c.batchStride, c.batch, ab, beta);
    return;
  case Layout::ColumnMajor:
    // c is column-major m x n: c = op(a) op(b) directly, with a and b read
    // column-major (their transposes): flip each op.
    blasGemm(call, !opA.trans, !opB.trans, m, n, k, opA, opB, c.data,
             columnMajorLd(c), c.batchStride, c.batch, ab, beta);
    return;
  case Layout::Other:
    break;
  }
  copyView(call, c, scratchC, beta != 0 ? Copy::In : Copy::AllocateOnly);
  blasGemm(call, opB.trans, opA.trans, n, m, k, opB, opA, scratchC.get(), n,
           m * n, c.batch, ab, beta);
  copyView(call, c, scratchC, Copy::Back);
}

/// A bf16 view; `data` holds the bf16 pointer (only passed on to cuBLAS).
template <typename Memref> View bf16View(const Memref *m) {
  constexpr int rank = sizeof(m->sizes) / sizeof(m->sizes[0]);
  constexpr int r = rank - 2;
  View v{{reinterpret_cast<float *>(m->aligned + m->offset),
          {m->sizes[r], m->sizes[r + 1]},
          {m->strides[r], m->strides[r + 1]}}};
  if (rank == 3) {
    v.batch = m->sizes[0];
    v.batchStride = m->sizes[0] == 1 ? 0 : m->strides[0];
  }
  return v;
}

View view(const tprt_memref2d_f32 *m) { return {matrixView(m)}; }

View view(const tprt_memref3d_f32 *m) {
  return {{m->aligned + m->offset,
           {m->sizes[1], m->sizes[2]},
           {m->strides[1], m->strides[2]}},
          m->sizes[0],
          m->sizes[0] == 1 ? 0 : m->strides[0]};
}

/// Runs `body` between two events on the stream and counts the call.
template <typename Body> void timed(const char *call, double flops, Body body) {
  timedOnStream(call, &tprt_counters::gemm_seconds, body);
  State &s = state();
  ++s.counters.gemm_calls;
  s.counters.gemm_flops += flops;
}

double flopsOf(const View &a, const View &c, bool transA) {
  double k = double(transA ? a.sizes[0] : a.sizes[1]);
  return 2.0 * double(c.sizes[0]) * double(c.sizes[1]) * k * double(c.batch);
}

/// The four entry points: fp32 or bf16 operands, one matrix or a batch.
template <typename Operand, typename Result>
void matmul(const char *call, const Operand *a, const Operand *b,
            const Result *c, int64_t transA, int64_t transB,
            int64_t accumulate) {
  checkGemmDescriptors(call, a, b, c, transA, accumulate);
  constexpr bool bf16 = !std::is_same_v<Operand, Result>;
  View va, vb;
  if constexpr (bf16) {
    va = bf16View(a);
    vb = bf16View(b);
  } else {
    va = view(a);
    vb = view(b);
  }
  View vc = view(c);
  timed(call, flopsOf(va, vc, transA != 0), [&] {
    gemm(call, va, vb, vc, transA != 0, transB != 0,
         bf16 ? CUDA_R_16BF : CUDA_R_32F, accumulate ? 1.0f : 0.0f);
  });
}

} // namespace

extern "C" void _mlir_ciface_tprt_matmul_f32(tprt_memref2d_f32 *a,
                                             tprt_memref2d_f32 *b,
                                             tprt_memref2d_f32 *c,
                                             int64_t trans_a, int64_t trans_b,
                                             int64_t accumulate) {
  matmul("matmul_f32", a, b, c, trans_a, trans_b, accumulate);
}

extern "C" void
_mlir_ciface_tprt_batch_matmul_f32(tprt_memref3d_f32 *a, tprt_memref3d_f32 *b,
                                   tprt_memref3d_f32 *c, int64_t trans_a,
                                   int64_t trans_b, int64_t accumulate) {
  matmul("batch_matmul_f32", a, b, c, trans_a, trans_b, accumulate);
}

extern "C" void _mlir_ciface_tprt_matmul_bf16(tprt_memref2d_bf16 *a,
                                              tprt_memref2d_bf16 *b,
                                              tprt_memref2d_f32 *c,
                                              int64_t trans_a, int64_t trans_b,
                                              int64_t accumulate) {
  matmul("matmul_bf16", a, b, c, trans_a, trans_b, accumulate);
}

extern "C" void _mlir_ciface_tprt_batch_matmul_bf16(
    tprt_memref3d_bf16 *a, tprt_memref3d_bf16 *b, tprt_memref3d_f32 *c,
    int64_t trans_a, int64_t trans_b, int64_t accumulate) {
  matmul("batch_matmul_bf16", a, b, c, trans_a, trans_b, accumulate);
}

// gemm_peak: the best cuBLAS rate for the exact GEMM calls a compiled model
// makes, to compare with the rate inside the model (test/Cuda/device/gpu_check.sh).
//
//   TPRT_GEMM_LOG=gemms.txt mpirun -np 1 tp-run-cuda m.so ... --warmup 0 --iters 1
//   gemm_peak gemms.txt [--iters 20] [--json out.json]
//   gemm_peak gemms.txt --cold [--iters 20]
//
// Each log line (runtime/cuda/Gemm.cpp) is one cuBLAS call, column-major:
//   f32|bf16 batch m n k transA transB lda ldb ldc strideA strideB strideC beta
// (bf16: bf16 A and B, fp32 C, fp32 accumulation: tp-compile --dtype bf16;
// beta 1 accumulates into C, 0 overwrites it; absent: 1)
// Identical lines are timed once and weighted by their count. Each call is
// timed (CUDA events, after warm-up) with cublasGemmEx /
// cublasGemmStridedBatchedEx as the runtime issues it, in the runtime's
// math mode (fp32, no TF32) and input type, with CUBLAS_GEMM_DEFAULT and
// CUBLAS_GEMM_DEFAULT_TENSOR_OP, and the faster is kept. Also reported, for
// reference: the same shapes with TF32 and with bf16 inputs (fp32
// accumulation), which the fp32 model does not use.
//
// --cold: each call as a decode step makes it, its operands not in L2 (the
// iterations cycle through copies of them, twice the L2 in all): in the model's
// type only, cublasGemmEx as the runtime calls it against each algorithm
// cublasLt's heuristics offer for the same call (up to 16, the best kept),
// as the rate the operands are read at; and the sum over the calls with
// one output column (M = 1: a decode step's GEMMs).
//
// nvcc -O2 -arch=sm_90 -ccbin g++-12 gemm_peak.cu -lcublas -lcublasLt -o gemm_peak
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "gemm_peak: %s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

struct Call {
  long long bf16; // the model's input type: 0 fp32, 1 bf16
  long long batch, m, n, k;
  int ta, tb;
  long long lda, ldb, ldc, sa, sb, sc;
  long long beta;
  bool operator<(const Call &o) const {
    return std::memcmp(this, &o, sizeof(Call)) < 0;
  }
};

enum class Mode { F32, TF32, BF16 };

static size_t span(long long rows, long long cols, long long ld, int t,
                   long long stride, long long batch) {
  // column-major operand: op(X) rows x cols; stored (t ? cols x rows : rows x cols)
  long long storedCols = t ? rows : cols;
  return size_t((batch - 1) * stride + ld * storedCols);
}

/// The call as the runtime issues it (cublasGemmEx, or the strided-batched
/// form for a batch), on operands a, b and output d; fp32 out.
static cublasStatus_t gemmEx(cublasHandle_t h, const Call &c, const void *a,
                             const void *b, void *d, cudaDataType_t in,
                             cublasComputeType_t compute,
                             cublasGemmAlgo_t algo) {
  float one = 1.0f, beta = float(c.beta);
  auto op = [](int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  if (c.batch == 1)
    return cublasGemmEx(h, op(c.ta), op(c.tb), int(c.m), int(c.n), int(c.k),
                        &one, a, in, int(c.lda), b, in, int(c.ldb), &beta, d,
                        CUDA_R_32F, int(c.ldc), compute, algo);
  return cublasGemmStridedBatchedEx(
      h, op(c.ta), op(c.tb), int(c.m), int(c.n), int(c.k), &one, a, in,
      int(c.lda), c.sa, b, in, int(c.ldb), c.sb, &beta, d, CUDA_R_32F,
      int(c.ldc), c.sc, int(c.batch), compute, algo);
}

/// Milliseconds per call of `run(i)` for i in [0, iters), by CUDA events.
template <typename Run> static double eventMs(Run run, int iters) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < iters; ++i)
    run(size_t(i));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return double(ms) / iters;
}

/// Milliseconds per call, best of the algorithms.
static double timeCall(cublasHandle_t h, const Call &c, Mode mode, int iters,
                       void *a, void *b, void *d) {
  cublasSetMathMode(h, mode == Mode::TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                          : CUBLAS_DEFAULT_MATH);
  cudaDataType_t in = mode == Mode::BF16 ? CUDA_R_16BF : CUDA_R_32F;
  cublasComputeType_t compute =
      mode == Mode::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  double best = 1e30;
  for (cublasGemmAlgo_t algo :
       {CUBLAS_GEMM_DEFAULT, CUBLAS_GEMM_DEFAULT_TENSOR_OP}) {
    auto run = [&](size_t) { return gemmEx(h, c, a, b, d, in, compute, algo); };
    if (run(0) != CUBLAS_STATUS_SUCCESS)
      continue;
    for (int i = 0; i < 3; ++i)
      run(0);
    best = std::min(best, eventMs(run, iters));
  }
  return best;
}

/// Copies of a call's operands, twice the L2 cache in all (at least 64 MiB),
/// in two pools: cycling through them, no call finds its operands in L2.
struct ColdOperands {
  char *poolA = nullptr, *poolB = nullptr;
  size_t strideA = 0, strideB = 0, copies = 0;
  void *d = nullptr;
  size_t bytesAB = 0; // what one call reads of A and B
  ColdOperands(const Call &c, size_t elementBytes) {
    auto aligned = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
    size_t sa = span(c.m, c.k, c.lda, c.ta, c.sa, c.batch) * elementBytes;
    size_t sb = span(c.k, c.n, c.ldb, c.tb, c.sb, c.batch) * elementBytes;
    size_t sd = size_t((c.batch - 1) * c.sc + c.ldc * c.n) * 4;
    bytesAB = sa + sb;
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    size_t footprint = std::max<size_t>(2 * size_t(l2), 64u << 20);
    strideA = aligned(sa);
    strideB = aligned(sb);
    copies = footprint / (strideA + strideB) + 1;
    CHECK(cudaMalloc(&poolA, copies * strideA));
    CHECK(cudaMalloc(&poolB, copies * strideB));
    CHECK(cudaMemset(poolA, 0, copies * strideA));
    CHECK(cudaMemset(poolB, 0, copies * strideB));
    CHECK(cudaMalloc(&d, sd));
    CHECK(cudaMemset(d, 0, sd));
  }
  void *a(size_t i) const { return poolA + i * strideA; }
  void *b(size_t i) const { return poolB + i * strideB; }
  ~ColdOperands() {
    cudaFree(poolA);
    cudaFree(poolB);
    cudaFree(d);
  }
};

/// Milliseconds per call of `run(i)` (i: which copy), after warm-up on the
/// first copies; the timed calls take the next ones, the longest untouched.
template <typename Run> double timeCold(Run run, size_t copies, int iters) {
  const size_t warm = std::min<size_t>(copies, 4);
  for (size_t i = 0; i < warm; ++i)
    if (!run(i))
      return -1;
  return eventMs([&](size_t i) { return run((warm + i) % copies); }, iters);
}

struct ColdTimes {
  double gemmEx, bestLt; // milliseconds per call (bestLt < 0: none ran)
  size_t bytes;          // of A and B, read by one call
};

/// The call in its own type with cold operands: cublasGemmEx as the runtime
/// issues it, and the best of cublasLt's heuristic algorithms.
static ColdTimes coldCall(cublasHandle_t h, cublasLtHandle_t lt,
                                          const Call &c, int iters,
                                          void *workspace, size_t wsBytes) {
  cudaDataType_t in = c.bf16 ? CUDA_R_16BF : CUDA_R_32F;
  ColdOperands ops(c, c.bf16 ? 2 : 4);
  float one = 1.0f, beta = float(c.beta);
  auto op = [](int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  double gemmExMs = timeCold(
      [&](size_t i) {
        return gemmEx(h, c, ops.a(i), ops.b(i), ops.d, in, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
      },
      ops.copies, iters);

  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasOperation_t ta = op(c.ta), tb = op(c.tb);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                 sizeof ta);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                 sizeof tb);
  auto layout = [&](cudaDataType_t type, long long rows, long long cols,
                    long long ld, long long stride) {
    cublasLtMatrixLayout_t l;
    cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld);
    if (c.batch > 1) {
      int count = int(c.batch);
      cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                       &count, sizeof count);
      cublasLtMatrixLayoutSetAttribute(
          l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
          sizeof stride);
    }
    return l;
  };
  cublasLtMatrixLayout_t la = layout(in, c.ta ? c.k : c.m, c.ta ? c.m : c.k,
                                     c.lda, c.sa);
  cublasLtMatrixLayout_t lb = layout(in, c.tb ? c.n : c.k, c.tb ? c.k : c.n,
                                     c.ldb, c.sb);
  cublasLtMatrixLayout_t lc = layout(CUDA_R_32F, c.m, c.n, c.ldc, c.sc);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes);
  cublasLtMatmulHeuristicResult_t results[16];
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 16, results,
                                 &found);
  double best = -1;
  for (int r = 0; r < found; ++r) {
    double t = timeCold(
        [&](size_t i) {
          return cublasLtMatmul(lt, desc, &one, ops.a(i), la, ops.b(i), lb,
                                &beta, ops.d, lc, ops.d, lc, &results[r].algo,
                                workspace, wsBytes,
                                0) == CUBLAS_STATUS_SUCCESS;
        },
        ops.copies, iters);
    if (t > 0 && (best < 0 || t < best))
      best = t;
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  return {gemmExMs, best, ops.bytesAB};
}

/// --cold: prints each call's read rate, cublasGemmEx against cublasLt's best.
static int coldReport(cublasHandle_t h, const std::map<Call, int> &calls,
                      int iters) {
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gemm_peak: cublasLtCreate failed\n");
    return 1;
  }
  size_t wsBytes = 32u << 20;
  void *workspace;
  CHECK(cudaMalloc(&workspace, wsBytes));
  double exOne = 0, ltOne = 0, bytesOne = 0;
  for (auto &[c, count] : calls) {
    auto [ex, best, bytes] = coldCall(h, lt, c, iters, workspace, wsBytes);
    double gb = double(bytes) / 1e9;
    std::printf("gemm_peak --cold: %3d x %s batch %lld m %lld n %lld k %lld: "
                "cublasGemmEx %.1f us (%.2f TB/s), best cublasLt %.1f us "
                "(%.2f TB/s)\n",
                count, c.bf16 ? "bf16" : "f32", c.batch, c.m, c.n, c.k,
                ex * 1e3, gb / ex, best * 1e3, best > 0 ? gb / best : 0.0);
    if (c.n == 1 && ex > 0) {
      exOne += ex * count;
      ltOne += (best > 0 ? std::min(best, ex) : ex) * count;
      bytesOne += gb * count;
    }
  }
  std::printf("gemm_peak --cold: the calls with one output column (M = 1), "
              "all of the log's: cublasGemmEx %.3f ms (%.2f TB/s), best "
              "cublasLt %.3f ms (%.2f TB/s)\n",
              exOne, exOne > 0 ? bytesOne / exOne : 0.0, ltOne,
              ltOne > 0 ? bytesOne / ltOne : 0.0);
  cudaFree(workspace);
  cublasLtDestroy(lt);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: gemm_peak GEMM_LOG [--iters N] [--json FILE | --cold]\n");
    return 2;
  }
  int iters = 20;
  const char *json = nullptr;
  bool cold = false;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cold"))
      cold = true;
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
  }
  std::map<Call, int> calls;
  std::ifstream in(argv[1]);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    std::string dtype;
    Call c{};
    if (!(is >> dtype) || (dtype != "f32" && dtype != "bf16"))
      continue;
    c.bf16 = dtype == "bf16";
    if (!(is >> c.batch >> c.m >> c.n >> c.k >> c.ta >> c.tb >>
          c.lda >> c.ldb >> c.ldc >> c.sa >> c.sb >> c.sc))
      continue;
    if (!(is >> c.beta))
      c.beta = 1;
    ++calls[c];
  }
  if (calls.empty()) {
    std::fprintf(stderr, "gemm_peak: no GEMM calls in %s\n", argv[1]);
    return 1;
  }
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gemm_peak: cublasCreate failed\n");
    return 1;
  }
  if (cold) {
    int rc = coldReport(h, calls, iters);
    cublasDestroy(h);
    return rc;
  }
  double flops = 0, ms[3] = {0, 0, 0}, same = 0;
  bool anyBf16 = false, anyF32 = false;
  std::ostringstream shapes;
  for (auto &[c, count] : calls) {
    size_t sa = span(c.m, c.k, c.lda, c.ta, c.sa, c.batch);
    size_t sb = span(c.k, c.n, c.ldb, c.tb, c.sb, c.batch);
    size_t sd = size_t((c.batch - 1) * c.sc + c.ldc * c.n);
    void *a, *b, *d;
    CHECK(cudaMalloc(&a, sa * 4));
    CHECK(cudaMalloc(&b, sb * 4));
    CHECK(cudaMalloc(&d, sd * 4));
    CHECK(cudaMemset(a, 0, sa * 4));
    CHECK(cudaMemset(b, 0, sb * 4));
    CHECK(cudaMemset(d, 0, sd * 4));
    double f = 2.0 * c.batch * c.m * c.n * c.k;
    double t[3];
    for (int mode = 0; mode < 3; ++mode)
      t[mode] = timeCall(h, c, Mode(mode), iters, a, b, d);
    flops += f * count;
    for (int mode = 0; mode < 3; ++mode)
      ms[mode] += t[mode] * count;
    same += t[c.bf16 ? 2 : 0] * count;
    (c.bf16 ? anyBf16 : anyF32) = true;
    shapes << (shapes.tellp() ? ",\n" : "") << "    {\"batch\": " << c.batch
           << ", \"m\": " << c.m << ", \"n\": " << c.n << ", \"k\": " << c.k
           << ", \"beta\": " << c.beta << ", \"count\": " << count
           << ", \"f32_ms\": " << t[0]
           << ", \"f32_tflops\": " << f / t[0] / 1e9 << "}";
    std::printf("gemm_peak: %3d x batch %lld m %lld n %lld k %lld beta %lld: "
                "f32 %.2f TFLOP/s, tf32 %.2f, bf16 %.2f\n",
                count, c.batch, c.m, c.n, c.k, c.beta, f / t[0] / 1e9,
                f / t[1] / 1e9, f / t[2] / 1e9);
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
  }
  double rate[3];
  for (int mode = 0; mode < 3; ++mode)
    rate[mode] = flops / (ms[mode] * 1e-3);
  const char *dtype = anyBf16 && anyF32 ? "mixed" : anyBf16 ? "bf16" : "f32";
  double sameRate = flops / (same * 1e-3);
  std::printf("gemm_peak: all %g GFLOP per forward: best in the model's type "
              "(%s) %.2f TFLOP/s (%.3f ms); f32 %.2f, tf32 %.2f, bf16 %.2f\n",
              flops / 1e9, dtype, sameRate / 1e12, same, rate[0] / 1e12,
              rate[1] / 1e12, rate[2] / 1e12);
  if (json) {
    std::FILE *f = std::fopen(json, "w");
    if (!f)
      return 1;
    std::fprintf(f,
                 "{\n  \"dtype\": \"%s\",\n  \"same_dtype_tflops\": %.6g,\n"
                 "  \"flops_per_forward\": %.6g,\n  \"f32_s\": %.6g,\n"
                 "  \"f32_tflops\": %.6g,\n  \"tf32_tflops\": %.6g,\n"
                 "  \"bf16_tflops\": %.6g,\n  \"shapes\": [\n%s\n  ]\n}\n",
                 dtype, sameRate / 1e12, flops, ms[0] * 1e-3, rate[0] / 1e12,
                 rate[1] / 1e12,
                 rate[2] / 1e12, shapes.str().c_str());
    std::fclose(f);
  }
  cublasDestroy(h);
  return 0;
}

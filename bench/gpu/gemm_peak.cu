// gemm_peak: the best cuBLAS rate for the exact GEMM calls a compiled model
// makes, to compare with the rate inside the model (test/Cuda/device/gpu_check.sh).
//
//   TPRT_GEMM_LOG=gemms.txt mpirun -np 1 tp-run-cuda m.so ... --warmup 0 --iters 1
//   gemm_peak gemms.txt [--iters 20] [--json out.json]
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
// nvcc -O2 -arch=sm_90 -ccbin g++-12 gemm_peak.cu -lcublas -o gemm_peak
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

/// Milliseconds per call, best of the algorithms.
static double timeCall(cublasHandle_t h, const Call &c, Mode mode, int iters,
                       void *a, void *b, void *d) {
  cublasSetMathMode(h, mode == Mode::TF32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                          : CUBLAS_DEFAULT_MATH);
  cudaDataType_t in = mode == Mode::BF16 ? CUDA_R_16BF : CUDA_R_32F;
  cudaDataType_t out = CUDA_R_32F; // the runtime's c is fp32 in both modes
  cublasComputeType_t compute =
      mode == Mode::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float one = 1.0f, beta = float(c.beta);
  auto op = [](int t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  double best = 1e30;
  for (cublasGemmAlgo_t algo :
       {CUBLAS_GEMM_DEFAULT, CUBLAS_GEMM_DEFAULT_TENSOR_OP}) {
    auto run = [&] {
      if (c.batch == 1)
        return cublasGemmEx(h, op(c.ta), op(c.tb), int(c.m), int(c.n),
                            int(c.k), &one, a, in, int(c.lda), b, in,
                            int(c.ldb), &beta, d, out, int(c.ldc), compute,
                            algo);
      return cublasGemmStridedBatchedEx(
          h, op(c.ta), op(c.tb), int(c.m), int(c.n), int(c.k), &one, a, in,
          int(c.lda), c.sa, b, in, int(c.ldb), c.sb, &beta, d, out, int(c.ldc),
          c.sc, int(c.batch), compute, algo);
    };
    if (run() != CUBLAS_STATUS_SUCCESS)
      continue;
    for (int i = 0; i < 3; ++i)
      run();
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < iters; ++i)
      run();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, double(ms) / iters);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  return best;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gemm_peak GEMM_LOG [--iters N] [--json FILE]\n");
    return 2;
  }
  int iters = 20;
  const char *json = nullptr;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
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

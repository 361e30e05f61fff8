// Single-core peak of fp32 multiply-adds: the arithmetic floor of a decode
// step at batch > 1, for the report of bench/cpu/generate.sh.
//
//   clang-22 -O2 -march=native bench/cpu/fma_peak.c -o fma_peak
//   ./fma_peak [JSON]
//
// 12 independent chains of vector multiply-adds (more than the FMA units'
// latency times their count, so that no chain waits on itself; few enough
// for AVX2's 16 registers with the two operands), on vectors
// as wide as -march=native allows: 16 floats with AVX-512, 8 with AVX2.
// OpenBLAS's sgemm runs at most at its own kernels' width (Haswell's, AVX2,
// where OPENBLAS_CORETYPE=Haswell), which is why the report gives both.
// Prints GFLOP/s (2 per multiply-add and lane) of each of 5 passes and
// writes {"lanes":..., "passes":[...], "max_gflops":...} to JSON.
#include <stdio.h>
#include <time.h>

#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif

typedef float vec __attribute__((vector_size(LANES * sizeof(float))));

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  enum { kChains = 12, kPasses = 5 };
  const long iters = 50000000;
  vec acc[kChains], x, y;
  for (int i = 0; i < LANES; ++i) {
    x[i] = 0.999999f;
    y[i] = 1e-7f;
  }
  for (int c = 0; c < kChains; ++c)
    acc[c] = y * (float)c;
  double gflops[kPasses], best = 0;
  for (int p = 0; p < kPasses; ++p) {
    double start = now();
    for (long it = 0; it < iters; ++it) {
      for (int c = 0; c < kChains; ++c)
        acc[c] = acc[c] * x + y;
      // Keeps the chains in registers and the loop from being folded.
      __asm__ volatile(""
                       : "+x"(acc[0]), "+x"(acc[1]), "+x"(acc[2]),
                         "+x"(acc[3]));
    }
    gflops[p] = 2.0 * LANES * kChains * (double)iters / (now() - start) / 1e9;
    best = gflops[p] > best ? gflops[p] : best;
    printf("pass %d: %.1f GFLOP/s\n", p, gflops[p]);
  }
  float sink = 0;
  for (int c = 0; c < kChains; ++c)
    for (int i = 0; i < LANES; ++i)
      sink += acc[c][i];
  if (argc > 1) {
    FILE *f = fopen(argv[1], "w");
    if (!f) {
      perror(argv[1]);
      return 1;
    }
    fprintf(f, "{\"lanes\": %d, \"passes\": [", LANES);
    for (int p = 0; p < kPasses; ++p)
      fprintf(f, "%s%.2f", p ? ", " : "", gflops[p]);
    fprintf(f, "], \"max_gflops\": %.2f, \"sink\": %g}\n", best, sink);
    fclose(f);
  }
  return 0;
}

// Single-core memory read bandwidth: what a memory-bound decode step can
// stream at most, for the bound of bench/cpu/generate.sh.
//
//   clang-22 -O3 -march=native -ffast-math bench/cpu/read_bw.c -o read_bw
//   ./read_bw MIB PASSES 4k|huge [JSON]        (e.g. 1024 10 huge)
//
// Sums a float32 array of MIB MiB (far larger than the 32 MiB L3 here) PASSES
// times, each pass timed alone, after one untimed pass (the array is written
// first, so its pages are real pages, not the shared zero page).
// Pages: "4k" is what plain malloc gives a large buffer (tp-run's weights and
// caches come from aligned_alloc); "huge" asks for transparent huge pages
// (2 MiB aligned, madvise(MADV_HUGEPAGE) before the first touch;
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" here) and reports
// how much of the array got them (AnonHugePages). In this VM the 4 KiB pages'
// TLB misses cost from a few percent (idle) to half the bandwidth (both cores
// busy), so both are measured; the bound takes the larger.
// A C loop rather than numpy: numpy's float32 sum is vectorised for numpy's
// build baseline (SSE2 in Debian's), and its speed is that build's; this loop
// is vectorised by clang for this CPU (-march=native; -ffast-math lets it
// reassociate the sum into several vector accumulators), so the loop itself
// never limits the pass and what is timed is the memory system. The decode
// step reads its weights the same way: once, in order, from DRAM.
// Prints the bandwidth of every pass in GB/s (1e9 bytes/s) and writes
// {"mib":..., "passes":[GB/s...], "median_gbps":..., "max_gbps":...} to JSON.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// Not inlined; with the barrier below no pass can be dropped or merged.
__attribute__((noinline)) static float sum(const float *restrict a, size_t n) {
  float s = 0.0f;
  for (size_t i = 0; i < n; ++i)
    s += a[i];
  return s;
}

// kB of anonymous huge pages this process holds (smaps_rollup), -1 if unknown.
static long anonHugeKb(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  if (!f)
    return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
      break;
  fclose(f);
  return kb;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  if (argc < 4 || atol(argv[1]) < 64 || atoi(argv[2]) < 1 ||
      atoi(argv[2]) > 1000 ||
      (strcmp(argv[3], "4k") && strcmp(argv[3], "huge"))) {
    fprintf(stderr,
            "usage: read_bw MIB(>= 64) PASSES(1..1000) 4k|huge [JSON]\n");
    return 2;
  }
  size_t mib = (size_t)atol(argv[1]);
  int passes = atoi(argv[2]);
  int huge = !strcmp(argv[3], "huge");
  const char *json = argc > 4 ? argv[4] : NULL;
  size_t bytes = mib << 20, n = bytes / sizeof(float);
  float *a = aligned_alloc(huge ? (size_t)2 << 20 : 4096, bytes);
  if (!a) {
    fprintf(stderr, "read_bw: cannot allocate %zu MiB\n", mib);
    return 1;
  }
  if (huge && madvise(a, bytes, MADV_HUGEPAGE))
    perror("read_bw: madvise(MADV_HUGEPAGE)");
  for (size_t i = 0; i < n; ++i)
    a[i] = (float)(i & 7);
  volatile float sink = sum(a, n);
  long hugeKb = anonHugeKb();
  double hugeShare =
      hugeKb < 0 ? -1.0 : (double)hugeKb * 1024.0 / (double)bytes;
  double *gbps = malloc(sizeof(double) * (size_t)passes);
  for (int p = 0; p < passes; ++p) {
    // A compiler barrier: the array may have changed, so the pass is not
    // folded into the previous one.
    __asm__ volatile("" : : "r"(a) : "memory");
    double t0 = now();
    sink += sum(a, n);
    gbps[p] = (double)bytes / (now() - t0) / 1e9;
  }
  (void)sink;
  double *sorted = malloc(sizeof(double) * (size_t)passes);
  memcpy(sorted, gbps, sizeof(double) * (size_t)passes);
  qsort(sorted, (size_t)passes, sizeof(double), cmp);
  double median = passes % 2
                      ? sorted[passes / 2]
                      : 0.5 * (sorted[passes / 2 - 1] + sorted[passes / 2]);
  printf("read_bw: %zu MiB, %s pages (%.0f%% huge), %d passes: median %.2f "
         "GB/s, max %.2f GB/s\n",
         mib, argv[3], 100.0 * hugeShare, passes, median, sorted[passes - 1]);
  if (json) {
    FILE *f = fopen(json, "w");
    if (!f) {
      perror(json);
      return 1;
    }
    fprintf(
        f,
        "{\"mib\": %zu, \"pages\": \"%s\", \"huge_share\": %.4f, \"passes\": [",
        mib, argv[3], hugeShare);
    for (int p = 0; p < passes; ++p)
      fprintf(f, "%s%.4f", p ? ", " : "", gbps[p]);
    fprintf(f, "], \"median_gbps\": %.4f, \"max_gbps\": %.4f}\n", median,
            sorted[passes - 1]);
    fclose(f);
  }
  free(a);
  free(gbps);
  free(sorted);
  return 0;
}

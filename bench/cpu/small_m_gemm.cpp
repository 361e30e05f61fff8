// The runtime's matmul with a few rows of c (a decode step at batch m) against
// what it did before (bench/cpu/small_m_gemm.sh runs it;
// docs/bench-small-m-gemm.md).
//
//   small_m_gemm [ROUNDS]            (default 9)
//
// Shapes: GPT-2-small's weights on one rank, b as the checkpoint lays it out:
// qkv, out, up and down are [k, n], the LM head (the embedding) [n, k] and
// read transposed; and qkv and down as torch's Linear (Llama's checkpoints)
// lays them out, [n, k]. For each, enough copies of b that one pass over them
// is three times the 32 MiB L3, so every call reads its weight from DRAM, as a
// decode step does; on a 2 MiB boundary with madvise(MADV_HUGEPAGE), as
// tp-run's weights (runtime/lib/Buffers.cpp).
// old: Gemm.cpp before its small-m paths: cblas_sgemv for m = 1, one
// cblas_sgemm otherwise. new: _mlir_ciface_tprt_matmul_f32 of libtprt as
// built; panels: the same weight laid out in column panels (b stored [n, k]:
// its transpose), as tp-run lays out one that tp-compile marks "layout":
// "panels" ("transposed_panels"), through
// _mlir_ciface_tprt_matmul_panels_f32; read: a plain sum of b's
// floats (readPass). Every round times one pass of each, in an order rotated
// every round; a sample is the pass's time per call. Prints a markdown row
// per shape and m: the medians, and the medians of the per-round ratios old
// / new and new / panels (the machine is shared: only ratios from the same
// round compare).
#include "Panels.h"
#include "tprt/tprt.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <sys/mman.h>

extern "C" void openblas_set_num_threads(int);

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

struct Shape {
  const char *name;
  int64_t k, n;
  bool transB; // b stored [n, k]
};

void oldPath(int64_t m, const Shape &s, const float *a, const float *b,
             float *c) {
  int64_t ldb = s.transB ? s.k : s.n;
  if (m == 1) {
    cblas_sgemv(CblasRowMajor, s.transB ? CblasNoTrans : CblasTrans,
                s.transB ? s.n : s.k, s.transB ? s.k : s.n, 1.0f, b, ldb, a, 1,
                0.0f, c, 1);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, s.transB ? CblasTrans : CblasNoTrans,
              m, s.n, s.k, 1.0f, a, s.k, b, ldb, 0.0f, c, s.n);
}

void newPath(int64_t m, const Shape &s, float *a, float *b, float *c) {
  int64_t rows = s.transB ? s.n : s.k, cols = s.transB ? s.k : s.n;
  tprt_memref2d_f32 da{a, a, 0, {m, s.k}, {s.k, 1}};
  tprt_memref2d_f32 db{b, b, 0, {rows, cols}, {cols, 1}};
  tprt_memref2d_f32 dc{c, c, 0, {m, s.n}, {s.n, 1}};
  _mlir_ciface_tprt_matmul_f32(&da, &db, &dc, 0, s.transB, 0);
}

void panelsPath(int64_t m, const Shape &s, float *a, float *panels, float *c) {
  tprt_memref2d_f32 da{a, a, 0, {m, s.k}, {s.k, 1}};
  int64_t rows = s.transB ? s.n : s.k, cols = s.transB ? s.k : s.n;
  tprt_memref2d_f32 db{panels, panels, 0, {rows, cols}, {cols, 1}};
  tprt_memref2d_f32 dc{c, c, 0, {m, s.n}, {s.n, 1}};
  _mlir_ciface_tprt_matmul_panels_f32(&da, &db, &dc, 0, s.transB, 0);
}

/// Sums b's floats in address order: the rate at which this core reads a
/// weight from DRAM, against which the two paths' GB/s compare. Four vector
/// accumulators, so the adds never limit the read (a plain float loop at -O2
/// is one add at a time).
float readPass(const float *b, size_t floats) {
  using Vec = float __attribute__((vector_size(64)));
  constexpr size_t lanes = 16;
  Vec s0 = {}, s1 = {}, s2 = {}, s3 = {};
  auto load = [](const float *p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  size_t i = 0;
  for (; i + 4 * lanes <= floats; i += 4 * lanes) {
    s0 += load(b + i);
    s1 += load(b + i + lanes);
    s2 += load(b + i + 2 * lanes);
    s3 += load(b + i + 3 * lanes);
  }
  Vec sum = (s0 + s1) + (s2 + s3);
  float total = 0;
  for (size_t lane = 0; lane < lanes; ++lane)
    total += sum[lane];
  for (; i < floats; ++i)
    total += b[i];
  return total;
}

} // namespace

int main(int argc, char **argv) {
  openblas_set_num_threads(1);
  int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  const Shape shapes[] = {
      {"qkv", 768, 2304, false},       {"out", 768, 768, false},
      {"up", 768, 3072, false},        {"down", 3072, 768, false},
      {"lm head", 768, 50304, true},   {"qkv [n, k]", 768, 2304, true},
      {"down [n, k]", 3072, 768, true}};
  const int64_t ms[] = {1, 2, 4, 8, 12, 14, 16};
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(16 * 3072), c(16 * 50304);
  for (float &x : a)
    x = dist(rng);
  std::printf("| weight | m | k | n | old (us) | new (us) | panels (us) | old "
              "GFLOP/s | new GFLOP/s | old GB/s | new GB/s | panels GB/s | "
              "read GB/s | new vs old | panels vs new |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---"
              ":|---:|---:|\n");
  for (const Shape &s : shapes) {
    size_t floats = size_t(s.k * s.n), bytes = floats * sizeof(float);
    size_t copies = std::max<size_t>(1, (96u << 20) / bytes + 1);
    std::vector<float *> bs, panels;
    const size_t hugePage = size_t(2) << 20;
    size_t rounded = (bytes + hugePage - 1) / hugePage * hugePage;
    auto allocate = [&] {
      float *b = static_cast<float *>(std::aligned_alloc(hugePage, rounded));
      madvise(b, rounded, MADV_HUGEPAGE);
      return b;
    };
    for (size_t i = 0; i < copies; ++i) {
      float *b = allocate();
      for (size_t j = 0; j < floats; ++j)
        b[j] = dist(rng);
      bs.push_back(b);
      panels.push_back(allocate());
      if (s.transB)
        tprt::detail::packTransposedPanels(b, s.k, s.n, s.k, panels.back());
      else
        tprt::detail::packPanels(b, s.n, s.k, s.n, panels.back());
    }
    for (int64_t m : ms) {
      std::vector<double> told, tnew, tread, tpanels, ratio, panelsRatio;
      volatile float sink = 0;
      for (int r = 0; r < rounds; ++r) {
        double t[4];
        for (int step = 0; step < 4; ++step) {
          int which = (r + step) % 4;
          double start = now();
          for (size_t i = 0; i < copies; ++i) {
            if (which == 0)
              oldPath(m, s, a.data(), bs[i], c.data());
            else if (which == 1)
              newPath(m, s, a.data(), bs[i], c.data());
            else if (which == 2)
              sink = sink + readPass(bs[i], floats);
            else
              panelsPath(m, s, a.data(), panels[i], c.data());
          }
          t[which] = (now() - start) / double(copies);
        }
        told.push_back(t[0]);
        tnew.push_back(t[1]);
        tread.push_back(t[2]);
        ratio.push_back(t[0] / t[1]);
        tpanels.push_back(t[3]);
        panelsRatio.push_back(t[1] / t[3]);
      }
      double o = median(told), n = median(tnew), rd = median(tread),
             p = median(tpanels);
      double flops = 2.0 * double(m) * double(s.k) * double(s.n);
      std::printf("| %s | %lld | %lld | %lld | %.0f | %.0f | %.0f | %.1f | "
                  "%.1f | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx |\n",
                  s.name, (long long)m, (long long)s.k, (long long)s.n, o * 1e6,
                  n * 1e6, p * 1e6, flops / o / 1e9, flops / n / 1e9,
                  bytes / o / 1e9, bytes / n / 1e9, bytes / p / 1e9,
                  bytes / rd / 1e9, median(ratio), median(panelsRatio));
      std::fflush(stdout);
    }
    for (float *b : bs)
      std::free(b);
    for (float *b : panels)
      std::free(b);
  }
  return 0;
}

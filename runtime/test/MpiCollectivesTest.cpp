//===- MpiCollectivesTest.cpp - collectives across ranks ------------------===//
//
// Run under mpirun (test/Runtime/collectives-mpi.test). Each rank fills its
// buffers with values that encode (rank, index), runs the collectives and
// checks the result; prints "rank R: ok" or the first mismatches and exits 1.
//
//===----------------------------------------------------------------------===//

#include "tprt/launch.h"
#include "tprt/tprt.h"

#include <cstdio>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char *what, size_t index, float got, float want) {
  if (ok || ++failures > 10)
    return;
  std::printf("rank %d: %s: element %zu is %g, expected %g\n", tprt_rank(),
              what, index, got, want);
}

float encode(int rank, int64_t index) { return float(rank * 1000 + index); }

enum class Reduction { Sum, Max, Min };

void testAllReduce(int rank, int worldSize, Reduction kind) {
  std::vector<float> buffer(6 * 5);
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer[i] = encode(rank, int64_t(i));
  std::vector<int64_t> d = tprt::makeDescriptor(buffer.data(), {6, 5});
  tprt_unranked_memref memref{2, d.data()};
  const char *what = kind == Reduction::Sum   ? "all_reduce sum"
                     : kind == Reduction::Max ? "all_reduce max"
                                              : "all_reduce min";
  if (kind == Reduction::Sum)
    _mlir_ciface_tprt_all_reduce_sum_f32(&memref);
  else if (kind == Reduction::Max)
    _mlir_ciface_tprt_all_reduce_max_f32(&memref);
  else
    _mlir_ciface_tprt_all_reduce_min_f32(&memref);
  for (size_t i = 0; i < buffer.size(); ++i) {
    float want = 0;
    for (int r = 0; r < worldSize; ++r)
      want += encode(r, int64_t(i));
    // encode grows with the rank.
    if (kind == Reduction::Max)
      want = encode(worldSize - 1, int64_t(i));
    if (kind == Reduction::Min)
      want = encode(0, int64_t(i));
    check(buffer[i] == want, what, i, buffer[i], want);
  }
}

/// in is [2, 3, 4] on each rank; out gathers along `dim`.
void testAllGather(int rank, int worldSize, int64_t dim) {
  std::vector<int64_t> inShape = {2, 3, 4}, outShape = inShape;
  outShape[dim] *= worldSize;
  std::vector<float> in(24), out(24 * size_t(worldSize), -1);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = encode(rank, int64_t(i));
  std::vector<int64_t> di = tprt::makeDescriptor(in.data(), inShape);
  std::vector<int64_t> dout = tprt::makeDescriptor(out.data(), outShape);
  tprt_unranked_memref mi{3, di.data()}, mo{3, dout.data()};
  _mlir_ciface_tprt_all_gather_f32(&mi, &mo, dim);

  // out[i0, i1, i2] comes from rank i_dim / in[dim] at index i_dim % in[dim].
  char what[32];
  std::snprintf(what, sizeof(what), "all_gather dim %lld", (long long)dim);
  for (int64_t a = 0; a < outShape[0]; ++a)
    for (int64_t b = 0; b < outShape[1]; ++b)
      for (int64_t c = 0; c < outShape[2]; ++c) {
        int64_t idx[3] = {a, b, c};
        int source = int(idx[dim] / inShape[dim]);
        idx[dim] %= inShape[dim];
        float want = encode(
            source, (idx[0] * inShape[1] + idx[1]) * inShape[2] + idx[2]);
        size_t at = size_t((a * outShape[1] + b) * outShape[2] + c);
        check(out[at] == want, what, at, out[at], want);
      }
}

} // namespace

int main(int argc, char **argv) {
  if (tprt_init(&argc, &argv) != TPRT_OK) {
    std::printf("tprt_init failed: %s\n", tprt_last_error());
    return 1;
  }
  int rank = tprt_rank(), worldSize = tprt_world_size();
  for (Reduction kind : {Reduction::Sum, Reduction::Max, Reduction::Min})
    testAllReduce(rank, worldSize, kind);
  for (int64_t dim = 0; dim < 3; ++dim)
    testAllGather(rank, worldSize, dim);

  tprt_counters counters;
  tprt_get_counters(&counters);
  if (counters.all_reduce_calls != 3 || counters.all_reduce_bytes != 3 * 120 ||
      counters.all_gather_calls != 3 || counters.all_gather_bytes != 3 * 96) {
    std::printf("rank %d: counters: all_reduce %lld calls %lld bytes, "
                "all_gather %lld calls %lld bytes\n",
                rank, (long long)counters.all_reduce_calls,
                (long long)counters.all_reduce_bytes,
                (long long)counters.all_gather_calls,
                (long long)counters.all_gather_bytes);
    ++failures;
  }
  if (failures == 0)
    std::printf("rank %d of %d: ok\n", rank, worldSize);
  std::fflush(stdout);
  tprt_finalize();
  return failures ? 1 : 0;
}

//===- Collectives.cpp - all-reduce and all-gather on MPI -----------------===//
//
// The collectives compiled code issues, on the communicator the runtime owns.
// Buffers are unranked memrefs with the identity (contiguous row-major)
// layout. With one rank they do no communication but are still counted, so
// a run report shows the same collectives at every world size.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"
#include "Views.h"

#include <cstring>
#include <vector>

using namespace tprt::detail;
using tprt::common::Buffer;
using tprt::common::checkGatheredShape;
using tprt::common::countAllGather;
using tprt::common::countAllReduce;
using tprt::common::readBuffer;

namespace {

MPI_Comm communicator(const char *call) {
  RuntimeState &s = state();
  if (!s.initialized || !s.comm)
    fail(call, "called before tprt_init (or after tprt_finalize)");
  return s.comm->get();
}

int elementCount(const char *call, int64_t numElements) {
  if (numElements > INT32_MAX)
    fail(call,
         std::to_string(numElements) + " elements exceed the MPI count range");
  return static_cast<int>(numElements);
}

} // namespace

/// In place: every rank ends with `op` over the ranks' buffers.
static void allReduce(const char *call, tprt_unranked_memref *memref,
                      MPI_Op op) {
  MPI_Comm comm = communicator(call);
  // The message says "buffer", as the ABI names the argument.
  Buffer buffer = readBuffer(call, "buffer", memref);
  int count = elementCount(call, buffer.numElements);

  double start = now();
  if (state().worldSize > 1 && count > 0) {
    WatchedCollective watched(call, "MPI_Allreduce", count);
    int rc =
        MPI_Allreduce(MPI_IN_PLACE, buffer.data, count, MPI_FLOAT, op, comm);
    if (rc != MPI_SUCCESS)
      fail(call, "MPI_Allreduce of " + std::to_string(count) +
                     " floats failed: " + mpiErrorString(rc));
  }
  countAllReduce(state().counters, buffer, now() - start);
}

extern "C" void
_mlir_ciface_tprt_all_reduce_sum_f32(tprt_unranked_memref *memref) {
  allReduce("all_reduce_sum_f32", memref, MPI_SUM);
}

extern "C" void
_mlir_ciface_tprt_all_reduce_max_f32(tprt_unranked_memref *memref) {
  allReduce("all_reduce_max_f32", memref, MPI_MAX);
}

extern "C" void
_mlir_ciface_tprt_all_reduce_min_f32(tprt_unranked_memref *memref) {
  allReduce("all_reduce_min_f32", memref, MPI_MIN);
}

extern "C" void _mlir_ciface_tprt_all_gather_f32(tprt_unranked_memref *inRef,
                                                 tprt_unranked_memref *outRef,
                                                 int64_t dim) {
  const char *call = "all_gather_f32";
  MPI_Comm comm = communicator(call);
  Buffer in = readBuffer(call, "in", inRef);
  Buffer out = readBuffer(call, "out", outRef);
  int64_t worldSize = state().worldSize;

  int64_t outer = checkGatheredShape(call, in, out, dim, worldSize);
  int count = elementCount(call, in.numElements);
  elementCount(call, out.numElements);

  double start = now();
  // Rank r's block of `inner` elements goes after the blocks of ranks < r,
  // in each of the `outer` slices before `dim`.
  if (count > 0) {
    if (worldSize == 1) {
      if (out.data != in.data)
        std::memmove(out.data, in.data, size_t(count) * sizeof(float));
    } else if (outer == 1) {
      WatchedCollective watched(call, "MPI_Allgather", count);
      int rc = MPI_Allgather(in.data, count, MPI_FLOAT, out.data, count,
                             MPI_FLOAT, comm);
      if (rc != MPI_SUCCESS)
        fail(call, "MPI_Allgather failed: " + mpiErrorString(rc));
    } else {
      std::vector<float> gathered(size_t(count) * size_t(worldSize));
      WatchedCollective watched(call, "MPI_Allgather", count);
      int rc = MPI_Allgather(in.data, count, MPI_FLOAT, gathered.data(), count,
                             MPI_FLOAT, comm);
      if (rc != MPI_SUCCESS)
        fail(call, "MPI_Allgather failed: " + mpiErrorString(rc));
      int64_t inner = in.numElements / outer;
      for (int64_t r = 0; r < worldSize; ++r)
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(out.data + (o * worldSize + r) * inner,
                      gathered.data() + r * count + o * inner,
                      size_t(inner) * sizeof(float));
    }
  }
  countAllGather(state().counters, in, now() - start);
}

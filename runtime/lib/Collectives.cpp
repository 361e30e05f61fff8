//===- Collectives.cpp - all-reduce and all-gather on MPI -----------------===//
//
// The collectives compiled code issues, on the communicator the runtime owns.
// Buffers are unranked memrefs with the identity (contiguous row-major)
// layout. With one rank they do no communication but are still counted, so
// a run report shows the same collectives at every world size.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include <cstring>
#include <sstream>
#include <vector>

using namespace tprt::detail;

namespace {

/// A ranked descriptor read from an unranked memref.
struct Buffer {
  float *data = nullptr;
  int64_t rank = 0;
  const int64_t *sizes = nullptr;
  const int64_t *strides = nullptr;
  int64_t numElements = 1;
};

/// Reads `memref` and checks it is contiguous; `name` names it in messages.
Buffer readBuffer(const char *call, const char *name,
                  const tprt_unranked_memref *memref) {
  if (!memref || !memref->descriptor)
    fail(call, std::string("descriptor of ") + name + " is null");
  if (memref->rank < 0)
    fail(call, std::string(name) + " has a negative rank " +
                   std::to_string(memref->rank));
  // { T *allocated; T *aligned; int64_t offset; int64_t sizes[R];
  //   int64_t strides[R]; }
  const char *base = static_cast<const char *>(memref->descriptor);
  float *aligned;
  int64_t offset;
  std::memcpy(&aligned, base + sizeof(float *), sizeof(float *));
  std::memcpy(&offset, base + 2 * sizeof(float *), sizeof(int64_t));
  Buffer buffer;
  buffer.rank = memref->rank;
  buffer.sizes =
      reinterpret_cast<const int64_t *>(base + 2 * sizeof(float *) + 8);
  buffer.strides = buffer.sizes + buffer.rank;
  for (int64_t i = 0; i < buffer.rank; ++i) {
    if (buffer.sizes[i] < 0)
      fail(call, std::string(name) + " has a negative size " +
                     formatList(buffer.sizes, buffer.rank));
    buffer.numElements *= buffer.sizes[i];
  }
  // Contiguous: each stride is the product of the sizes after it (a
  // dimension of size 1 may have any stride).
  int64_t expected = 1;
  for (int64_t i = buffer.rank - 1; i >= 0; --i) {
    if (buffer.sizes[i] != 1 && buffer.strides[i] != expected)
      fail(call, std::string(name) + " is not contiguous (sizes " +
                     formatList(buffer.sizes, buffer.rank) + ", strides " +
                     formatList(buffer.strides, buffer.rank) + ")");
    expected *= buffer.sizes[i];
  }
  if (!aligned && buffer.numElements != 0)
    fail(call, std::string(name) + " has a null data pointer");
  buffer.data = aligned ? aligned + offset : nullptr;
  return buffer;
}

MPI_Comm communicator(const char *call) {
  RuntimeState &s = state();
  if (!s.initialized || !s.comm)
    fail(call, "called before tprt_init (or after tprt_finalize)");
  return s.comm->get();
}

int elementCount(const char *call, int64_t numElements) {
  if (numElements > INT32_MAX)
    fail(call, std::to_string(numElements) +
                   " elements exceed the MPI count range");
  return static_cast<int>(numElements);
}

} // namespace

extern "C" void
_mlir_ciface_tprt_all_reduce_sum_f32(tprt_unranked_memref *memref) {
  const char *call = "all_reduce_sum_f32";
  MPI_Comm comm = communicator(call);
  // The message says "buffer", as the ABI names the argument.
  Buffer buffer = readBuffer(call, "buffer", memref);
  int count = elementCount(call, buffer.numElements);

  double start = now();
  if (state().worldSize > 1 && count > 0) {
    int rc = MPI_Allreduce(MPI_IN_PLACE, buffer.data, count, MPI_FLOAT,
                           MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
      fail(call, "MPI_Allreduce of " + std::to_string(count) +
                     " floats failed: " + mpiErrorString(rc));
  }
  tprt_counters &c = state().counters;
  ++c.all_reduce_calls;
  c.all_reduce_bytes += buffer.numElements * int64_t(sizeof(float));
  c.comm_seconds += now() - start;
}

extern "C" void _mlir_ciface_tprt_all_gather_f32(tprt_unranked_memref *inRef,
                                                 tprt_unranked_memref *outRef,
                                                 int64_t dim) {
  const char *call = "all_gather_f32";
  MPI_Comm comm = communicator(call);
  Buffer in = readBuffer(call, "in", inRef);
  Buffer out = readBuffer(call, "out", outRef);
  int64_t worldSize = state().worldSize;

  // out is in with dimension `dim` multiplied by the world size.
  bool shapesAgree = in.rank == out.rank && dim >= 0 && dim < in.rank;
  for (int64_t i = 0; shapesAgree && i < in.rank; ++i)
    shapesAgree = out.sizes[i] == (i == dim ? in.sizes[i] * worldSize
                                            : in.sizes[i]);
  if (!shapesAgree) {
    std::ostringstream os;
    os << "out " << formatList(out.sizes, out.rank)
       << " is not in " << formatList(in.sizes, in.rank) << " gathered from "
       << worldSize << " ranks along dimension " << dim;
    fail(call, os.str());
  }
  int count = elementCount(call, in.numElements);
  elementCount(call, out.numElements);

  double start = now();
  // Rank r's block of `inner` elements goes after the blocks of ranks < r,
  // in each of the `outer` slices before `dim`.
  int64_t outer = 1;
  for (int64_t i = 0; i < dim; ++i)
    outer *= in.sizes[i];
  if (count > 0) {
    if (worldSize == 1) {
      if (out.data != in.data)
        std::memmove(out.data, in.data, size_t(count) * sizeof(float));
    } else if (outer == 1) {
      int rc = MPI_Allgather(in.data, count, MPI_FLOAT, out.data, count,
                             MPI_FLOAT, comm);
      if (rc != MPI_SUCCESS)
        fail(call, "MPI_Allgather failed: " + mpiErrorString(rc));
    } else {
      std::vector<float> gathered(size_t(count) * size_t(worldSize));
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
  tprt_counters &c = state().counters;
  ++c.all_gather_calls;
  c.all_gather_bytes += in.numElements * int64_t(sizeof(float));
  c.comm_seconds += now() - start;
}

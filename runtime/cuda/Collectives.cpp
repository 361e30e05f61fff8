//===- Collectives.cpp - all-reduce and all-gather on NCCL ----------------===//
//
// The collectives compiled code issues, on device buffers, on the rank's
// stream, through the NCCL communicator tprt_init made. Neither waits: the
// next kernels are ordered after the collective on the stream, and
// Watchdog.cpp's thread ends every rank when one fails or does not finish
// within TPRT_COMM_TIMEOUT_S. Their GPU time is measured with events, like
// the GEMMs'. With one rank NCCL still runs (a copy), so a single-GPU run
// exercises it.
//
//===----------------------------------------------------------------------===//

#include "../lib/Views.h"
#include "CudaState.h"

using namespace tprt::cuda;
using tprt::common::Buffer;
using tprt::common::checkGatheredShape;
using tprt::common::countAllGather;
using tprt::common::countAllReduce;
using tprt::common::readBuffer;

namespace {

void checkNccl(const char *call, ncclResult_t rc, const char *what) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    fail(call,
         std::string(what) + " failed: " + ncclGetErrorString(rc) +
             (ncclGetLastError(state().nccl())
                  ? std::string(" (") + ncclGetLastError(state().nccl()) + ")"
                  : std::string()));
}

ncclComm_t communicator(const char *call) {
  stream(call);
  if (!state().nccl())
    fail(call, "no NCCL communicator");
  return state().nccl();
}

} // namespace

/// In place: every rank ends with `op` over the ranks' buffers.
static void allReduce(const char *call, tprt_unranked_memref *memref,
                      ncclRedOp_t op) {
  ncclComm_t comm = communicator(call);
  Buffer buffer = readBuffer(call, "buffer", memref);
  if (buffer.numElements > 0) {
    timedOnStream(call, &tprt_counters::comm_seconds, [&] {
      checkNccl(call,
                ncclAllReduce(buffer.data, buffer.data,
                              size_t(buffer.numElements), ncclFloat32, op, comm,
                              state().stream()),
                "ncclAllReduce");
    });
    watchCollective(call, "ncclAllReduce of " +
                              std::to_string(buffer.numElements) + " floats");
  }
  countAllReduce(state().counters, buffer, /*seconds=*/0);
}

extern "C" void
_mlir_ciface_tprt_all_reduce_sum_f32(tprt_unranked_memref *memref) {
  allReduce("all_reduce_sum_f32", memref, ncclSum);
}

extern "C" void
_mlir_ciface_tprt_all_reduce_max_f32(tprt_unranked_memref *memref) {
  allReduce("all_reduce_max_f32", memref, ncclMax);
}

extern "C" void
_mlir_ciface_tprt_all_reduce_min_f32(tprt_unranked_memref *memref) {
  allReduce("all_reduce_min_f32", memref, ncclMin);
}

extern "C" void _mlir_ciface_tprt_all_gather_f32(tprt_unranked_memref *inRef,
                                                 tprt_unranked_memref *outRef,
                                                 int64_t dim) {
  const char *call = "all_gather_f32";
  ncclComm_t comm = communicator(call);
  Buffer in = readBuffer(call, "in", inRef);
  Buffer out = readBuffer(call, "out", outRef);
  int64_t worldSize = state().worldSize;
  int64_t outer = checkGatheredShape(call, in, out, dim, worldSize);
  cudaStream_t st = state().stream();
  if (in.numElements > 0) {
    size_t count = size_t(in.numElements);
    timedOnStream(call, &tprt_counters::comm_seconds, [&] {
      if (outer == 1 || worldSize == 1) {
        checkNccl(
            call,
            ncclAllGather(in.data, out.data, count, ncclFloat32, comm, st),
            "ncclAllGather");
      } else {
        // Gather rank-major into a temporary, then put rank r's block of
        // `inner` elements after those of ranks < r in each outer slice (one
        // strided 2-D copy per rank).
        void *pointer = nullptr;
        check(call,
              cudaMallocAsync(&pointer,
                              count * size_t(worldSize) * sizeof(float), st),
              "cudaMallocAsync");
        DeviceBuffer<float> gathered(static_cast<float *>(pointer), {st});
        checkNccl(call,
                  ncclAllGather(in.data, gathered.get(), count, ncclFloat32,
                                comm, st),
                  "ncclAllGather");
        size_t inner = count / size_t(outer);
        for (int64_t r = 0; r < worldSize; ++r)
          check(call,
                cudaMemcpy2DAsync(out.data + r * inner,
                                  inner * worldSize * sizeof(float),
                                  gathered.get() + r * count,
                                  inner * sizeof(float), inner * sizeof(float),
                                  size_t(outer), cudaMemcpyDeviceToDevice, st),
                "cudaMemcpy2DAsync");
        check(call, cudaFreeAsync(gathered.release(), st), "cudaFreeAsync");
      }
    });
    watchCollective(call,
                    "ncclAllGather of " + std::to_string(count) + " floats");
  }
  countAllGather(state().counters, in, /*seconds=*/0);
}

//===- CudaState.h - libtprt_cuda's per-process state -----------*- C++ -*-===//
//
// Internal to libtprt_cuda: the rank's device, stream, cuBLAS handle and
// NCCL communicator and the counters; the last error and the failure
// helpers are ../lib/Common.h's.
// One rank per process, one GPU per rank; the compiled model calls the
// runtime from one thread (the watchdog's thread only reads the stream's
// progress and NCCL's error state).
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_CUDA_CUDASTATE_H
#define TPRT_CUDA_CUDASTATE_H

#include "../lib/Common.h"

#pragma GCC visibility push(default)
#include "tprt/tprt_cuda.h"
#pragma GCC visibility pop

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tprt {
namespace cuda {

/// Work on the stream between two events, whose elapsed time goes to
/// `tprt_counters::*seconds`.
struct TimedCall {
  cudaEvent_t start, stop;
  double tprt_counters::*seconds;
};

struct State {
  bool initialized = false;
  bool finalized = false;
  bool ownsMpi = false;
  int rank = 0;
  int worldSize = 1;
  int device = -1;
  MPI_Comm comm = MPI_COMM_NULL;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  ncclComm_t nccl = nullptr;
  /// Seconds a collective may take before every rank is ended
  /// (TPRT_COMM_TIMEOUT_S, default 60).
  double commTimeout = common::kDefaultCommTimeoutSeconds;
  /// Whether MPI runs at MPI_THREAD_MULTIPLE, so the watchdog's thread may
  /// call MPI_Abort.
  bool mpiThreadMultiple = false;
  tprt_counters counters{};
  /// Start/stop events of GEMMs and collectives not yet read into the
  /// counters (the work is asynchronous; tprt_get_counters reads them).
  std::vector<TimedCall> pendingTimes;
  std::vector<cudaEvent_t> freeEvents;
  /// Device copies of the model's constants, by host address
  /// (tprt_device_constant_f32).
  std::unordered_map<const float *, float *> constants;
};

State &state();

using common::fail;
using common::formatList;
using common::mpiErrorString;
using common::now;
using common::setError;

/// Ends the process (every rank) when a CUDA call failed.
void check(const char *call, cudaError_t rc, const char *what);
void checkBlas(const char *call, cublasStatus_t rc, const char *what);

/// The stream every entry point issues work on; fails before tprt_init.
cudaStream_t stream(const char *call);

cudaEvent_t takeEvent();
/// Adds the times of the finished calls' event pairs to the counters and
/// recycles their events; `wait`: wait for the unfinished ones too.
void collectTimes(bool wait);

/// Issues `body`'s work on the rank's stream between two events; its GPU
/// time is added to `seconds` when tprt_get_counters reads the events.
template <typename Body>
void timedOnStream(const char *call, double tprt_counters::*seconds,
                   Body body) {
  State &s = state();
  cudaStream_t st = stream(call);
  // Recycle the events of finished calls now and then, without waiting.
  if (s.pendingTimes.size() >= 256)
    collectTimes(/*wait=*/false);
  cudaEvent_t start = takeEvent(), stop = takeEvent();
  check(call, cudaEventRecord(start, st), "cudaEventRecord");
  body();
  check(call, cudaEventRecord(stop, st), "cudaEventRecord");
  s.pendingTimes.push_back({start, stop, seconds});
}

/// The collectives in flight, watched from a host thread (Watchdog.cpp) so
/// that the forward pass never waits for them on the host: started by
/// tprt_init once NCCL is up, stopped by tprt_finalize.
void startWatchdog();
void stopWatchdog();
bool onWatchdogThread();
/// Right after a collective was issued on the stream: if NCCL reports an
/// error, or it has not finished TPRT_COMM_TIMEOUT_S seconds after it could
/// start, every rank is ended with a message naming `what`.
void watchCollective(const char *call, std::string what);

} // namespace cuda
} // namespace tprt

#endif // TPRT_CUDA_CUDASTATE_H

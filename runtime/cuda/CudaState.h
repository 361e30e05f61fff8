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
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tprt {
namespace cuda {

// Owners of the handles the runtime acquires: each frees its handle when
// destroyed. The calls' errors are ignored there: nothing is left to do then.
struct DestroyStream {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
struct DestroyEvent {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};
struct DestroyBlas {
  void operator()(cublasHandle_t h) const { cublasDestroy(h); }
};
struct DestroyNccl {
  void operator()(ncclComm_t c) const { ncclCommDestroy(c); }
};
/// Frees device memory stream-ordered, on the stream it was allocated on.
struct FreeOnStream {
  cudaStream_t stream = nullptr;
  void operator()(void *p) const { cudaFreeAsync(p, stream); }
};

template <typename Handle, typename Destroy>
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, Destroy>;
using Stream = Owned<cudaStream_t, DestroyStream>;
using Event = Owned<cudaEvent_t, DestroyEvent>;
using BlasHandle = Owned<cublasHandle_t, DestroyBlas>;
using NcclComm = Owned<ncclComm_t, DestroyNccl>;
template <typename T> using DeviceBuffer = std::unique_ptr<T, FreeOnStream>;

/// Work on the stream between two events, whose elapsed time goes to
/// `tprt_counters::*seconds`.
struct TimedCall {
  Event start, stop;
  double tprt_counters::*seconds;
};

/// What tprt_init acquires, released in reverse when destroyed (by
/// tprt_finalize, or by tprt_init when a later step fails): the queued work
/// and the watchdog finish first, then the events, the constants' device
/// copies (on the stream), NCCL, cuBLAS, the stream and the communicator.
struct Resources {
  std::unique_ptr<common::Communicator> comm;
  Stream stream;
  BlasHandle blas;
  NcclComm nccl;
  /// Device copies of the model's constants, by host address and size in
  /// bytes (tprt_device_constant_*).
  std::map<std::pair<const char *, size_t>, DeviceBuffer<char>> constants;
  /// Start/stop events of GEMMs and collectives not yet read into the
  /// counters (the work is asynchronous; tprt_get_counters reads them).
  std::vector<TimedCall> pendingTimes;
  std::vector<Event> freeEvents;

  Resources() = default;
  Resources(const Resources &) = delete;
  Resources &operator=(const Resources &) = delete;
  ~Resources();
};

/// The shared part (../lib/Common.h), the device and the handles.
struct State : common::RankState {
  int device = -1;
  /// Null before tprt_init and after tprt_finalize.
  std::unique_ptr<Resources> resources;
  /// Between tprt_graph_begin and tprt_graph_end (Graph.cpp): the work
  /// issued is captured, not run; the counters when it began.
  bool capturing = false;
  tprt_counters countersAtCapture{};

  cudaStream_t stream() const {
    return resources ? resources->stream.get() : nullptr;
  }
  cublasHandle_t blas() const {
    return resources ? resources->blas.get() : nullptr;
  }
  ncclComm_t nccl() const {
    return resources ? resources->nccl.get() : nullptr;
  }
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

/// A free event (recycled, or a new one).
Event takeEvent();
/// Adds the times of the finished calls' event pairs to the counters and
/// recycles their events; `wait`: wait for the unfinished ones too.
void collectTimes(bool wait);

/// Issues `body`'s work on the rank's stream between two events; its GPU
/// time is added to `seconds` when tprt_get_counters reads the events.
template <typename Body>
void timedOnStream(const char *call, double tprt_counters::*seconds,
                   Body body) {
  cudaStream_t st = stream(call);
  Resources &r = *state().resources;
  if (state().capturing) { // the host could not read captured events
    body();
    return;
  }
  // Recycle the events of finished calls now and then, without waiting.
  if (r.pendingTimes.size() >= 256)
    collectTimes(/*wait=*/false);
  Event start = takeEvent(), stop = takeEvent();
  check(call, cudaEventRecord(start.get(), st), "cudaEventRecord");
  body();
  check(call, cudaEventRecord(stop.get(), st), "cudaEventRecord");
  r.pendingTimes.push_back({std::move(start), std::move(stop), seconds});
}

/// The collectives in flight, watched from a host thread (Watchdog.cpp) so
/// that the forward pass never waits for them on the host: started by
/// tprt_init once NCCL is up, stopped by tprt_finalize.
void startWatchdog();
void stopWatchdog();
bool onWatchdogThread();
/// Right after a collective was issued on the stream: if NCCL reports an
/// error, or it has not finished TPRT_COMM_TIMEOUT_S seconds after it could
/// start, every rank is ended with a message naming `what`. Nothing while
/// capturing a graph (its launch is watched instead).
void watchCollective(const char *call, std::string what);

} // namespace cuda
} // namespace tprt

#endif // TPRT_CUDA_CUDASTATE_H

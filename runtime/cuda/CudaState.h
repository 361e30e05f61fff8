//===- CudaState.h - libtprt_cuda's per-process state -----------*- C++ -*-===//
//
// Internal to libtprt_cuda: the rank's device, stream, cuBLAS handle and
// NCCL communicator and the counters; the last error and the failure
// helpers are ../lib/Common.h's.
// One rank per process, one GPU per rank; the compiled model calls the
// runtime from one thread.
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
#include <utility>
#include <vector>

namespace tprt {
namespace cuda {

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
  double commTimeout = 60;
  tprt_counters counters{};
  /// GEMM start/stop events not yet read into counters.gemm_seconds (the
  /// GEMMs are asynchronous; tprt_get_counters reads them).
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> pendingGemm;
  std::vector<cudaEvent_t> freeEvents;
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
/// Adds the times of the finished GEMMs' event pairs to the counters and
/// recycles their events; `wait`: wait for the unfinished ones too.
void collectGemmTimes(bool wait);

} // namespace cuda
} // namespace tprt

#endif // TPRT_CUDA_CUDASTATE_H

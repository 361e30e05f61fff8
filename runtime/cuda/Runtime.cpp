//===- Runtime.cpp - libtprt_cuda start-up, errors, memory, counters ------===//
//
// tprt_init: MPI (unless the launcher started it), a duplicated world
// communicator, one GPU per rank (local rank modulo the device count), one
// stream, a cuBLAS handle on it and an NCCL communicator whose unique id rank
// 0 broadcasts with MPI. Without a usable GPU it returns TPRT_ERR_NO_DEVICE,
// "no GPU: cudaGetDeviceCount failed: <cause>".
//
// The compiled code allocates through MLIR's generic allocation functions
// (finalize-memref-to-llvm use-generic-functions): they are defined here,
// stream-ordered on the rank's stream (cudaMallocAsync from the device's
// memory pool, which keeps freed memory for the next forward pass).
//
//===----------------------------------------------------------------------===//

#include "CudaState.h"

#include <cstdlib>

namespace tprt {
namespace cuda {

State &state() {
  // Never destroyed: a process that ends without tprt_finalize (exit after
  // an abort, say) must not wait for its stream or destroy its handles.
  static State *instance = new State;
  return *instance;
}

Resources::~Resources() {
  // Queued work may use any of the handles, as may the watchdog: let both
  // finish first. The members then go in reverse order.
  if (stream)
    cudaStreamSynchronize(stream.get());
  stopWatchdog();
}

void check(const char *call, cudaError_t rc, const char *what) {
  if (rc != cudaSuccess)
    fail(call, std::string(what) + " failed: " + cudaGetErrorString(rc));
}

void checkBlas(const char *call, cublasStatus_t rc, const char *what) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    fail(call, std::string(what) + " failed: " + cublasGetStatusString(rc));
}

cudaStream_t stream(const char *call) {
  State &s = state();
  if (!s.initialized)
    fail(call, "called before tprt_init (or after tprt_finalize)");
  return s.stream();
}

Event takeEvent() {
  std::vector<Event> &free = state().resources->freeEvents;
  if (!free.empty()) {
    Event event = std::move(free.back());
    free.pop_back();
    return event;
  }
  cudaEvent_t event;
  check("event", cudaEventCreate(&event), "cudaEventCreate");
  return Event(event);
}

} // namespace cuda
} // namespace tprt

using namespace tprt::cuda;

static tprt_status initDevice(State &s, Resources &r) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess)
    return setError(TPRT_ERR_NO_DEVICE, "tprt_init",
                    std::string("no GPU: cudaGetDeviceCount failed: ") +
                        cudaGetErrorString(rc));
  if (count < 1)
    return setError(TPRT_ERR_NO_DEVICE, "tprt_init",
                    "no GPU: cudaGetDeviceCount found 0 devices");
  // One GPU per rank: the rank's index among the ranks of its node.
  MPI_Comm node = MPI_COMM_NULL;
  int localRank = 0;
  if (MPI_Comm_split_type(r.comm->get(), MPI_COMM_TYPE_SHARED, s.rank,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &localRank);
    MPI_Comm_free(&node);
  }
  s.device = localRank % count;
  if ((rc = cudaSetDevice(s.device)) != cudaSuccess)
    return setError(TPRT_ERR_NO_DEVICE, "tprt_init",
                    "cudaSetDevice(" + std::to_string(s.device) +
                        ") failed: " + cudaGetErrorString(rc));
  cudaStream_t stream = nullptr;
  if ((rc = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) !=
      cudaSuccess)
    return setError(TPRT_ERR_NO_DEVICE, "tprt_init",
                    std::string("cudaStreamCreate failed: ") +
                        cudaGetErrorString(rc));
  r.stream.reset(stream);
  // Keep freed blocks in the pool: every forward pass allocates the same
  // temporaries again.
  cudaMemPool_t pool;
  if (cudaDeviceGetDefaultMemPool(&pool, s.device) == cudaSuccess) {
    uint64_t keep = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  cublasHandle_t blas = nullptr;
  cublasStatus_t brc = cublasCreate(&blas);
  if (brc != CUBLAS_STATUS_SUCCESS)
    return setError(TPRT_ERR_BLAS, "tprt_init",
                    std::string("cublasCreate failed: ") +
                        cublasGetStatusString(brc));
  r.blas.reset(blas);
  cublasSetStream(blas, stream);
  // fp32 stays fp32 (no TF32) unless asked: the outputs are compared with the
  // CPU backend's.
  if (const char *tf32 = std::getenv("TPRT_ALLOW_TF32"); tf32 && *tf32 == '1')
    cublasSetMathMode(blas, CUBLAS_TF32_TENSOR_OP_MATH);
  return TPRT_OK;
}

static tprt_status initNccl(State &s, Resources &r) {
  ncclUniqueId id{};
  if (s.rank == 0) {
    ncclResult_t rc = ncclGetUniqueId(&id);
    if (rc != ncclSuccess)
      return setError(TPRT_ERR_COMM, "tprt_init",
                      std::string("ncclGetUniqueId failed: ") +
                          ncclGetErrorString(rc));
  }
  int rc = MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, r.comm->get());
  if (rc != MPI_SUCCESS)
    return setError(TPRT_ERR_COMM, "tprt_init",
                    "MPI_Bcast of the NCCL id failed: " + mpiErrorString(rc));
  ncclComm_t comm = nullptr;
  ncclResult_t nrc = ncclCommInitRank(&comm, s.worldSize, id, s.rank);
  if (nrc != ncclSuccess)
    return setError(TPRT_ERR_COMM, "tprt_init",
                    std::string("ncclCommInitRank failed: ") +
                        ncclGetErrorString(nrc));
  r.nccl.reset(comm);
  return TPRT_OK;
}

extern "C" tprt_status tprt_init(int *argc, char ***argv) {
  State &s = state();
  if (s.initialized)
    return TPRT_OK;
  // Owned by the state from here on: the watchdog reads it there. On
  // failure, resetting it releases what was acquired so far.
  s.resources = std::make_unique<Resources>();
  Resources &r = *s.resources;
  tprt_status status = tprt::common::startRank(s, argc, argv, r.comm);
  if (status == TPRT_OK)
    status = initDevice(s, r);
  if (status == TPRT_OK)
    status = initNccl(s, r);
  if (status != TPRT_OK) {
    s.resources.reset();
    return status;
  }
  startWatchdog();
  tprt::common::startedRank(s);
  return TPRT_OK;
}

extern "C" tprt_status tprt_finalize(void) {
  State &s = state();
  if (tprt_status st = tprt::common::checkRunning(s); st != TPRT_OK)
    return st;
  s.resources.reset();
  return tprt::common::finishRank(s);
}

extern "C" int tprt_rank(void) { return state().rank; }
extern "C" int tprt_world_size(void) { return state().worldSize; }
extern "C" const char *tprt_last_error(void) {
  return tprt::common::lastError().c_str();
}

void tprt::cuda::collectTimes(bool wait) {
  State &s = state();
  Resources &r = *s.resources;
  std::vector<TimedCall> still;
  for (TimedCall &t : r.pendingTimes) {
    if (wait)
      cudaEventSynchronize(t.stop.get());
    float ms = 0;
    if (cudaEventElapsedTime(&ms, t.start.get(), t.stop.get()) == cudaSuccess) {
      s.counters.*t.seconds += ms * 1e-3;
      r.freeEvents.push_back(std::move(t.start));
      r.freeEvents.push_back(std::move(t.stop));
    } else {
      still.push_back(std::move(t));
    }
  }
  r.pendingTimes.swap(still);
}

extern "C" void tprt_get_counters(tprt_counters *out) {
  if (state().initialized)
    collectTimes(/*wait=*/true);
  if (out)
    *out = state().counters;
}

extern "C" void tprt_reset_counters(void) {
  if (state().initialized)
    collectTimes(/*wait=*/true);
  state().counters = tprt_counters{};
}

extern "C" void tprt_abort(const char *message) {
  // A collective may be stuck on the GPU: abort the communicator so no
  // kernel keeps waiting for a peer that is gone. (Not reset: the other
  // thread may read it; the process ends next.)
  tprt::common::abortRanks(state(), message, onWatchdogThread(), [] {
    if (ncclComm_t comm = state().nccl())
      ncclCommAbort(comm);
  });
}

//===----------------------------------------------------------------------===//
// Launcher calls: device buffers
//===----------------------------------------------------------------------===//

static tprt_status cudaStatus(const char *call, cudaError_t rc,
                              const char *what) {
  if (rc == cudaSuccess)
    return TPRT_OK;
  return setError(TPRT_ERR_NO_DEVICE, call,
                  std::string(what) + " failed: " + cudaGetErrorString(rc));
}

extern "C" tprt_status tprt_device_alloc(size_t bytes, int zero, void **out) {
  const char *call = "tprt_device_alloc";
  if (!state().initialized)
    return setError(TPRT_ERR_STATE, call, "the runtime is not initialised");
  *out = nullptr;
  if (tprt_status st =
          cudaStatus(call, cudaMalloc(out, bytes ? bytes : 1), "cudaMalloc");
      st != TPRT_OK)
    return st;
  // On the rank's stream (non-blocking: the legacy default stream's
  // cudaMemset would not be ordered before the work issued on it).
  if (zero && bytes) {
    cudaError_t rc = cudaMemsetAsync(*out, 0, bytes, state().stream());
    if (rc == cudaSuccess)
      rc = cudaStreamSynchronize(state().stream());
    return cudaStatus(call, rc, "cudaMemsetAsync");
  }
  return TPRT_OK;
}

extern "C" tprt_status tprt_device_free(void *pointer) {
  return cudaStatus("tprt_device_free", cudaFree(pointer), "cudaFree");
}

extern "C" tprt_status tprt_copy_to_device(void *device, const void *host,
                                           size_t bytes) {
  const char *call = "tprt_copy_to_device";
  if (!state().initialized)
    return setError(TPRT_ERR_STATE, call, "the runtime is not initialised");
  cudaError_t rc = cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                                   state().stream());
  if (rc == cudaSuccess)
    rc = cudaStreamSynchronize(state().stream());
  return cudaStatus(call, rc, "cudaMemcpy (host to device)");
}

extern "C" tprt_status tprt_copy_to_host(void *host, const void *device,
                                         size_t bytes) {
  const char *call = "tprt_copy_to_host";
  if (!state().initialized)
    return setError(TPRT_ERR_STATE, call, "the runtime is not initialised");
  cudaError_t rc = cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                                   state().stream());
  if (rc == cudaSuccess)
    rc = cudaStreamSynchronize(state().stream());
  return cudaStatus(call, rc, "cudaMemcpy (device to host)");
}

extern "C" void tprt_read_scalar(void *host, const void *device,
                                 int64_t bytes) {
  if (state().capturing)
    fail("tprt_read_scalar",
         "the call being captured as a CUDA graph reads device memory on the "
         "host (its manifest says \"host_reads\"); a graph cannot replay it");
  if (tprt_copy_to_host(host, device, size_t(bytes)) != TPRT_OK)
    tprt_abort(tprt_last_error());
}

extern "C" tprt_status tprt_device_synchronize(void) {
  const char *call = "tprt_device_synchronize";
  if (!state().initialized)
    return setError(TPRT_ERR_STATE, call, "the runtime is not initialised");
  return cudaStatus(call, cudaStreamSynchronize(state().stream()),
                    "cudaStreamSynchronize");
}

extern "C" void *tprt_cuda_stream(void) { return state().stream(); }
extern "C" int tprt_cuda_device(void) { return state().device; }

//===----------------------------------------------------------------------===//
// Compiled code's allocations (finalize-memref-to-llvm use-generic-functions)
//===----------------------------------------------------------------------===//

extern "C" __attribute__((visibility("default"))) void *
_mlir_memref_to_llvm_alloc(size_t bytes) {
  void *pointer = nullptr;
  check("alloc", cudaMallocAsync(&pointer, bytes ? bytes : 1, stream("alloc")),
        "cudaMallocAsync");
  return pointer;
}

extern "C" __attribute__((visibility("default"))) void *
_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  // cudaMalloc* memory is aligned to at least 256 bytes.
  if (alignment > 256)
    fail("aligned_alloc", "alignment " + std::to_string(alignment) +
                              " above the 256 bytes device memory has");
  return _mlir_memref_to_llvm_alloc(bytes);
}

extern "C" __attribute__((visibility("default"))) void
_mlir_memref_to_llvm_free(void *pointer) {
  if (pointer)
    check("free", cudaFreeAsync(pointer, stream("free")), "cudaFreeAsync");
}

/// The device copy of `host`, a constant array of `elementBytes`-byte
/// elements, uploaded by the first call for those bytes.
static void deviceConstant(const char *call, tprt_memref1d_any *result,
                           const tprt_memref1d_any *host, size_t elementBytes) {
  cudaStream_t st = stream(call);
  if (host->sizes[0] < 0 || (host->sizes[0] > 1 && host->strides[0] != 1))
    fail(call, "expected a contiguous array, got size " +
                   std::to_string(host->sizes[0]) + " stride " +
                   std::to_string(host->strides[0]));
  const char *data =
      static_cast<const char *>(host->aligned) + host->offset * elementBytes;
  size_t bytes = size_t(host->sizes[0]) * elementBytes;
  // By address and size: the linker may give two equal constants one
  // address, never two of different sizes.
  DeviceBuffer<char> &copy = state().resources->constants[{data, bytes}];
  if (!copy) {
    // Stream-ordered, as every use is (cudaMalloc would wait for the work
    // queued so far); the source never changes.
    void *pointer = nullptr;
    check(call, cudaMallocAsync(&pointer, bytes ? bytes : 1, st),
          "cudaMallocAsync");
    copy = DeviceBuffer<char>(static_cast<char *>(pointer), {st});
    check(call,
          cudaMemcpyAsync(copy.get(), data, bytes, cudaMemcpyHostToDevice, st),
          "cudaMemcpyAsync (a constant, host to device)");
  }
  *result = {copy.get(), copy.get(), 0, {host->sizes[0]}, {1}};
}

#define TPRT_DEVICE_CONSTANT(suffix, elementBytes)                             \
  extern "C" void _mlir_ciface_tprt_device_constant_##suffix(                  \
      tprt_memref1d_any *result, tprt_memref1d_any *host) {                    \
    deviceConstant("tprt_device_constant_" #suffix, result, host,              \
                   elementBytes);                                              \
  }
TPRT_DEVICE_CONSTANT(f32, 4)
TPRT_DEVICE_CONSTANT(f64, 8)
TPRT_DEVICE_CONSTANT(f16, 2)
TPRT_DEVICE_CONSTANT(bf16, 2)
TPRT_DEVICE_CONSTANT(i64, 8)
TPRT_DEVICE_CONSTANT(i32, 4)
TPRT_DEVICE_CONSTANT(i16, 2)
TPRT_DEVICE_CONSTANT(i8, 1)
TPRT_DEVICE_CONSTANT(i1, 1)
#undef TPRT_DEVICE_CONSTANT

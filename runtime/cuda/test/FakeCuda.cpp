//===- FakeCuda.cpp - host stand-ins for cudart, cuBLAS and NCCL ----------===//
//
// For tprt-cuda-fake-unittests, which runs libtprt_cuda's sources on a
// machine without a GPU: "device" memory is host memory, streams and events
// are tokens and every call completes at once; cublasGemmEx and
// cublasGemmStridedBatchedEx follow cuBLAS's documented column-major
// definition (fp32, or bf16 A and B with fp32 C), so the runtime's row-major
// <-> column-major mapping, strided copies and batch strides are checked
// against the definition rather than against themselves; NCCL's
// collectives are MPI's on MPI_COMM_WORLD (the runtime has MPI up), so
// several ranks move real data. Kernel loading is not faked (it fails).
// Allocations are recorded, and cuBLAS, NCCL, memset and the copies (by their
// kind) refuse pointers outside them with a message: host memory a real GPU
// could not read. TPRT_FAKE_NCCL=hang makes the first collective never finish,
// as when a peer never arrives: events recorded after it stay not ready and
// waiting for the stream or such an event blocks for good; =error does the same
// and ncclCommGetAsyncError reports an error (test/Cuda/fake-e2e.test).
// Stream capture keeps CUDA's rules, not its deferral: while capturing, the
// calls CUDA refuses then (a wait for the stream or an event, cudaMalloc,
// cudaMemset, a copy with a host end) fail and invalidate the capture, the
// stream's work after that fails too, and cudaStreamEndCapture fails, as
// CUDA's would; the work captured runs at once all the same (the emulated
// kernels run on the host when the model calls them, so no graph could hold
// them), and cudaGraphLaunch is not supported. A launcher that falls back
// to a plain call after a refused launch so runs the step twice.
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace {
template <typename T> T token() { return reinterpret_cast<T>(new char(0)); }
template <typename T> void drop(T t) { delete reinterpret_cast<char *>(t); }
/// "Device" allocations: start -> size.
std::mutex allocationsMutex;
std::map<const char *, size_t> allocations;

cudaError_t allocate(void **p, size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!*p)
    return cudaErrorMemoryAllocation;
  std::lock_guard<std::mutex> lock(allocationsMutex);
  allocations[static_cast<const char *>(*p)] = bytes;
  return cudaSuccess;
}
cudaError_t release(void *p) {
  if (!p)
    return cudaSuccess;
  std::lock_guard<std::mutex> lock(allocationsMutex);
  if (!allocations.erase(static_cast<const char *>(p))) {
    std::fprintf(stderr, "fake cuda: cudaFree of %p, not a device allocation\n",
                 p);
    return cudaErrorInvalidValue;
  }
  std::free(p);
  return cudaSuccess;
}
/// Whether `p` points into a device allocation; prints what `call` was
/// given otherwise.
bool onDevice(const char *call, const void *p) {
  auto *c = static_cast<const char *>(p);
  std::lock_guard<std::mutex> lock(allocationsMutex);
  auto it = allocations.upper_bound(c);
  if (it != allocations.begin()) {
    --it;
    if (c < it->first + std::max<size_t>(it->second, 1))
      return true;
  }
  std::fprintf(stderr, "fake cuda: %s given %p, which is not device memory\n",
               call, p);
  return false;
}
/// Whether the ends of a copy of `kind` are where it says.
bool copyEndsOnDevice(const char *call, void *dst, const void *src,
                      cudaMemcpyKind kind) {
  bool toDevice =
      kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool fromDevice =
      kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  return (!toDevice || onDevice(call, dst)) &&
         (!fromDevice || onDevice(call, src));
}

/// Stream capture: none, going on, or invalidated by a call it refuses.
enum class Capture { None, Active, Invalidated };
std::atomic<Capture> capture{Capture::None};
/// What a call returns under the capture rules: work issued after an
/// invalidated capture fails; a call CUDA refuses while capturing
/// (`refused`) fails and invalidates the capture; cudaSuccess otherwise.
cudaError_t captureRule(bool refused) {
  if (capture == Capture::Invalidated)
    return cudaErrorStreamCaptureInvalidated;
  if (!refused || capture == Capture::None)
    return cudaSuccess;
  capture = Capture::Invalidated;
  return cudaErrorStreamCaptureUnsupported;
}
/// Whether a copy of `kind` has a host end (cudaMemcpyDefault: as the
/// pointers say; the runtime gives it device pointers only).
bool hostEnd(cudaMemcpyKind kind) {
  return kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost ||
         kind == cudaMemcpyHostToHost;
}

std::atomic<bool> stuck{false}, asyncError{false};
void issueCollective() {
  const char *mode = std::getenv("TPRT_FAKE_NCCL");
  if (mode && (!std::strcmp(mode, "hang") || !std::strcmp(mode, "error")))
    stuck = true;
  if (mode && !std::strcmp(mode, "error"))
    asyncError = true;
}
[[noreturn]] void blockForGood() {
  for (;;)
    std::this_thread::sleep_for(std::chrono::seconds(1));
}
/// An event: whether the work before it never finishes.
using Event = std::atomic<bool>;
Event &event(cudaEvent_t e) { return *reinterpret_cast<Event *>(e); }
} // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t rc) {
  switch (rc) { // CUDA's words for the errors the stand-ins give themselves
  case cudaErrorStreamCaptureUnsupported:
    return "operation not permitted when stream is capturing";
  case cudaErrorStreamCaptureInvalidated:
    return "operation failed due to a previous error during capture";
  case cudaErrorNotSupported:
    return "operation not supported";
  default:
    return "fake cuda error";
  }
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) {
  *s = token<cudaStream_t>();
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  drop(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) {
  if (cudaError_t rc = captureRule(true))
    return rc;
  if (stuck)
    blockForGood();
  return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t) {
  return stuck ? cudaErrorNotReady : cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  return cudaSuccess;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int) {
  // One pool per device, as CUDA has: a new token per call would leak.
  static const cudaMemPool_t defaultPool = token<cudaMemPool_t>();
  *pool = defaultPool;
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void *) {
  return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t bytes) {
  if (cudaError_t rc = captureRule(true))
    return rc;
  return allocate(p, bytes);
}
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t) {
  if (cudaError_t rc = captureRule(false))
    return rc;
  return allocate(p, bytes);
}
cudaError_t cudaFree(void *p) { return release(p); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t) {
  if (cudaError_t rc = captureRule(hostEnd(kind)))
    return rc;
  if (!copyEndsOnDevice("cudaMemcpyAsync", dst, src, kind))
    return cudaErrorInvalidValue;
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t) {
  if (cudaError_t rc = captureRule(hostEnd(kind)))
    return rc;
  if (width > dpitch || width > spitch)
    return cudaErrorInvalidPitchValue;
  if (!copyEndsOnDevice("cudaMemcpy2DAsync", dst, src, kind))
    return cudaErrorInvalidValue;
  for (size_t r = 0; r < height; ++r)
    std::memmove(static_cast<char *>(dst) + r * dpitch,
                 static_cast<const char *>(src) + r * spitch, width);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t) {
  if (cudaError_t rc = captureRule(false))
    return rc;
  if (!onDevice("cudaMemsetAsync", p))
    return cudaErrorInvalidValue;
  std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int value, size_t bytes) {
  if (cudaError_t rc = captureRule(true))
    return rc;
  if (!onDevice("cudaMemset", p))
    return cudaErrorInvalidValue;
  std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = reinterpret_cast<cudaEvent_t>(new Event(false));
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) {
  return cudaEventCreate(e);
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete &event(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  if (cudaError_t rc = captureRule(false))
    return rc;
  event(e) = bool(stuck);
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
  return event(e) ? cudaErrorNotReady : cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (cudaError_t rc = captureRule(true))
    return rc;
  if (event(e))
    blockForGood();
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t stop) {
  if (event(start) || event(stop))
    return cudaErrorNotReady;
  *ms = 0.001f;
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) {
  Capture none = Capture::None;
  return capture.compare_exchange_strong(none, Capture::Active)
             ? cudaSuccess
             : cudaErrorIllegalState;
}
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t *graph) {
  Capture was = capture.exchange(Capture::None);
  if (was == Capture::None)
    return cudaErrorIllegalState;
  if (was == Capture::Invalidated)
    return cudaErrorStreamCaptureInvalidated;
  *graph = token<cudaGraph_t>();
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t,
                                 unsigned long long) {
  *exec = token<cudaGraphExec_t>();
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  drop(graph);
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  drop(exec);
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) {
  return cudaErrorNotSupported; // what it captured ran already
}
cudaError_t cudaLaunchKernel(const void *, dim3, dim3, void **, size_t,
                             cudaStream_t) {
  return cudaErrorNotSupported;
}
cudaError_t cudaLibraryLoadData(cudaLibrary_t *, const void *, cudaJitOption *,
                                void **, unsigned, cudaLibraryOption *, void **,
                                unsigned) {
  return cudaErrorNotSupported;
}
cudaError_t cudaLibraryGetKernel(cudaKernel_t *, cudaLibrary_t, const char *) {
  return cudaErrorNotSupported;
}
cudaError_t cudaLibraryUnload(cudaLibrary_t) { return cudaSuccess; }

cublasStatus_t cublasCreate(cublasHandle_t *h) {
  *h = token<cublasHandle_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t h) {
  drop(h);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) {
  return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusString(cublasStatus_t) {
  return "fake cublas error";
}

/// Element `i` of a fp32 or bf16 array, as a float.
static float element(const void *base, cudaDataType_t type, long long i) {
  if (type == CUDA_R_32F)
    return static_cast<const float *>(base)[i];
  uint32_t bits = uint32_t(static_cast<const uint16_t *>(base)[i]) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// C = alpha op(A) op(B) + beta C, column-major, as cuBLAS defines it; A and
/// B fp32 or bf16 (the same), C fp32.
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const void *alpha, const void *A, cudaDataType_t at, int lda,
    long long sa, const void *B, cudaDataType_t bt, int ldb, long long sb,
    const void *beta, void *C, cudaDataType_t ct, int ldc, long long sc,
    int batch, cublasComputeType_t, cublasGemmAlgo_t) {
  if ((at != CUDA_R_32F && at != CUDA_R_16BF) || bt != at || ct != CUDA_R_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!onDevice("cublasGemm A", A) || !onDevice("cublasGemm B", B) ||
      !onDevice("cublasGemm C", C))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  // cuBLAS's argument checks.
  if (m < 0 || n < 0 || k < 0 || ldc < std::max(1, m) ||
      lda < std::max(1, ta == CUBLAS_OP_N ? m : k) ||
      ldb < std::max(1, tb == CUBLAS_OP_N ? k : n))
    return CUBLAS_STATUS_INVALID_VALUE;
  float al = *static_cast<const float *>(alpha);
  float be = *static_cast<const float *>(beta);
  for (int s = 0; s < batch; ++s) {
    float *c = static_cast<float *>(C) + s * sc;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double sum = 0;
        for (int p = 0; p < k; ++p) {
          float x =
              element(A, at,
                      s * sa + (ta == CUBLAS_OP_N ? i + p * (long long)lda
                                                  : p + i * (long long)lda));
          float y =
              element(B, bt,
                      s * sb + (tb == CUBLAS_OP_N ? p + j * (long long)ldb
                                                  : j + p * (long long)ldb));
          sum += double(x) * y;
        }
        // beta 0: C is not read (cuBLAS: NaN there does not propagate).
        c[i + j * ldc] =
            float(be == 0.0f ? al * sum : al * sum + be * c[i + j * ldc]);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
                            cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType_t at,
                            int lda, const void *B, cudaDataType_t bt, int ldb,
                            const void *beta, void *C, cudaDataType_t ct,
                            int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo) {
  return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, A, at, lda, 0, B,
                                    bt, ldb, 0, beta, C, ct, ldc, 0, 1, compute,
                                    algo);
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::memset(id, 0, sizeof(*id));
  return ncclSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId, int) {
  int worldSize = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  if (nranks != worldSize)
    return ncclInvalidUsage; // the fake's ranks are MPI_COMM_WORLD's
  *comm = token<ncclComm_t>();
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  drop(comm);
  return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) { return ncclCommDestroy(comm); }
ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t *r) {
  *r = asyncError ? ncclSystemError : ncclSuccess;
  return ncclSuccess;
}
const char *ncclGetErrorString(ncclResult_t) { return "fake nccl error"; }
const char *ncclGetLastError(ncclComm_t) { return ""; }
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t,
                           cudaStream_t) {
  if (!onDevice("ncclAllReduce", send) || !onDevice("ncclAllReduce", recv) ||
      type != ncclFloat32 || count > size_t(INT_MAX))
    return ncclInvalidArgument;
  MPI_Op mpiOp = op == ncclSum   ? MPI_SUM
                 : op == ncclMax ? MPI_MAX
                 : op == ncclMin ? MPI_MIN
                                 : MPI_OP_NULL;
  if (mpiOp == MPI_OP_NULL)
    return ncclInvalidArgument;
  issueCollective();
  if (stuck) // never arrives
    return ncclSuccess;
  int rc = MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, int(count),
                         MPI_FLOAT, mpiOp, MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}
ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclComm_t, cudaStream_t) {
  if (!onDevice("ncclAllGather", send) || !onDevice("ncclAllGather", recv) ||
      type != ncclFloat32 || count > size_t(INT_MAX) || send == recv)
    return ncclInvalidArgument;
  issueCollective();
  if (stuck)
    return ncclSuccess;
  int rc = MPI_Allgather(send, int(count), MPI_FLOAT, recv, int(count),
                         MPI_FLOAT, MPI_COMM_WORLD);
  return rc == MPI_SUCCESS ? ncclSuccess : ncclSystemError;
}

} // extern "C"

//===- Mgpu.cpp - the mgpu* functions MLIR's gpu-to-llvm code calls -------===//
//
// tp-compile --backend cuda lowers pointwise ops, reductions, softmax and
// norms through MLIR's GPU path; the host side (gpu-to-llvm and the
// gpu.binary translation) calls mgpuModuleLoad / mgpuModuleGetFunction /
// mgpuLaunchKernel / mgpuStream*. Upstream implements them in
// libmlir_cuda_runtime on the driver API, which Debian does not ship and
// which would need libcuda at link time; these use the runtime API only
// (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel).
//
// Every launch goes to the rank's stream: mgpuStreamCreate returns it, and
// mgpuStreamSynchronize / mgpuStreamDestroy on it do nothing, since all of a
// forward pass (kernels, cuBLAS, NCCL, allocations) is ordered on that one
// stream. The launcher synchronises at the end of the forward pass.
//
//===----------------------------------------------------------------------===//

#include "CudaState.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

using namespace tprt::cuda;

#define MGPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// A kernel image, loaded on first use (the module constructor runs at
/// dlopen, possibly before the launcher picked the device).
struct Module {
  const void *image;
  size_t size;
  cudaLibrary_t library = nullptr;
  std::map<std::string, cudaKernel_t> kernels;
};

std::mutex &mutex() {
  static std::mutex m;
  return m;
}

/// The kernels' names, for TPRT_KERNEL_LOG (under mutex()).
std::unordered_map<const void *, std::string> &kernelNames() {
  static std::unordered_map<const void *, std::string> names;
  return names;
}

FILE *kernelLog() {
  static FILE *log = [] {
    const char *path = std::getenv("TPRT_KERNEL_LOG");
    return path && *path ? std::fopen(path, "w") : nullptr;
  }();
  return log;
}

} // namespace

MGPU_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  return new Module{data, size, nullptr, {}};
}

MGPU_EXPORT void *mgpuModuleLoadJIT(void *data, int /*optLevel*/) {
  return new Module{data, 0, nullptr, {}};
}

MGPU_EXPORT void mgpuModuleUnload(void *module) {
  auto *m = static_cast<Module *>(module);
  if (!m)
    return;
  if (m->library)
    cudaLibraryUnload(m->library); // may fail at exit; nothing to do then
  delete m;
}

MGPU_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  const char *call = "mgpuModuleGetFunction";
  auto *m = static_cast<Module *>(module);
  if (!m)
    fail(call, std::string("the model's kernels were never loaded (") + name +
                   "): its constructor did not run; was it linked with "
                   ".ctors instead of .init_array?");
  std::lock_guard<std::mutex> lock(mutex());
  if (!m->library)
    check(call,
          cudaLibraryLoadData(&m->library, m->image, nullptr, nullptr, 0,
                              nullptr, nullptr, 0),
          "cudaLibraryLoadData (the model's kernels; built for sm_90?)");
  auto it = m->kernels.find(name);
  if (it != m->kernels.end())
    return it->second;
  cudaKernel_t kernel = nullptr;
  check(call, cudaLibraryGetKernel(&kernel, m->library, name),
        ("cudaLibraryGetKernel(" + std::string(name) + ")").c_str());
  m->kernels.emplace(name, kernel);
  kernelNames().emplace(static_cast<const void *>(kernel), name);
  return kernel;
}

MGPU_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                  intptr_t gridY, intptr_t gridZ,
                                  intptr_t blockX, intptr_t blockY,
                                  intptr_t blockZ, int32_t smem, void *stream,
                                  void **params, void ** /*extra*/,
                                  size_t /*paramsCount*/) {
  const char *call = "mgpuLaunchKernel";
  dim3 grid{unsigned(gridX), unsigned(gridY), unsigned(gridZ)};
  dim3 block{unsigned(blockX), unsigned(blockY), unsigned(blockZ)};
  cudaStream_t s =
      stream ? static_cast<cudaStream_t>(stream) : tprt::cuda::stream(call);
  FILE *log = state().capturing ? nullptr : kernelLog();
  Event start, stop;
  if (log) {
    start = takeEvent();
    stop = takeEvent();
    check(call, cudaEventRecord(start.get(), s), "cudaEventRecord");
  }
  check(call,
        cudaLaunchKernel(static_cast<const void *>(function), grid, block,
                         params, size_t(smem), s),
        "cudaLaunchKernel");
  if (!log)
    return;
  check(call, cudaEventRecord(stop.get(), s), "cudaEventRecord");
  check(call, cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float ms = 0;
  check(call, cudaEventElapsedTime(&ms, start.get(), stop.get()),
        "cudaEventElapsedTime");
  std::string name;
  {
    std::lock_guard<std::mutex> lock(mutex());
    auto it = kernelNames().find(function);
    name = it == kernelNames().end() ? "?" : it->second;
  }
  std::fprintf(log, "%s %u %u %u %u %u %u %.6f\n", name.c_str(), grid.x, grid.y,
               grid.z, block.x, block.y, block.z, double(ms));
  std::fflush(log);
  std::vector<Event> &free = state().resources->freeEvents;
  free.push_back(std::move(start));
  free.push_back(std::move(stop));
}

MGPU_EXPORT void *mgpuStreamCreate() {
  return tprt::cuda::stream("mgpuStreamCreate");
}

MGPU_EXPORT void mgpuStreamDestroy(void *stream) {
  if (stream && stream != state().stream())
    cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

MGPU_EXPORT void mgpuStreamSynchronize(void *stream) {
  // The rank's stream orders the whole forward pass; waiting here would
  // only add host round trips. Report launch errors without waiting.
  if (stream == state().stream()) {
    cudaError_t rc = cudaPeekAtLastError();
    if (rc != cudaSuccess)
      check("mgpuStreamSynchronize", cudaGetLastError(), "a kernel launch");
    return;
  }
  check("mgpuStreamSynchronize",
        cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
        "cudaStreamSynchronize");
}

MGPU_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  check("mgpuStreamWaitEvent",
        cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                            static_cast<cudaEvent_t>(event), 0),
        "cudaStreamWaitEvent");
}

MGPU_EXPORT void *mgpuEventCreate() {
  cudaEvent_t event = nullptr;
  check("mgpuEventCreate",
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
        "cudaEventCreate");
  return event;
}

MGPU_EXPORT void mgpuEventDestroy(void *event) {
  cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

MGPU_EXPORT void mgpuEventSynchronize(void *event) {
  check("mgpuEventSynchronize",
        cudaEventSynchronize(static_cast<cudaEvent_t>(event)),
        "cudaEventSynchronize");
}

MGPU_EXPORT void mgpuEventRecord(void *event, void *stream) {
  check("mgpuEventRecord",
        cudaEventRecord(static_cast<cudaEvent_t>(event),
                        static_cast<cudaStream_t>(stream)),
        "cudaEventRecord");
}

MGPU_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream,
                               bool /*isHostShared*/) {
  void *pointer = nullptr;
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream)
                          : tprt::cuda::stream("mgpuMemAlloc");
  check("mgpuMemAlloc", cudaMallocAsync(&pointer, bytes ? bytes : 1, s),
        "cudaMallocAsync");
  return pointer;
}

MGPU_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  cudaStream_t s = stream ? static_cast<cudaStream_t>(stream)
                          : tprt::cuda::stream("mgpuMemFree");
  if (pointer)
    check("mgpuMemFree", cudaFreeAsync(pointer, s), "cudaFreeAsync");
}

MGPU_EXPORT void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  check("mgpuMemcpy",
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                        static_cast<cudaStream_t>(stream)),
        "cudaMemcpyAsync");
}

MGPU_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                              void *stream) {
  // Only zero fills are byte-wise; other patterns need a kernel.
  if (value != 0)
    fail("mgpuMemset32", "non-zero fill values are not supported");
  check("mgpuMemset32",
        cudaMemsetAsync(dst, 0, count * 4, static_cast<cudaStream_t>(stream)),
        "cudaMemsetAsync");
}

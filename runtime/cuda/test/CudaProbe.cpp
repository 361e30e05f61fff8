//===- CudaProbe.cpp - is a GPU usable here? ------------------------------===//
//
// Exits 0 and prints "GPU <n>: <name>" lines when the CUDA runtime finds at
// least one device; otherwise prints why and exits 1. test/lit.cfg.py sets
// the `cuda` feature from it.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

#include <cstdio>

int main() {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    std::printf("no GPU: cudaGetDeviceCount failed: %s\n",
                cudaGetErrorString(rc));
    return 1;
  }
  if (count < 1) {
    std::printf("no GPU: no CUDA device\n");
    return 1;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess)
      std::printf("GPU %d: %s (sm_%d%d)\n", i, prop.name, prop.major,
                  prop.minor);
  }
  return 0;
}

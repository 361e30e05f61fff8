//===- TestCudaEmulation.cpp - the cuda lowering's loops on the host ------===//
//
// `tp-test-lower-cuda-emulated`: the cuda pipeline up to the tiled parallel
// loops that become the kernels (its real stages 1 and 2), then the real
// host lowering of both backends (addHostToLLVM) for those loops as well,
// so that the loop structure of the kernels is checked numerically without
// a GPU. runtime=cuda: buffers and constants come from libtprt_cuda, run
// over the host stand-ins for cudart (runtime/cuda/test/FakeCuda.cpp), as
// on a GPU; runtime=cpu: from libtprt (malloc'd buffers, constants in place;
// MPI at several ranks). What it does not cover: the mapping to blocks and
// threads, NVVM, the kernels' launches.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/CudaPipeline.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct EmulationOptions : public PassPipelineOptions<EmulationOptions> {
  Option<std::string> runtime{*this, "runtime", llvm::cl::desc("cuda or cpu"),
                              llvm::cl::init("cuda")};
  Option<std::string> dtype{*this, "dtype",
                            llvm::cl::desc("GEMM inputs: f32 or bf16"),
                            llvm::cl::init("f32")};
};

void buildEmulation(OpPassManager &pm, const EmulationOptions &options) {
  tp::CudaLoweringOptions cuda;
  cuda.gemmDtype = options.dtype;
  bool cudaRuntime = options.runtime == "cuda";
  tp::addCudaBufferStages(pm, cuda);
  if (cudaRuntime)
    pm.addPass(tp::createTPDeviceConstants());
  tp::addCudaKernelLoops(pm, cuda);
  tp::addHostToLLVM(pm, /*genericAllocation=*/cudaRuntime);
}
} // namespace

namespace mlir::tp::test {
void registerTestCudaEmulation() {
  PassPipelineRegistration<EmulationOptions>(
      "tp-test-lower-cuda-emulated",
      "Test only: the cuda lowering's kernel loops, lowered for the host",
      buildEmulation);
}
} // namespace mlir::tp::test

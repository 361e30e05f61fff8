//===- CudaPasses.h - the cuda lowering's own passes ------------*- C++ -*-===//
//
// Internal to MLIRTPCudaLowering (CudaPipeline.cpp builds the pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_CONVERSION_CUDA_CUDAPASSES_H
#define TP_LIB_CONVERSION_CUDA_CUDAPASSES_H

#include "tp/Conversion/CudaPipeline.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::tp {

/// tp-device-constants (DeviceConstants.cpp): every memref.global read
/// through its device copy (tprt_device_constant_f32).
std::unique_ptr<Pass> createDeviceConstantsPass();

/// tp-gemm-bf16 (GemmBf16.cpp): bf16 GEMM operands, fp32 accumulation; the
/// weights only GEMMs read stored in bf16 (kBf16ArgsAttrName).
std::unique_ptr<Pass> createGemmBf16Pass();

/// tp-merge-gpu-modules (MergeGpuModules.cpp): every outlined kernel in one
/// gpu.module, so that gpu-module-to-binary runs ptxas once.
std::unique_ptr<Pass> createMergeGpuModulesPass();

/// tp-split-reductions (SplitReductions.cpp): reductions over at least
/// `minSize` elements as interleaved partial reductions plus a short final
/// one.
std::unique_ptr<Pass> createSplitReductionsPass(
    int64_t minSize = CudaLoweringOptions().splitReductionsMin);

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_CUDA_CUDAPASSES_H

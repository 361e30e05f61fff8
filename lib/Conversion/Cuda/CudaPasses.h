//===- CudaPasses.h - the cuda lowering's own passes ------------*- C++ -*-===//
//
// Internal to MLIRTPCudaLowering (CudaPipeline.cpp builds the pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_CONVERSION_CUDA_CUDAPASSES_H
#define TP_LIB_CONVERSION_CUDA_CUDAPASSES_H

#include "tp/Conversion/CudaPipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {

// register<Pass>() for the passes of include/tp/Conversion/CudaPasses.td
// (CudaPipeline.h declares their create<Pass>()).
#define GEN_PASS_REGISTRATION
#include "tp/Conversion/CudaPasses.h.inc"

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_CUDA_CUDAPASSES_H

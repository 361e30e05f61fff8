//===- CudaPipeline.h - the cuda lowering of per-rank programs --*- C++ -*-===//
//
// tp-compile --backend cuda: GEMMs and collectives as tprt calls (served by
// libtprt_cuda on cuBLAS and NCCL), everything else through MLIR's GPU path
// (parallel loops -> gpu.launch -> NVVM -> a cubin in a gpu.binary), every
// buffer in device memory (allocations through MLIR's generic allocation
// functions, which libtprt_cuda implements with cudaMallocAsync). See
// docs/gpu.md.
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_CUDAPIPELINE_H
#define TP_CONVERSION_CUDAPIPELINE_H

#include "tp/Conversion/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::tp {

/// Reductions over at least this many elements are split in two stages
/// (tp-split-reductions); chosen by measurement, docs/gpu.md.
inline constexpr int64_t kSplitReductionsMin = 512;

struct CudaLoweringOptions {
  /// The GPU architecture of the kernels.
  std::string chip = "sm_90";
  /// Where the CUDA toolkit is (ptxas for cubins, libdevice); empty: search
  /// the usual places.
  std::string toolkitPath;
  /// gpu-module-to-binary format: "bin" (cubin: needs ptxas at compile
  /// time), "isa" (PTX, compiled by the driver at load time) or "fatbin".
  std::string format = "bin";
  /// Threads per block of the pointwise and reduction kernels.
  int64_t blockSize = 256;
  /// tp-split-reductions' threshold.
  int64_t splitReductionsMin = kSplitReductionsMin;
  /// A reduction and the ops beside it on its rows as one kernel, a block
  /// per row (tp-row-kernels); false keeps a kernel per op, to compare.
  bool rowKernels = true;
  /// GEMM inputs: "f32", or "bf16" (bf16 operands, fp32 accumulation and
  /// output: tprt_matmul_bf16; weights only GEMMs read are stored in bf16,
  /// other operands rounded by a kernel).
  std::string gemmDtype = "f32";
  /// The stages shared with the CPU lowering.
  TensorSimplificationOptions tensor;
};

/// With gemmDtype "bf16": the module attribute (a DictionaryAttr from each
/// entry function's name to a DenseI64ArrayAttr) listing the entry
/// functions' arguments that became bf16 weights, for the
/// manifest (runtime/include/tprt/model.h); the launcher converts them from
/// the checkpoint's fp32. Absent when none did. A note from the lowering to
/// tp-compile, not part of the tp dialect (hence no "tp." prefix).
inline constexpr llvm::StringLiteral kBf16ArgsAttrName = "tpcompile.bf16_args";

/// The cuda lowering down to the LLVM dialect (host) plus gpu.binary
/// (kernels): the three stages below, with tp-device-constants after the
/// first.
void buildCudaLoweringPipeline(OpPassManager &pm,
                               const CudaLoweringOptions &options);
/// Stage 1, on tensors and then buffers: the CPU pipeline's tensor
/// simplifications, long reductions split, collectives and GEMMs as runtime
/// calls (bf16 GEMMs with gemmDtype "bf16"), copies as linalg.copy,
/// deallocation.
void addCudaBufferStages(OpPassManager &pm, const CudaLoweringOptions &options);
/// Stage 2: each remaining linalg op a parallel loop, tiled into blocks of
/// threads (tp-tile-for-gpu): what each kernel will be.
void addCudaKernelLoops(OpPassManager &pm, const CudaLoweringOptions &options);
/// Stage 3: the loops outlined as kernels, compiled to NVVM and a
/// gpu.binary; the host to the LLVM dialect (addHostToLLVM, with kernel
/// launches).
void addCudaKernelsAndHost(OpPassManager &pm,
                           const CudaLoweringOptions &options);

// create<Pass>() for the passes of include/tp/Conversion/CudaPasses.td.
#define GEN_PASS_DECL
#include "tp/Conversion/CudaPasses.h.inc"

/// Registers `tp-lower-cuda` (default options) and the helper passes.
void registerCudaLoweringPipeline();

/// The dialects, interfaces and translations the cuda lowering and its LLVM
/// IR export need.
void registerCudaLoweringDialects(DialectRegistry &registry);

} // namespace mlir::tp

#endif // TP_CONVERSION_CUDAPIPELINE_H

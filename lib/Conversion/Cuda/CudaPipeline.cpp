//===- CudaPipeline.cpp - the cuda lowering pipeline ----------------------===//
//
// Same front as the CPU pipeline (decompose aggregates, polynomial math,
// collectives and GEMMs to tprt calls, bufferization, results to
// out-parameters, deallocation); then the remaining linalg ops become
// parallel loops, tiled so that each becomes one kernel launch (blocks over
// tiles, up to `blockSize` threads in a tile), outlined, compiled to NVVM and
// serialised into a gpu.binary; the host side goes to LLVM with generic
// allocation functions (device memory from libtprt_cuda) and gpu-to-llvm's
// mgpu* calls (also libtprt_cuda).
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "tp/Conversion/CudaPipeline.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tp::buildCudaLoweringPipeline(OpPassManager &pm,
                                         const CudaLoweringOptions &options) {
  addCudaBufferStages(pm, options);
  // After deallocation: the device copies belong to the runtime.
  pm.addPass(createTPDeviceConstants());
  addCudaKernelLoops(pm, options);
  addCudaKernelsAndHost(pm, options);
}

void mlir::tp::addCudaBufferStages(OpPassManager &pm,
                                   const CudaLoweringOptions &options) {
  addTensorSimplifications(pm, options.tensor);
  pm.addNestedPass<func::FuncOp>(createTPSplitReductions(
      {options.splitReductionsMin, /*skipRowKernels=*/options.rowKernels}));
  addRuntimeCallsAndBufferization(pm);
  if (options.gemmDtype == "bf16") {
    // One view per buffer: GEMMs reading the same one share its rounding.
    pm.addPass(createCSEPass());
    pm.addPass(createTPGemmBf16());
  }
  pm.addNestedPass<func::FuncOp>(createTPCopyToLinalg());
  // Deallocation on linalg ops (each op is one use), as the CPU pipeline.
  addDeallocation(pm);
}

void mlir::tp::addCudaKernelLoops(OpPassManager &pm,
                                  const CudaLoweringOptions &options) {
  // Kernels: one per remaining linalg op, but adjacent loops of the same
  // bounds fuse (a launch each costs a decode step microseconds), once the
  // allocations and deallocations between them have moved aside.
  // (tp-fuse-kernel-loops, not upstream's scf-parallel-loop-fusion, which
  // does not compare the two loops' writes.)
  // A reduction and the ops beside it on its rows (a norm, a softmax): one
  // kernel, a block per row, instead of a kernel per op.
  if (options.rowKernels)
    pm.addNestedPass<func::FuncOp>(createTPRowKernels());
  pm.addNestedPass<func::FuncOp>(createTPScalarKernels());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createTPClusterKernelLoops());
  pm.addNestedPass<func::FuncOp>(createTPFuseKernelLoops());
  // A thread's reduction loop keeps its accumulator in a register, not in
  // global memory: each iteration would otherwise wait for the last one's
  // store (a split reduction's 32 steps took microseconds).
  pm.addNestedPass<func::FuncOp>(createTPPromoteAccumulators());
  pm.addPass(createTPHostScalarReads());
  pm.addNestedPass<func::FuncOp>(createTPTileForGpu({options.blockSize}));
}

void mlir::tp::addCudaKernelsAndHost(OpPassManager &pm,
                                     const CudaLoweringOptions &options) {
  pm.addPass(createTPRowKernelsToGpu());
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createTPMergeGpuModules());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkitPath;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // Host: the CPU pipeline's, with the kernel launches.
  addHostToLLVM(pm, /*genericAllocation=*/true, [](OpPassManager &pm) {
    pm.addPass(createGpuToLLVMConversionPass());
  });
}

void mlir::tp::registerCudaLoweringPipeline() {
  registerTPCudaPasses();
  PassPipelineRegistration<>(
      "tp-lower-cuda",
      "Lower a per-rank program for the cuda backend (sm_90 cubins)",
      [](OpPassManager &pm) { buildCudaLoweringPipeline(pm, {}); });
}

void mlir::tp::registerCudaLoweringDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect, scf::SCFDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  // gpu-module-to-binary translates the kernels' LLVM dialect.
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

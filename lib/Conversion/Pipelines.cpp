//===- Pipelines.cpp - the CPU lowering pipeline --------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tp::addTensorSimplifications(
    OpPassManager &pm, const TensorSimplificationOptions &options) {
  // First: everything after, the tensor rewrites included, then works on
  // each distinct layer once, not on every layer of the model.
  if (options.outlineRepeatedBlocks)
    pm.addPass(createTPOutlineRepeatedBlocks());
  pm.addPass(createTPDecomposeAggregates());
  // Elementwise arith and math on whole tensors (TOSA's erf, say) as
  // generics: the later passes and the loop lowering take linalg.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // Before the transpose folding: the weight's transpose reaches the GEMM
  // only once the broadcast between them is gone.
  if (options.foldBroadcastIntoMatmul)
    pm.addPass(createTPFoldBroadcastIntoMatmul());
  pm.addPass(createTPFoldTransposeIntoMatmul());
  pm.addPass(createTPFusePointwise({options.fuseIntoArgReductions}));
  pm.addPass(createTPApproximateMath());
  pm.addPass(createTPUnfoldStridedSlices());
}

void mlir::tp::addRuntimeCallsAndBufferization(OpPassManager &pm) {
  pm.addPass(createTPCollectivesToRuntime());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A KV cache returned in its argument's buffer stays there: through the
  // outlined layers (upstream drops their results equivalent to an
  // argument, the calls forward the operand), then out of the entries.
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
  pm.addPass(createTPInPlaceResults());
  // Callers (tp-run) own the result buffers: results become trailing
  // out-parameters, written in place when the result was a fresh buffer.
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createTPLinalgToRuntime());
}

void mlir::tp::addDeallocation(OpPassManager &pm) {
  // Free every temporary, each right after its last use: tp-run calls the
  // forward pass many times.
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createTPEarlyDealloc());
}

void mlir::tp::addHostToLLVM(
    OpPassManager &pm, bool genericAllocation,
    llvm::function_ref<void(OpPassManager &)> moreConversions) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = genericAllocation;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // bf16 conversions as integer arithmetic: LLVM would call __truncsfbf2,
  // which Debian 12's libgcc (12.2) lacks, so a model would not load there.
  pm.addPass(createTPExpandArithForLLVM());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  if (moreConversions)
    moreConversions(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tp::buildCpuLoweringPipeline(
    OpPassManager &pm, const TensorSimplificationOptions &options,
    bool panelWeights) {
  TensorSimplificationOptions cpu = options;
  cpu.fuseIntoArgReductions = false;
  addTensorSimplifications(pm, cpu);
  // CPU only: on the cuda backend a check inside a linalg op (torch-mlir's
  // bounds checks of a lookup) runs in a kernel, which cannot call the host.
  pm.addPass(createTPAssertsToRuntime());
  addRuntimeCallsAndBufferization(pm);
  pm.addPass(createTPArgmaxToRuntime());
  if (panelWeights)
    pm.addPass(createTPPanelWeights());
  pm.addNestedPass<func::FuncOp>(createTPStridedCopiesToLinalg());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createTPPromoteAccumulators());
  addDeallocation(pm);
  addHostToLLVM(pm);
}

void mlir::tp::registerCpuLoweringPipeline() {
  PassPipelineRegistration<>(
      "tp-lower-cpu",
      "Lower a per-rank program to the LLVM dialect with tprt calls",
      [](OpPassManager &pm) { buildCpuLoweringPipeline(pm); });
}

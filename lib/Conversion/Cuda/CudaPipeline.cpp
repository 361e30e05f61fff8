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
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

/// memref.copy -> linalg.copy, so that copies (results into out-parameters,
/// tensor.concat's inserts) become kernels like every other op instead of
/// host calls of memrefCopy on device pointers.
struct CopyToLinalgPass
    : PassWrapper<CopyToLinalgPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CopyToLinalgPass)
  StringRef getArgument() const override { return "tp-copy-to-linalg"; }
  StringRef getDescription() const override {
    return "Turn memref.copy into linalg.copy (kernels on the GPU path)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};

/// Static trip count of loop dimension `d`, if known.
std::optional<int64_t> tripCount(scf::ParallelOp op, unsigned d) {
  std::optional<int64_t> lb = getConstantIntValue(op.getLowerBound()[d]);
  std::optional<int64_t> ub = getConstantIntValue(op.getUpperBound()[d]);
  std::optional<int64_t> st = getConstantIntValue(op.getStep()[d]);
  if (!lb || !ub || !st || *st <= 0)
    return std::nullopt;
  return (*ub - *lb + *st - 1) / *st;
}

/// Maps the dimensions of `op` to `hardware` (x, y, z), innermost dimension
/// first, skipping dimensions of one iteration; the rest run sequentially in
/// each thread. (Upstream's gpu-map-parallel-loops maps dimension 0 to x,
/// which puts a row's 256 points on threadIdx.z, limited to 64.)
void mapDims(scf::ParallelOp op, ArrayRef<gpu::Processor> hardware) {
  MLIRContext *ctx = op.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  unsigned n = op.getNumLoops(), next = 0;
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
      n, gpu::ParallelLoopDimMappingAttr::get(ctx, gpu::Processor::Sequential,
                                              id, id));
  for (unsigned d = n; d-- > 0 && next < hardware.size();) {
    std::optional<int64_t> trips = tripCount(op, d);
    if (trips && *trips <= 1)
      continue;
    mapping[d] =
        gpu::ParallelLoopDimMappingAttr::get(ctx, hardware[next++], id, id);
  }
  (void)gpu::setMappingAttr(op, mapping);
}

/// Tiles each outermost scf.parallel into tiles (blocks) of up to
/// `blockSize` points (threads), the innermost dimensions first, and maps
/// both levels to the GPU's x, y, z innermost first (threadIdx.x runs along
/// contiguous memory). Then checks that nothing outside a parallel loop
/// reads or writes memory (the host cannot touch device buffers).
struct TileForGpuPass
    : PassWrapper<TileForGpuPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TileForGpuPass)
  TileForGpuPass() = default;
  TileForGpuPass(const TileForGpuPass &other) : PassWrapper(other) {}
  explicit TileForGpuPass(int64_t blockSize) { this->blockSize = blockSize; }
  StringRef getArgument() const override { return "tp-tile-for-gpu"; }
  StringRef getDescription() const override {
    return "Tile outermost parallel loops into blocks x threads";
  }
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("threads per block"),
                            llvm::cl::init(256)};

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        outermost.push_back(op);
    });
    for (scf::ParallelOp op : outermost) {
      unsigned n = op.getNumLoops();
      SmallVector<int64_t> sizes(n, 1);
      int64_t remaining = blockSize;
      for (unsigned d = n; d-- > 0 && remaining > 1;) {
        int64_t trips = tripCount(op, d).value_or(remaining);
        int64_t tile = std::max<int64_t>(1, std::min(remaining, trips));
        sizes[d] = tile;
        remaining /= tile;
      }
      auto [tiles, points] =
          scf::tileParallelLoop(op, sizes, /*noMinMaxBounds=*/true);
      mapDims(tiles, {gpu::Processor::BlockX, gpu::Processor::BlockY,
                      gpu::Processor::BlockZ});
      mapDims(points, {gpu::Processor::ThreadX, gpu::Processor::ThreadY,
                       gpu::Processor::ThreadZ});
    }
    WalkResult result = getOperation().walk([&](Operation *op) {
      if (!isa<memref::LoadOp, memref::StoreOp>(op) ||
          op->getParentOfType<scf::ParallelOp>())
        return WalkResult::advance();
      op->emitError("memory access outside a parallel loop: it would run on "
                    "the host against device memory (the cuda backend "
                    "needs every op with memory access to have a parallel "
                    "dimension)");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::tp::buildCudaLoweringPipeline(OpPassManager &pm,
                                         const CudaLoweringOptions &options) {
  addTensorSimplifications(pm);
  pm.addNestedPass<func::FuncOp>(
      createTPSplitReductions({options.splitReductionsMin}));
  addRuntimeCallsAndBufferization(pm);
  if (options.gemmDtype == "bf16")
    pm.addPass(createTPGemmBf16());
  pm.addNestedPass<func::FuncOp>(std::make_unique<CopyToLinalgPass>());
  // Deallocation on linalg ops (each op is one use), as the CPU pipeline.
  addDeallocation(pm);
  // After deallocation: the device copies belong to the runtime.
  using Emulation = CudaLoweringOptions::Emulation;
  bool cudaRuntime = options.emulation != Emulation::WithCpuRuntime;
  if (cudaRuntime)
    pm.addPass(createTPDeviceConstants());

  // Kernels: one per remaining linalg op.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(
      std::make_unique<TileForGpuPass>(options.blockSize));
  if (options.emulation != Emulation::None) {
    addHostToLLVM(pm, /*genericAllocation=*/cudaRuntime);
    return;
  }
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

  // Host.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::tp::registerCudaLoweringPipeline() {
  PassRegistration<CopyToLinalgPass>();
  PassRegistration<TileForGpuPass>();
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

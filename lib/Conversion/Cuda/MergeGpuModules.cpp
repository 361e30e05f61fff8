//===- MergeGpuModules.cpp - one gpu.module for all kernels ---------------===//
//
// gpu-kernel-outlining puts every kernel in a gpu.module of its own, and
// gpu-module-to-binary runs the NVPTX back end and ptxas once per module: a
// few hundred processes for a model (GPT-2-small: 421). This names every
// kernel after the module it came from (unique: the modules' symbols are),
// moves it into the first module and points each gpu.launch_func at it, so
// ptxas runs once and the model loads one image.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPMERGEGPUMODULES
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct MergeGpuModulesPass
    : tp::impl::TPMergeGpuModulesBase<MergeGpuModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() < 2)
      return;
    // Only outlined kernels alone in their modules: a module that also holds
    // what a kernel references (a memref.global, say) could clash with its
    // copy in another; leave such programs as they are (one ptxas run each).
    for (gpu::GPUModuleOp m : gpuModules) {
      Block &body = m.getBodyRegion().front();
      if (!llvm::hasSingleElement(body.getOperations()) ||
          !isa<gpu::GPUFuncOp>(body.front()))
        return;
    }
    gpu::GPUModuleOp target = gpuModules.front();
    MLIRContext *ctx = &getContext();
    // Kernel (module, function) -> its name in the merged module.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp from : gpuModules) {
      StringAttr moduleName = from.getSymNameAttr();
      Block &body = from.getBodyRegion().front();
      auto fn = dyn_cast<gpu::GPUFuncOp>(body.front());
      assert(fn && llvm::hasSingleElement(body.getOperations()) &&
             "checked above");
      renamed[{moduleName, SymbolTable::getSymbolName(fn)}] = moduleName;
      SymbolTable::setSymbolName(fn, moduleName);
      if (from != target)
        fn->moveBefore(&target.getBodyRegion().front(),
                       target.getBodyRegion().front().end());
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          renamed.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getSymNameAttr(), {FlatSymbolRefAttr::get(ctx, it->second)}));
    });
    for (gpu::GPUModuleOp from : ArrayRef(gpuModules).drop_front())
      from.erase();
  }
};

} // namespace

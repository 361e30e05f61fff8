//===- InitAll.cpp - register the tp dialect and passes -------------------===//

#include "tp/InitAll.h"

#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"
#include "tp/Import/Passes.h"
#include "tp/Import/TMTensorDialect.h"
#include "tp/Transforms/CutRuleOpInterface.h"
#include "tp/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MLProgram/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

void mlir::tp::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TPDialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
  registerCutRuleExternalModels(registry);
  registerImportDialects(registry);
}

void mlir::tp::registerImportDialects(DialectRegistry &registry) {
  registry.insert<ml_program::MLProgramDialect, shard::ShardDialect,
                  tm_tensor::TMTensorDialect, tosa::TosaDialect,
                  vector::VectorDialect>();
  // tp-import inlines calls: func.call and func.return need it.
  func::registerInlinerExtension(registry);
}

void mlir::tp::registerLoweringDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registry.insert<bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  LLVM::LLVMDialect, memref::MemRefDialect, scf::SCFDialect>();
  // One-shot bufferization of the ops the per-rank programs use.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  ml_program::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
}

void mlir::tp::registerAllPasses() {
  registerTPPasses();
  registerTPConversionPasses();
  registerTPImportPasses();
  registerImportPipeline();
  registerCpuLoweringPipeline();
}

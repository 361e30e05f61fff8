//===- tp-opt.cpp - the tp-mlir optimizer driver --------------------------===//

#include "tp/Conversion/CudaPipeline.h"
#include "tp/InitAll.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tp::test {
void registerTestPasses();
} // namespace mlir::tp::test

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tp::registerLoweringDialects(registry);
  mlir::tp::registerAllPasses();
  mlir::tp::test::registerTestPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  // The stages of tp-lower-cpu, to run them one by one.
  mlir::bufferization::registerBufferizationPasses();
  mlir::registerLinalgPasses();
  // tp-lower-cuda and its own passes (tp-gemm-bf16, ...): the cuda lowering
  // needs only MLIR, not CUDA.
  mlir::tp::registerCudaLoweringPipeline();
  mlir::tp::registerCudaLoweringDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tp-mlir optimizer driver\n", registry));
}

//===- InitAll.cpp - register the tp dialect and passes -------------------===//

#include "tp/InitAll.h"

#include "tp/IR/TPDialect.h"
#include "tp/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

void mlir::tp::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TPDialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
}

void mlir::tp::registerAllPasses() { registerTPPasses(); }

//===- Passes.h - tensor-parallel passes ------------------------*- C++ -*-===//

#ifndef TP_TRANSFORMS_PASSES_H
#define TP_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tp/IR/TPDialect.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Transforms/Passes.h.inc"

} // namespace mlir::tp

#endif // TP_TRANSFORMS_PASSES_H

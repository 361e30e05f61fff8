//===- CopyGenerics.h - generics that only move elements -------*- C++ -*-===//
//
// Front ends write transposes and broadcasts as linalg.generic copies too
// (torch-mlir's TorchScript path); the GEMM folds look through both forms.
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_CONVERSION_COPYGENERICS_H
#define TP_LIB_CONVERSION_COPYGENERICS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::tp {

/// The linalg.generic defining `v` when it only moves elements: one input,
/// one init, on tensors, every loop parallel, a body yielding the input
/// element unchanged. Its indexing maps say where each element goes.
inline linalg::GenericOp getCopyGeneric(Value v) {
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || !generic.hasPureTensorSemantics() ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return nullptr;
  Block *body = generic.getBody();
  if (!llvm::hasSingleElement(*body))
    return nullptr;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (yield.getValues().size() != 1 ||
      yield.getValues()[0] != body->getArgument(0))
    return nullptr;
  return generic;
}

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_COPYGENERICS_H

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

/// The value `v` is a copy of with its last two dimensions swapped (a
/// linalg.transpose or a copy generic that permutes only those), or null.
inline Value getSwappedSource(Value v) {
  auto swapsLastTwo = [](ArrayRef<int64_t> perm) {
    int64_t n = perm.size();
    if (n < 2 || perm[n - 2] != n - 1 || perm[n - 1] != n - 2)
      return false;
    for (int64_t i = 0; i + 2 < n; ++i)
      if (perm[i] != i)
        return false;
    return true;
  };
  if (auto transpose = v.getDefiningOp<linalg::TransposeOp>())
    return swapsLastTwo(transpose.getPermutation()) ? transpose.getInput()
                                                    : Value();
  linalg::GenericOp copy = getCopyGeneric(v);
  if (!copy)
    return {};
  AffineMap in = copy.getIndexingMapsArray()[0];
  AffineMap out = copy.getIndexingMapsArray()[1];
  if (!in.isPermutation() || !out.isPermutation())
    return {};
  // Dimension i of the copy is dimension perm[i] of its input, as in
  // linalg.transpose: the input dimension read by the same loop.
  SmallVector<int64_t> perm;
  for (AffineExpr loop : out.getResults())
    perm.push_back(*in.getResultPosition(loop));
  return swapsLastTwo(perm) ? copy.getDpsInputs()[0] : Value();
}

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_COPYGENERICS_H

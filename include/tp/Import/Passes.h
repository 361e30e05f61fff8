//===- Passes.h - importing graphs of other front-ends ----------*- C++ -*-===//

#ifndef TP_IMPORT_PASSES_H
#define TP_IMPORT_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Import/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Import/Passes.h.inc"

/// Brings a graph from another front-end to what tp-shard takes (func,
/// arith, math, tensor, linalg): the upstream shard annotations are
/// stripped, TOSA is converted with the upstream TOSA-to-linalg, -arith and
/// -tensor passes, the shapes TOSA leaves behind are dropped, and so are the
/// private symbols nothing uses (symbol-dce).
void buildImportPipeline(OpPassManager &pm);

/// Registers buildImportPipeline as `tp-import`.
void registerImportPipeline();

} // namespace mlir::tp

#endif // TP_IMPORT_PASSES_H

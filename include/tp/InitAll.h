//===- InitAll.h - register the tp dialect and passes -----------*- C++ -*-===//
//
// The entry point for embedding tp-mlir in another MLIR tool:
//
//   mlir::DialectRegistry registry;
//   mlir::tp::registerAllDialects(registry);  // tp + what tp-shard touches
//   mlir::tp::registerAllPasses();            // --tp-shard in pass pipelines
//
// or, without the global registry, add the pass directly:
//
//   pm.addPass(mlir::tp::createTPShard(mlir::tp::TPShardOptions{2}));
//
//===----------------------------------------------------------------------===//

#ifndef TP_INITALL_H
#define TP_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::tp {

/// Registers the tp dialect and the upstream dialects of its IR contract
/// (func, arith, math, tensor, linalg).
void registerAllDialects(DialectRegistry &registry);

/// Registers the tp passes with the global pass registry.
void registerAllPasses();

} // namespace mlir::tp

#endif // TP_INITALL_H

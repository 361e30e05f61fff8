//===- InitAll.h - register the tp dialect and passes -----------*- C++ -*-===//
//
// The entry point for embedding tp-mlir in another MLIR tool:
//
//   mlir::DialectRegistry registry;
//   mlir::tp::registerAllDialects(registry);  // tp, what tp-shard touches,
//                                             // what tp-import takes apart
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
/// (func, arith, math, tensor, linalg), and those of registerImportDialects.
void registerAllDialects(DialectRegistry &registry);

/// Registers the dialects other front-ends write that `tp-import` takes
/// apart or that a module may carry beside the graph: tosa, shard,
/// ml_program, vector, and tp-mlir's declaration of torch-mlir's
/// `tm_tensor.attention` (include/tp/Import/TMTensorOps.td; a tool that
/// registers torch-mlir's own TMTensor dialect cannot register this too).
void registerImportDialects(DialectRegistry &registry);

/// Adds what the CPU lowering (`tp-lower-cpu`, tp-compile) needs on top:
/// bufferization (with the external models of arith, func, linalg and
/// tensor), memref, scf, cf and llvm.
void registerLoweringDialects(DialectRegistry &registry);

/// Registers the tp passes and the `tp-import` and `tp-lower-cpu` pipelines
/// with the global pass registry.
void registerAllPasses();

} // namespace mlir::tp

#endif // TP_INITALL_H

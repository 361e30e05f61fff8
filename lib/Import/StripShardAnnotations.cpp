//===- StripShardAnnotations.cpp - drop upstream shard annotations --------===//
//
// Upstream's shard partitioner reads the cut from annotations the author
// wrote; tp-shard derives it from the graph. The annotations are identities
// on values, so stripping them leaves the unsharded program tp-shard takes.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSTRIPSHARDANNOTATIONS
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct TPStripShardAnnotationsPass
    : tp::impl::TPStripShardAnnotationsBase<TPStripShardAnnotationsPass> {
  void runOnOperation() override;
};

} // namespace

/// Strips the annotations of one function and remarks there how many there
/// were. Fails at the first shard op that is not an annotation.
static LogicalResult stripFunction(FunctionOpInterface func) {
  SmallVector<shard::ShardOp> annotations;
  SmallVector<shard::ShardingOp> shardings;
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto annotation = dyn_cast<shard::ShardOp>(op)) {
      annotations.push_back(annotation);
      return WalkResult::advance();
    }
    if (auto sharding = dyn_cast<shard::ShardingOp>(op)) {
      shardings.push_back(sharding);
      return WalkResult::advance();
    }
    if (isa<shard::ShardDialect>(op->getDialect())) {
      op->emitOpError("is not a sharding annotation: tp-import takes a graph "
                      "before it is partitioned");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (annotations.empty() && shardings.empty())
    return success();

  for (shard::ShardOp annotation : annotations) {
    annotation.getResult().replaceAllUsesWith(annotation.getSrc());
    annotation->erase();
  }
  for (shard::ShardingOp sharding : shardings) {
    if (!sharding->use_empty()) {
      InFlightDiagnostic diag =
          sharding->emitOpError("is used by an op that is not an annotation");
      diag.attachNote((*sharding->user_begin())->getLoc()) << "used here";
      return diag;
    }
    sharding->erase();
  }
  // At the function's location, without the operation: printing the op
  // with the remark would print the whole model.
  emitRemark(func->getLoc())
      << "dropped " << annotations.size() << " shard annotations and "
      << shardings.size() << " shardings: tp-shard decides the cut";
  return success();
}

void TPStripShardAnnotationsPass::runOnOperation() {
  ModuleOp module = getOperation();
  for (auto func : module.getOps<FunctionOpInterface>())
    if (failed(stripFunction(func)))
      return signalPassFailure();

  // A grid is a symbol: erase it once no op refers to it.
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
    if (SymbolTable::symbolKnownUseEmpty(grid, module))
      grid->erase();
}

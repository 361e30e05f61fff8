//===- DecomposeAggregates.cpp - linalg.softmax into generics -------------===//

#include "tp/Conversion/Passes.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPDECOMPOSEAGGREGATES
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

LogicalResult mlir::tp::decomposeAggregatedOps(Operation *root) {
  SmallVector<linalg::AggregatedOpInterface> ops;
  root->walk([&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
  for (linalg::AggregatedOpInterface op : ops) {
    OpBuilder builder(op);
    FailureOr<SmallVector<Value>> values = op.decomposeOperation(builder);
    if (failed(values))
      return op->emitError("cannot be decomposed into linalg generics");
    op->replaceAllUsesWith(*values);
    op->erase();
  }
  return success();
}

namespace {
struct TPDecomposeAggregatesPass
    : public tp::impl::TPDecomposeAggregatesBase<TPDecomposeAggregatesPass> {
  void runOnOperation() override {
    if (failed(tp::decomposeAggregatedOps(getOperation())))
      signalPassFailure();
  }
};
} // namespace

//===- FuncCutRules.cpp - how func ops carry a cut ------------------------===//
//
// A returned value leaves the function whole (an all-gather before the
// return), unless it continues an argument: a state the function updates in
// place and hands back (a KV cache written at the step's positions). Such a
// result stays cut as its argument is, and the caller, which holds the
// argument's part, takes the result's part.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/CutRuleOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tp;

/// The function argument `value` updates: the argument itself, or the
/// destination of the slices inserted into it, in a chain.
static BlockArgument updatedArgument(Value value) {
  while (auto insert = value.getDefiningOp<tensor::InsertSliceOp>())
    value = insert.getDest();
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return nullptr;
  return arg;
}

namespace {

struct ReturnCutRule
    : CutRuleOpInterface::ExternalModel<ReturnCutRule, func::ReturnOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    for (OpOperand &use : op->getOpOperands()) {
      std::optional<DimCut> cut = state.lookup(use.get());
      if (!cut)
        continue;
      BlockArgument arg = updatedArgument(use.get());
      if (arg && state.lookup(arg) == cut)
        continue;
      state.gather(use, "'func.return' needs the full value: the caller "
                        "takes it whole");
    }
    return success();
  }
};

} // namespace

void mlir::tp::registerFuncCutRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, func::FuncDialect *) {
    func::ReturnOp::attachInterface<ReturnCutRule>(*ctx);
  });
}

//===- ArithCutRules.cpp - how arith ops carry a cut ----------------------===//
//
// Elementwise arith ops need no rule (their trait says how they carry a
// cut); constants do: only a splat is the same on every part.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/CutRuleOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

struct ConstantCutRule
    : CutRuleOpInterface::ExternalModel<ConstantCutRule, arith::ConstantOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto dense =
        dyn_cast<DenseElementsAttr>(cast<arith::ConstantOp>(op).getValue());
    if (dense && dense.isSplat())
      return success();
    return state.fail(op, "a non-uniform constant cannot be cut without "
                          "knowing the rank; pass it as a function argument "
                          "instead (tp-externalize-weights does)");
  }

  void localizeShapes(Operation *op, const CutMap &, int64_t) const {
    auto constant = cast<arith::ConstantOp>(op);
    auto dense = cast<DenseElementsAttr>(constant.getValue());
    constant.setValueAttr(
        DenseElementsAttr::get(cast<ShapedType>(constant.getType()),
                               dense.getSplatValue<Attribute>()));
  }
};

} // namespace

void mlir::tp::registerArithCutRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    arith::ConstantOp::attachInterface<ConstantCutRule>(*ctx);
  });
}

//===- ApproximateMath.cpp - polynomial f32 math --------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPAPPROXIMATEMATH
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
struct TPApproximateMathPass
    : public tp::impl::TPApproximateMathBase<TPApproximateMathPass> {
  void runOnOperation() override {
    // The approximations compare their operand with scalar constants: on a
    // whole tensor they would build invalid IR. Those ops are left for
    // convert-elementwise-to-linalg (the pipelines run it first).
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          llvm::none_of(op->getResultTypes(), llvm::IsaPred<TensorType>))
        ops.push_back(op);
    });
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace

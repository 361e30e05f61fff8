//===- ExpandArithForLLVM.cpp - only what the LLVM lowering lacks ---------===//
//
// Upstream's arith-expand-ops also rewrites the float min and max ops
// (maximumf, maxnumf, ...) into compares and selects, which LLVM's loop
// vectorizer does not take for a reduction: the softmax's running maximum
// over a decode step's positions ran one element at a time (0.5 ms of a
// batch-8 GPT-2-small step). ArithToLLVM lowers those ops to LLVM's
// intrinsics (llvm.maximum, llvm.maxnum), whose reductions LLVM 22
// vectorizes. So only what it cannot lower is expanded: the rounding
// divisions, and bf16 conversions (as integer arithmetic: LLVM would call
// __truncsfbf2, which Debian 12's libgcc lacks).
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPEXPANDARITHFORLLVM
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
struct TPExpandArithForLLVMPass
    : public tp::impl::TPExpandArithForLLVMBase<TPExpandArithForLLVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    arith::populateExpandBFloat16Patterns(patterns);
    // Only the expansions, as upstream's conversion does: no folding, no
    // constants gathered at the top of a function (which changes what
    // tp-roll-repeated-calls finds afterwards).
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace

//===- FusePointwise.cpp - fuse chains of pointwise generics --------------===//
//
// Upstream's elementwise fusion, restricted so that GEMMs stay GEMMs (never
// fused into a contraction) and nothing is computed twice (single-use
// producers, read through a permutation: no broadcast).
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFUSEPOINTWISE
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// One use, read once per point: a consumer reading the producer through
/// a broadcast would recompute it for every broadcast index.
bool fusable(OpOperand *use, bool intoArgReductions) {
  auto producer = use->get().getDefiningOp<linalg::GenericOp>();
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!producer || !consumer || !use->get().hasOneUse() ||
      linalg::isaContractionOpInterface(consumer) ||
      !consumer.getMatchingIndexingMap(use).isPermutation())
    return false;
  // (The offset: a cut vocabulary's argmax reads index + its first.)
  Value offset;
  return intoArgReductions || consumer.getNumLoops() == 0 ||
         !tp::argReduction(consumer, consumer.getNumLoops() - 1, &offset);
}

struct TPFusePointwisePass
    : tp::impl::TPFusePointwiseBase<TPFusePointwisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns,
        [this](OpOperand *use) { return fusable(use, intoArgReductions); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

//===- UnfoldStridedSlices.cpp - strided rank-reducing slices -------------===//
//
// Works around upstream's SubViewOp::getDroppedDims, which reads out of
// bounds on a strided subview that drops unit dimensions: the slice keeps
// its rank and a collapse_shape drops the unit dimensions instead.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPUNFOLDSTRIDEDSLICES
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
struct UnfoldStridedSlice : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType resultType = op.getResultType();
    if (resultType.getRank() == op.getSourceType().getRank() ||
        llvm::all_of(op.getMixedStrides(), [](OpFoldResult stride) {
          return isConstantIntValue(stride, 1);
        }))
      return failure();
    llvm::SmallBitVector dropped = op.getDroppedDims();
    // Each kept dimension and the dropped ones before it form a group; the
    // dropped ones after the last kept dimension join its group.
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (int64_t d = 0, e = op.getSourceType().getRank(); d < e; ++d) {
      pending.push_back(d);
      if (dropped.test(d))
        continue;
      groups.push_back(pending);
      pending.clear();
    }
    if (!groups.empty())
      llvm::append_range(groups.back(), pending);

    RankedTensorType fullRank = tensor::ExtractSliceOp::inferResultType(
        op.getSourceType(), op.getMixedSizes());
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, op.getLoc(), fullRank, op.getSource(), op.getMixedOffsets(),
        op.getMixedSizes(), op.getMixedStrides());
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, resultType, slice,
                                                         groups);
    return success();
  }
};

struct TPUnfoldStridedSlicesPass
    : public tp::impl::TPUnfoldStridedSlicesBase<TPUnfoldStridedSlicesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<UnfoldStridedSlice>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

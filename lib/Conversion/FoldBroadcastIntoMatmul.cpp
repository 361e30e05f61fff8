//===- FoldBroadcastIntoMatmul.cpp - one GEMM for a batch of one weight ---===//
//
// batch_matmul(x, broadcast(w)) -> expand(matmul(collapse(x), w)): a weight
// repeated over the batch is one matrix, so the batch and the rows of x are
// the rows of one GEMM, and the broadcast copy of the weight goes. A weight
// given a unit batch by a reshape (TOSA) is one matrix too: then the GEMM
// is a plain one, and a transpose of the weight reaches it.
//
//===----------------------------------------------------------------------===//

#include "CopyGenerics.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFOLDBROADCASTINTOMATMUL
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// A [B, r, c] tensor that repeats one matrix over its leading dimension.
struct BatchBroadcast {
  /// The matrix: [r, c], [c, r] when `swapped`, or [1, r, c] / [1, c, r]
  /// when `unitBatch` (then read without its unit dimension).
  Value matrix;
  bool swapped = false;
  bool unitBatch = false;
};

/// Whether results `rows`, `cols` of `map` read loops d1, d2 (false), d2, d1
/// (true), or something else.
std::optional<bool> readsInnerLoops(AffineMap map, unsigned rows,
                                    unsigned cols) {
  MLIRContext *ctx = map.getContext();
  AffineExpr d1 = getAffineDimExpr(1, ctx), d2 = getAffineDimExpr(2, ctx);
  AffineExpr r = map.getResult(rows), c = map.getResult(cols);
  if (r == d1 && c == d2)
    return false;
  if (r == d2 && c == d1)
    return true;
  return std::nullopt;
}

/// `v` as a matrix broadcast over its batch dimension: a linalg.broadcast
/// adding dimension 0, a tensor.expand_shape adding a unit one (TOSA's
/// form: tosa.matmul is batched, so a linear reshapes its weight to
/// [1, in, out]), or a copy generic (torch-mlir's form) whose input is that
/// matrix, maybe transposed, maybe with a unit leading dimension read at
/// index 0.
std::optional<BatchBroadcast> batchBroadcastOf(Value v) {
  if (auto broadcast = v.getDefiningOp<linalg::BroadcastOp>()) {
    if (broadcast.getDimensions() != ArrayRef<int64_t>{0})
      return std::nullopt;
    return BatchBroadcast{broadcast.getInput()};
  }
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    SmallVector<ReassociationIndices> unitBatch = {{0, 1}, {2}};
    if (expand.getSrcType().getRank() != 2 ||
        expand.getResultType().getDimSize(0) != 1 ||
        expand.getReassociationIndices() != unitBatch)
      return std::nullopt;
    return BatchBroadcast{expand.getSrc()};
  }
  linalg::GenericOp copy = tp::getCopyGeneric(v);
  if (!copy || copy.getNumLoops() != 3 ||
      !copy.getIndexingMapsArray()[1].isIdentity())
    return std::nullopt;
  AffineMap in = copy.getIndexingMapsArray()[0];
  auto inType = cast<RankedTensorType>(copy.getDpsInputs()[0].getType());
  if (in.getNumResults() == 2) {
    std::optional<bool> swapped = readsInnerLoops(in, 0, 1);
    if (!swapped)
      return std::nullopt;
    return BatchBroadcast{copy.getDpsInputs()[0], *swapped};
  }
  // [1, r, c] read at batch index 0 for every batch index.
  if (in.getNumResults() != 3 || inType.getDimSize(0) != 1 ||
      in.getResult(0) != getAffineConstantExpr(0, v.getContext()))
    return std::nullopt;
  std::optional<bool> swapped = readsInnerLoops(in, 1, 2);
  if (!swapped)
    return std::nullopt;
  return BatchBroadcast{copy.getDpsInputs()[0], *swapped, /*unitBatch=*/true};
}

/// Collapses dimensions 0 and 1 of the 3-D tensor `v`.
Value collapseBatch(PatternRewriter &rewriter, Location loc, Value v) {
  SmallVector<ReassociationIndices> pairs = {{0, 1}, {2}};
  return tensor::CollapseShapeOp::create(rewriter, loc, v, pairs);
}

/// The rows of the left operand [B, m, k] as one [B*m, k] matrix. With a
/// batch of one, a copy that only adds or keeps that unit dimension (both
/// torch-mlir front ends put one before each linear) is read through.
Value leftRows(PatternRewriter &rewriter, Location loc, Value lhs) {
  linalg::GenericOp copy = tp::getCopyGeneric(lhs);
  auto type = cast<RankedTensorType>(lhs.getType());
  if (copy && type.getDimSize(0) == 1 &&
      copy.getIndexingMapsArray()[1].isIdentity()) {
    AffineMap in = copy.getIndexingMapsArray()[0];
    Value source = copy.getDpsInputs()[0];
    MLIRContext *ctx = lhs.getContext();
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    if (in.getNumResults() == 2 && readsInnerLoops(in, 0, 1) == false)
      return source;
    if (in.getNumResults() == 3 &&
        (in.getResult(0) == d0 || in.getResult(0) == zero) &&
        readsInnerLoops(in, 1, 2) == false &&
        cast<RankedTensorType>(source.getType()).getDimSize(0) == 1)
      return collapseBatch(rewriter, loc, source);
  }
  return collapseBatch(rewriter, loc, lhs);
}

struct FoldBroadcastWeight : OpRewritePattern<linalg::BatchMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::BatchMatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
    Value init = op.getDpsInits()[0];
    auto resultType = cast<RankedTensorType>(init.getType());
    if (!cast<RankedTensorType>(lhs.getType()).hasStaticShape() ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");

    // Loops (b, m, n, k): a plain left operand and result; the right one
    // [b, k, n] or, already read transposed, [b, n, k].
    MLIRContext *ctx = op.getContext();
    AffineExpr b = getAffineDimExpr(0, ctx), m = getAffineDimExpr(1, ctx),
               n = getAffineDimExpr(2, ctx), k = getAffineDimExpr(3, ctx);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto results = [](AffineMap map) { return map.getResults(); };
    if (results(maps[0]) != ArrayRef<AffineExpr>{b, m, k} ||
        results(maps[2]) != ArrayRef<AffineExpr>{b, m, n})
      return rewriter.notifyMatchFailure(op, "not a plain left operand");
    bool rhsSwapped;
    if (results(maps[1]) == ArrayRef<AffineExpr>{b, k, n})
      rhsSwapped = false;
    else if (results(maps[1]) == ArrayRef<AffineExpr>{b, n, k})
      rhsSwapped = true;
    else
      return rewriter.notifyMatchFailure(op, "right operand map");

    std::optional<BatchBroadcast> broadcast = batchBroadcastOf(rhs);
    if (!broadcast)
      return rewriter.notifyMatchFailure(op, "no broadcast weight");

    Location loc = op.getLoc();
    Value weight = broadcast->unitBatch
                       ? collapseBatch(rewriter, loc, broadcast->matrix)
                       : broadcast->matrix;
    Value rows = leftRows(rewriter, loc, lhs);
    auto flatType = RankedTensorType::get(
        {resultType.getDimSize(0) * resultType.getDimSize(1),
         resultType.getDimSize(2)},
        resultType.getElementType());
    // A zero fill of the result is made again on the flat shape, right before
    // the GEMM: tp-linalg-to-runtime then drops it (the GEMM overwrites c),
    // which a fill seen through a reshape would not allow.
    Value flatInit;
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
      Value empty = tensor::EmptyOp::create(rewriter, loc, flatType.getShape(),
                                            flatType.getElementType());
      flatInit =
          linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
              .getResult(0);
    } else {
      flatInit = collapseBatch(rewriter, loc, init);
    }

    // Loops (m, n, k) of the flat GEMM.
    AffineExpr fm = getAffineDimExpr(0, ctx), fn = getAffineDimExpr(1, ctx),
               fk = getAffineDimExpr(2, ctx);
    bool transposed = rhsSwapped != broadcast->swapped;
    SmallVector<AffineMap> flatMaps = {
        AffineMap::get(3, 0, {fm, fk}, ctx),
        AffineMap::get(3, 0,
                       transposed ? ArrayRef<AffineExpr>{fn, fk}
                                  : ArrayRef<AffineExpr>{fk, fn},
                       ctx),
        AffineMap::get(3, 0, {fm, fn}, ctx)};
    auto gemm = linalg::MatmulOp::create(rewriter, loc, TypeRange{flatType},
                                         ValueRange{rows, weight},
                                         ValueRange{flatInit});
    gemm.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(flatMaps));
    SmallVector<ReassociationIndices> pairs = {{0, 1}, {2}};
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, resultType, gemm.getResult(0), pairs);
    return success();
  }
};

struct TPFoldBroadcastIntoMatmulPass
    : tp::impl::TPFoldBroadcastIntoMatmulBase<TPFoldBroadcastIntoMatmulPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldBroadcastWeight>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

//===- DecomposeTMAttention.cpp - tm_tensor.attention into linalg ---------===//
//
// tp-shard cuts attention between heads by following linalg ops; torch-mlir
// writes attention as one `tm_tensor.attention`. Each becomes, in linalg,
// what the op means (TMTensorOps.td there; torch-mlir's own loops ignore
// `scale`, PyTorch and the op's description do not):
//
//   kt = transpose(key)                      [B, K1, K2]
//   s  = batch_matmul(query, kt)             [B, M, K2]
//   s  = s / sqrt(K1) (or * scale) + mask    an i1 mask adds 0 where true,
//                                            -inf where false
//   p  = softmax(s) over the keys            generics: a row with every key
//                                            masked gives 0, not NaN
//   output = batch_matmul(p, value)          into the output, zero-filled
//
// The softmax is written out rather than a linalg.softmax because of that
// row: torch-mlir's loops (TMTensorOps.cpp there) give it 0, as PyTorch's
// `_safe_softmax` does, where exp(-inf - -inf) gives NaN, and a NaN in a
// padded token's output reaches every token through the next layer's
// P @ V (0 * NaN). Batch dimensions beyond one are collapsed into one
// around these ops, as torch-mlir collapses them before it creates the op.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"
#include "tp/Import/TMTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::tp {
#define GEN_PASS_DEF_TPDECOMPOSETMATTENTION
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// [[0 .. rank-3], [rank-2], [rank-1]]: the batch dimensions as one.
SmallVector<ReassociationIndices> batchAsOne(int64_t rank) {
  ReassociationIndices batch;
  for (int64_t i = 0; i < rank - 2; ++i)
    batch.push_back(i);
  return {batch, {rank - 2}, {rank - 1}};
}

/// What the scores are divided by when the op gives no scale: the square
/// root of the query's head dimension, a constant where that is static.
Value headScaleDivisor(RewriterBase &rewriter, Location loc, Value query,
                       FloatType type) {
  auto queryType = cast<RankedTensorType>(query.getType());
  int64_t rank = queryType.getRank();
  if (!queryType.isDynamicDim(rank - 1))
    return arith::ConstantOp::create(
        rewriter, loc, type,
        rewriter.getFloatAttr(
            type, std::sqrt(double(queryType.getDimSize(rank - 1)))));
  Value dim = tensor::DimOp::create(rewriter, loc, query, rank - 1);
  Value width =
      arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI64Type(), dim);
  return math::SqrtOp::create(
      rewriter, loc, arith::UIToFPOp::create(rewriter, loc, type, width));
}

/// softmax(scores) over the last of their 3 dimensions, 0 where a row's
/// every score is -inf. `init` is an empty tensor of the scores' shape;
/// `zero` and `minusInf` constants of their element type.
Value safeSoftmax(RewriterBase &rewriter, Location loc, Value scores,
                  Value init, Value zero, Value minusInf) {
  auto type = cast<RankedTensorType>(scores.getType());
  auto element = cast<FloatType>(type.getElementType());
  MLIRContext *ctx = rewriter.getContext();
  AffineMap all = AffineMap::getMultiDimIdentityMap(3, ctx);
  AffineMap rows = AffineMap::get(
      3, 0, {getAffineDimExpr(0, ctx), getAffineDimExpr(1, ctx)}, ctx);
  SmallVector<utils::IteratorType> parallel(3, utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> overKeys = {utils::IteratorType::parallel,
                                               utils::IteratorType::parallel,
                                               utils::IteratorType::reduction};
  // One value per row, reduced over the keys from `start`.
  auto reduceRows = [&](Value input, Value start, auto combine) -> Value {
    Value rowsInit = tensor::EmptyOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{tensor::getMixedSize(rewriter, loc, input, 0),
                               tensor::getMixedSize(rewriter, loc, input, 1)},
        element);
    Value filled =
        linalg::FillOp::create(rewriter, loc, start, rowsInit).getResult(0);
    return linalg::GenericOp::create(
               rewriter, loc, filled.getType(), input, filled,
               ArrayRef<AffineMap>{all, rows}, overKeys,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 linalg::YieldOp::create(b, loc,
                                         combine(b, loc, args[0], args[1]));
               })
        .getResult(0);
  };
  // Each row's maximum; exp(score - maximum), 0 where the row is all -inf;
  // over the row's sum, 0 where that is 0.
  Value rowMax =
      reduceRows(scores, minusInf,
                 [](OpBuilder &b, Location loc, Value x, Value acc) -> Value {
                   return arith::MaximumFOp::create(b, loc, x, acc);
                 });
  // f(score, its row's value), 0 where the row's value is `dead`.
  auto perRow = [&](Value input, Value row, Value dead, auto f) -> Value {
    return linalg::GenericOp::create(
               rewriter, loc, type, ValueRange{input, row}, init,
               ArrayRef<AffineMap>{all, rows, all}, parallel,
               [&](OpBuilder &b, Location loc, ValueRange args) {
                 Value isDead = arith::CmpFOp::create(
                     b, loc, arith::CmpFPredicate::OEQ, args[1], dead);
                 Value live = f(b, loc, args[0], args[1]);
                 Value kept =
                     arith::SelectOp::create(b, loc, isDead, zero, live);
                 linalg::YieldOp::create(b, loc, kept);
               })
        .getResult(0);
  };
  Value exps = perRow(scores, rowMax, minusInf,
                      [](OpBuilder &b, Location loc, Value x, Value max) {
                        Value shifted = arith::SubFOp::create(b, loc, x, max);
                        return math::ExpOp::create(b, loc, shifted).getResult();
                      });
  Value rowSum = reduceRows(
      exps, zero, [](OpBuilder &b, Location loc, Value x, Value acc) -> Value {
        return arith::AddFOp::create(b, loc, x, acc);
      });
  return perRow(exps, rowSum, zero,
                [](OpBuilder &b, Location loc, Value x, Value sum) {
                  return arith::DivFOp::create(b, loc, x, sum).getResult();
                });
}

LogicalResult decompose(RewriterBase &rewriter,
                        tm_tensor::AttentionOp attention) {
  for (Value operand : attention->getOperands())
    if (!isa<RankedTensorType>(operand.getType()))
      return attention.emitOpError(
          "decomposes on tensors only (run tp-import before bufferization)");
  if (attention->getNumResults() != 1)
    return attention.emitOpError("on tensors must return its output");
  int64_t rank =
      cast<RankedTensorType>(attention.getInputs()[0].getType()).getRank();
  if (rank < 3)
    return attention.emitOpError(
        "needs a batch dimension (query, key and value of rank 3 or more), "
        "as torch-mlir writes it");

  Location loc = attention.getLoc();
  rewriter.setInsertionPoint(attention);
  auto asBatched = [&](Value value) -> Value {
    if (rank == 3)
      return value;
    return tensor::CollapseShapeOp::create(rewriter, loc, value,
                                           batchAsOne(rank));
  };
  Value query = asBatched(attention.getInputs()[0]);
  Value key = asBatched(attention.getInputs()[1]);
  Value value = asBatched(attention.getInputs()[2]);
  Value mask = attention.getInputs().size() == 4
                   ? asBatched(attention.getInputs()[3])
                   : Value();
  Value output = asBatched(attention.getOutputs()[0]);
  auto type = cast<FloatType>(getElementTypeOrSelf(query));

  Value zero = arith::ConstantOp::create(rewriter, loc, type,
                                         rewriter.getFloatAttr(type, 0.0));
  std::optional<APFloat> scale = attention.getScale();
  Value factor =
      scale ? arith::ConstantOp::create(
                  rewriter, loc, type,
                  rewriter.getFloatAttr(type, scale->convertToDouble()))
            : headScaleDivisor(rewriter, loc, query, type);
  Value minusInf = arith::ConstantOp::create(
      rewriter, loc, type,
      rewriter.getFloatAttr(type, -std::numeric_limits<double>::infinity()));
  bool boolMask = mask && getElementTypeOrSelf(mask).isInteger(1);

  auto size = [&](Value value, int64_t dim) {
    return tensor::getMixedSize(rewriter, loc, value, dim);
  };
  auto empty = [&](ArrayRef<OpFoldResult> sizes) -> Value {
    return tensor::EmptyOp::create(rewriter, loc, sizes, type);
  };
  Value keyT =
      linalg::TransposeOp::create(
          rewriter, loc, key, empty({size(key, 0), size(key, 2), size(key, 1)}),
          ArrayRef<int64_t>{0, 2, 1})
          ->getResult(0);
  SmallVector<OpFoldResult> scoresSize = {size(query, 0), size(query, 1),
                                          size(key, 1)};
  Value scoresInit = empty(scoresSize);
  Value scoresZero =
      linalg::FillOp::create(rewriter, loc, zero, scoresInit).getResult(0);
  Value scores =
      linalg::BatchMatmulOp::create(rewriter, loc, ValueRange{query, keyT},
                                    ValueRange{scoresZero})
          ->getResult(0);

  SmallVector<Value> inputs = {scores};
  if (mask)
    inputs.push_back(mask);
  MLIRContext *ctx = rewriter.getContext();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              AffineMap::getMultiDimIdentityMap(3, ctx));
  SmallVector<utils::IteratorType> parallel(3, utils::IteratorType::parallel);
  Value masked =
      linalg::GenericOp::create(
          rewriter, loc, scoresInit.getType(), inputs, ValueRange{scoresInit},
          maps, parallel,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value x =
                scale
                    ? arith::MulFOp::create(b, loc, args[0], factor).getResult()
                    : arith::DivFOp::create(b, loc, args[0], factor)
                          .getResult();
            if (mask) {
              Value term = args[1];
              if (boolMask)
                term = arith::SelectOp::create(b, loc, term, zero, minusInf);
              x = arith::AddFOp::create(b, loc, x, term);
            }
            linalg::YieldOp::create(b, loc, x);
          })
          .getResult(0);
  Value probs = safeSoftmax(rewriter, loc, masked, scoresInit, zero, minusInf);

  // The op does not read its output operand: torch-mlir fills it with
  // zeros, which the product can then accumulate into as it is.
  auto fill = attention.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
    output = linalg::FillOp::create(rewriter, loc, zero, output).getResult(0);
  Value result =
      linalg::BatchMatmulOp::create(rewriter, loc, ValueRange{probs, value},
                                    ValueRange{output})
          ->getResult(0);
  if (rank > 3)
    result = tensor::ExpandShapeOp::create(
        rewriter, loc, attention.getResult()[0].getType(), result,
        batchAsOne(rank),
        tensor::getMixedSizes(rewriter, loc, attention.getOutputs()[0]));
  rewriter.replaceOp(attention, result);
  return success();
}

struct TPDecomposeTMAttentionPass
    : tp::impl::TPDecomposeTMAttentionBase<TPDecomposeTMAttentionPass> {
  void runOnOperation() override {
    SmallVector<tm_tensor::AttentionOp> attentions;
    getOperation()->walk(
        [&](tm_tensor::AttentionOp op) { attentions.push_back(op); });
    IRRewriter rewriter(&getContext());
    bool failed = false;
    for (tm_tensor::AttentionOp attention : attentions)
      failed |= mlir::failed(decompose(rewriter, attention));
    if (failed)
      signalPassFailure();
  }
};

} // namespace

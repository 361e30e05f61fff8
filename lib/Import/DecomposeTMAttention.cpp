//===- DecomposeTMAttention.cpp - tm_tensor.attention into linalg ---------===//
//
// tp-shard cuts attention between heads by following linalg ops; torch-mlir
// writes attention as one `tm_tensor.attention`. Each becomes the ops
// torch-mlir's own loops compute (TMTensorOps.cpp there), in linalg:
//
//   kt = transpose(key)                      [B, K1, K2]
//   s  = batch_matmul(query, kt)             [B, M, K2]
//   s  = s / sqrt(K1) (or * scale) + mask    a generic; an i1 mask adds
//                                            0 where true, -inf where false
//   p  = softmax(s, last dimension)
//   output = batch_matmul(p, value)          into the output, zero-filled
//
// Batch dimensions beyond one are collapsed into one around these ops, as
// torch-mlir collapses them before it creates the op.
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
  Value minusInf;
  if (mask && getElementTypeOrSelf(mask).isInteger(1))
    minusInf = arith::ConstantOp::create(
        rewriter, loc, type,
        rewriter.getFloatAttr(type, -std::numeric_limits<double>::infinity()));

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
              if (minusInf)
                term = arith::SelectOp::create(b, loc, term, zero, minusInf);
              x = arith::AddFOp::create(b, loc, x, term);
            }
            linalg::YieldOp::create(b, loc, x);
          })
          .getResult(0);
  Value probsInit = empty(scoresSize);
  Value probs = linalg::SoftmaxOp::create(rewriter, loc, probsInit.getType(),
                                          masked, probsInit, /*dimension=*/2)
                    .getResult()[0];

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

//===- DecomposeTMScan.cpp - tm_tensor.scan into linalg ------------------===//
//
// torch-mlir writes `cumsum` (RoBERTa's position ids, the positions of a
// padded batch) as a `tm_tensor.scan`, which neither tp-shard nor the
// lowering reads. Each element of a scan is a fold of the elements before
// it, so the scan becomes one linalg.generic with an extra reduction loop j
// over the scanned dimension, innermost, that folds element j into output
// element i while j is one of i's:
//
//   inclusive: output[i] = in[0] then f(output, in[j]) for 1 <= j <= i
//   exclusive: output[i] = acc   then f(output, in[j]) for j < i
//
// This is quadratic in the scanned length (a sequence: thousands at most),
// and it keeps f's order: the loops run j upwards, as the scan does, so a
// float sum adds in the scan's order. The accumulator result, when read, is
// what torch-mlir's loops leave in it: the last output element.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"
#include "tp/Import/TMTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPDECOMPOSETMSCAN
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// `dest` filled with `source` read through `map`: the first element along
/// the scanned dimension, or the accumulator broadcast along it.
Value copyThrough(RewriterBase &rewriter, Location loc, Value source,
                  AffineMap map, Value dest) {
  int64_t rank = cast<RankedTensorType>(dest.getType()).getRank();
  SmallVector<AffineMap> maps = {map, rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             rewriter, loc, dest.getType(), source, dest, maps, iterators,
             [](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc, args[0]);
             })
      .getResult(0);
}

/// The scan's output from `init` (its first element along the scanned
/// dimension): loops (d_0 .. d_rank-1, j), j the innermost, the input read
/// with j at the scanned dimension, and element j folded into element i
/// through the region when the scan combines it into i.
Value scanGeneric(RewriterBase &rewriter, Location loc, tm_tensor::ScanOp scan,
                  Value init) {
  MLIRContext *ctx = scan.getContext();
  int64_t dim = scan.getDimension();
  int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  bool inclusive = scan.getInclusive();
  SmallVector<AffineExpr> atJ;
  for (int64_t i = 0; i < rank; ++i)
    atJ.push_back(getAffineDimExpr(i == dim ? rank : i, ctx));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, atJ, ctx),
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Block &region = scan.getRegion().front();
  return linalg::GenericOp::create(
             rewriter, loc, init.getType(), scan.getInputs()[0], init, maps,
             iterators,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               IRMapping mapping;
               mapping.map(region.getArgument(0), args[1]); // previous
               mapping.map(region.getArgument(1), args[0]); // next input
               for (Operation &op : region.without_terminator())
                 b.clone(op, mapping);
               Value combined = mapping.lookupOrDefault(
                   region.getTerminator()->getOperand(0));
               Value j = linalg::IndexOp::create(b, loc, rank);
               Value i = linalg::IndexOp::create(b, loc, dim);
               // Inclusive: 0 < j <= i; exclusive: j < i.
               Value takes;
               if (inclusive) {
                 Value one = arith::ConstantIndexOp::create(b, loc, 1);
                 takes = arith::AndIOp::create(
                     b, loc,
                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, j,
                                           one),
                     arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, j,
                                           i));
               } else {
                 takes = arith::CmpIOp::create(b, loc,
                                               arith::CmpIPredicate::ult, j, i);
               }
               linalg::YieldOp::create(
                   b, loc,
                   arith::SelectOp::create(b, loc, takes, combined, args[1])
                       .getResult());
             })
      .getResult(0);
}

/// torch-mlir's loops store each output element after the first into the
/// accumulator too: it ends as the last one, or as given when the scanned
/// dimension has one element or none. (Of a dynamic length that is 1 at run
/// time, this gives the output's one element; 0 is not defined.)
Value finalAccumulator(RewriterBase &rewriter, Location loc,
                       tm_tensor::ScanOp scan, Value result) {
  Value accumulator = scan.getOutputs()[1];
  int64_t dim = scan.getDimension();
  auto type = cast<RankedTensorType>(result.getType());
  int64_t length = type.getDimSize(dim);
  if (length == 0 || length == 1)
    return accumulator;
  SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, result);
  SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
  if (ShapedType::isDynamic(length))
    offsets[dim] =
        arith::SubIOp::create(rewriter, loc, cast<Value>(sizes[dim]),
                              arith::ConstantIndexOp::create(rewriter, loc, 1))
            .getResult();
  else
    offsets[dim] = rewriter.getIndexAttr(length - 1);
  sizes[dim] = rewriter.getIndexAttr(1);
  // The slice's sizes are the output's; the accumulator's type may say less
  // or more of them (a dynamic size may stand for a static one).
  auto accumulatorType = cast<RankedTensorType>(accumulator.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + dim);
  auto sliceType = RankedTensorType::get(shape, type.getElementType());
  Value last = tensor::ExtractSliceOp::create(rewriter, loc, sliceType, result,
                                              offsets, sizes, strides);
  return sliceType == accumulatorType
             ? last
             : tensor::CastOp::create(rewriter, loc, accumulatorType, last)
                   .getResult();
}

LogicalResult decompose(RewriterBase &rewriter, tm_tensor::ScanOp scan) {
  if (scan.getResults().empty()) {
    rewriter.eraseOp(scan);
    return success();
  }
  // The region is evaluated for every j, taken or not: on values the scan
  // never combines, where a division could trap.
  for (Operation &op : scan.getRegion().front().without_terminator())
    if (!isPure(&op))
      return op.emitOpError("in a tm_tensor.scan's region is not pure (it "
                            "has effects or may trap): tp-import evaluates "
                            "the region where the scan would not");
  Location loc = scan.getLoc();
  rewriter.setInsertionPoint(scan);
  MLIRContext *ctx = scan.getContext();
  int64_t dim = scan.getDimension();
  Value output = scan.getOutputs()[0];
  int64_t rank = cast<RankedTensorType>(output.getType()).getRank();

  // The first element: the input's (inclusive) or the accumulator
  // (exclusive), copied along the scanned dimension.
  SmallVector<AffineExpr> atFirst, withoutDim;
  for (int64_t i = 0; i < rank; ++i) {
    AffineExpr d = getAffineDimExpr(i, ctx);
    atFirst.push_back(i == dim ? getAffineConstantExpr(0, ctx) : d);
    if (i != dim)
      withoutDim.push_back(d);
  }
  Value init =
      scan.getInclusive()
          ? copyThrough(rewriter, loc, scan.getInputs()[0],
                        AffineMap::get(rank, 0, atFirst, ctx), output)
          : copyThrough(rewriter, loc, scan.getOutputs()[1],
                        AffineMap::get(rank, 0, withoutDim, ctx), output);
  Value result = scanGeneric(rewriter, loc, scan, init);
  Value accumulator = scan.getResults()[1].use_empty()
                          ? scan.getOutputs()[1]
                          : finalAccumulator(rewriter, loc, scan, result);
  rewriter.replaceOp(scan, {result, accumulator});
  return success();
}

struct TPDecomposeTMScanPass
    : tp::impl::TPDecomposeTMScanBase<TPDecomposeTMScanPass> {
  void runOnOperation() override {
    SmallVector<tm_tensor::ScanOp> scans;
    getOperation()->walk([&](tm_tensor::ScanOp op) { scans.push_back(op); });
    IRRewriter rewriter(&getContext());
    bool failed = false;
    for (tm_tensor::ScanOp scan : scans)
      failed |= mlir::failed(decompose(rewriter, scan));
    if (failed)
      signalPassFailure();
  }
};

} // namespace

//===- DecomposeTMScan.cpp - tm_tensor.scan into linalg --------------------===//
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
// the same fold over every j.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"
#include "tp/Import/TMTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/PatternMatch.h"

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
  auto rank = cast<RankedTensorType>(dest.getType()).getRank();
  SmallVector<AffineMap> maps = {map,
                                 rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             rewriter, loc, dest.getType(), source, dest, maps, iterators,
             [](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc, args[0]);
             })
      .getResult(0);
}

/// `init` folded with the input elements j (the last loop) that `takes`
/// admits, in order of j, through the scan's region. `inputMap` reads the
/// input from the loops (the destination's, then j).
Value fold(RewriterBase &rewriter, Location loc, tm_tensor::ScanOp scan,
           Value init, AffineMap inputMap,
           function_ref<Value(OpBuilder &, Location, Value j)> takes) {
  auto rank = cast<RankedTensorType>(init.getType()).getRank();
  SmallVector<AffineMap> maps = {
      inputMap, AffineMap::getMultiDimIdentityMap(rank + 1, scan.getContext())
                    .getMajorSubMap(rank)};
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
               if (Value cond = takes(b, loc, j))
                 combined =
                     arith::SelectOp::create(b, loc, cond, combined, args[1]);
               linalg::YieldOp::create(b, loc, combined);
             })
      .getResult(0);
}

LogicalResult decompose(RewriterBase &rewriter, tm_tensor::ScanOp scan) {
  // The region is evaluated for every j, taken or not: on values the scan
  // never combines, where a division could trap.
  for (Operation &op : scan.getRegion().front().without_terminator())
    if (!isPure(&op))
      return op.emitOpError("in a tm_tensor.scan's region is not pure (it "
                            "has effects or may trap): tp-import evaluates "
                            "the region where the scan would not");
  if (scan.getResults().empty()) {
    rewriter.eraseOp(scan);
    return success();
  }
  Location loc = scan.getLoc();
  rewriter.setInsertionPoint(scan);
  MLIRContext *ctx = scan.getContext();
  int64_t dim = scan.getDimension();
  int64_t rank = cast<RankedTensorType>(scan.getInputs()[0].getType()).getRank();
  bool inclusive = scan.getInclusive();
  Value output = scan.getOutputs()[0], accumulator = scan.getOutputs()[1];
  AffineExpr zero = getAffineConstantExpr(0, ctx);

  // The output: loops (d_0 .. d_rank-1, j), the input read at d_dim = j.
  SmallVector<AffineExpr> outputDims, atJ, atFirst, withoutDim;
  for (int64_t i = 0; i < rank; ++i) {
    AffineExpr d = getAffineDimExpr(i, ctx);
    outputDims.push_back(d);
    atJ.push_back(i == dim ? getAffineDimExpr(rank, ctx) : d);
    atFirst.push_back(i == dim ? zero : d);
    if (i != dim)
      withoutDim.push_back(d);
  }
  Value outputInit =
      inclusive ? copyThrough(rewriter, loc, scan.getInputs()[0],
                              AffineMap::get(rank, 0, atFirst, ctx), output)
                : copyThrough(rewriter, loc, accumulator,
                              AffineMap::get(rank, 0, withoutDim, ctx), output);
  Value result = fold(
      rewriter, loc, scan, outputInit, AffineMap::get(rank + 1, 0, atJ, ctx),
      [&](OpBuilder &b, Location loc, Value j) -> Value {
        Value i = linalg::IndexOp::create(b, loc, dim);
        if (!inclusive)
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j,
                                       i);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        return arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, j, one),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, j, i));
      });

  // The accumulator: loops (the dimensions but dim, j), the input read with
  // j at dim.
  Value finalAccumulator = accumulator;
  if (!scan.getResults()[1].use_empty()) {
    SmallVector<AffineExpr> accAtJ, accAtFirst;
    for (int64_t i = 0, k = 0; i < rank; ++i) {
      bool scanned = i == dim;
      AffineExpr d = scanned ? AffineExpr() : getAffineDimExpr(k++, ctx);
      accAtJ.push_back(scanned ? getAffineDimExpr(rank - 1, ctx) : d);
      accAtFirst.push_back(scanned ? zero : d);
    }
    Value accInit =
        inclusive ? copyThrough(rewriter, loc, scan.getInputs()[0],
                                AffineMap::get(rank - 1, 0, accAtFirst, ctx),
                                accumulator)
                  : accumulator;
    finalAccumulator =
        fold(rewriter, loc, scan, accInit, AffineMap::get(rank, 0, accAtJ, ctx),
             [&](OpBuilder &b, Location loc, Value j) -> Value {
               if (!inclusive)
                 return Value();
               Value one = arith::ConstantIndexOp::create(b, loc, 1);
               return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                            j, one);
             });
  }
  rewriter.replaceOp(scan, {result, finalAccumulator});
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

//===- DecomposeTMScatter.cpp - tm_tensor.scatter into loops -------------===//
//
// torch-mlir writes `index_put`, `scatter` and `index_copy` (a static KV
// cache's update) as a `tm_tensor.scatter`, which neither tp-shard nor the
// lowering reads. A scatter writes where its indices say, one update after
// another, so it becomes what torch-mlir's own loops make of it: an scf.for
// nest over the updates' elements, carrying the tensor, that reads each
// update, its index tuple and the element it lands on, combines them through
// the op's region and inserts the result. Bufferization writes the
// elements in place; the work is the updates', not the original's. tp-shard
// does not cut through the loops: their operands are whole on every rank.
//
// An index outside the original would write outside its buffer; each
// element's place is checked (`cf.assert`, which tp-compile turns into an
// error that ends every rank).
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"
#include "tp/Import/TMTensorDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPDECOMPOSETMSCATTER
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// "tm_tensor.scatter at file:line:col: ..." for the run-time check.
std::string outOfRangeMessage(tm_tensor::ScatterOp scatter) {
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "tm_tensor.scatter at ";
  if (auto file = scatter.getLoc()->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    os << scatter.getLoc();
  os << ": an index places an update outside the original "
     << scatter.getOutputs()[0].getType();
  return message;
}

void decompose(RewriterBase &rewriter, tm_tensor::ScatterOp scatter) {
  Location loc = scatter.getLoc();
  rewriter.setInsertionPoint(scatter);
  Value updates = scatter.getInputs()[0];
  Value indices = scatter.getInputs()[1];
  Value original = scatter.getOutputs()[0];
  auto updatesType = cast<RankedTensorType>(updates.getType());
  auto originalType = cast<RankedTensorType>(original.getType());
  int64_t originalRank = originalType.getRank();
  // An update's slice lies along the original's last dimensions.
  int64_t sliceOffset = originalRank - (updatesType.getRank() - 1);
  ArrayRef<int64_t> dimensionMap = scatter.getDimensionMap();

  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> lowerBounds(updatesType.getRank(), zero);
  SmallVector<Value> steps(updatesType.getRank(), one);
  auto sizes = [&](Value tensor) {
    return getValueOrCreateConstantIndexOp(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, tensor));
  };
  SmallVector<Value> upperBounds = sizes(updates);
  SmallVector<Value> originalSizes = sizes(original);
  // A dimension no index names holds an update's slice as it is: it fits
  // where both sizes are known and the slice's is not larger.
  auto fitsStatically = [&](int64_t d) {
    if (llvm::is_contained(dimensionMap, d) || d < sliceOffset)
      return false;
    int64_t sliceSize = updatesType.getDimSize(d - sliceOffset + 1);
    return !ShapedType::isDynamic(sliceSize) && !originalType.isDynamicDim(d) &&
           sliceSize <= originalType.getDimSize(d);
  };
  std::string message = outOfRangeMessage(scatter);
  Block &region = scatter.getRegion().front();

  scf::LoopNest nest = scf::buildLoopNest(
      rewriter, loc, lowerBounds, upperBounds, steps, ValueRange{original},
      [&](OpBuilder &b, Location loc, ValueRange ivs,
          ValueRange carried) -> scf::ValueVector {
        Value update = tensor::ExtractOp::create(b, loc, updates, ivs);
        SmallVector<Value> place(originalRank);
        for (int64_t d = 1; d < updatesType.getRank(); ++d)
          place[sliceOffset + d - 1] = ivs[d];
        for (auto [k, dim] : llvm::enumerate(dimensionMap)) {
          Value at = arith::ConstantIndexOp::create(b, loc, k);
          Value index = arith::IndexCastOp::create(
              b, loc, b.getIndexType(),
              tensor::ExtractOp::create(b, loc, indices,
                                        ValueRange{ivs[0], at}));
          place[dim] =
              place[dim]
                  ? arith::AddIOp::create(b, loc, place[dim], index).getResult()
                  : index;
        }
        Value inRange;
        for (int64_t d = 0; d < originalRank; ++d) {
          if (fitsStatically(d))
            continue;
          Value inDim = arith::AndIOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, place[d],
                                    zero),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, place[d],
                                    originalSizes[d]));
          inRange =
              inRange
                  ? arith::AndIOp::create(b, loc, inRange, inDim).getResult()
                  : inDim;
        }
        if (inRange)
          cf::AssertOp::create(b, loc, inRange, message);
        Value current = tensor::ExtractOp::create(b, loc, carried[0], place);
        IRMapping mapping;
        mapping.map(region.getArgument(0), update);
        mapping.map(region.getArgument(1), current);
        for (Operation &op : region.without_terminator())
          b.clone(op, mapping);
        Value combined =
            mapping.lookupOrDefault(region.getTerminator()->getOperand(0));
        return {tensor::InsertOp::create(b, loc, combined, carried[0], place)
                    .getResult()};
      });
  rewriter.replaceOp(scatter, nest.results);
}

struct TPDecomposeTMScatterPass
    : tp::impl::TPDecomposeTMScatterBase<TPDecomposeTMScatterPass> {
  void runOnOperation() override {
    SmallVector<tm_tensor::ScatterOp> scatters;
    getOperation()->walk(
        [&](tm_tensor::ScatterOp op) { scatters.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (tm_tensor::ScatterOp scatter : scatters) {
      if (scatter.getResults().empty())
        rewriter.eraseOp(scatter);
      else
        decompose(rewriter, scatter);
    }
  }
};

} // namespace

//===- TMTensorToLoops.cpp - torch-mlir's scatter, sort, topk as loops ---===//
//
// torch-mlir writes `index_put`, `scatter` and `index_copy` (a static KV
// cache's update) as a `tm_tensor.scatter`, `sort` as a `tm_tensor.sort`
// and `topk` (a mixture of experts' router) as a `tm_tensor.topk`, which
// neither tp-shard nor the lowering reads. Each becomes what torch-mlir's
// own loops (TMTensorToLoops there) make of it, on tensors: an scf.for nest
// carrying the outputs, reading and inserting one element at a time in the
// same order, so that the results are the same element for element, ties
// and repeated indices included. Bufferization writes the elements in
// place. tp-shard does not cut through the loops: their operands are whole
// on every rank.
//
// An index of a scatter outside the original would write outside its
// buffer; each element's place is checked (`cf.assert`, which tp-compile
// turns into an error that ends every rank).
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"
#include "tp/Import/TMTensorDialect.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/DebugStringHelper.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPTMTENSORTOLOOPS
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// "tm_tensor.scatter at file:line:col", which begins the messages of the
/// run-time checks.
std::string where(Operation *op) {
  return (op->getName().getStringRef() + " at " + fileLineCol(op->getLoc()))
      .str();
}

/// Checks at run time that dimension `dimsA[i]` of `a` has the size of
/// `dimsC[i]` of `c`, where either is dynamic: the loops would read past
/// the smaller one. The verifiers take a dynamic size for any static one,
/// as torch-mlir's do.
void assertSameSizes(OpBuilder &b, Location loc, Value a,
                     ArrayRef<int64_t> dimsA, Value c, ArrayRef<int64_t> dimsC,
                     const Twine &message) {
  auto typeA = cast<RankedTensorType>(a.getType());
  auto typeC = cast<RankedTensorType>(c.getType());
  Value same;
  for (auto [dimA, dimC] : llvm::zip_equal(dimsA, dimsC)) {
    if (!typeA.isDynamicDim(dimA) && !typeC.isDynamicDim(dimC))
      continue;
    Value equal = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        tensor::DimOp::create(b, loc, a, dimA).getResult(),
        tensor::DimOp::create(b, loc, c, dimC).getResult());
    same =
        same ? arith::AndIOp::create(b, loc, same, equal).getResult() : equal;
  }
  if (same)
    cf::AssertOp::create(b, loc, same, message.str());
}

/// 0, 1, ..., rank - 1.
SmallVector<int64_t> allDims(Value tensor) {
  return llvm::to_vector(llvm::seq<int64_t>(
      0, cast<RankedTensorType>(tensor.getType()).getRank()));
}

/// The value `region` yields for `args`, its ops cloned at `b`.
Value inlineRegion(OpBuilder &b, Block &region, ValueRange args) {
  IRMapping mapping;
  mapping.map(region.getArguments(), args);
  for (Operation &op : region.without_terminator())
    b.clone(op, mapping);
  return mapping.lookupOrDefault(region.getTerminator()->getOperand(0));
}

/// `ivs` with `value` at dimension `dim`.
SmallVector<Value> withAt(ValueRange ivs, int64_t dim, Value value) {
  SmallVector<Value> place(ivs);
  place[dim] = value;
  return place;
}

/// The sizes of `tensor`, constants where static.
SmallVector<Value> sizesOf(OpBuilder &b, Location loc, Value tensor) {
  return getValueOrCreateConstantIndexOp(b, loc,
                                         tensor::getMixedSizes(b, loc, tensor));
}

void lowerScatter(RewriterBase &rewriter, tm_tensor::ScatterOp scatter) {
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
  SmallVector<Value> upperBounds = sizesOf(rewriter, loc, updates);
  SmallVector<Value> originalSizes = sizesOf(rewriter, loc, original);
  // A dimension no index names holds an update's slice as it is: it fits
  // where both sizes are known and the slice's is not larger.
  auto fitsStatically = [&](int64_t d) {
    if (llvm::is_contained(dimensionMap, d) || d < sliceOffset)
      return false;
    int64_t sliceSize = updatesType.getDimSize(d - sliceOffset + 1);
    return !ShapedType::isDynamic(sliceSize) && !originalType.isDynamicDim(d) &&
           sliceSize <= originalType.getDimSize(d);
  };
  std::string message = where(scatter) +
                        ": an index places an update outside the original " +
                        debugString(originalType);
  assertSameSizes(rewriter, loc, updates, {0}, indices, {0},
                  where(scatter) + ": the updates and the indices differ in "
                                   "number");
  SmallVector<Value> depths;
  for (int64_t k = 0; k < static_cast<int64_t>(dimensionMap.size()); ++k)
    depths.push_back(arith::ConstantIndexOp::create(rewriter, loc, k));
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
          Value index = arith::IndexCastOp::create(
              b, loc, b.getIndexType(),
              tensor::ExtractOp::create(b, loc, indices,
                                        ValueRange{ivs[0], depths[k]}));
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
        Value combined = inlineRegion(b, region, {update, current});
        return {tensor::InsertOp::create(b, loc, combined, carried[0], place)
                    .getResult()};
      });
  rewriter.replaceOp(scatter, nest.results);
}

/// For every element of the outputs, one bubble pass along the dimension
/// over its adjacent pairs, swapping a pair in every output where the
/// region says false: a row of n elements gets n passes.
void lowerSort(RewriterBase &rewriter, tm_tensor::SortOp sort) {
  Location loc = sort.getLoc();
  rewriter.setInsertionPoint(sort);
  int64_t dim = sort.getDimension();
  ValueRange outputs = sort.getOutputs();
  SmallVector<Value> sizes = sizesOf(rewriter, loc, outputs[0]);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value lastPair = arith::SubIOp::create(rewriter, loc, sizes[dim], one);
  SmallVector<Value> zeros(sizes.size(), zero), ones(sizes.size(), one);
  for (Value output : outputs.drop_front())
    assertSameSizes(rewriter, loc, outputs[0], allDims(output), output,
                    allDims(output),
                    where(sort) + ": the outputs differ in size");
  Block &region = sort.getRegion().front();

  scf::LoopNest nest = scf::buildLoopNest(
      rewriter, loc, zeros, sizes, ones, outputs,
      [&](OpBuilder &b, Location loc, ValueRange ivs,
          ValueRange carried) -> scf::ValueVector {
        auto pass = scf::ForOp::create(
            b, loc, zero, lastPair, one, carried,
            [&](OpBuilder &b, Location loc, Value i, ValueRange tensors) {
              Value next = arith::AddIOp::create(b, loc, i, one);
              SmallVector<Value> at = withAt(ivs, dim, i);
              SmallVector<Value> atNext = withAt(ivs, dim, next);
              SmallVector<Value> pairs;
              for (Value tensor : tensors) {
                pairs.push_back(tensor::ExtractOp::create(b, loc, tensor, at));
                pairs.push_back(
                    tensor::ExtractOp::create(b, loc, tensor, atNext));
              }
              Value keep = inlineRegion(b, region, pairs);
              SmallVector<Value> sorted;
              for (auto [k, tensor] : llvm::enumerate(tensors)) {
                Value first = pairs[2 * k], second = pairs[2 * k + 1];
                Value low =
                    arith::SelectOp::create(b, loc, keep, first, second);
                Value high =
                    arith::SelectOp::create(b, loc, keep, second, first);
                Value written =
                    tensor::InsertOp::create(b, loc, low, tensor, at);
                sorted.push_back(
                    tensor::InsertOp::create(b, loc, high, written, atNext));
              }
              scf::YieldOp::create(b, loc, sorted);
            });
        return scf::ValueVector(pass.getResults().begin(),
                                pass.getResults().end());
      });
  rewriter.replaceOp(sort, nest.results);
}

/// Each input element, in order, walks the k kept elements from the first:
/// where the region prefers it to the kept one, it takes that place and
/// the kept one walks on. Of two elements the region holds equal (it
/// prefers neither), the lower index stays: torch-mlir's loops choose the
/// value and the index apart, and so does this.
void lowerTopk(RewriterBase &rewriter, tm_tensor::TopkOp topk) {
  Location loc = topk.getLoc();
  rewriter.setInsertionPoint(topk);
  int64_t dim = topk.getDimension();
  Value values = topk.getInputs()[0];
  Value indices = topk.getInputs().size() == 2 ? topk.getInputs()[1] : Value();
  ValueRange outputs = topk.getOutputs();
  SmallVector<Value> sizes = sizesOf(rewriter, loc, values);
  Value k = sizesOf(rewriter, loc, outputs[0])[dim];
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> zeros(sizes.size(), zero), ones(sizes.size(), one);
  std::string sizesDiffer = where(topk) + ": the operands differ in size";
  if (indices)
    assertSameSizes(rewriter, loc, values, allDims(values), indices,
                    allDims(values), sizesDiffer);
  assertSameSizes(rewriter, loc, outputs[0], allDims(values), outputs[1],
                  allDims(values), sizesDiffer);
  SmallVector<int64_t> rest = allDims(values);
  rest.erase(rest.begin() + dim);
  assertSameSizes(rewriter, loc, values, rest, outputs[0], rest, sizesDiffer);
  Block &region = topk.getRegion().front();

  scf::LoopNest nest = scf::buildLoopNest(
      rewriter, loc, zeros, sizes, ones, outputs,
      [&](OpBuilder &b, Location loc, ValueRange ivs,
          ValueRange carried) -> scf::ValueVector {
        Value value = tensor::ExtractOp::create(b, loc, values, ivs);
        Value index =
            indices
                ? tensor::ExtractOp::create(b, loc, indices, ivs).getResult()
                : arith::IndexCastOp::create(b, loc, b.getI32Type(), ivs[dim])
                      .getResult();
        SmallVector<Value> walking = {value, index};
        walking.append(carried.begin(), carried.end());
        auto walk = scf::ForOp::create(
            b, loc, zero, k, one, walking,
            [&](OpBuilder &b, Location loc, Value j, ValueRange state) {
              Value value = state[0], index = state[1];
              SmallVector<Value> at = withAt(ivs, dim, j);
              Value kept = tensor::ExtractOp::create(b, loc, state[2], at);
              Value keptIndex = tensor::ExtractOp::create(b, loc, state[3], at);
              Value takes = inlineRegion(b, region, {value, kept});
              Value yields = inlineRegion(b, region, {kept, value});
              Value equal = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::eq, takes, yields);
              Value earlier = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::slt, index, keptIndex);
              Value takesIndex = arith::OrIOp::create(
                  b, loc, takes, arith::AndIOp::create(b, loc, equal, earlier));
              auto select = [&](Value cond, Value a, Value c) {
                return arith::SelectOp::create(b, loc, cond, a, c).getResult();
              };
              Value outValues = tensor::InsertOp::create(
                  b, loc, select(takes, value, kept), state[2], at);
              Value outIndices = tensor::InsertOp::create(
                  b, loc, select(takesIndex, index, keptIndex), state[3], at);
              scf::YieldOp::create(
                  b, loc,
                  ValueRange{select(takes, kept, value),
                             select(takesIndex, keptIndex, index), outValues,
                             outIndices});
            });
        return {walk.getResult(2), walk.getResult(3)};
      });
  rewriter.replaceOp(topk, nest.results);
}

struct TPTMTensorToLoopsPass
    : tp::impl::TPTMTensorToLoopsBase<TPTMTensorToLoopsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<tm_tensor::ScatterOp, tm_tensor::SortOp, tm_tensor::TopkOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      if (auto scatter = dyn_cast<tm_tensor::ScatterOp>(op))
        lowerScatter(rewriter, scatter);
      else if (auto sort = dyn_cast<tm_tensor::SortOp>(op))
        lowerSort(rewriter, sort);
      else
        lowerTopk(rewriter, cast<tm_tensor::TopkOp>(op));
    }
  }
};

} // namespace

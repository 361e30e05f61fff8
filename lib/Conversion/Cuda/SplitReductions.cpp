//===- SplitReductions.cpp - long reductions in two coalesced stages ------===//
//
// The GPU path gives each output point of a reduction one thread with a
// sequential loop: a LayerNorm or RMSNorm over d = 4096 at 128 tokens is 128
// threads, each walking its own row, where neighbouring threads read 16 KB
// apart. A reduction of N becomes 32 interleaved partial reductions per
// output point (thread j reads elements j, j + 32, ...: a warp reads
// contiguous memory) and a short final reduction of the partials, as
// upstream's linalg::splitReduction (innerParallel) does. Upstream needs a
// static N that 32 divides; decode attention's softmax reduces over the
// `pos + 1` positions written so far, a dynamic N. So here the reduced
// operands are padded up to a multiple of 32 and reshaped to [chunks, 32];
// a partial reduction keeps its accumulator at the padded positions (a
// select on the position), so any body works, not only a bare combiner.
// On tensors, before bufferization; only generics with one reduction
// dimension whose body folds into the accumulator with one combiner that has
// a neutral element (the partials start from it), projected-permutation maps
// and no linalg.index.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSPLITREDUCTIONS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Partial reductions per output point: a warp's worth.
constexpr int64_t kRatio = 32;

/// A reduction the pass splits.
struct Reduction {
  /// The reduction loop.
  unsigned dim;
  /// The input and result position at which the first input that the
  /// reduction reads indexes it: where the reduced length comes from.
  OpOperand *lengthOperand;
  unsigned lengthPosition;
  /// The op folding a value into the accumulator, and its neutral element.
  Operation *combiner;
  TypedAttr neutral;
};

/// `v` padded at the end of dimension `pos` by `high` elements, then
/// reshaped there to [chunks, 32]. The partial reductions skip the padding,
/// but the body still computes on it before the select: NaN for floats, so
/// that a value of it used by mistake shows in every result instead of
/// passing for a plausible number; one for integers, which no division or
/// remainder in the body can trap on.
Value padAndSplit(RewriterBase &rewriter, Location loc, Value v, unsigned pos,
                  OpFoldResult high, OpFoldResult chunks) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> shape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    int64_t first = shape.size();
    if (i != pos) {
      groups.push_back({first});
      shape.push_back(tensor::getMixedSize(rewriter, loc, v, i));
      continue;
    }
    groups.push_back({first, first + 1});
    shape.push_back(chunks);
    shape.push_back(rewriter.getIndexAttr(kRatio));
  }
  if (!isZeroInteger(high)) {
    SmallVector<OpFoldResult> low(type.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> highs = low;
    highs[pos] = high;
    Type element = type.getElementType();
    TypedAttr filler = rewriter.getOneAttr(element);
    if (auto floatType = dyn_cast<FloatType>(element))
      filler = rewriter.getFloatAttr(
          floatType, APFloat::getNaN(floatType.getFloatSemantics()));
    Value fill = arith::ConstantOp::create(rewriter, loc, filler);
    v = tensor::PadOp::create(rewriter, loc, Type(), v, low, highs, fill);
  }
  // Another input may have given a static length where this one's is
  // dynamic: the split's static chunks need a static padded dimension.
  auto padded = cast<RankedTensorType>(v.getType());
  if (std::optional<int64_t> staticChunks = getConstantIntValue(chunks);
      staticChunks && padded.isDynamicDim(pos)) {
    SmallVector<int64_t> paddedShape(padded.getShape());
    paddedShape[pos] = *staticChunks * kRatio;
    v = tensor::CastOp::create(rewriter, loc, padded.clone(paddedShape), v);
  }
  auto splitType = RankedTensorType::get(decomposeMixedValues(shape).first,
                                         type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, splitType, v, groups,
                                       shape);
}

struct SplitReductionsPass
    : tp::impl::TPSplitReductionsBase<SplitReductionsPass> {
  using TPSplitReductionsBase::TPSplitReductionsBase;

  /// The reduction to split, if `op` is one.
  std::optional<Reduction> splittable(linalg::GenericOp op) const {
    if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1 ||
        op.getNumDpsInits() != 1 || op.hasIndexSemantics() ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); }))
      return std::nullopt;
    Reduction r;
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    r.dim = dims.front();
    r.lengthOperand = nullptr;
    AffineExpr reduced = getAffineDimExpr(r.dim, op.getContext());
    for (OpOperand *in : op.getDpsInputOperands())
      if (auto pos = op.getMatchingIndexingMap(in).getResultPosition(reduced)) {
        r.lengthOperand = in;
        r.lengthPosition = *pos;
        break;
      }
    // A dynamic length is split whatever it turns out to be: decode's
    // `pos + 1` reaches the cache's length.
    int64_t size = op.getStaticLoopRanges()[r.dim];
    if (!r.lengthOperand || (!ShapedType::isDynamic(size) && size < minSize))
      return std::nullopt;
    SmallVector<Operation *> combiners;
    if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
        combiners.size() != 1 || combiners.front()->getNumOperands() != 2 ||
        combiners.front()->getNumResults() != 1)
      return std::nullopt;
    r.combiner = combiners.front();
    std::optional<TypedAttr> neutral = arith::getNeutralElement(r.combiner);
    if (!neutral)
      return std::nullopt;
    r.neutral = *neutral;
    return r;
  }

  /// Rewrites `op` as 32 partial reductions per output point, then their
  /// combination into `op`'s init.
  void split(RewriterBase &rewriter, linalg::GenericOp op,
             const Reduction &r) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    rewriter.setInsertionPoint(op);
    OpFoldResult length = tensor::getMixedSize(
        rewriter, loc, r.lengthOperand->get(), r.lengthPosition);
    AffineExpr n = rewriter.getAffineSymbolExpr(0);
    OpFoldResult chunks = affine::makeComposedFoldedAffineApply(
        rewriter, loc, n.ceilDiv(kRatio), {length});
    OpFoldResult high = affine::makeComposedFoldedAffineApply(
        rewriter, loc, n.ceilDiv(kRatio) * kRatio - n, {length});
    bool padded = !isZeroInteger(high);

    // Loops: every other loop of `op` in its order, then the 32 lanes, then
    // the chunks (the only reduction, innermost: all parallel loops become
    // threads, each walking its chunks).
    unsigned numLoops = op.getNumLoops(), lane = numLoops - 1, chunk = numLoops;
    auto renamed = [&](unsigned d) {
      return getAffineDimExpr(d == r.dim ? chunk : (d < r.dim ? d : d - 1),
                              ctx);
    };
    auto rename = [&](AffineMap map) {
      SmallVector<AffineExpr> results;
      for (AffineExpr e : map.getResults())
        results.push_back(renamed(cast<AffineDimExpr>(e).getPosition()));
      return results;
    };

    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      SmallVector<AffineExpr> results = rename(map);
      Value value = in->get();
      if (auto pos = map.getResultPosition(getAffineDimExpr(r.dim, ctx))) {
        value = padAndSplit(rewriter, loc, value, *pos, high, chunks);
        results.insert(results.begin() + *pos + 1, getAffineDimExpr(lane, ctx));
      }
      inputs.push_back(value);
      maps.push_back(AffineMap::get(numLoops + 1, 0, results, ctx));
    }
    Value init = op.getDpsInitOperand(0)->get();
    auto initType = cast<RankedTensorType>(init.getType());
    SmallVector<AffineExpr> partialResults =
        rename(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
    partialResults.push_back(getAffineDimExpr(lane, ctx));
    maps.push_back(AffineMap::get(numLoops + 1, 0, partialResults, ctx));

    SmallVector<OpFoldResult> partialSizes =
        tensor::getMixedSizes(rewriter, loc, init);
    partialSizes.push_back(rewriter.getIndexAttr(kRatio));
    Value empty = tensor::EmptyOp::create(rewriter, loc, partialSizes,
                                          initType.getElementType());
    Value neutral = arith::ConstantOp::create(rewriter, loc, r.neutral);
    Value partialInit =
        linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);

    SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::parallel);  // lanes
    iterators.push_back(utils::IteratorType::reduction); // chunks
    Value lengthValue = getValueOrCreateConstantIndexOp(rewriter, loc, length);
    Block *body = op.getBody();
    auto partial = linalg::GenericOp::create(
        rewriter, loc, partialInit.getType(), inputs, partialInit, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          IRMapping mapping;
          mapping.map(body->getArguments(), args);
          for (Operation &inner : body->without_terminator())
            b.clone(inner, mapping);
          Value result =
              mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
          if (padded) {
            // Position chunk * 32 + lane of the reduction: past its length
            // the padding, which leaves the accumulator as it is.
            Value position = arith::AddIOp::create(
                b, l,
                arith::MulIOp::create(
                    b, l, linalg::IndexOp::create(b, l, chunk),
                    arith::ConstantIndexOp::create(b, l, kRatio)),
                linalg::IndexOp::create(b, l, lane));
            Value inside = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, position, lengthValue);
            result = arith::SelectOp::create(b, l, inside, result, args.back());
          }
          linalg::YieldOp::create(b, l, result);
        });

    // The partials [outputs..., 32] combined into op's init.
    unsigned outRank = initType.getRank();
    AffineMap all = rewriter.getMultiDimIdentityMap(outRank + 1);
    SmallVector<AffineMap> finalMaps = {
        all, AffineMap::get(outRank + 1, 0, all.getResults().drop_back(), ctx)};
    SmallVector<utils::IteratorType> finalIterators(
        outRank, utils::IteratorType::parallel);
    finalIterators.push_back(utils::IteratorType::reduction);
    auto combined = linalg::GenericOp::create(
        rewriter, loc, initType, partial.getResult(0), init, finalMaps,
        finalIterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Operation *combine = b.clone(*r.combiner);
          combine->setOperands(args);
          linalg::YieldOp::create(b, l, combine->getResult(0));
        });
    rewriter.replaceOp(op, combined.getResults());
  }

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Reduction>> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<Reduction> r = splittable(op))
        reductions.emplace_back(op, *r);
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, r] : reductions)
      split(rewriter, op, r);
  }
};

} // namespace

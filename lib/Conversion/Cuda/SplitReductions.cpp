//===- SplitReductions.cpp - long reductions in coalesced stages ----------===//
//
// The GPU path gives each output point of a reduction one thread with a
// sequential loop: a LayerNorm or RMSNorm over d = 4096 at 128 tokens is 128
// threads, each walking its own row, where neighbouring threads read 16 KB
// apart; a decode step's argmax over a vocabulary of 32000 was one thread
// walking 32000 logits (1.8 ms on the H200, 60% of the step). A reduction
// of N becomes L = ceil(N / 32) partial reductions per output point, each
// of 32 elements, interleaved (lane j reads j, j + L, ...: a warp reads
// contiguous memory), as upstream's linalg::splitReduction (innerParallel)
// does; the L partials are merged the same way, 32 at a time, while more
// than 32 are left and their number is static, and the last ones into the
// original init. Upstream needs a static N that the factor divides;
// decode attention's softmax reduces over the `pos + 1` positions written
// so far, a dynamic N. So here the reduced operands are padded up to a
// multiple of 32 and reshaped to [32, L]; a partial reduction keeps its
// accumulator at the padded positions (a select on the position), so any
// body works, not only a bare combiner; `linalg.index` of the reduced
// dimension becomes the position.
// On tensors, before bufferization; only generics with one reduction
// dimension and projected-permutation maps whose body either folds into one
// accumulator with one combiner that has a neutral element, or is an
// argmax/argmin: a value by maximumf/minimumf, an index that grows with the
// position taken where the element is strictly greater/less (the first
// occurrence; merges take the smaller index on equal values). Where a NaN
// makes the maximum NaN, the loop's index is that of the maximum before it,
// the split one keeps the init's: the value is NaN either way (a decode
// step's vocabulary argmax turns a NaN maximum into id -1).
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

/// Elements each partial reduction reads (a thread's sequential loop).
constexpr int64_t kIterations = 32;

/// A reduction the pass splits.
struct Reduction {
  /// The reduction loop.
  unsigned dim;
  /// The input and result position at which the first input that the
  /// reduction reads indexes it: where the reduced length comes from.
  OpOperand *lengthOperand;
  unsigned lengthPosition;
  /// The op folding a value into accumulator 0, and its neutral element.
  Operation *combiner;
  TypedAttr neutral;
  /// An argmax/argmin: result 1 is the index of result 0's extremum, taken
  /// where an element compares `better` than the accumulator.
  std::optional<arith::CmpFPredicate> better;
};

/// `v` padded at the end of dimension `pos` by `high` elements, then
/// reshaped there to [kIterations, lanes]. The partial reductions skip the
/// padding, but the body still computes on it before the select: NaN for
/// floats, so that a value of it used by mistake shows in every result
/// instead of passing for a plausible number; one for integers, which no
/// division or remainder in the body can trap on.
Value padAndSplit(RewriterBase &rewriter, Location loc, Value v, unsigned pos,
                  OpFoldResult high, OpFoldResult lanes) {
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
    shape.push_back(rewriter.getIndexAttr(kIterations));
    shape.push_back(lanes);
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
  // dynamic: the split's static lanes need a static padded dimension.
  auto padded = cast<RankedTensorType>(v.getType());
  if (std::optional<int64_t> staticLanes = getConstantIntValue(lanes);
      staticLanes && padded.isDynamicDim(pos)) {
    SmallVector<int64_t> paddedShape(padded.getShape());
    paddedShape[pos] = kIterations * *staticLanes;
    v = tensor::CastOp::create(rewriter, loc, padded.clone(paddedShape), v);
  }
  auto splitType = RankedTensorType::get(decomposeMixedValues(shape).first,
                                         type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, splitType, v, groups,
                                       shape);
}

} // namespace

/// Whether `v` is the position along reduction loop `dim`, plus a value
/// defined outside `op`, cast or not: an index that grows with the
/// position, so that the smaller index is the earlier element.
static bool growsWithPosition(linalg::GenericOp op, unsigned dim, Value v) {
  Operation *def = v.getDefiningOp();
  if (auto index = dyn_cast_if_present<linalg::IndexOp>(def))
    return index.getDim() == dim;
  if (isa_and_present<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return growsWithPosition(op, dim, def->getOperand(0));
  auto add = dyn_cast_if_present<arith::AddIOp>(def);
  if (!add)
    return false;
  auto outside = [&](Value x) {
    return !op->isAncestor(x.getParentRegion()->getParentOp());
  };
  return (outside(add.getRhs()) && growsWithPosition(op, dim, add.getLhs())) ||
         (outside(add.getLhs()) && growsWithPosition(op, dim, add.getRhs()));
}

SmallVector<Value>
mlir::tp::mergeReduction(OpBuilder &b, Location loc, Operation *combiner,
                         std::optional<arith::CmpFPredicate> better,
                         ValueRange in, ValueRange acc, bool breakTies) {
  Operation *combine = b.clone(*combiner);
  combine->setOperands({in[0], acc[0]});
  if (!better)
    return {combine->getResult(0)};
  Value take = arith::CmpFOp::create(b, loc, *better, in[0], acc[0]);
  if (breakTies) {
    Value equal =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, in[0], acc[0]);
    Value smaller =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, in[1], acc[1]);
    Value tie = arith::AndIOp::create(b, loc, equal, smaller);
    take = arith::OrIOp::create(b, loc, take, tie);
  }
  return {combine->getResult(0),
          arith::SelectOp::create(b, loc, take, in[1], acc[1])};
}

std::optional<std::pair<Operation *, arith::CmpFPredicate>>
mlir::tp::argExtremum(linalg::GenericOp op, unsigned dim) {
  Block *body = op.getBody();
  BlockArgument acc0 = op.getRegionOutputArgs()[0];
  BlockArgument acc1 = op.getRegionOutputArgs()[1];
  // acc0 is read twice (by the combiner and the comparison), which
  // matchReduction refuses.
  Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!isa_and_present<arith::MaximumFOp, arith::MinimumFOp>(combiner) ||
      !llvm::is_contained(combiner->getOperands(), acc0))
    return std::nullopt;
  auto select =
      body->getTerminator()->getOperand(1).getDefiningOp<arith::SelectOp>();
  if (!select || select.getFalseValue() != acc1 || !acc1.hasOneUse() ||
      !growsWithPosition(op, dim, select.getTrueValue()))
    return std::nullopt;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getRhs() != acc0 ||
      !llvm::all_of(acc0.getUsers(), [&](Operation *user) {
        return user == combiner || user == cmp;
      }))
    return std::nullopt;
  Value element = combiner->getOperand(0) == acc0 ? combiner->getOperand(1)
                                                  : combiner->getOperand(0);
  if (cmp.getLhs() != element)
    return std::nullopt;
  arith::CmpFPredicate p = cmp.getPredicate();
  if (!(isa<arith::MaximumFOp>(combiner) && p == arith::CmpFPredicate::OGT) &&
      !(isa<arith::MinimumFOp>(combiner) && p == arith::CmpFPredicate::OLT))
    return std::nullopt;
  return std::make_pair(combiner, p);
}

namespace {

/// Folds partial results `in` into accumulators `acc` (tp::mergeReduction).
SmallVector<Value> merge(OpBuilder &b, Location loc, const Reduction &r,
                         ValueRange in, ValueRange acc, bool breakTies = true) {
  return tp::mergeReduction(b, loc, r.combiner, r.better, in, acc, breakTies);
}

/// Position iteration * lanes + lane of a split reduction, in a body.
Value positionOf(OpBuilder &b, Location loc, unsigned iteration, Value lanes,
                 unsigned lane) {
  Value first = linalg::IndexOp::create(b, loc, iteration);
  Value start = arith::MulIOp::create(b, loc, first, lanes);
  Value offset = linalg::IndexOp::create(b, loc, lane);
  return arith::AddIOp::create(b, loc, start, offset);
}

/// Tensors of `sizes` with `types`' elements, filled with where each partial
/// result starts: the combiner's neutral element, and for an index the
/// largest one (any real index wins a tie against it).
SmallVector<Value> partialInits(RewriterBase &rewriter, Location loc,
                                const Reduction &r, TypeRange types,
                                ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> inits;
  for (auto [k, type] : llvm::enumerate(types)) {
    TypedAttr start = r.neutral;
    if (k == 1)
      start = rewriter.getIntegerAttr(
          type, APInt::getSignedMaxValue(
                    type.isIndex() ? 64 : type.getIntOrFloatBitWidth()));
    Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, type);
    Value fill = arith::ConstantOp::create(rewriter, loc, start);
    inits.push_back(
        linalg::FillOp::create(rewriter, loc, fill, empty).getResult(0));
  }
  return inits;
}

/// The element types of `values`, tensors.
SmallVector<Type> elementTypes(ValueRange values) {
  return llvm::map_to_vector(values, [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  });
}

/// The accumulator at padded positions: `position` past `length` keeps it.
SmallVector<Value> skipPadding(OpBuilder &b, Location loc, Value position,
                               Value length, ValueRange results,
                               ValueRange acc) {
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       position, length);
  SmallVector<Value> kept;
  for (auto [result, a] : llvm::zip(results, acc))
    kept.push_back(arith::SelectOp::create(b, loc, inside, result, a));
  return kept;
}

struct SplitReductionsPass
    : tp::impl::TPSplitReductionsBase<SplitReductionsPass> {
  using TPSplitReductionsBase::TPSplitReductionsBase;

  /// The reduction to split, if `op` is one.
  std::optional<Reduction> splittable(linalg::GenericOp op) const {
    unsigned inits = op.getNumDpsInits();
    if (skipRowKernels && tp::takesRowKernel(op))
      return std::nullopt;
    if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1 ||
        (inits != 1 && inits != 2) ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); }))
      return std::nullopt;
    if (inits == 2 && op.getIndexingMapsArray()[op.getNumDpsInputs()] !=
                          op.getIndexingMapsArray()[op.getNumDpsInputs() + 1])
      return std::nullopt;
    // linalg.index is renumbered in the body's own ops, not in their regions.
    if (op.getBody()
            ->walk([&](linalg::IndexOp index) {
              return index->getBlock() == op.getBody()
                         ? WalkResult::advance()
                         : WalkResult::interrupt();
            })
            .wasInterrupted())
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
    if (inits == 1) {
      SmallVector<Operation *> combiners;
      if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
          combiners.size() != 1 || combiners.front()->getNumOperands() != 2 ||
          combiners.front()->getNumResults() != 1)
        return std::nullopt;
      r.combiner = combiners.front();
    } else {
      auto extremum = tp::argExtremum(op, r.dim);
      if (!extremum)
        return std::nullopt;
      std::tie(r.combiner, r.better) = *extremum;
    }
    std::optional<TypedAttr> neutral = arith::getNeutralElement(r.combiner);
    if (!neutral)
      return std::nullopt;
    r.neutral = *neutral;
    return r;
  }

  /// Rewrites `op` as partial reductions of kIterations elements each, the
  /// merges of their results, and the last merge into `op`'s inits.
  void split(RewriterBase &rewriter, linalg::GenericOp op,
             const Reduction &r) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    rewriter.setInsertionPoint(op);
    OpFoldResult length = tensor::getMixedSize(
        rewriter, loc, r.lengthOperand->get(), r.lengthPosition);
    OpFoldResult lanes, high;
    std::tie(lanes, high) = lanesFor(rewriter, loc, length);

    // Loops: every other loop of `op` in its order, then the lanes, then
    // the iterations (the only reduction, innermost: all parallel loops
    // become threads, each walking its kIterations elements).
    unsigned numLoops = op.getNumLoops(), lane = numLoops - 1,
             iteration = numLoops;
    auto renamed = [&](unsigned d) {
      return getAffineDimExpr(d == r.dim ? iteration : (d < r.dim ? d : d - 1),
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
        value = padAndSplit(rewriter, loc, value, *pos, high, lanes);
        results.insert(results.begin() + *pos + 1, getAffineDimExpr(lane, ctx));
      }
      inputs.push_back(value);
      maps.push_back(AffineMap::get(numLoops + 1, 0, results, ctx));
    }
    SmallVector<Value> outs = op.getDpsInits();
    SmallVector<AffineExpr> partialResults =
        rename(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
    partialResults.push_back(getAffineDimExpr(lane, ctx));
    for (unsigned k = 0; k < outs.size(); ++k)
      maps.push_back(AffineMap::get(numLoops + 1, 0, partialResults, ctx));

    // Every loop but the iterations (the other loops, the lanes) is parallel.
    SmallVector<utils::IteratorType> iterators(numLoops,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value lengthValue = getValueOrCreateConstantIndexOp(rewriter, loc, length);
    Value lanesValue = getValueOrCreateConstantIndexOp(rewriter, loc, lanes);
    Block *body = op.getBody();
    SmallVector<OpFoldResult> outSizes =
        tensor::getMixedSizes(rewriter, loc, outs[0]);
    SmallVector<OpFoldResult> partialSizes = outSizes;
    partialSizes.push_back(lanes);
    SmallVector<Value> partialOuts =
        partialInits(rewriter, loc, r, elementTypes(outs), partialSizes);
    auto partial = linalg::GenericOp::create(
        rewriter, loc, ValueRange(partialOuts).getTypes(), inputs, partialOuts,
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          // Position iteration * lanes + lane of the reduction.
          Value position;
          auto getPosition = [&] {
            if (!position)
              position = positionOf(b, l, iteration, lanesValue, lane);
            return position;
          };
          IRMapping mapping;
          mapping.map(body->getArguments(), args);
          for (Operation &inner : body->without_terminator()) {
            if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
              unsigned d = index.getDim();
              mapping.map(index.getResult(),
                          d == r.dim ? getPosition()
                                     : linalg::IndexOp::create(
                                           b, l, d < r.dim ? d : d - 1)
                                           .getResult());
              continue;
            }
            b.clone(inner, mapping);
          }
          SmallVector<Value> results;
          for (Value v : body->getTerminator()->getOperands())
            results.push_back(mapping.lookupOrDefault(v));
          ValueRange acc = args.take_back(outs.size());
          if (!isZeroInteger(high))
            results =
                skipPadding(b, l, getPosition(), lengthValue, results, acc);
          linalg::YieldOp::create(b, l, results);
        });

    // Merge the partials 32 at a time while more than 32 are left (a
    // dynamic number is merged at once: it is seen only at run time).
    SmallVector<Value> partials = partial.getResults();
    unsigned outRank = cast<RankedTensorType>(outs[0].getType()).getRank();
    while (std::optional<int64_t> n = getConstantIntValue(lanes)) {
      if (*n <= kIterations)
        break;
      std::tie(partials, lanes) =
          mergeStage(rewriter, loc, r, partials, lanes, outRank);
    }

    // The last partials merged into op's inits: at once for a combiner,
    // which the inits' values do not disturb; an argmax/argmin first into
    // fresh partial inits, then takes the index only where the extremum
    // beats op's init strictly, as op does.
    SmallVector<Value> finalOuts =
        r.better ? partialInits(rewriter, loc, r, elementTypes(outs), outSizes)
                 : outs;
    // An init filled for op alone is filled just before the last merge
    // (which reads it, or for an argmax/argmin the step after it): the
    // loops then fuse into one kernel (tp-cluster-kernel-loops). Only within
    // its block: moved into a loop, the fill would run every iteration.
    for (Value init : outs)
      if (auto fill = init.getDefiningOp<linalg::FillOp>();
          fill && init.hasOneUse() &&
          fill->getBlock() == rewriter.getInsertionBlock())
        rewriter.moveOpBefore(fill, rewriter.getInsertionBlock(),
                              rewriter.getInsertionPoint());
    AffineMap all = rewriter.getMultiDimIdentityMap(outRank + 1);
    AffineMap outMap =
        AffineMap::get(outRank + 1, 0, all.getResults().drop_back(), ctx);
    SmallVector<AffineMap> finalMaps(partials.size(), all);
    finalMaps.append(partials.size(), outMap);
    SmallVector<utils::IteratorType> finalIterators(
        outRank, utils::IteratorType::parallel);
    finalIterators.push_back(utils::IteratorType::reduction);
    auto combined = linalg::GenericOp::create(
        rewriter, loc, ValueRange(finalOuts).getTypes(), partials, finalOuts,
        finalMaps, finalIterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l,
                                  merge(b, l, r,
                                        args.take_front(partials.size()),
                                        args.take_back(partials.size())));
        });
    if (!r.better) {
      rewriter.replaceOp(op, combined.getResults());
      return;
    }
    AffineMap id = rewriter.getMultiDimIdentityMap(outRank);
    auto initial = linalg::GenericOp::create(
        rewriter, loc, ValueRange(outs).getTypes(), combined.getResults(), outs,
        SmallVector<AffineMap>(4, id),
        SmallVector<utils::IteratorType>(outRank,
                                         utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l,
                                  merge(b, l, r, args.take_front(2),
                                        args.take_back(2),
                                        /*breakTies=*/false));
        });
    rewriter.replaceOp(op, initial.getResults());
  }

  /// ceil(length / kIterations) lanes, and the padding that makes
  /// kIterations * lanes.
  static std::pair<OpFoldResult, OpFoldResult>
  lanesFor(RewriterBase &rewriter, Location loc, OpFoldResult length) {
    AffineExpr n = rewriter.getAffineSymbolExpr(0);
    return {
        affine::makeComposedFoldedAffineApply(rewriter, loc,
                                              n.ceilDiv(kIterations), {length}),
        affine::makeComposedFoldedAffineApply(
            rewriter, loc, n.ceilDiv(kIterations) * kIterations - n, {length})};
  }

  /// `partials` [outputs..., lanes] merged kIterations at a time into
  /// [outputs..., ceil(lanes / kIterations)].
  static std::pair<SmallVector<Value>, OpFoldResult>
  mergeStage(RewriterBase &rewriter, Location loc, const Reduction &r,
             ArrayRef<Value> partials, OpFoldResult lanes, unsigned outRank) {
    MLIRContext *ctx = rewriter.getContext();
    OpFoldResult next, high;
    std::tie(next, high) = lanesFor(rewriter, loc, lanes);
    unsigned lane = outRank, iteration = outRank + 1;
    SmallVector<AffineExpr> inResults, outResults;
    for (unsigned d = 0; d < outRank; ++d)
      inResults.push_back(getAffineDimExpr(d, ctx));
    outResults = inResults;
    inResults.push_back(getAffineDimExpr(iteration, ctx));
    inResults.push_back(getAffineDimExpr(lane, ctx));
    outResults.push_back(getAffineDimExpr(lane, ctx));
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (Value p : partials) {
      inputs.push_back(padAndSplit(rewriter, loc, p, outRank, high, next));
      maps.push_back(AffineMap::get(outRank + 2, 0, inResults, ctx));
    }
    maps.append(partials.size(),
                AffineMap::get(outRank + 2, 0, outResults, ctx));
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, partials.front());
    sizes.back() = next;
    SmallVector<Value> outs =
        partialInits(rewriter, loc, r, elementTypes(partials), sizes);
    SmallVector<utils::IteratorType> iterators(outRank + 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    Value lengthValue = getValueOrCreateConstantIndexOp(rewriter, loc, lanes);
    Value nextValue = getValueOrCreateConstantIndexOp(rewriter, loc, next);
    bool padded = !isZeroInteger(high);
    auto stage = linalg::GenericOp::create(
        rewriter, loc, ValueRange(outs).getTypes(), inputs, outs, maps,
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          ValueRange acc = args.take_back(partials.size());
          SmallVector<Value> results =
              merge(b, l, r, args.take_front(partials.size()), acc);
          if (padded) {
            Value position = positionOf(b, l, iteration, nextValue, lane);
            results = skipPadding(b, l, position, lengthValue, results, acc);
          }
          linalg::YieldOp::create(b, l, results);
        });
    return {stage.getResults(), next};
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

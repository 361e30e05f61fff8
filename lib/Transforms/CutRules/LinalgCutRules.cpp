//===- LinalgCutRules.cpp - how linalg ops carry a cut --------------------===//
//
// Structured ops carry a cut by their indexing maps: a cut on an operand dim
// is a cut on a loop, and every operand and result indexed by that loop is
// cut the same way. A sum over the cut loop ends the cut: its result is a
// partial sum, and one all-reduce makes it whole. Softmax normalises over
// one dimension, which must not be the cut one.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/CutRuleOpInterface.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tp;

/// The cut a cut operand or result puts on the loops (`dim` and `subDim`
/// are loops), or nothing if no operand or result of `op` is cut yet.
static FailureOr<std::optional<DimCut>>
cutLoop(linalg::LinalgOp op, ArrayRef<AffineMap> maps, CutPropagation &state) {
  unsigned numInputs = op.getNumDpsInputs();
  std::optional<DimCut> loop;
  auto loopOf = [&](int64_t dim, AffineMap map) -> FailureOr<int64_t> {
    auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(dim));
    if (!dimExpr)
      return state.fail(op, llvm::formatv("indexes cut dimension {0} by {1}, "
                                          "not by a single loop",
                                          dim, map.getResult(dim)));
    return dimExpr.getPosition();
  };
  auto consider = [&](Value v, AffineMap map) -> LogicalResult {
    std::optional<DimCut> cut = state.lookup(v);
    if (!cut)
      return success();
    DimCut here = *cut;
    FailureOr<int64_t> dim = loopOf(cut->dim, map);
    if (failed(dim))
      return failure();
    here.dim = *dim;
    if (cut->subDim >= 0) {
      FailureOr<int64_t> subDim = loopOf(cut->subDim, map);
      if (failed(subDim))
        return failure();
      here.subDim = *subDim;
    }
    // An operand that the loop the replicas split does not index holds its
    // part whole on each of them (K of a kv head, read by the query heads
    // its ranks split): the loops carry the split.
    auto sameButSub = [&](const DimCut &plain, const DimCut &split) {
      DimCut withSub = plain;
      withSub.subDim = split.subDim;
      return plain.subDim < 0 && withSub == split;
    };
    if (loop && *loop != here) {
      if (sameButSub(*loop, here)) {
        loop = here;
        return success();
      }
      if (sameButSub(here, *loop))
        return success();
      return state.fail(op, llvm::formatv("receives two different cuts (loop "
                                          "{0} and loop {1})",
                                          loop->dim, here.dim));
    }
    loop = here;
    return success();
  };
  for (OpOperand &operand : op->getOpOperands())
    if (failed(consider(operand.get(), maps[operand.getOperandNumber()])))
      return failure();
  // Result i is indexed like init i.
  for (OpResult result : op->getResults())
    if (failed(consider(result, maps[numInputs + result.getResultNumber()])))
      return failure();
  return loop;
}

/// Each rank reduces its part of the input (cut on loop `cut.dim`) to its
/// extreme and that extreme's global index; two all-reduces combine them.
static LogicalResult propagateArgReduction(linalg::LinalgOp op, DimCut cut,
                                           ReductionKind kind,
                                           ArrayRef<AffineMap> maps,
                                           CutPropagation &state) {
  if (cut.outer != 1 || cut.replicas != 1)
    return state.fail(op, "takes the index of an extreme over a loop cut in "
                          "blocks or held by several ranks");
  // The positions are combined as f32, exact below 2^24.
  int64_t positions = op.getStaticLoopRanges()[cut.dim];
  if (ShapedType::isDynamic(positions) || positions > (int64_t(1) << 24))
    return state.fail(op, "takes the index of an extreme over more than 2^24 "
                          "positions, which the combine of indices as f32 "
                          "would round");
  for (OpResult result : op->getResults())
    if (state.lookup(result))
      return state.fail(op, "reduces over the cut loop but its result is "
                            "needed cut");
  OpOperand *input = op.getDpsInputOperand(0);
  if (auto dimExpr = maps[0].getResultPosition(
          getAffineDimExpr(cut.dim, op->getContext())))
    if (failed(state.mark(input->get(), DimCut{*dimExpr, 1, 1}, op)))
      return failure();
  state.reduce(op, kind, PlannedCollective::Purpose::Combine,
               llvm::formatv("'{0}' takes the index of the extreme over the "
                             "cut dimension: each rank takes its part's",
                             op->getName()),
               /*withIndex=*/true);
  return success();
}

/// The kind of a reduction of one value whose parts the ranks can reduce
/// apart and combine with an all-reduce: one input, one result, the body
/// `acc = max(acc, x)`, `min(acc, x)` or `acc + x` (a softmax's max and
/// sum of exponentials). Not a contraction: a sum of products of two cut
/// activations is a cut inside heads.
static std::optional<ReductionKind> combinableReduction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op->getNumResults() != 1 ||
      op.getNumReductionLoops() == 0)
    return std::nullopt;
  Block *body = op.getBlock();
  Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 ||
      !llvm::is_contained(combiner->getOperands(), body->getArgument(1)) ||
      !llvm::is_contained(combiner->getOperands(), body->getArgument(0)))
    return std::nullopt;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp>(combiner))
    return ReductionKind::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp>(combiner))
    return ReductionKind::Min;
  if (isa<arith::AddFOp, arith::AddIOp>(combiner))
    return ReductionKind::Sum;
  return std::nullopt;
}

/// Whether `v` is the index of loop `loop` (through integer casts).
static bool isLoopIndex(Value v, unsigned loop) {
  auto index = stripIntegerCasts(v).getDefiningOp<linalg::IndexOp>();
  return index && index.getDim() == loop;
}

/// Whether `v` is the index of loop `loop` of `op`, or that index plus a
/// value defined outside `op` (the first position of a rank's part, once
/// tp-shard has localized the loop), which goes to `offset` (null if none).
static bool isOffsetLoopIndex(linalg::LinalgOp op, Value v, unsigned loop,
                              Value &offset) {
  offset = nullptr;
  if (isLoopIndex(v, loop))
    return true;
  auto add = stripIntegerCasts(v).getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  for (auto [index, other] : {std::pair(add.getLhs(), add.getRhs()),
                              std::pair(add.getRhs(), add.getLhs())})
    if (isLoopIndex(index, loop) &&
        !op->getRegion(0).isAncestor(other.getParentRegion())) {
      offset = other;
      return true;
    }
  return false;
}

/// The kind of an arg reduction over `loop`: one input, two results, the
/// extreme of the input (result 0) and the index of loop `loop` where it
/// first occurs (result 1), as torch-mlir and the builders write an argmax:
/// `c = cmpf ogt, x, acc0; acc0' = maximumf(x, acc0) or select(c, x, acc0);
/// acc1' = select(c, index, acc1)` (olt and minimumf for an argmin). Ranks
/// then combine their extremes and, among the ranks that hold the overall
/// one, the first index (the index is global once localized).
std::optional<ReductionKind>
mlir::tp::argReduction(linalg::LinalgOp op, unsigned loop, Value *offset) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 2 ||
      op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray()[loop] != utils::IteratorType::reduction ||
      !isa<FloatType>(getElementTypeOrSelf(op.getDpsInits()[0].getType())) ||
      !isa<IntegerType>(getElementTypeOrSelf(op.getDpsInits()[1].getType())))
    return std::nullopt;
  Block *body = op.getBlock();
  Value in = body->getArgument(0), acc = body->getArgument(1),
        accIndex = body->getArgument(2);
  Operation *yield = body->getTerminator();
  auto select = yield->getOperand(1).getDefiningOp<arith::SelectOp>();
  // Only a caller that takes the offset accepts one: tp-shard combines the
  // ranks' indices in f32, exact up to 2^24, which it checks of the loop's
  // extent alone.
  Value added;
  if (!select || select.getFalseValue() != accIndex ||
      !(offset ? isOffsetLoopIndex(op, select.getTrueValue(), loop, added)
               : isLoopIndex(select.getTrueValue(), loop)))
    return std::nullopt;
  if (offset)
    *offset = added;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp || cmp.getLhs() != in || cmp.getRhs() != acc)
    return std::nullopt;
  std::optional<ReductionKind> kind;
  if (cmp.getPredicate() == arith::CmpFPredicate::OGT)
    kind = ReductionKind::Max;
  else if (cmp.getPredicate() == arith::CmpFPredicate::OLT)
    kind = ReductionKind::Min;
  else
    return std::nullopt;
  Operation *extreme = yield->getOperand(0).getDefiningOp();
  if (!extreme || !llvm::is_contained(extreme->getOperands(), in) ||
      !llvm::is_contained(extreme->getOperands(), acc))
    return std::nullopt;
  if (auto value = dyn_cast<arith::SelectOp>(extreme))
    return value.getCondition() == cmp.getResult() && value.getTrueValue() == in
               ? kind
               : std::nullopt;
  bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(extreme);
  bool isMin = isa<arith::MinimumFOp, arith::MinNumFOp>(extreme);
  if ((*kind == ReductionKind::Max && isMax) ||
      (*kind == ReductionKind::Min && isMin))
    return kind;
  return std::nullopt;
}

static LogicalResult propagateLinalg(linalg::LinalgOp op,
                                     CutPropagation &state) {
  // Indexing maps are rebuilt on each query for some ops; fetch them once.
  // They are in operand order (inputs, then inits).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numInputs = op.getNumDpsInputs();
  auto resultMap = [&](OpResult r) {
    return maps[numInputs + r.getResultNumber()];
  };
  FailureOr<std::optional<DimCut>> loop = cutLoop(op, maps, state);
  if (failed(loop))
    return failure();
  if (!*loop)
    return success();
  DimCut loopCut = **loop;
  unsigned l = loopCut.dim;

  if (std::optional<ReductionKind> kind = argReduction(op, l))
    return propagateArgReduction(op, loopCut, *kind, maps, state);

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool reduction = iterators[l] == utils::IteratorType::reduction;
  // The loop whose parts the ranks that share a part of loop `l` split.
  int64_t w = loopCut.subDim;
  // A parallel loop cut into one contiguous part per rank (or per group of
  // replicas) has its index made global by localizeCutIndex (a mask over
  // the positions of a padded vocabulary); any other index read would see
  // a rank's own positions. A body that reads a tensor from outside (a
  // gather from a table) is left out: the global index would read a table
  // another region may cut.
  auto readsOutside = [&] {
    WalkResult found = op.getBlock()->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (isa<ShapedType>(v.getType()) &&
            !op->isAncestor(v.getParentBlock()->getParentOp()))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return found.wasInterrupted();
  };
  for (int64_t cutLoop : {static_cast<int64_t>(l), w}) {
    bool usesIndex = false;
    op.getBlock()->walk([&](linalg::IndexOp index) {
      usesIndex |= static_cast<int64_t>(index.getDim()) == cutLoop;
    });
    bool globalIndex = cutLoop == l && !reduction && loopCut.outer == 1 &&
                       w < 0 && !readsOutside();
    if (usesIndex && !globalIndex)
      return state.fail(op, llvm::formatv("reads the index of cut loop {0}, "
                                          "which differs between ranks",
                                          cutLoop));
  }

  // Ranks that hold the same part would each add it to the all-reduce.
  if (reduction && loopCut.replicas > 1)
    return state.fail(op, llvm::formatv("reduces over loop {0}, whose parts "
                                        "{1} ranks each hold",
                                        l, loopCut.replicas));
  // A sum over the split loop would need the ranks that share a part of
  // loop `l`, not all ranks, to add theirs (a head dimension split: a cut
  // inside heads).
  if (w >= 0 && iterators[w] == utils::IteratorType::reduction)
    return state.fail(op, llvm::formatv("reduces over loop {0}, which the "
                                        "{1} ranks holding each part of loop "
                                        "{2} split among them: no all-reduce "
                                        "over all ranks combines their "
                                        "results",
                                        w, loopCut.replicas, l));
  std::optional<ReductionKind> combine = combinableReduction(op);
  if (reduction && !isSumReduction(op) && !combine) {
    // A max or a normalisation over the cut: only the whole input will do.
    for (OpResult result : op->getResults())
      if (state.lookup(result))
        return state.fail(op, "reduces over the cut loop but its result is "
                              "needed cut");
    for (OpOperand *input : op.getDpsInputOperands())
      if (state.lookup(input->get()))
        state.gather(*input, llvm::formatv("'{0}' reduces nonlinearly over "
                                           "the cut dimension",
                                           op->getName()));
    return success();
  }

  // An operand not indexed by loop `w` is held whole by each of the ranks
  // that split it (its parts of loop `l` only).
  auto markIndexed = [&](Value v, AffineMap map) -> LogicalResult {
    std::optional<int64_t> dim, subDim;
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      auto dimExpr = dyn_cast<AffineDimExpr>(expr);
      for (auto [loop, at] :
           {std::pair(static_cast<int64_t>(l), &dim), std::pair(w, &subDim)}) {
        if (loop < 0)
          continue;
        if (dimExpr && dimExpr.getPosition() == loop) {
          if (*at)
            return state.fail(op, llvm::formatv("indexes dimensions {0} and "
                                                "{1} of an operand by cut "
                                                "loop {2}",
                                                **at, pos, loop));
          *at = pos;
        } else if (expr.isFunctionOfDim(loop)) {
          return state.fail(op, llvm::formatv("indexes an operand by {0}, "
                                              "which mixes the cut loop with "
                                              "others",
                                              expr));
        }
      }
    }
    if (!dim) {
      if (subDim)
        return state.fail(op, llvm::formatv("indexes an operand by loop {0}, "
                                            "which the ranks that share a "
                                            "part of loop {1} split, but not "
                                            "by loop {1}",
                                            w, l));
      return success();
    }
    DimCut cut = loopCut;
    cut.dim = *dim;
    cut.subDim = subDim ? *subDim : -1;
    return state.mark(v, cut, op);
  };
  for (OpOperand &operand : op->getOpOperands())
    if (failed(markIndexed(operand.get(), maps[operand.getOperandNumber()])))
      return failure();
  if (reduction && combine) {
    // Each rank reduces its part; an all-reduce of the same kind combines
    // the parts (the init, read by every rank, is counted once by a max or
    // a min; a sum's is taken out by the rewrite).
    if (state.lookup(op->getResult(0)))
      return state.fail(op, "reduces over the cut loop but its result is "
                            "needed cut");
    state.reduce(op, *combine, PlannedCollective::Purpose::Combine,
                 llvm::formatv("'{0}' reduces over the cut dimension: each "
                               "rank reduces its part",
                               op->getName()));
    return success();
  }
  if (reduction) {
    if (op->getNumResults() != 1)
      return state.fail(op, "sums several results over the cut loop; only "
                            "single result reductions get an all-reduce");
    if (state.lookup(op->getResult(0)))
      return state.fail(op, "sums over the cut loop but its result is needed "
                            "cut");
    // Summing over a cut dimension of a weight is the row cut a pair ends
    // with; of two activations, it is a cut inside attention heads.
    bool narrowing = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
      return maps[in->getOperandNumber()].isFunctionOfDim(l) &&
             isWeight(in->get());
    });
    state.reduce(op, ReductionKind::Sum,
                 narrowing ? PlannedCollective::Purpose::Pair
                           : PlannedCollective::Purpose::Other,
                 narrowing ? ""
                           : "it sums over the cut dimension of two "
                             "activations (in attention: the cut falls "
                             "inside each head), so every rank holds "
                             "partial scores that must be summed before any "
                             "nonlinear use");
    return success();
  }
  for (OpResult result : op->getResults())
    if (failed(markIndexed(result, resultMap(result))))
      return failure();
  if (isBroadcast(op))
    for (OpOperand *input : op.getDpsInputOperands())
      if (!state.lookup(input->get()))
        state.readWhole(input->get());
  return success();
}

namespace {

/// A body that reads the index of a cut loop (an arg reduction's position,
/// a parallel loop's, propagateLinalg allows no other) reads the position
/// in the whole operand: each rank's part starts at its part number times
/// the part's extent.
static void localizeCutIndex(linalg::LinalgOp op, const CutMap &cuts) {
  for (OpOperand &operand : op->getOpOperands()) {
    auto it = cuts.find(operand.get());
    if (it == cuts.end())
      continue;
    auto loop = dyn_cast<AffineDimExpr>(
        op.getMatchingIndexingMap(&operand).getResult(it->second.dim));
    if (!loop)
      return;
    SmallVector<linalg::IndexOp> indices;
    op.getBlock()->walk([&](linalg::IndexOp index) {
      if (index.getDim() == loop.getPosition())
        indices.push_back(index);
    });
    if (indices.empty())
      return;
    Location loc = op.getLoc();
    OpBuilder b(op);
    int64_t extent = cast<RankedTensorType>(operand.get().getType())
                         .getDimSize(it->second.dim);
    Value part = RankOp::create(b, loc);
    if (int64_t replicas = it->second.replicas; replicas > 1)
      part = arith::DivUIOp::create(
          b, loc, part, arith::ConstantIndexOp::create(b, loc, replicas));
    Value first = arith::MulIOp::create(
        b, loc, part, arith::ConstantIndexOp::create(b, loc, extent));
    for (linalg::IndexOp index : indices) {
      b.setInsertionPointAfter(index);
      auto global = arith::AddIOp::create(b, loc, index, first);
      index.getResult().replaceAllUsesExcept(global, global);
    }
    return;
  }
}

template <typename OpTy>
struct StructuredCutRule
    : CutRuleOpInterface::ExternalModel<StructuredCutRule<OpTy>, OpTy> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    return propagateLinalg(cast<linalg::LinalgOp>(op), state);
  }

  void localizeShapes(Operation *op, const CutMap &cuts, int64_t) const {
    localizeCutIndex(cast<linalg::LinalgOp>(op), cuts);
  }
};

struct SoftmaxCutRule
    : CutRuleOpInterface::ExternalModel<SoftmaxCutRule, linalg::SoftmaxOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    Value result = softmax.getResult()[0];
    std::optional<DimCut> cut = state.lookup(softmax.getInput());
    if (!cut)
      cut = state.lookup(softmax.getOutput());
    if (!cut)
      cut = state.lookup(result);
    if (!cut)
      return success();
    int64_t dim = softmax.getDimension();
    if (cut->dim != dim && cut->subDim != dim)
      return propagateSameCut(op, state);
    if (state.lookup(result))
      return state.fail(op, "normalises over the cut dimension but its "
                            "result is needed cut");
    state.gather(softmax.getInputMutable(),
                 llvm::formatv("'{0}' normalises over the cut dimension",
                               op->getName()));
    return success();
  }
};

template <typename... OpTys> void attachStructured(MLIRContext *ctx) {
  (OpTys::template attachInterface<StructuredCutRule<OpTys>>(*ctx), ...);
}

} // namespace

void mlir::tp::registerLinalgCutRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachStructured<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxCutRule>(*ctx);
  });
}

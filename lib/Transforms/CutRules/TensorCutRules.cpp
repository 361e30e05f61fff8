//===- TensorCutRules.cpp - how tensor ops carry a cut --------------------===//
//
//  * Reshapes by their reassociation: a cut of a dimension that a reshape
//    splits must land on one whole factor (the heads factor of [3, h, dh],
//    not the `3`); a cut of a factor is a cut in blocks of the merged one.
//  * Slices by their offsets: a slice must take whole blocks of a cut
//    dimension.
//  * Concatenation, insertion: along other dimensions only, or whole.
//  * Element reads: a lookup (an embedding) reads the rows a rank holds.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/CutRuleOpInterface.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tp;

//===----------------------------------------------------------------------===//
// Reshapes: one merged dimension <-> a group of split ones
//===----------------------------------------------------------------------===//

/// For a cut into `parts` on a dim that a reshape splits into `sizes`
/// (row-major), the position within `sizes` that holds the whole cut and
/// the cut there.
static std::optional<std::pair<unsigned, int64_t>>
refineCut(ArrayRef<int64_t> sizes, int64_t outer, int64_t parts) {
  int64_t before = 1;
  for (auto [j, size] : llvm::enumerate(sizes)) {
    if (size != 1 && outer % before == 0 &&
        size % ((outer / before) * parts) == 0)
      return std::make_pair(static_cast<unsigned>(j), outer / before);
    before *= size;
  }
  return std::nullopt;
}

/// The cuts of the merged dim that would pass the reshape: one per factor
/// that `parts` divides, cutting that factor in each block before it.
static SmallVector<int64_t> cutsThatPass(ArrayRef<int64_t> sizes,
                                         int64_t parts) {
  SmallVector<int64_t> outers;
  int64_t before = 1;
  for (int64_t size : sizes) {
    if (size != 1 && size % parts == 0)
      outers.push_back(before);
    before *= size;
  }
  return outers;
}

namespace {

/// A reshape between `merged` and `split`, whose dim i of `merged` is the
/// row-major product of the dims groups[i] of `split` (shape `splitShape`).
struct Reshape {
  Operation *op;
  Value merged, split;
  SmallVector<ReassociationIndices> groups;
  ArrayRef<int64_t> splitShape;
  /// "unfolds" (expand) or "folds" (collapse), for messages.
  StringRef verb;

  /// The cut of `merged` moved onto the one factor of its group that holds
  /// it whole; each factor that could carry a cut is a hint.
  LogicalResult splitCut(CutPropagation &state) const {
    std::optional<DimCut> cut = state.lookup(merged);
    if (!cut)
      return success();
    int64_t numRanks = state.getNumRanks();
    int64_t parts = cut->parts(numRanks);
    const ReassociationIndices &group = groups[cut->dim];
    SmallVector<int64_t> sizes = sizesOf(group);
    // The dimension the replicas split lands on the outermost factor of
    // its group that is not 1, whole (its parts are contiguous).
    int64_t subDim = -1;
    if (cut->subDim >= 0) {
      const ReassociationIndices &subGroup = groups[cut->subDim];
      SmallVector<int64_t> subSizes = sizesOf(subGroup);
      auto refined = refineCut(subSizes, 1, cut->replicas);
      if (!refined)
        return state.fail(
            op, describeNoFactor(cut->subDim, subSizes, 1, cut->replicas),
            /*indivisible=*/true);
      subDim = subGroup[refined->first];
    }
    // Another factor of the group may be the one that keeps ops local
    // further on (heads rather than q|k|v): worth a try either way.
    for (int64_t outer : cutsThatPass(sizes, parts))
      state.hint(merged, DimCut{cut->dim, outer, cut->replicas, cut->subDim});
    if (auto refined = refineCut(sizes, cut->outer, parts))
      return state.mark(
          split,
          DimCut{group[refined->first], refined->second, cut->replicas, subDim},
          op);
    if (std::optional<DimCut> spanning = spanningCut(*cut, group, numRanks))
      return state.mark(split, *spanning, op);
    if (std::optional<DimCut> coarse = coarserCut(*cut, group, numRanks)) {
      state.refine(merged, DimCut{cut->dim, 1, coarse->replicas});
      return state.mark(split, *coarse, op);
    }
    return state.fail(op, describeNoFactor(cut->dim, sizes, cut->outer, parts),
                      /*indivisible=*/true);
  }

  /// The cut of a factor of `split` as blocks of the merged dim.
  LogicalResult mergeCut(CutPropagation &state) const {
    std::optional<DimCut> cut = state.lookup(split);
    if (!cut)
      return success();
    auto [mergedDim, before] = positionOf(cut->dim);
    DimCut mergedCut{mergedDim, cut->outer * before, cut->replicas};
    if (cut->subDim >= 0) {
      auto [mergedSubDim, beforeSub] = positionOf(cut->subDim);
      if (mergedSubDim == mergedDim) {
        // Both in one group: [.., F1, 1.., F2, rest] with each rank on one
        // element of F1 and on part r % replicas of F2 holds part r of the
        // merged dim, as the spanning cut of splitCut makes it.
        int64_t numRanks = state.getNumRanks();
        if (beforeSub != before * splitShape[cut->dim] ||
            splitShape[cut->dim] != cut->parts(numRanks))
          return state.fail(op, describeNoFold(*cut, numRanks));
        mergedCut.replicas = 1;
      } else {
        // Its parts stay contiguous if it is the outermost factor.
        if (beforeSub != 1)
          return state.fail(op, describeNoFold(*cut, state.getNumRanks()));
        mergedCut.subDim = mergedSubDim;
      }
    }
    // A refined result is cut finer than the reshape makes it.
    if (auto it = state.refinements.find(merged);
        it != state.refinements.end() && it->second == mergedCut)
      return success();
    return state.mark(merged, mergedCut, op);
  }

private:
  SmallVector<int64_t> sizesOf(ArrayRef<int64_t> group) const {
    return llvm::map_to_vector(group, [&](int64_t d) { return splitShape[d]; });
  }

  /// The merged dim that dim `d` of `split` folds into, and the product of
  /// the factors before it in its group.
  std::pair<int64_t, int64_t> positionOf(int64_t d) const {
    for (auto [mergedDim, group] : llvm::enumerate(groups)) {
      int64_t before = 1;
      for (int64_t g : group) {
        if (g == d)
          return {static_cast<int64_t>(mergedDim), before};
        before *= splitShape[g];
      }
    }
    llvm_unreachable("every dim of split is in a group");
  }

  /// When the cut of `merged` falls inside no one factor of `group` but
  /// spans two, [kv heads, group members] for the query heads of decode
  /// attention batched over kv heads: the outer factor cut into one element
  /// per part, each on replicas = parts / that factor ranks, and a later
  /// factor split among those ranks (`subDim`). Qwen2's 12 query heads in 2
  /// groups of 6 at tp 4: rank r holds kv head r / 2 and members 3 * (r %
  /// 2) .. 3 * (r % 2) + 2 of its group, that is query heads 3r .. 3r + 2.
  std::optional<DimCut> spanningCut(DimCut cut, ArrayRef<int64_t> group,
                                    int64_t numRanks) const {
    if (cut.replicas != 1 || cut.subDim >= 0)
      return std::nullopt;
    int64_t parts = cut.parts(numRanks);
    int64_t before = 1;
    size_t j = 0;
    for (; j < group.size() && before < cut.outer; ++j)
      before *= splitShape[group[j]];
    while (j < group.size() && splitShape[group[j]] == 1)
      ++j;
    if (before != cut.outer || j == group.size())
      return std::nullopt;
    int64_t outerFactor = splitShape[group[j]];
    if (outerFactor == 1 || parts % outerFactor != 0)
      return std::nullopt;
    int64_t replicas = parts / outerFactor;
    ArrayRef<int64_t> rest = group.drop_front(j + 1);
    auto inner = refineCut(sizesOf(rest), 1, replicas);
    if (!inner)
      return std::nullopt;
    return DimCut{group[j], 1, replicas, rest[inner->first]};
  }

  /// When `merged` is the result (a collapse) and its cut falls inside no
  /// one factor of `group`, a cut of `split`'s outermost factor into fewer
  /// parts that holds it: [kv heads, repeats] merged into query heads, with
  /// more ranks than kv heads, gives each kv head to N / kv ranks, which
  /// then slice their query heads out of its repeats.
  std::optional<DimCut> coarserCut(DimCut cut, ArrayRef<int64_t> group,
                                   int64_t numRanks) const {
    if (merged != op->getResult(0) || cut.outer != 1 || cut.subDim >= 0)
      return std::nullopt;
    const auto *first =
        llvm::find_if(group, [&](int64_t d) { return splitShape[d] != 1; });
    if (first == group.end())
      return std::nullopt;
    int64_t parts = std::gcd(cut.parts(numRanks), splitShape[*first]);
    return DimCut{*first, 1, numRanks / parts};
  }

  std::string describeNoFold(DimCut cut, int64_t numRanks) const {
    return llvm::formatv("{0} dimensions {1} and {2} {3} one, which does "
                         "not hold their cut ({4} parts of dimension {1}, "
                         "each split {5} ways on dimension {2}) as one "
                         "contiguous part per rank",
                         verb, cut.dim, cut.subDim,
                         verb == "folds" ? "into" : "from", cut.parts(numRanks),
                         cut.replicas)
        .str();
  }

  std::string describeNoFactor(int64_t dim, ArrayRef<int64_t> sizes,
                               int64_t outer, int64_t parts) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << verb << " dimension " << dim << " as [";
    llvm::interleave(sizes, os, " x ");
    os << "]: a cut into " << parts << " parts";
    if (outer > 1)
      os << " of each of " << outer << " blocks";
    os << " must fall on one whole factor (for attention: between heads), "
          "and no factor fits";
    return s;
  }
};

struct ExpandShapeCutRule
    : CutRuleOpInterface::ExternalModel<ExpandShapeCutRule,
                                        tensor::ExpandShapeOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto expand = cast<tensor::ExpandShapeOp>(op);
    Reshape reshape{op,
                    expand.getSrc(),
                    expand.getResult(),
                    expand.getReassociationIndices(),
                    expand.getResultType().getShape(),
                    "unfolds"};
    return failure(failed(reshape.splitCut(state)) ||
                   failed(reshape.mergeCut(state)));
  }

  void localizeShapes(Operation *op, const CutMap &, int64_t) const {
    auto expand = cast<tensor::ExpandShapeOp>(op);
    expand.setStaticOutputShape(expand.getResultType().getShape());
  }
};

struct CollapseShapeCutRule
    : CutRuleOpInterface::ExternalModel<CollapseShapeCutRule,
                                        tensor::CollapseShapeOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto collapse = cast<tensor::CollapseShapeOp>(op);
    Reshape reshape{op,
                    collapse.getResult(),
                    collapse.getSrc(),
                    collapse.getReassociationIndices(),
                    collapse.getSrcType().getShape(),
                    "folds"};
    return failure(failed(reshape.mergeCut(state)) ||
                   failed(reshape.splitCut(state)));
  }
};

//===----------------------------------------------------------------------===//
// Slices
//===----------------------------------------------------------------------===//

struct ExtractSliceCutRule
    : CutRuleOpInterface::ExternalModel<ExtractSliceCutRule,
                                        tensor::ExtractSliceOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    std::optional<DimCut> srcCut = state.lookup(slice.getSource());
    std::optional<DimCut> resCut = state.lookup(slice.getResult());
    if (!srcCut && !resCut)
      return success();
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    ArrayRef<int64_t> strides = slice.getStaticStrides();
    ArrayRef<int64_t> srcShape = slice.getSourceType().getShape();
    // The source dims that a rank-reducing slice keeps, in result order.
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> kept;
    for (int64_t i = 0, e = srcShape.size(); i < e; ++i)
      if (!dropped.test(i))
        kept.push_back(i);
    int64_t d = srcCut ? srcCut->dim : kept[resCut->dim];
    // Other dims may be sliced any way (RoPE's strided halves of dh).
    if (ShapedType::isDynamic(offsets[d]) || ShapedType::isDynamic(sizes[d]) ||
        strides[d] != 1)
      return state.fail(op, "slices a cut dimension with a dynamic offset or "
                            "a stride");
    if (dropped.test(d))
      return state.fail(op, "takes a single index of a cut dimension");
    int64_t rd = llvm::find(kept, d) - kept.begin();
    // The dimension the replicas split is taken whole.
    int64_t sub = srcCut                ? srcCut->subDim
                  : resCut->subDim >= 0 ? kept[resCut->subDim]
                                        : -1;
    int64_t rsub = -1;
    if (sub >= 0) {
      if (dropped.test(sub) || offsets[sub] != 0 ||
          sizes[sub] != srcShape[sub] || strides[sub] != 1)
        return state.fail(op, llvm::formatv("slices dimension {0}, which the "
                                            "ranks that share a part of "
                                            "dimension {1} split",
                                            sub, d));
      rsub = llvm::find(kept, sub) - kept.begin();
    }
    if (srcCut) {
      int64_t block = srcShape[d] / srcCut->outer;
      DimCut cut{rd, srcCut->outer, srcCut->replicas, rsub};
      if (offsets[d] != 0 || sizes[d] != srcShape[d]) {
        if (offsets[d] % block != 0 || sizes[d] % block != 0) {
          // Blocks as large as the slice's alignment would pass (q|k|v
          // slices of a fused projection propose 3 blocks).
          int64_t aligned =
              std::gcd(std::gcd(offsets[d], sizes[d]), srcShape[d]);
          state.hint(slice.getSource(), DimCut{d, srcShape[d] / aligned});
          return state.fail(op, llvm::formatv("takes [{0}, {1}) of a "
                                              "dimension cut in blocks of "
                                              "{2}: not whole blocks",
                                              offsets[d], offsets[d] + sizes[d],
                                              block));
        }
        cut.outer = sizes[d] / block;
      }
      if (failed(state.mark(slice.getResult(), cut, op)))
        return failure();
    }
    if (resCut) {
      int64_t block = sizes[d] / resCut->outer;
      if (srcShape[d] % block != 0 || offsets[d] % block != 0)
        return state.fail(op, llvm::formatv("takes [{0}, {1}), which is not "
                                            "made of whole blocks of {2}",
                                            offsets[d], offsets[d] + sizes[d],
                                            block));
      return state.mark(slice.getSource(),
                        DimCut{d, srcShape[d] / block, resCut->replicas, sub},
                        op);
    }
    return success();
  }

  void localizeShapes(Operation *op, const CutMap &cuts, int64_t tpSize) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    auto it = cuts.find(slice.getSource());
    if (it == cuts.end())
      return;
    int64_t d = it->second.dim;
    int64_t parts = it->second.parts(tpSize);
    SmallVector<int64_t> offsets(slice.getStaticOffsets());
    SmallVector<int64_t> sizes(slice.getStaticSizes());
    // Whole blocks of the full dim map to whole local blocks.
    offsets[d] /= parts;
    sizes[d] /= parts;
    // The dimension the replicas split is taken whole: its local extent.
    if (it->second.subDim >= 0)
      sizes[it->second.subDim] /= it->second.replicas;
    slice.setStaticOffsets(offsets);
    slice.setStaticSizes(sizes);
  }
};

/// An insert that covers the whole cut dimension keeps the cut: each rank
/// inserts its part into its part.
struct InsertSliceCutRule
    : CutRuleOpInterface::ExternalModel<InsertSliceCutRule,
                                        tensor::InsertSliceOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    std::optional<DimCut> cut = state.lookup(insert.getResult());
    if (!cut)
      cut = state.lookup(insert.getDest());
    if (!cut)
      cut = state.lookup(insert.getSource());
    if (!cut)
      return success();
    if (insert.getSourceType().getRank() != insert.getResultType().getRank())
      return state.fail(op, "rank-reducing inserts into a cut tensor are not "
                            "supported");
    for (int64_t d : {cut->dim, cut->subDim})
      if (d >= 0 &&
          (insert.getStaticOffsets()[d] != 0 ||
           insert.getStaticStrides()[d] != 1 ||
           insert.getStaticSizes()[d] != insert.getResultType().getDimSize(d)))
        return state.fail(op, "inserts a part of a cut dimension");
    return failure(failed(state.mark(insert.getSource(), *cut, op)) ||
                   failed(state.mark(insert.getDest(), *cut, op)) ||
                   failed(state.mark(insert.getResult(), *cut, op)));
  }

  void localizeShapes(Operation *op, const CutMap &cuts, int64_t tpSize) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    // The cut dim is inserted whole (the analysis checked): local extent.
    DimCut cut = cuts.lookup(insert.getResult());
    SmallVector<int64_t> sizes(insert.getStaticSizes());
    sizes[cut.dim] /= cut.parts(tpSize);
    if (cut.subDim >= 0)
      sizes[cut.subDim] /= cut.replicas;
    insert.setStaticSizes(sizes);
  }
};

struct ConcatCutRule
    : CutRuleOpInterface::ExternalModel<ConcatCutRule, tensor::ConcatOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto concat = cast<tensor::ConcatOp>(op);
    std::optional<DimCut> cut = state.lookup(concat.getResult());
    for (Value input : concat.getInputs())
      if (!cut)
        cut = state.lookup(input);
    if (!cut)
      return success();
    if (cut->dim == static_cast<int64_t>(concat.getDim()) ||
        cut->subDim == static_cast<int64_t>(concat.getDim()))
      return state.fail(op, "concatenates along the cut dimension");
    return propagateSameCut(op, state);
  }
};

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// An empty tensor takes whatever cut its users give it.
struct EmptyCutRule
    : CutRuleOpInterface::ExternalModel<EmptyCutRule, tensor::EmptyOp> {
  LogicalResult propagateCuts(Operation *, CutPropagation &) const {
    return success();
  }
};

/// Reading the size of an uncut dimension (a dynamic batch) is local.
struct DimCutRule
    : CutRuleOpInterface::ExternalModel<DimCutRule, tensor::DimOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto dim = cast<tensor::DimOp>(op);
    std::optional<int64_t> index = dim.getConstantIndex();
    std::optional<DimCut> cut = state.lookup(dim.getSource());
    if (index && cut && *index != cut->dim && *index != cut->subDim)
      return success();
    return state.fail(op, "reads the size of a cut dimension, which differs "
                          "between the full tensor and a rank's part");
  }
};

//===----------------------------------------------------------------------===//
// Element reads
//===----------------------------------------------------------------------===//

/// A lookup, `table[id, j]` yielded by a linalg.generic (an embedding), of a
/// table cut on the dimension the ids index: rank r holds rows [r * V/N,
/// (r + 1) * V/N), yields those it holds and zeros for the others, and the
/// sum over the ranks is the whole lookup (Megatron's
/// VocabParallelEmbedding).
struct ExtractCutRule
    : CutRuleOpInterface::ExternalModel<ExtractCutRule, tensor::ExtractOp> {
  LogicalResult propagateCuts(Operation *op, CutPropagation &state) const {
    auto extract = cast<tensor::ExtractOp>(op);
    std::optional<DimCut> cut = state.lookup(extract.getTensor());
    if (!cut)
      return success();
    linalg::GenericOp generic = getLookupGeneric(op);
    if (!generic)
      return state.fail(op, "reads an element of a cut tensor outside a "
                            "lookup (a linalg.generic that yields it)");
    if (cut->outer != 1)
      return state.fail(op, "reads a dimension cut in blocks");
    if (cut->replicas != 1)
      return state.fail(op, "reads a dimension whose parts several ranks "
                            "hold: their lookups would be summed twice");
    if (!isReadFromInput(extract.getIndices()[cut->dim], generic))
      return state.fail(op, llvm::formatv("reads cut dimension {0} at a "
                                          "loop index or a constant, not "
                                          "at a position its input holds",
                                          cut->dim));
    if (state.lookup(generic->getResult(0)))
      return state.fail(op, "looks up a cut table but its result is needed "
                            "cut");
    state.reduce(generic, ReductionKind::Sum,
                 PlannedCollective::Purpose::Lookup, "");
    return success();
  }

  /// Reads local row `id - r * V/N` when the rank holds it, else row 0,
  /// and yields zero for the rows it does not hold.
  void localizeShapes(Operation *op, const CutMap &cuts, int64_t) const {
    auto extract = cast<tensor::ExtractOp>(op);
    int64_t dim = cuts.lookup(extract.getTensor()).dim;
    int64_t rows = extract.getTensor().getType().getDimSize(dim);
    Location loc = op->getLoc();
    // The rank's first row is computed once, outside the lookup's body.
    OpBuilder b(getLookupGeneric(op));
    Value numRows = arith::ConstantIndexOp::create(b, loc, rows);
    Value first =
        arith::MulIOp::create(b, loc, RankOp::create(b, loc), numRows);
    b.setInsertionPoint(extract);
    SmallVector<Value> indices(extract.getIndices());
    Value local = arith::SubIOp::create(b, loc, indices[dim], first);
    // Unsigned: a row before the rank's first is a large local index.
    Value held = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, local,
                                       numRows);
    indices[dim] = arith::SelectOp::create(
        b, loc, held, local, arith::ConstantIndexOp::create(b, loc, 0));
    extract.getIndicesMutable().assign(indices);
    b.setInsertionPointAfter(extract);
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(extract.getResult().getType()));
    Value element =
        arith::SelectOp::create(b, loc, held, extract.getResult(), zero);
    extract.getResult().replaceAllUsesExcept(element, element.getDefiningOp());
  }
};

} // namespace

void mlir::tp::registerTensorCutRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::CollapseShapeOp::attachInterface<CollapseShapeCutRule>(*ctx);
    tensor::ConcatOp::attachInterface<ConcatCutRule>(*ctx);
    tensor::DimOp::attachInterface<DimCutRule>(*ctx);
    tensor::EmptyOp::attachInterface<EmptyCutRule>(*ctx);
    tensor::ExpandShapeOp::attachInterface<ExpandShapeCutRule>(*ctx);
    tensor::ExtractOp::attachInterface<ExtractCutRule>(*ctx);
    tensor::ExtractSliceOp::attachInterface<ExtractSliceCutRule>(*ctx);
    tensor::InsertSliceOp::attachInterface<InsertSliceCutRule>(*ctx);
  });
}

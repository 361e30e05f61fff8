//===- SplitFusedProjections.cpp - one projection per section -------------===//
//
// A front-end exports a fused projection as it runs in PyTorch: one matmul
// over the whole weight, its result sliced into sections (Phi-3's q|k|v in
// one qkv_proj, GPT-BigCode's q|kv). With fewer kv heads than heads the
// sections differ in width, and no cut of equal column blocks gives each
// rank whole heads of each. Computed from its own rows of the weight, each
// section is a projection tp-shard cuts as any other.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "WholeRows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSPLITFUSEDPROJECTIONS
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct TPSplitFusedProjectionsPass
    : tp::impl::TPSplitFusedProjectionsBase<TPSplitFusedProjectionsPass> {
  void getDependentDialects(DialectRegistry &registry) const override;
  void runOnOperation() override;
};

/// A section of a fill is a fill of the section. Upstream's
/// swapping pattern wants the fill read once; the init of a whole
/// projection is read by each section.
struct SliceOfFill : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto fill = slice.getSource().getDefiningOp<linalg::FillOp>();
    if (!fill || slice.getType().getRank() != slice.getSourceType().getRank())
      return failure();
    auto init = tensor::ExtractSliceOp::create(
        rewriter, slice.getLoc(), fill.getDpsInits()[0],
        slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(slice, fill.getDpsInputs()[0],
                                                init.getResult());
    return success();
  }
};

/// The ops that compute a sliced value (linalg ops and reshapes), from the
/// weights to it, and whether one of them is the projection.
struct Cone {
  SmallVector<Operation *> ops;
  bool projection = false;
};

} // namespace

/// Whether `slice` takes whole rows of a function argument (the sections of
/// one weight already split) and is all that reads it.
static bool rowsOfArgument(tensor::ExtractSliceOp slice) {
  auto arg = dyn_cast<BlockArgument>(slice.getSource());
  return arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) &&
         slice->hasOneUse() && takesWholeRows(slice);
}

/// The dimension along which `slices` read `value` as sections, and how
/// many: static, unit-stride, of its rank, whole in every other dimension,
/// at least two, no two overlapping (the same one twice is one section).
static std::optional<std::pair<int64_t, size_t>>
sectionDim(Value value, ArrayRef<tensor::ExtractSliceOp> slices) {
  auto type = cast<RankedTensorType>(value.getType());
  std::optional<int64_t> dim;
  SmallVector<std::pair<int64_t, int64_t>> sections;
  for (tensor::ExtractSliceOp slice : slices) {
    if (!slice.hasUnitStride() || slice.getType().getRank() != type.getRank())
      return std::nullopt;
    ArrayRef<int64_t> offsets = slice.getStaticOffsets();
    ArrayRef<int64_t> sizes = slice.getStaticSizes();
    for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
      if (ShapedType::isDynamic(offsets[d]) || ShapedType::isDynamic(sizes[d]))
        return std::nullopt;
      if (offsets[d] == 0 && sizes[d] == type.getDimSize(d))
        continue;
      if (dim && *dim != d)
        return std::nullopt;
      dim = d;
    }
    if (!dim)
      return std::nullopt;
    sections.emplace_back(offsets[*dim], sizes[*dim]);
  }
  llvm::sort(sections);
  sections.erase(std::unique(sections.begin(), sections.end()), sections.end());
  if (sections.size() < 2)
    return std::nullopt;
  for (auto [a, b] : llvm::zip(sections, llvm::drop_begin(sections)))
    if (a.first + a.second > b.first)
      return std::nullopt;
  return std::make_pair(*dim, sections.size());
}

/// The dimension of a reshape's source that dimension `dim` of its result
/// is, when it is one alone (a group of its own).
static std::optional<int64_t> reshapedDim(Operation *reshape, int64_t dim) {
  SmallVector<ReassociationIndices> groups;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
    groups = expand.getReassociationIndices();
  else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape))
    groups = collapse.getReassociationIndices();
  else
    return std::nullopt;
  // Expanding, result dims group per source dim; collapsing, source dims
  // per result dim.
  bool expanding = isa<tensor::ExpandShapeOp>(reshape);
  for (auto [i, group] : llvm::enumerate(groups))
    if (expanding ? llvm::is_contained(group, dim) : int64_t(i) == dim)
      return group.size() == 1
                 ? std::optional<int64_t>(expanding ? i : group[0])
                 : std::nullopt;
  return std::nullopt;
}

/// Whether sections of dimension `dim` of `value` can be computed apart back
/// to rows of weight arguments, through linalg ops and reshapes that only
/// this chain reads (collected in `cone`, the producers first) and one
/// projection whose weight alone carries `dim`.
static bool traceSections(Value value, int64_t dim, bool sliced, Cone &cone) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    return dim == 0 && arg.hasOneUse() && type && type.hasStaticShape() &&
           isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  }
  Operation *def = value.getDefiningOp();
  // Slices of these fold or stay cheap wherever else they are read.
  if (isa_and_nonnull<tensor::EmptyOp, arith::ConstantOp>(def))
    return true;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(def);
      fill && fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return true;
  if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def))
    return dim == 0 && rowsOfArgument(slice);
  if (!def || (!sliced && !value.hasOneUse()) ||
      !cast<RankedTensorType>(value.getType()).hasStaticShape())
    return false;
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
    std::optional<int64_t> source = reshapedDim(def, dim);
    if (!source || !traceSections(def->getOperand(0), *source, false, cone))
      return false;
    cone.ops.push_back(def);
    return true;
  }
  auto op = dyn_cast<linalg::LinalgOp>(def);
  if (!op || !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      !isa<TilingInterface>(def))
    return false;
  auto loop = dyn_cast<AffineDimExpr>(
      op.getIndexingMapMatchingResult(op->getResult(0)).getResult(dim));
  if (!loop || op.getIteratorTypesArray()[loop.getPosition()] !=
                   utils::IteratorType::parallel)
    return false;
  if (op.getNumReductionLoops() != 0) {
    if (cone.projection || !isSumReduction(op))
      return false;
    cone.projection = true;
  }
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isFunctionOfDim(loop.getPosition()))
      continue;
    // `x @ W`: the data, the first input, must not depend on the section.
    if (op.getNumReductionLoops() != 0 && operand.getOperandNumber() == 0)
      return false;
    std::optional<unsigned> pos = map.getResultPosition(loop);
    if (!pos || llvm::count_if(map.getResults(), [&](AffineExpr expr) {
                  return expr.isFunctionOfDim(loop.getPosition());
                }) != 1)
      return false;
    if (!traceSections(operand.get(), *pos, /*sliced=*/false, cone))
      return false;
  }
  cone.ops.push_back(def);
  return true;
}

/// `slice` of the result of `reshape` (along a dimension of a group of its
/// own, whole in the others) as the reshape of a slice of its source.
static std::pair<Value, Operation *>
reshapeSlice(OpBuilder &builder, Operation *reshape,
             tensor::ExtractSliceOp slice) {
  auto source = cast<RankedTensorType>(reshape->getOperand(0).getType());
  SmallVector<int64_t> offsets(source.getRank(), 0);
  SmallVector<int64_t> sizes(source.getShape());
  for (int64_t d = 0, e = slice.getType().getRank(); d < e; ++d)
    if (slice.getStaticSizes()[d] != slice.getSourceType().getDimSize(d)) {
      int64_t s = *reshapedDim(reshape, d);
      offsets[s] = slice.getStaticOffsets()[d];
      sizes[s] = slice.getStaticSizes()[d];
    }
  Location loc = slice.getLoc();
  auto part = tensor::ExtractSliceOp::create(
      builder, loc, reshape->getOperand(0),
      getAsIndexOpFoldResult(builder.getContext(), offsets),
      getAsIndexOpFoldResult(builder.getContext(), sizes),
      SmallVector<OpFoldResult>(source.getRank(), builder.getIndexAttr(1)));
  Value reshaped;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
    reshaped = tensor::ExpandShapeOp::create(
        builder, loc, slice.getType(), part, expand.getReassociationIndices());
  else
    reshaped = tensor::CollapseShapeOp::create(
        builder, loc, slice.getType(), part,
        cast<tensor::CollapseShapeOp>(reshape).getReassociationIndices());
  return {reshaped, part};
}

/// Replaces each slice of the cone's ops' results, from the last op up, by
/// that op computing the slice alone. Adds the slices this creates of what
/// the cone reads to `created`.
static void split(const Cone &cone, SetVector<Operation *> &created) {
  for (Operation *op : llvm::reverse(cone.ops)) {
    OpResult result = op->getResult(0);
    for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
      auto slice = cast<tensor::ExtractSliceOp>(user);
      OpBuilder builder(slice);
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
        auto [reshaped, part] = reshapeSlice(builder, op, slice);
        slice.replaceAllUsesWith(reshaped);
        created.insert(part);
      } else {
        FailureOr<TilingResult> tiled =
            tensor::replaceExtractSliceWithTiledProducer(builder, slice,
                                                         result);
        // The analysis checked what tiling a linalg op needs.
        if (failed(tiled))
          llvm_unreachable("a linalg op on static tensors computes a tile");
        slice.replaceAllUsesWith(tiled->tiledValues[0]);
        created.insert_range(tiled->generatedSlices);
      }
      created.remove(slice);
      slice.erase();
    }
    op->erase();
  }
}

/// Splits the projections of `func` whose results only slices read;
/// returns how many, and adds the sections to `sections` and the slices
/// the split creates to `created`.
static unsigned splitProjections(FunctionOpInterface func, size_t &sections,
                                 SetVector<Operation *> &created) {
  SmallVector<std::pair<Value, SmallVector<tensor::ExtractSliceOp>>> candidates;
  func.walk([&](Operation *op) {
    if (!isa<linalg::LinalgOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            op) ||
        op->getNumResults() != 1 || op->getResult(0).use_empty() ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return;
    SmallVector<tensor::ExtractSliceOp> slices;
    for (Operation *user : op->getResult(0).getUsers())
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
        slices.push_back(slice);
      else
        return;
    candidates.emplace_back(op->getResult(0), std::move(slices));
  });
  // No cone holds another candidate: its ops but the last have one user,
  // which is no slice.
  unsigned projections = 0;
  for (auto &[value, slices] : candidates) {
    auto found = sectionDim(value, slices);
    Cone cone;
    if (!found || !traceSections(value, found->first, /*sliced=*/true, cone) ||
        !cone.projection)
      continue;
    ++projections;
    sections += found->second;
    split(cone, created);
  }
  return projections;
}

void TPSplitFusedProjectionsPass::getDependentDialects(
    DialectRegistry &registry) const {
  TPSplitFusedProjectionsBase::getDependentDialects(registry);
  // Linalg promises the interface that computes a tile of its ops'
  // results; an embedder's registry need not hold it.
  linalg::registerTilingInterfaceExternalModels(registry);
}

/// Folds the slices `created` of what the split projections read: of the
/// data all of it, of an init a new empty tensor or fill. The weights' stay,
/// rows of arguments (of the first slice, for a section split again).
static void foldSlices(FunctionOpInterface func,
                       ArrayRef<Operation *> created) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  patterns.add<SliceOfFill>(ctx);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(created, std::move(patterns), config);
  // The inits the whole projections had to themselves, and the rows of a
  // weight split again.
  func.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
    if (isa<tensor::EmptyOp, linalg::FillOp, tensor::ExtractSliceOp>(op) &&
        op->use_empty())
      op->erase();
  });
}

void TPSplitFusedProjectionsPass::runOnOperation() {
  FunctionOpInterface func = getOperation();
  // A section sliced again (GPT-BigCode's q|kv, then k|v) is a projection
  // read by slices once split: until none is left.
  unsigned projections = 0;
  size_t sections = 0;
  while (true) {
    SetVector<Operation *> created;
    unsigned split = splitProjections(func, sections, created);
    if (!split)
      break;
    projections += split;
    foldSlices(func, created.getArrayRef());
  }
  if (projections)
    emitRemark(func.getLoc())
        << "computed " << projections << " sliced projection"
        << (projections == 1 ? "" : "s") << " as " << sections
        << " sections, each from its rows of the weight";
}

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

#include "WeightRows.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
/// weights to it, each with the dimension of its result the sections cut;
/// the arguments whose rows they read; whether one of them is the
/// projection.
struct Cone {
  SmallVector<std::pair<Operation *, int64_t>> ops;
  SmallVector<BlockArgument> weights;
  bool projection = false;
};

} // namespace

/// Whether argument `arg` is read in whole rows by slices alone, and can be
/// made arguments of them (rowScale): a weight split already.
static bool readInRows(BlockArgument arg) {
  auto func = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  std::optional<SmallVector<tensor::ExtractSliceOp>> slices = rowSlices(arg);
  return rowScale(func, arg.getArgNumber()) && slices &&
         llvm::all_of(*slices, [](tensor::ExtractSliceOp slice) {
           return slice->hasOneUse();
         });
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

/// The dimension of a static reshape's source that dimension `dim` of its
/// result is: the one of its group that is not 1 (TOSA reshapes a bias
/// [N] to [1, 1, N]).
static std::optional<int64_t> reshapedDim(Operation *reshape, int64_t dim) {
  auto source = cast<RankedTensorType>(reshape->getOperand(0).getType());
  auto result = cast<RankedTensorType>(reshape->getResult(0).getType());
  if (!source.hasStaticShape() || !result.hasStaticShape())
    return std::nullopt;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape)) {
    for (auto [i, group] : llvm::enumerate(expand.getReassociationIndices()))
      if (llvm::is_contained(group, dim))
        return llvm::all_of(group,
                            [&](int64_t d) {
                              return d == dim || result.getDimSize(d) == 1;
                            })
                   ? std::optional<int64_t>(i)
                   : std::nullopt;
    return std::nullopt;
  }
  ReassociationIndices group =
      cast<tensor::CollapseShapeOp>(reshape).getReassociationIndices()[dim];
  SmallVector<int64_t> wide = llvm::filter_to_vector(
      group, [&](int64_t d) { return source.getDimSize(d) != 1; });
  return wide.size() == 1 ? std::optional<int64_t>(wide.front()) : std::nullopt;
}

/// Whether sections of dimension `dim` of `value` can be computed apart back
/// to rows of weight arguments, through linalg ops and reshapes that only
/// this chain reads (collected in `cone`, the producers first) and one
/// projection whose weight alone carries `dim`. As tp-shard takes it, the
/// first input of a contraction is its data, the others weights.
static bool traceSections(Value value, int64_t dim, bool sliced, Cone &cone) {
  if (BlockArgument arg = functionArgument(value)) {
    auto func = cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (dim != 0 || !arg.hasOneUse() || !rowScale(func, arg.getArgNumber()))
      return false;
    cone.weights.push_back(arg);
    return true;
  }
  Operation *def = value.getDefiningOp();
  // Slices of these fold or stay cheap wherever else they are read.
  if (isa_and_nonnull<tensor::EmptyOp, arith::ConstantOp>(def))
    return true;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(def);
      fill && fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return true;
  if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def)) {
    BlockArgument arg = functionArgument(slice.getSource());
    if (dim != 0 || !arg || !readInRows(arg))
      return false;
    cone.weights.push_back(arg);
    return true;
  }
  if (!def || (!sliced && !value.hasOneUse()) ||
      !cast<RankedTensorType>(value.getType()).hasStaticShape())
    return false;
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
    std::optional<int64_t> source = reshapedDim(def, dim);
    if (!source || !traceSections(def->getOperand(0), *source, false, cone))
      return false;
    cone.ops.emplace_back(def, dim);
    return true;
  }
  // A tile of the result is a tile of the loops when the result reads each
  // loop at most once; the operands' tiles are then slices of their
  // dimensions (or of a broadcast unit dimension).
  auto op = dyn_cast<linalg::LinalgOp>(def);
  if (!op || !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      !isa<TilingInterface>(def) ||
      !op.getIndexingMapMatchingResult(op->getResult(0))
           .isProjectedPermutation() ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation(/*allowZeroInResults=*/true);
      }))
    return false;
  auto loop = cast<AffineDimExpr>(
      op.getIndexingMapMatchingResult(op->getResult(0)).getResult(dim));
  if (op.getIteratorTypesArray()[loop.getPosition()] !=
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
    std::optional<unsigned> pos =
        op.getMatchingIndexingMap(&operand).getResultPosition(loop);
    if (!pos)
      continue;
    // `x @ W`: the data must not depend on the section.
    if (op.getNumReductionLoops() != 0 && operand.getOperandNumber() == 0)
      return false;
    if (!traceSections(operand.get(), *pos, /*sliced=*/false, cone))
      return false;
  }
  cone.ops.emplace_back(def, dim);
  return true;
}

/// `slice` (of dimension `dim`) of the result of `reshape` as the reshape of
/// a slice of its source.
static FailureOr<std::pair<Value, Operation *>>
reshapeSlice(OpBuilder &builder, Operation *reshape, int64_t dim,
             tensor::ExtractSliceOp slice) {
  std::optional<int64_t> sourceDim = reshapedDim(reshape, dim);
  auto whole = [&](int64_t d) {
    return d == dim ||
           (slice.getStaticOffsets()[d] == 0 &&
            slice.getStaticSizes()[d] == slice.getSourceType().getDimSize(d));
  };
  if (!sourceDim || !slice.hasUnitStride() ||
      !llvm::all_of(llvm::seq<int64_t>(0, slice.getType().getRank()), whole))
    return failure();
  auto source = cast<RankedTensorType>(reshape->getOperand(0).getType());
  SmallVector<int64_t> offsets(source.getRank(), 0);
  SmallVector<int64_t> sizes(source.getShape());
  offsets[*sourceDim] = slice.getStaticOffsets()[dim];
  sizes[*sourceDim] = slice.getStaticSizes()[dim];
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
  return std::make_pair(reshaped, part.getOperation());
}

/// Replaces each slice of the cone's ops' results, from the last op up, by
/// that op computing the slice alone. Adds the slices this creates of what
/// the cone reads to `created`. Fails at an op it could not compute a slice
/// of (the analysis should have declined it).
static LogicalResult split(const Cone &cone, SetVector<Operation *> &created) {
  for (auto [op, dim] : llvm::reverse(cone.ops)) {
    OpResult result = op->getResult(0);
    for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
      auto slice = cast<tensor::ExtractSliceOp>(user);
      OpBuilder builder(slice);
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
        auto reshaped = reshapeSlice(builder, op, dim, slice);
        if (failed(reshaped))
          return op->emitError("cannot compute a section of this reshape");
        slice.replaceAllUsesWith(reshaped->first);
        created.insert(reshaped->second);
      } else {
        FailureOr<TilingResult> tiled =
            tensor::replaceExtractSliceWithTiledProducer(builder, slice,
                                                         result);
        if (failed(tiled))
          return op->emitError("cannot compute a section of this op apart");
        slice.replaceAllUsesWith(tiled->tiledValues[0]);
        created.insert_range(tiled->generatedSlices);
      }
      created.remove(slice);
      slice.erase();
    }
    op->erase();
  }
  return success();
}

/// Splits the projections of `func` whose results only slices read; returns
/// how many, and adds the sections to `sections`, the arguments whose rows
/// they read to `weights` and the slices the split creates to `created`.
static FailureOr<unsigned> splitProjections(FunctionOpInterface func,
                                            size_t &sections,
                                            SetVector<BlockArgument> &weights,
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
    if (failed(split(cone, created)))
      return failure();
    ++projections;
    sections += found->second;
    weights.insert_range(cone.weights);
  }
  return projections;
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
        isOpTriviallyDead(op))
      op->erase();
  });
}

void TPSplitFusedProjectionsPass::getDependentDialects(
    DialectRegistry &registry) const {
  TPSplitFusedProjectionsBase::getDependentDialects(registry);
  // Linalg promises the interface that computes a tile of its ops'
  // results; an embedder's registry need not hold it.
  linalg::registerTilingInterfaceExternalModels(registry);
}

void TPSplitFusedProjectionsPass::runOnOperation() {
  ModuleOp module = getOperation();
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal())
      continue;
    // A section sliced again (GPT-BigCode's q|kv, then k|v) is a projection
    // read by slices once split: until none is left.
    unsigned projections = 0;
    size_t sections = 0;
    SetVector<BlockArgument> weights;
    while (true) {
      SetVector<Operation *> created;
      FailureOr<unsigned> split =
          splitProjections(func, sections, weights, created);
      if (failed(split))
        return signalPassFailure();
      if (!*split)
        break;
      projections += *split;
      foldSlices(func, created.getArrayRef());
    }
    if (!projections)
      continue;
    // The rows of each weight become weights of their own, in a function
    // nothing calls (a callee keeps its signature); from the last argument:
    // unpacking one moves those after it.
    SmallVector<unsigned> indices = llvm::map_to_vector(
        weights, [](BlockArgument arg) { return arg.getArgNumber(); });
    llvm::sort(indices, std::greater<>());
    unsigned parts = 0;
    if (SymbolTable::symbolKnownUseEmpty(func.getOperation(), module))
      for (unsigned i : indices) {
        std::optional<int64_t> scale = rowScale(func, i);
        auto slices = rowSlices(func.getArgument(i));
        if (scale && slices)
          parts += unpackRows(func, i, *slices, *scale);
      }
    // At the function's location: printing it would print the model.
    InFlightDiagnostic remark = emitRemark(func.getLoc());
    remark << "computed " << projections << " sliced projection"
           << (projections == 1 ? "" : "s") << " as " << sections
           << " sections, each from its rows of the weight";
    if (parts)
      remark << ": " << parts << " weights, each its own argument";
  }
}

//===- ArgmaxToRuntime.cpp - an argmax over rows as a runtime call --------===//
//
// The greedy argmax over the vocabulary reads a decode step's logits (8 x
// 50304 floats at batch 8) in a loop that LLVM cannot vectorize: each
// element's comparison waits on the running maximum, a chain of a NaN test,
// a max and a blend per element (0.9 ms of a GPT-2-small step at batch 8,
// 4%). The runtime's kernel keeps 16 lanes of maxima apart and merges them
// at the end. CPU only: the cuda lowering splits reductions itself.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "tp/Conversion/Passes.h"
#include "tp/Transforms/ShardingAnalysis.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPARGMAXTORUNTIME
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
/// How a buffer is seen as rows: as it is, with a unit dimension added in
/// front, or with its leading dimensions collapsed into one.
struct RowsView {
  enum { Same, Expand, Collapse } kind;
  SmallVector<ReassociationIndices> groups;
};
} // namespace

/// The view of `type` with one dimension before its last `keep` (at most
/// one); none where its strides do not allow it.
static std::optional<RowsView> rowsView(MemRefType type, unsigned keep) {
  int64_t rank = type.getRank();
  if (rank == keep + 1)
    return RowsView{RowsView::Same, {}};
  if (rank == keep) {
    if (!type.getLayout().isIdentity())
      return std::nullopt;
    RowsView view{RowsView::Expand, {}};
    if (keep > 0)
      view.groups.push_back({0, 1});
    return view;
  }
  RowsView view{RowsView::Collapse,
                {llvm::to_vector(llvm::seq<int64_t>(0, rank - keep))}};
  for (int64_t i = rank - keep; i < rank; ++i)
    view.groups.push_back({i});
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, view.groups))
    return std::nullopt;
  return view;
}

static Value asRows(OpBuilder &builder, Location loc, Value buffer,
                    const RowsView &view) {
  auto type = cast<MemRefType>(buffer.getType());
  switch (view.kind) {
  case RowsView::Same:
    return buffer;
  case RowsView::Expand: {
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, type.getShape());
    return memref::ExpandShapeOp::create(
        builder, loc, MemRefType::get(shape, type.getElementType()), buffer,
        view.groups);
  }
  case RowsView::Collapse:
    return memref::CollapseShapeOp::create(builder, loc, buffer, view.groups);
  }
  llvm_unreachable("a kind of view");
}

/// The argmax `op` (tp::argReduction, arith.maximumf: a NaN wins) over the
/// innermost loop of its f32 input, whose other loops index both results in
/// order, as `tprt_argmax_f32(rows, max, index, offset)`.
static LogicalResult lowerArgmax(linalg::LinalgOp op) {
  unsigned rank = op.getNumLoops();
  Value offset;
  if (rank == 0 ||
      tp::argReduction(op, rank - 1, &offset) != tp::ReductionKind::Max)
    return failure();
  Operation *extreme =
      op.getBlock()->getTerminator()->getOperand(0).getDefiningOp();
  if (!isa<arith::MaximumFOp>(extreme))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> leading;
  for (unsigned i = 0; i + 1 < rank; ++i)
    leading.push_back(getAffineDimExpr(i, ctx));
  if (!maps[0].isIdentity() ||
      maps[1] != AffineMap::get(rank, 0, leading, ctx) || maps[2] != maps[1])
    return failure();
  Type f32 = Float32Type::get(ctx), i64 = IntegerType::get(ctx, 64);
  auto typeOf = [](Value v) { return cast<MemRefType>(v.getType()); };
  Value in = op->getOperand(0), max = op->getOperand(1),
        index = op->getOperand(2);
  if (typeOf(in).getElementType() != f32 ||
      typeOf(max).getElementType() != f32 ||
      typeOf(index).getElementType() != i64)
    return failure();
  // Every check before any op is created: a failed match leaves nothing.
  std::optional<RowsView> inView = rowsView(typeOf(in), 1),
                          maxView = rowsView(typeOf(max), 0),
                          indexView = rowsView(typeOf(index), 0);
  if (!inView || !maxView || !indexView ||
      (offset && !offset.getType().isIndex() && offset.getType() != i64))
    return failure();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value inRows = asRows(builder, loc, in, *inView);
  Value maxRows = asRows(builder, loc, max, *maxView);
  Value indexRows = asRows(builder, loc, index, *indexView);
  if (!offset)
    offset =
        arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(0));
  else if (offset.getType().isIndex())
    offset = arith::IndexCastOp::create(builder, loc, i64, offset);
  MemRefType matrix = tp::anyStrided(2, f32), vector = tp::anyStrided(1, f32),
             indices = tp::anyStrided(1, i64);
  func::FuncOp fn = tp::declareRuntimeFunc(op, "tprt_argmax_f32",
                                           {matrix, vector, indices, i64});
  func::CallOp::create(
      builder, loc, fn,
      ValueRange{memref::CastOp::create(builder, loc, matrix, inRows),
                 memref::CastOp::create(builder, loc, vector, maxRows),
                 memref::CastOp::create(builder, loc, indices, indexRows),
                 offset});
  op->erase();
  return success();
}

namespace {
struct TPArgmaxToRuntimePass
    : public tp::impl::TPArgmaxToRuntimeBase<TPArgmaxToRuntimePass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumDpsInputs() == 1 &&
          op.getNumDpsInits() == 2)
        candidates.push_back(op);
    });
    // Any other arg reduction stays for the loops.
    for (linalg::LinalgOp op : candidates)
      (void)lowerArgmax(op);
  }
};
} // namespace

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

/// `buffer` with one dimension before its last `keep`: its leading ones
/// collapsed, or a unit one added; null where its strides allow no view.
static Value asRows(OpBuilder &builder, Location loc, Value buffer,
                    unsigned keep) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  if (rank == keep + 1)
    return buffer;
  if (rank == keep) {
    if (!type.getLayout().isIdentity())
      return nullptr;
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, type.getShape());
    SmallVector<ReassociationIndices> groups;
    if (keep > 0)
      groups.push_back({0, 1});
    for (int64_t i = 2; i <= rank; ++i)
      groups.push_back({i});
    return memref::ExpandShapeOp::create(
        builder, loc, MemRefType::get(shape, type.getElementType()), buffer,
        groups);
  }
  SmallVector<ReassociationIndices> groups{
      llvm::to_vector(llvm::seq<int64_t>(0, rank - keep))};
  for (int64_t i = rank - keep; i < rank; ++i)
    groups.push_back({i});
  if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
    return nullptr;
  return memref::CollapseShapeOp::create(builder, loc, buffer, groups);
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
  auto elementOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Value in = op->getOperand(0), max = op->getOperand(1),
        index = op->getOperand(2);
  if (elementOf(in) != f32 || elementOf(max) != f32 || elementOf(index) != i64)
    return failure();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value inRows = asRows(builder, loc, in, 1);
  Value maxRows = asRows(builder, loc, max, 0);
  Value indexRows = asRows(builder, loc, index, 0);
  if (!inRows || !maxRows || !indexRows)
    return failure();
  if (!offset)
    offset =
        arith::ConstantOp::create(builder, loc, builder.getI64IntegerAttr(0));
  else if (offset.getType().isIndex())
    offset = arith::IndexCastOp::create(builder, loc, i64, offset);
  else if (offset.getType() != i64)
    return failure();
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

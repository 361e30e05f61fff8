//===- CollectivesToRuntime.cpp - tp collectives as runtime calls ---------===//
//
// The runtime works in place on contiguous buffers, so each collective gets
// a fresh buffer: the operand is copied in (all-reduce) or the result is
// allocated (all-gather), the runtime fills it, and it becomes the result
// tensor again. One-shot bufferization then sees plain buffer code. An
// all-reduce whose operand is a temporary only it reads (a row-parallel
// matmul's result, written into a fresh tensor) reduces in that buffer: the
// copy would be a kernel launch per all-reduce on the cuda backend.
// `tp.rank` becomes a call of tprt_rank.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPCOLLECTIVESTORUNTIME
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

static Value toUnranked(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
}

/// `int tprt_rank(void)`, as an index.
static void lowerRank(RankOp op) {
  OpBuilder b(op);
  func::FuncOp fn = declareRuntimeFunc(op, "tprt_rank", {}, {b.getI32Type()},
                                       /*cInterface=*/false);
  Value rank =
      func::CallOp::create(b, op.getLoc(), fn, ValueRange{}).getResult(0);
  op.replaceAllUsesWith(
      arith::IndexCastOp::create(b, op.getLoc(), b.getIndexType(), rank)
          .getResult());
  op.erase();
}

/// Whether `value` is the only-used result of a destination-style op in
/// `user`'s block whose init is a fresh tensor (tensor.empty, possibly
/// filled) used by that op alone: its buffer is a temporary that nothing but
/// `user` reads. (In another block, one-shot bufferization would copy it
/// anyway.)
static bool isOwnTemporary(Value value, Operation *user) {
  auto result = dyn_cast<OpResult>(value);
  auto producer = result
                      ? dyn_cast<DestinationStyleOpInterface>(result.getOwner())
                      : nullptr;
  if (!value.hasOneUse() || !producer ||
      producer->getBlock() != user->getBlock())
    return false;
  Value init = producer.getDpsInitOperand(result.getResultNumber())->get();
  while (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    if (!init.hasOneUse())
      return false;
    init = fill.getDpsInits()[0];
  }
  return init.hasOneUse() && init.getDefiningOp<tensor::EmptyOp>();
}

static LogicalResult lowerCollective(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto inType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!inType.getElementType().isF32() || !inType.hasStaticShape() ||
      !outType.hasStaticShape())
    return op->emitError("the cpu runtime supports static f32 collectives "
                         "only, got ")
           << inType;
  auto inBuf = MemRefType::get(inType.getShape(), inType.getElementType());
  auto outBuf = MemRefType::get(outType.getShape(), outType.getElementType());
  // In place, the result's to_tensor stays `restrict`: the operand tensor,
  // the only other one on that buffer, has no use after this op.
  bool inPlace = isa<AllReduceOp>(op) && isOwnTemporary(op->getOperand(0), op);
  Value in = bufferization::ToBufferOp::create(b, loc, inBuf, op->getOperand(0),
                                               /*read_only=*/!inPlace);
  Value out = inPlace ? in : memref::AllocOp::create(b, loc, outBuf);
  Type unranked = UnrankedMemRefType::get(inType.getElementType(), 0);
  if (auto reduce = dyn_cast<AllReduceOp>(op)) {
    if (!inPlace)
      memref::CopyOp::create(b, loc, in, out);
    std::string name =
        ("tprt_all_reduce_" + stringifyReductionKind(reduce.getKind()) + "_f32")
            .str();
    func::FuncOp fn = declareRuntimeFunc(op, name, {unranked});
    func::CallOp::create(b, loc, fn, ValueRange{toUnranked(b, loc, out)});
  } else {
    auto gather = cast<AllGatherOp>(op);
    func::FuncOp fn = declareRuntimeFunc(op, "tprt_all_gather_f32",
                                         {unranked, unranked, b.getI64Type()});
    Value dim =
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(gather.getDim()));
    func::CallOp::create(
        b, loc, fn,
        ValueRange{toUnranked(b, loc, in), toUnranked(b, loc, out), dim});
  }
  Value result = bufferization::ToTensorOp::create(
      b, loc, outType, out, /*restrict=*/true, /*writable=*/true);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

namespace {
struct TPCollectivesToRuntimePass
    : public tp::impl::TPCollectivesToRuntimeBase<TPCollectivesToRuntimePass> {
  void runOnOperation() override {
    SmallVector<Operation *> collectives;
    SmallVector<RankOp> ranks;
    WalkResult walk = getOperation().walk([&](Operation *op) {
      if (auto rank = dyn_cast<RankOp>(op))
        ranks.push_back(rank);
      if (isa<ReduceScatterOp>(op)) {
        op->emitError("the cpu runtime has no reduce_scatter yet");
        return WalkResult::interrupt();
      }
      if (isa<AllReduceOp, AllGatherOp>(op))
        collectives.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (Operation *op : collectives)
      if (failed(lowerCollective(op)))
        return signalPassFailure();
    for (RankOp rank : ranks)
      lowerRank(rank);
  }
};
} // namespace

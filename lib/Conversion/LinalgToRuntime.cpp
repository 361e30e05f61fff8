//===- LinalgToRuntime.cpp - GEMMs on buffers as runtime calls ------------===//
//
// The loop lowering of a matmul is two orders of magnitude slower than BLAS,
// and matmuls are nearly all of a transformer's time. After bufferization,
// f32 linalg.matmul / linalg.batch_matmul become calls of the runtime's
// GEMM, which reads the strides from the memref descriptors, so views
// (slices, transposed maps) need no copy here.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPLINALGTORUNTIME
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

/// Whether operand map `map` reads loops `rows` x `cols` as given (false) or
/// swapped (true), after the leading batch loop when `batched`.
static std::optional<bool> isTransposed(AffineMap map, bool batched,
                                        unsigned rows, unsigned cols) {
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> plain, swapped;
  if (batched) {
    plain.push_back(getAffineDimExpr(0, ctx));
    swapped.push_back(getAffineDimExpr(0, ctx));
  }
  plain.append({getAffineDimExpr(rows, ctx), getAffineDimExpr(cols, ctx)});
  swapped.append({getAffineDimExpr(cols, ctx), getAffineDimExpr(rows, ctx)});
  if (map.getResults() == ArrayRef(plain))
    return false;
  if (map.getResults() == ArrayRef(swapped))
    return true;
  return std::nullopt;
}

/// The linalg.fill of zero that writes exactly `c` before `op`, with only
/// ops free of memory effects in between: the GEMM can overwrite c instead
/// of accumulating into zeros (one pass over c, on the GPU one kernel, less).
static linalg::FillOp zeroFillOf(linalg::LinalgOp op, Value c) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs()[0] != c ||
          !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
        return nullptr;
      return fill;
    }
    if (!isMemoryEffectFree(prev))
      return nullptr;
  }
  return nullptr;
}

static LogicalResult lowerGemm(linalg::LinalgOp op) {
  bool batched = isa<linalg::BatchMatmulOp>(op);
  unsigned b = batched ? 1 : 0;
  // Loops are (batch,) m, n, k.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<bool> transA = isTransposed(maps[0], batched, b, b + 2);
  std::optional<bool> transB = isTransposed(maps[1], batched, b + 2, b + 1);
  std::optional<bool> transC = isTransposed(maps[2], batched, b, b + 1);
  if (!transA || !transB || transC != false)
    return failure();
  Type f32 = Float32Type::get(op.getContext());
  if (!llvm::all_of(op->getOperandTypes(), [&](Type t) {
        auto memref = dyn_cast<MemRefType>(t);
        return memref && memref.getElementType() == f32;
      }))
    return failure();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  MemRefType viewType = tp::anyStrided(batched ? 3 : 2, f32);
  StringRef name = batched ? "tprt_batch_matmul_f32" : "tprt_matmul_f32";
  Type i64 = builder.getI64Type();
  func::FuncOp fn = tp::declareRuntimeFunc(
      op, name, {viewType, viewType, viewType, i64, i64, i64});
  SmallVector<Value> args =
      llvm::map_to_vector(op->getOperands(), [&](Value v) -> Value {
        return memref::CastOp::create(builder, loc, viewType, v);
      });
  args.push_back(arith::ConstantOp::create(builder, loc,
                                           builder.getI64IntegerAttr(*transA)));
  args.push_back(arith::ConstantOp::create(builder, loc,
                                           builder.getI64IntegerAttr(*transB)));
  // k must be known non-zero: with k = 0 nothing would write c.
  Value a = op->getOperand(0);
  int64_t k = cast<MemRefType>(a.getType()).getDimSize(*transA ? b : b + 1);
  linalg::FillOp fill = ShapedType::isDynamic(k) || k == 0
                            ? nullptr
                            : zeroFillOf(op, op->getOperand(2));
  args.push_back(arith::ConstantOp::create(
      builder, loc, builder.getI64IntegerAttr(fill ? 0 : 1)));
  func::CallOp::create(builder, loc, fn, args);
  op->erase();
  if (fill)
    fill->erase();
  return success();
}

namespace {
struct TPLinalgToRuntimePass
    : public tp::impl::TPLinalgToRuntimeBase<TPLinalgToRuntimePass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureBufferSemantics())
        gemms.push_back(op);
    });
    // A GEMM the runtime cannot take (other element type or maps) stays
    // for the loop lowering.
    for (linalg::LinalgOp op : gemms)
      (void)lowerGemm(op);
  }
};
} // namespace

//===- DeviceConstants.cpp - the model's constants in device memory -------===//
//
// Bufferization turns every constant tensor (a splat weight, a table, a
// model imported with its weights inline, as torch-mlir emits them) into a
// memref.global: an array in the shared object, in host memory, which
// neither the kernels nor cuBLAS can read. Each memref.get_global becomes
// a call of tprt_device_constant_<type> on the global's flattened view,
// which returns a device copy (uploaded by the first call, kept until
// tprt_finalize), viewed with the global's shape again. The runtime copies
// bytes; the element type in the function's name gives their number.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "../RuntimeCalls.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPDEVICECONSTANTS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

struct DeviceConstantsPass
    : tp::impl::TPDeviceConstantsBase<DeviceConstantsPass> {

  void runOnOperation() override {
    SmallVector<memref::GetGlobalOp> reads;
    getOperation().walk([&](memref::GetGlobalOp op) { reads.push_back(op); });
    for (memref::GetGlobalOp op : reads)
      if (failed(rewrite(op)))
        return signalPassFailure();
  }

  LogicalResult rewrite(memref::GetGlobalOp op) {
    MemRefType type = op.getType();
    auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        op, op.getNameAttr());
    if (!global || !global.getConstant())
      return op.emitError("the cuda backend copies constant globals to device "
                          "memory once; @")
             << op.getName() << " is not constant";
    std::optional<StringRef> suffix =
        tp::runtimeTypeName(type.getElementType());
    if (!suffix)
      return op.emitError("the cuda backend keeps constants of f32, f64, "
                          "f16, bf16, i64, i32, i16, i8 and i1 in device "
                          "memory; this one is ")
             << type;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!type.hasStaticShape() ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        !type.getLayout().isIdentity())
      return op.emitError("expected a constant with a static shape and the "
                          "identity layout, got ")
             << type;

    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Location loc = op.getLoc();
    Type element = type.getElementType();
    int64_t n = type.getNumElements();
    auto flat = MemRefType::get({n}, element);
    auto dynamic = MemRefType::get({ShapedType::kDynamic}, element);
    func::FuncOp callee = tp::declareRuntimeFunc(
        op, ("tprt_device_constant_" + *suffix).str(), {dynamic}, {dynamic});

    auto flatten = memref::ReinterpretCastOp::create(
        b, loc, flat, op.getResult(), /*offset=*/0, ArrayRef<int64_t>{n},
        ArrayRef<int64_t>{1});
    Value host = memref::CastOp::create(b, loc, dynamic, flatten);
    Value device =
        func::CallOp::create(b, loc, callee, ValueRange{host}).getResult(0);
    Value view = memref::ReinterpretCastOp::create(
        b, loc, type, device, /*offset=*/0, type.getShape(), strides);
    op.getResult().replaceAllUsesExcept(view, flatten);
    return success();
  }
};

} // namespace

//===- HostScalarReads.cpp - scalars the host reads from device memory ----===//
//
// The host side of a cuda model reads a few scalars itself: a generating
// model's position, the offset at which a decode step writes its row of the
// KV cache. Every buffer is device memory on this backend, so such a read
// becomes a copy into a host scalar (tprt_read_scalar of libtprt_cuda: on
// the rank's stream, after everything issued before it) and a load of that.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPHOSTSCALARREADS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kReadScalar = "tprt_read_scalar";

/// The address of `memref`'s first element as an LLVM pointer.
Value addressOf(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value bytes = arith::ConstantIndexOp::create(
      b, loc, type.getElementTypeBitWidth() / 8);
  Value offset = arith::MulIOp::create(b, loc, metadata.getOffset(), bytes);
  Value address = arith::AddIOp::create(b, loc, base, offset);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(
                                              b.getContext()),
                                  i64);
}

struct HostScalarReadsPass
    : tp::impl::TPHostScalarReadsBase<HostScalarReadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::LoadOp> reads;
    module.walk([&](memref::LoadOp load) {
      if (load.getMemRefType().getRank() == 0 &&
          !load->getParentOfType<scf::ParallelOp>() &&
          load.getMemRefType().getElementTypeBitWidth() % 8 == 0)
        reads.push_back(load);
    });
    if (reads.empty())
      return;
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    if (!module.lookupSymbol(kReadScalar)) {
      OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
      auto fn = func::FuncOp::create(
          b, module.getLoc(), kReadScalar,
          b.getFunctionType({ptr, ptr, b.getI64Type()}, {}));
      fn.setPrivate();
    }
    for (memref::LoadOp load : reads) {
      OpBuilder b(load);
      Location loc = load.getLoc();
      MemRefType type = load.getMemRefType();
      Value host = memref::AllocaOp::create(
          b, loc, MemRefType::get({}, type.getElementType()));
      Value bytes = arith::ConstantIntOp::create(
          b, loc, b.getI64Type(), type.getElementTypeBitWidth() / 8);
      func::CallOp::create(
          b, loc, kReadScalar, TypeRange{},
          ValueRange{addressOf(b, loc, host),
                     addressOf(b, loc, load.getMemRef()), bytes});
      load->setOperand(0, host);
    }
  }
};

} // namespace

//===- CopyToLinalg.cpp - memref.copy as linalg.copy ----------------------===//

#include "CudaPasses.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPCOPYTOLINALG
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
struct TPCopyToLinalgPass
    : public tp::impl::TPCopyToLinalgBase<TPCopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};
} // namespace

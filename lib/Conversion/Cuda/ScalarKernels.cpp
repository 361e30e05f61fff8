//===- ScalarKernels.cpp - loop-less linalg ops as one-thread kernels -----===//
//
// A linalg op without loops (rank-0 operands only: torch-mlir's conversion
// of a scalar constant, a scale computed once) lowers to loads and stores
// outside any parallel loop, which would run on the host against device
// memory. In a parallel loop of one iteration it becomes a kernel of one
// thread, as every other op becomes a kernel.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSCALARKERNELS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
struct TPScalarKernelsPass
    : public tp::impl::TPScalarKernelsBase<TPScalarKernelsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> scalars;
    getOperation().walk([&](linalg::LinalgOp op) {
      // One inside a parallel loop is in a kernel already (a row kernel's).
      if (op.getNumLoops() == 0 && op.hasPureBufferSemantics() &&
          !op->getParentOfType<scf::ParallelOp>())
        scalars.push_back(op);
    });
    for (linalg::LinalgOp op : scalars) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop = scf::ParallelOp::create(b, loc, zero, one, one);
      op->moveBefore(loop.getBody()->getTerminator());
    }
  }
};
} // namespace

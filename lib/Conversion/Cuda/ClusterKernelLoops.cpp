//===- ClusterKernelLoops.cpp - parallel loops next to each other ---------===//
//
// Bufferization allocates each temporary just before the op that writes it
// and deallocation frees it just after its last use, so the parallel loops
// of a decode step (each a kernel launch) alternate with memref.alloc and
// memref.dealloc. tp-fuse-kernel-loops fuses only loops with nothing
// that has memory effects between them. Within a run of such loops and
// allocations, the allocations move to its start and the deallocations to
// its end: the buffers live a few kernels longer, and the loops meet.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPCLUSTERKERNELLOOPS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

static bool isStaticAlloc(Operation *op) {
  auto alloc = dyn_cast<memref::AllocOp>(op);
  return alloc && alloc->getNumOperands() == 0;
}

bool mlir::tp::movesAsideOfKernels(Operation *op) {
  return isa<memref::DeallocOp>(op) || isStaticAlloc(op) ||
         (isMemoryEffectFree(op) && op->getNumRegions() == 0);
}

/// Whether `op` may stay in a run: the loops, what moves, and what neither
/// reads nor writes memory.
static bool belongsToRun(Operation *op) {
  return isa<scf::ParallelOp>(op) || tp::movesAsideOfKernels(op);
}

/// Moves the allocations of the run [first, last] to its start and its
/// deallocations to its end, each in their order.
static void cluster(Operation *first, Operation *last) {
  Block *block = first->getBlock();
  Operation *before = first->getPrevNode(), *after = last->getNextNode();
  SmallVector<Operation *> allocs, deallocs;
  for (Operation *op = first; op != after; op = op->getNextNode()) {
    if (isStaticAlloc(op))
      allocs.push_back(op);
    else if (isa<memref::DeallocOp>(op))
      deallocs.push_back(op);
  }
  for (Operation *alloc : llvm::reverse(allocs)) {
    if (before)
      alloc->moveAfter(before);
    else
      alloc->moveBefore(block, block->begin());
  }
  for (Operation *dealloc : deallocs) {
    if (after)
      dealloc->moveBefore(after);
    else
      dealloc->moveBefore(block, block->end());
  }
}

static void clusterBlock(Block &block) {
  Operation *first = nullptr, *last = nullptr;
  // Collect the runs first: moving ops while walking would revisit them.
  SmallVector<std::pair<Operation *, Operation *>> runs;
  for (Operation &op : block) {
    if (belongsToRun(&op) && !op.hasTrait<OpTrait::IsTerminator>()) {
      if (!first)
        first = &op;
      last = &op;
      continue;
    }
    if (first)
      runs.push_back({first, last});
    first = last = nullptr;
  }
  if (first)
    runs.push_back({first, last});
  for (auto [runFirst, runLast] : runs)
    cluster(runFirst, runLast);
}

namespace {
struct TPClusterKernelLoopsPass
    : public tp::impl::TPClusterKernelLoopsBase<TPClusterKernelLoopsPass> {
  void runOnOperation() override {
    // Host code only: a block inside a parallel loop is a kernel's body.
    getOperation()->walk<WalkOrder::PreOrder>([](Operation *op) {
      if (isa<scf::ParallelOp>(op))
        return WalkResult::skip();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          clusterBlock(block);
      return WalkResult::advance();
    });
  }
};
} // namespace

//===- RowKernelsToGpu.cpp - row kernels as launches with all-reduces -----===//
//
// tp-row-kernels writes a kernel as an scf.parallel over rows whose body is
// thread loops (scf.parallel from 0 to at most the block's threads), some
// reducing to a value the later ones read. Upstream's
// convert-parallel-loops-to-gpu takes no loop with a reduction, and would
// not put a barrier between the stages. Here each row is a block, each
// thread loop's index the thread's (a loop over fewer threads than the
// block's runs under `if`), a reduction a uniform gpu.all_reduce (lowered
// with the kernel to warp shuffles and shared memory), and a barrier
// follows every stage but the last: a stage reads elements other threads
// wrote in the ones before.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPROWKERNELSTOGPU
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

static std::optional<int64_t> constantBound(scf::ParallelOp loop) {
  if (loop.getNumLoops() != 1 || !isConstantIntValue(loop.getLowerBound()[0], 0) ||
      !isConstantIntValue(loop.getStep()[0], 1))
    return std::nullopt;
  return getConstantIntValue(loop.getUpperBound()[0]);
}

static LogicalResult convert(scf::ParallelOp rows) {
  std::optional<int64_t> threads;
  if (rows.getNumLoops() != 1 ||
      !isConstantIntValue(rows.getLowerBound()[0], 0) ||
      !isConstantIntValue(rows.getStep()[0], 1))
    return rows.emitError("row kernel: the rows must be one loop from 0 by 1");
  for (Operation &op : rows.getBody()->without_terminator()) {
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (!loop) {
      if (!isMemoryEffectFree(&op) && !isa<memref::LoadOp>(op))
        return op.emitError("row kernel: only thread loops may write memory");
      continue;
    }
    std::optional<int64_t> bound = constantBound(loop);
    if (!bound)
      return loop.emitError("row kernel: a thread loop must run from 0 by 1 "
                            "to a constant");
    threads = std::max(threads.value_or(1), *bound);
  }
  if (!threads)
    return rows.emitError("row kernel without thread loops");

  OpBuilder b(rows);
  Location loc = rows.getLoc();
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value cThreads = arith::ConstantIndexOp::create(b, loc, *threads);
  auto launch = gpu::LaunchOp::create(b, loc, rows.getUpperBound()[0], c1, c1,
                                      cThreads, c1, c1);
  b.setInsertionPointToStart(&launch.getBody().front());
  IRMapping mapping;
  mapping.map(rows.getInductionVars()[0], launch.getBlockIds().x);
  Value thread = launch.getThreadIds().x;
  SmallVector<scf::ParallelOp> stages;
  for (Operation &op : rows.getBody()->without_terminator())
    if (auto loop = dyn_cast<scf::ParallelOp>(op))
      stages.push_back(loop);
  for (Operation &op : rows.getBody()->without_terminator()) {
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (!loop) {
      b.clone(op, mapping);
      continue;
    }
    int64_t bound = *constantBound(loop);
    mapping.map(loop.getInductionVars()[0], thread);
    auto reduce = cast<scf::ReduceOp>(loop.getBody()->getTerminator());
    if (loop.getNumResults() != 0) {
      if (bound != *threads || loop.getNumResults() != 1)
        return loop.emitError("row kernel: a reduction must run on every "
                              "thread, to one value");
      Block &combiner = reduce.getReductions()[0].front();
      std::optional<gpu::AllReduceOperation> kind =
          combiner.getOperations().size() == 2
              ? tp::blockReductionOf(&combiner.front())
              : std::nullopt;
      if (!kind)
        return loop.emitError("row kernel: a reduction gpu.all_reduce does "
                              "not know");
      for (Operation &inner : loop.getBody()->without_terminator())
        b.clone(inner, mapping);
      Value partial = mapping.lookupOrDefault(reduce.getOperands()[0]);
      auto all = gpu::AllReduceOp::create(
          b, loc, partial,
          gpu::AllReduceOperationAttr::get(b.getContext(), *kind),
          /*uniform=*/true);
      mapping.map(loop.getResult(0), all.getResult());
    } else if (bound == *threads) {
      for (Operation &inner : loop.getBody()->without_terminator())
        b.clone(inner, mapping);
    } else {
      Value cBound = arith::ConstantIndexOp::create(b, loc, bound);
      Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           thread, cBound);
      auto guard = scf::IfOp::create(b, loc, active, /*withElse=*/false);
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPoint(guard.thenBlock()->getTerminator());
      for (Operation &inner : loop.getBody()->without_terminator())
        b.clone(inner, mapping);
    }
    if (loop != stages.back())
      gpu::BarrierOp::create(b, loc);
  }
  gpu::TerminatorOp::create(b, loc);
  rows.erase();
  return success();
}

namespace {
struct TPRowKernelsToGpuPass
    : tp::impl::TPRowKernelsToGpuBase<TPRowKernelsToGpuPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> kernels;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (tp::isRowKernel(loop))
        kernels.push_back(loop);
    });
    for (scf::ParallelOp kernel : kernels)
      if (failed(convert(kernel)))
        return signalPassFailure();
  }
};
} // namespace

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
// stands between any two stages or loads: a stage reads elements other
// threads wrote in the ones before. (A thread loop is an scf.parallel like
// any other: tp-fuse-kernel-loops may fuse two, or move one up past others
// it commutes with, before this pass.)
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
  if (loop.getNumLoops() != 1 ||
      !isConstantIntValue(loop.getLowerBound()[0], 0) ||
      !isConstantIntValue(loop.getStep()[0], 1))
    return std::nullopt;
  return getConstantIntValue(loop.getUpperBound()[0]);
}

/// The gpu.all_reduce operation of a thread loop's reduction, if it has
/// one that gpu.all_reduce knows.
static std::optional<gpu::AllReduceOperation>
reductionOf(scf::ParallelOp loop) {
  auto reduce = cast<scf::ReduceOp>(loop.getBody()->getTerminator());
  if (reduce.getNumOperands() != 1)
    return std::nullopt;
  Block &combiner = reduce.getReductions()[0].front();
  Operation &op = combiner.front();
  if (combiner.getOperations().size() != 2 ||
      op.getOperands() != combiner.getArguments())
    return std::nullopt;
  return tp::blockReductionOf(&op);
}

/// The block's threads: the most any thread loop of `rows` runs, after
/// checking what the conversion needs.
static FailureOr<int64_t> threadsOf(scf::ParallelOp rows) {
  if (rows.getNumLoops() != 1 ||
      !isConstantIntValue(rows.getLowerBound()[0], 0) ||
      !isConstantIntValue(rows.getStep()[0], 1))
    return rows.emitError("row kernel: the rows must be one loop from 0 by 1");
  std::optional<int64_t> threads;
  SmallVector<scf::ParallelOp> reductions;
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
    if (loop.getNumResults() != 0)
      reductions.push_back(loop);
  }
  if (!threads)
    return rows.emitError("row kernel without thread loops");
  for (scf::ParallelOp loop : reductions) {
    if (*constantBound(loop) != *threads || loop.getNumResults() != 1)
      return loop.emitError("row kernel: a reduction must run on every "
                            "thread, to one value");
    if (!reductionOf(loop))
      return loop.emitError("row kernel: a reduction gpu.all_reduce does "
                            "not know");
  }
  return *threads;
}

static LogicalResult convert(scf::ParallelOp rows) {
  FailureOr<int64_t> threads = threadsOf(rows);
  if (failed(threads))
    return failure();
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
  // A barrier between any two ops that touch memory: a stage reads what
  // other threads wrote in the stages before, and must not write what
  // another thread has yet to read.
  bool touched = false;
  for (Operation &op : rows.getBody()->without_terminator()) {
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (!loop && isMemoryEffectFree(&op)) {
      b.clone(op, mapping);
      continue;
    }
    if (touched)
      gpu::BarrierOp::create(b, loc);
    touched = true;
    if (!loop) {
      b.clone(op, mapping);
      continue;
    }
    int64_t bound = *constantBound(loop);
    mapping.map(loop.getInductionVars()[0], thread);
    if (std::optional<gpu::AllReduceOperation> kind = reductionOf(loop)) {
      for (Operation &inner : loop.getBody()->without_terminator())
        b.clone(inner, mapping);
      Value partial = mapping.lookupOrDefault(
          loop.getBody()->getTerminator()->getOperand(0));
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

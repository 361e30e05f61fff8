//===- SplitReductions.cpp - long reductions in two coalesced stages ------===//
//
// The GPU path gives each output point of a reduction one thread with a
// sequential loop: a LayerNorm or RMSNorm over d = 4096 at 128 tokens is 128
// threads, each walking its own row, where neighbouring threads read 16 KB
// apart. Upstream's split reduction (innerParallel) turns a reduction of N
// into `ratio` interleaved partial reductions per output point (thread j
// reads elements j, j + ratio, ...: a warp reads contiguous memory) and a
// short final reduction of the partials. On tensors, before bufferization;
// only generics with one reduction dimension of at least `min-size` static
// elements that 32 divides, projected-permutation maps and no linalg.index
// (upstream copies the body as it is, so an index would name the wrong
// loop).
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSPLITREDUCTIONS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// Partial reductions per output point: a warp's worth when N allows.
constexpr int64_t kRatio = 32;

struct SplitReductionsPass
    : tp::impl::TPSplitReductionsBase<SplitReductionsPass> {
  using TPSplitReductionsBase::TPSplitReductionsBase;

  /// The reduction's static size when it is worth splitting.
  std::optional<int64_t> splittable(linalg::GenericOp op) const {
    if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1 ||
        op.getNumDpsInits() != 1 || op.hasIndexSemantics() ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); }))
      return std::nullopt;
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t size = ranges[dims.front()];
    if (ShapedType::isDynamic(size) || size < minSize || size % kRatio != 0)
      return std::nullopt;
    return size;
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (splittable(op))
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : reductions) {
      rewriter.setInsertionPoint(op);
      // The partials' extra dimension last: [outputs..., ratio], contiguous
      // for the final reduction.
      unsigned outputRank =
          cast<ShapedType>(op.getDpsInitOperand(0)->get().getType()).getRank();
      // A body whose combiner upstream cannot find stays as it is.
      FailureOr<linalg::SplitReductionResult> split =
          linalg::splitReduction(rewriter, op, [&](linalg::LinalgOp) {
            return linalg::SplitReductionOptions{kRatio, outputRank,
                                                 /*innerParallel=*/true};
          });
      if (failed(split))
        continue;
      // The new parallel dimension comes after the reduction; the loop
      // lowering would make it a loop inside each thread's sequential one.
      // Parallel dimensions first, so all of them become threads.
      auto partial = cast<linalg::GenericOp>(split->splitLinalgOp);
      SmallVector<unsigned> order;
      for (bool reduction : {false, true})
        for (auto [i, type] : llvm::enumerate(partial.getIteratorTypesArray()))
          if (linalg::isReductionIterator(type) == reduction)
            order.push_back(i);
      rewriter.setInsertionPoint(partial);
      if (failed(linalg::interchangeGenericOp(rewriter, partial, order))) {
        partial.emitError("tp-split-reductions could not put the reduction "
                          "loop last");
        return signalPassFailure();
      }
    }
  }
};

} // namespace

//===- TileForGpu.cpp - parallel loops as blocks x threads ----------------===//

#include "CudaPasses.h"

#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPTILEFORGPU
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

/// Static trip count of loop dimension `d`, if known.
static std::optional<int64_t> tripCount(scf::ParallelOp op, unsigned d) {
  std::optional<int64_t> lb = getConstantIntValue(op.getLowerBound()[d]);
  std::optional<int64_t> ub = getConstantIntValue(op.getUpperBound()[d]);
  std::optional<int64_t> st = getConstantIntValue(op.getStep()[d]);
  if (!lb || !ub || !st || *st <= 0)
    return std::nullopt;
  return (*ub - *lb + *st - 1) / *st;
}

/// Maps the dimensions of `op` to `hardware` (x, y, z), innermost dimension
/// first, skipping dimensions of one iteration (`trips`, known from the
/// tiling: the tiled loops' bounds are no longer constants); the rest run
/// sequentially in each thread. (Mapping dimension 0 to x, as upstream
/// does, puts a row's 256 points on threadIdx.z, limited to 64.)
static void mapDims(scf::ParallelOp op, ArrayRef<gpu::Processor> hardware,
                    ArrayRef<std::optional<int64_t>> trips) {
  MLIRContext *ctx = op.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  unsigned n = op.getNumLoops(), next = 0;
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
      n, gpu::ParallelLoopDimMappingAttr::get(ctx, gpu::Processor::Sequential,
                                              id, id));
  for (unsigned d = n; d-- > 0 && next < hardware.size();) {
    if (trips[d] && *trips[d] <= 1)
      continue;
    mapping[d] =
        gpu::ParallelLoopDimMappingAttr::get(ctx, hardware[next++], id, id);
  }
  (void)gpu::setMappingAttr(op, mapping);
}

namespace {
struct TPTileForGpuPass : public tp::impl::TPTileForGpuBase<TPTileForGpuPass> {
  using TPTileForGpuBase::TPTileForGpuBase;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp op) {
      // A row kernel maps itself (tp-row-kernels-to-gpu).
      if (!op->getParentOfType<scf::ParallelOp>() && !tp::isRowKernel(op))
        outermost.push_back(op);
    });
    for (scf::ParallelOp op : outermost) {
      unsigned n = op.getNumLoops();
      SmallVector<int64_t> sizes(n, 1);
      SmallVector<std::optional<int64_t>> trips, tileTrips(n), pointTrips(n);
      for (unsigned d = 0; d < n; ++d)
        trips.push_back(tripCount(op, d));
      int64_t remaining = blockSize;
      for (unsigned d = n; d-- > 0 && remaining > 1;) {
        int64_t tile = std::max<int64_t>(
            1, std::min(remaining, trips[d].value_or(remaining)));
        sizes[d] = tile;
        remaining /= tile;
      }
      for (unsigned d = 0; d < n; ++d) {
        pointTrips[d] = sizes[d];
        if (trips[d])
          tileTrips[d] = llvm::divideCeil(*trips[d], sizes[d]);
      }
      auto [tiles, points] =
          scf::tileParallelLoop(op, sizes, /*noMinMaxBounds=*/true);
      mapDims(tiles,
              {gpu::Processor::BlockX, gpu::Processor::BlockY,
               gpu::Processor::BlockZ},
              tileTrips);
      mapDims(points,
              {gpu::Processor::ThreadX, gpu::Processor::ThreadY,
               gpu::Processor::ThreadZ},
              pointTrips);
    }
    WalkResult result = getOperation().walk([&](Operation *op) {
      if (!isa<memref::LoadOp, memref::StoreOp>(op) ||
          op->getParentOfType<scf::ParallelOp>())
        return WalkResult::advance();
      // A host scalar (tp-host-scalar-reads copied it there).
      Value memref = isa<memref::LoadOp>(op)
                         ? cast<memref::LoadOp>(op).getMemRef()
                         : cast<memref::StoreOp>(op).getMemRef();
      if (memref.getDefiningOp<memref::AllocaOp>())
        return WalkResult::advance();
      op->emitError("memory access outside a parallel loop: it would run on "
                    "the host against device memory (the cuda backend "
                    "needs every op with memory access to have a parallel "
                    "dimension)");
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace

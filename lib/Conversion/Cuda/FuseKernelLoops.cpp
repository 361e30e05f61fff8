//===- FuseKernelLoops.cpp - adjacent kernel loops as one -----------------===//
//
// Each parallel loop left on the host becomes a kernel launch. Two adjacent
// loops of the same bounds become one when running both bodies point by
// point gives what running the loops one after the other gave: a buffer both
// touch, one of them writing it, must be touched by both at the same point.
// Upstream's scf-parallel-loop-fusion compares what one loop reads with what
// the other writes, but not the two loops' writes: a fill of a buffer and a
// transposed write into it would race once fused. This pass compares every
// pair of accesses, and takes writes through disjoint static subviews of one
// buffer (a concat's halves) as independent.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFUSEKERNELLOOPS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
/// A load or a store in a loop's body.
struct Access {
  Value memref;
  ValueRange indices;
  bool write;
};
} // namespace

/// The loads and stores of `loop`'s body, or false if the body touches
/// memory any other way or holds a parallel loop.
static bool collectAccesses(scf::ParallelOp loop,
                            SmallVectorImpl<Access> &accesses) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({load.getMemRef(), load.getIndices(), false});
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      accesses.push_back({store.getMemRef(), store.getIndices(), true});
      return WalkResult::advance();
    }
    if (isa<scf::ParallelOp>(op))
      return WalkResult::interrupt();
    // The body's terminator, when the loop reduces nothing.
    if (isa<scf::ReduceOp>(op) && op->getNumOperands() == 0)
      return WalkResult::advance();
    // An op with regions (scf.for) has the effects of its ops, visited too.
    if (isMemoryEffectFree(op) ||
        op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// The buffer `v` views, through casts, subviews and reshapes.
static Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

/// Whether `a` and `b` are subviews of one memref with static offsets, sizes
/// and unit strides that share no element.
static bool disjointSubviews(Value a, Value b) {
  auto x = a.getDefiningOp<memref::SubViewOp>();
  auto y = b.getDefiningOp<memref::SubViewOp>();
  if (!x || !y || x.getSource() != y.getSource())
    return false;
  auto isStatic = [](memref::SubViewOp view) {
    return llvm::none_of(view.getStaticOffsets(), ShapedType::isDynamic) &&
           llvm::none_of(view.getStaticSizes(), ShapedType::isDynamic) &&
           llvm::all_of(view.getStaticStrides(),
                        [](int64_t stride) { return stride == 1; });
  };
  if (!isStatic(x) || !isStatic(y))
    return false;
  for (auto [ox, sx, oy, sy] :
       llvm::zip(x.getStaticOffsets(), x.getStaticSizes(), y.getStaticOffsets(),
                 y.getStaticSizes()))
    if (ox + sx <= oy || oy + sy <= ox)
      return true;
  return false;
}

/// Whether fusing keeps the order between `x` (first loop) and `y` (second
/// loop) that matters: reads never conflict; the same memref must be
/// touched at the same point (`ivs` maps the first loop's induction
/// variables to the second's); views of one buffer only where disjoint;
/// distinct buffers are independent, as upstream and the runtime take the
/// buffers a model writes to be.
static bool independent(const Access &x, const Access &y, const IRMapping &ivs,
                        AliasAnalysis &aliases) {
  if (!x.write && !y.write)
    return true;
  if (x.memref == y.memref)
    return x.indices.size() == y.indices.size() &&
           llvm::all_of(llvm::zip(x.indices, y.indices), [&](auto pair) {
             return ivs.lookupOrDefault(std::get<0>(pair)) == std::get<1>(pair);
           });
  if (disjointSubviews(x.memref, y.memref))
    return true;
  if (rootOf(x.memref) == rootOf(y.memref))
    return false;
  // A read against a write: as upstream, only buffers that cannot alias.
  return (x.write && y.write) || aliases.alias(x.memref, y.memref).isNo();
}

static bool canFuse(scf::ParallelOp first, scf::ParallelOp second,
                    AliasAnalysis &aliases) {
  if (first.getNumResults() || second.getNumResults() ||
      !llvm::equal(first.getLowerBound(), second.getLowerBound()) ||
      !llvm::equal(first.getUpperBound(), second.getUpperBound()) ||
      !llvm::equal(first.getStep(), second.getStep()))
    return false;
  SmallVector<Access> xs, ys;
  if (!collectAccesses(first, xs) || !collectAccesses(second, ys))
    return false;
  IRMapping ivs;
  ivs.map(first.getInductionVars(), second.getInductionVars());
  for (const Access &x : xs)
    for (const Access &y : ys)
      if (!independent(x, y, ivs, aliases))
        return false;
  return true;
}

/// `first`'s body at the start of `second`'s; `first` goes.
static void fuse(scf::ParallelOp first, scf::ParallelOp second) {
  IRMapping ivs;
  ivs.map(first.getInductionVars(), second.getInductionVars());
  OpBuilder b = OpBuilder::atBlockBegin(second.getBody());
  for (Operation &op : first.getBody()->without_terminator())
    b.clone(op, ivs);
  first.erase();
}

static void fuseInBlock(Block &block, AliasAnalysis &aliases) {
  // Chains of loops with nothing that touches memory between them.
  SmallVector<SmallVector<scf::ParallelOp>> chains(1);
  for (Operation &op : block) {
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      chains.back().push_back(loop);
      continue;
    }
    if (!isMemoryEffectFree(&op) || op.getNumRegions() != 0)
      chains.emplace_back();
  }
  for (SmallVector<scf::ParallelOp> &chain : chains)
    for (size_t i = 0; i + 1 < chain.size(); ++i)
      if (canFuse(chain[i], chain[i + 1], aliases))
        fuse(chain[i], chain[i + 1]);
}

namespace {
struct TPFuseKernelLoopsPass
    : public tp::impl::TPFuseKernelLoopsBase<TPFuseKernelLoopsPass> {
  void runOnOperation() override {
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    // Post-order: the loops erased in an op's blocks have been visited.
    getOperation()->walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          fuseInBlock(block, aliases);
    });
  }
};
} // namespace

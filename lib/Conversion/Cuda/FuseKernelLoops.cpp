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

Value mlir::tp::viewedBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
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

/// Whether `x` and `y`, in two loops, touch memory so that the loops may
/// run in either order: reads never conflict; views of one buffer only
/// where disjoint; distinct buffers are independent where both are written,
/// as upstream and the runtime take the buffers a model writes to be, and a
/// read against a write, as upstream, only where they cannot alias.
static bool commute(const Access &x, const Access &y, AliasAnalysis &aliases) {
  if (!x.write && !y.write)
    return true;
  if (disjointSubviews(x.memref, y.memref))
    return true;
  if (tp::viewedBuffer(x.memref) == tp::viewedBuffer(y.memref))
    return false;
  return (x.write && y.write) || aliases.alias(x.memref, y.memref).isNo();
}

/// Whether fusing keeps the order between `x` (first loop) and `y` (second
/// loop) that matters: the same memref must be touched at the same point
/// (`ivs` maps the first loop's induction variables to the second's), or
/// the two commute.
static bool independent(const Access &x, const Access &y, const IRMapping &ivs,
                        AliasAnalysis &aliases) {
  if (x.memref == y.memref && (x.write || y.write))
    return x.indices.size() == y.indices.size() &&
           llvm::all_of(llvm::zip(x.indices, y.indices), [&](auto pair) {
             return ivs.lookupOrDefault(std::get<0>(pair)) == std::get<1>(pair);
           });
  return commute(x, y, aliases);
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

/// Whether `a` and `b` may run in either order.
static bool loopsCommute(scf::ParallelOp a, scf::ParallelOp b,
                         AliasAnalysis &aliases) {
  SmallVector<Access> xs, ys;
  if (!collectAccesses(a, xs) || !collectAccesses(b, ys))
    return false;
  for (const Access &x : xs)
    for (const Access &y : ys)
      if (!commute(x, y, aliases))
        return false;
  return true;
}

/// Moves `loop` to just after `anchor` (earlier in its block), with the
/// pure ops between them that define what it uses (views); false, and
/// nothing moved, where one of those is not pure.
static bool hoistAfter(scf::ParallelOp loop, Operation *anchor) {
  SetVector<Operation *> defs; // operands first
  std::function<bool(Value)> available = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != anchor->getBlock() ||
        !anchor->isBeforeInBlock(def) || defs.contains(def))
      return true;
    if (!isPure(def) || def->getNumRegions() != 0 ||
        !llvm::all_of(def->getOperands(), available))
      return false;
    defs.insert(def);
    return true;
  };
  WalkResult result = loop->walk([&](Operation *op) {
    return llvm::all_of(op->getOperands(), available) ? WalkResult::advance()
                                                      : WalkResult::interrupt();
  });
  if (result.wasInterrupted())
    return false;
  Operation *at = anchor;
  for (Operation *def : defs) {
    def->moveAfter(at);
    at = def;
  }
  loop->moveAfter(at);
  return true;
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
  // Each loop fuses with the next one of the same bounds that can move up
  // to it: the loops between commute with it (RoPE's rotations of q and k,
  // then its products, each a kernel).
  for (SmallVector<scf::ParallelOp> &chain : chains) {
    for (size_t i = 0; i < chain.size(); ++i) {
      for (size_t j = i + 1; j < chain.size(); ++j) {
        if (!canFuse(chain[i], chain[j], aliases))
          continue;
        bool movable = llvm::all_of(ArrayRef(chain).slice(i + 1, j - i - 1),
                                    [&](scf::ParallelOp m) {
                                      return loopsCommute(m, chain[j], aliases);
                                    });
        if (!movable || (j > i + 1 && !hoistAfter(chain[j], chain[i])))
          continue;
        fuse(chain[i], chain[j]);
        chain[i] = chain[j];
        chain.erase(chain.begin() + j);
        j = i;
      }
    }
  }
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

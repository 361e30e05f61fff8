//===- PromoteAccumulators.cpp - accumulators as loop-carried values ------===//
//
// The loop lowering of a linalg reduction loads its output element, combines
// and stores it back in every iteration of the reduction loop. LLVM cannot
// keep that element in a register: lowered memrefs carry no alias
// information, so the store may write what the next iteration reads, and
// each iteration waits on the last one's store. The argmax over GPT-2's
// vocabulary took 8% of a batch-8 decode step that way. MLIR still knows
// which buffers are distinct (a buffer allocated in the function is neither
// an argument nor another allocation: upstream's LocalAliasAnalysis), so
// this does LLVM's scalar promotion on scf.for: one load before the loop, an
// iter_arg through it, one store after.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPPROMOTEACCUMULATORS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {
/// One element a loop reads and writes at the same place in every iteration:
/// the loads before the store, in the loop's own block.
struct Accumulator {
  memref::StoreOp store;
  SmallVector<memref::LoadOp> loads;
};
} // namespace

/// Whether no op of `loop` but `acc`'s own may touch `acc`'s buffer.
static bool isOnlyAccess(scf::ForOp loop, Accumulator &acc,
                         AliasAnalysis &aliases) {
  Value buffer = acc.store.getMemRef();
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (op == acc.store || llvm::is_contained(acc.loads, op))
      return WalkResult::advance();
    // The walk reaches the ops of nested regions; an op with regions may
    // have effects of its own as well (a linalg op on its operands).
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (isa<MemoryEffects::Allocate>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value || !aliases.alias(value, buffer).isNo())
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The accumulators of `loop`: a store at a place defined outside the loop,
/// read before it only, and touched by nothing else in the loop.
static SmallVector<Accumulator> findAccumulators(scf::ForOp loop,
                                                 AliasAnalysis &aliases) {
  SmallVector<Accumulator> found;
  for (auto store : loop.getBody()->getOps<memref::StoreOp>()) {
    if (!loop.isDefinedOutsideOfLoop(store.getMemRef()) ||
        !llvm::all_of(store.getIndices(), [&](Value index) {
          return loop.isDefinedOutsideOfLoop(index);
        }))
      continue;
    Accumulator acc{store, {}};
    for (auto load : loop.getBody()->getOps<memref::LoadOp>())
      if (load->isBeforeInBlock(store) &&
          load.getMemRef() == store.getMemRef() &&
          load.getIndices() == store.getIndices())
        acc.loads.push_back(load);
    if (isOnlyAccess(loop, acc, aliases))
      found.push_back(std::move(acc));
  }
  return found;
}

/// Puts `loop`, whose trip count is unknown, in an scf.if that runs it only
/// when it has iterations: the load before it must not read a place that no
/// iteration would have.
static void guardEmptyLoop(scf::ForOp loop, RewriterBase &rewriter) {
  rewriter.setInsertionPoint(loop);
  auto predicate = loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                         : arith::CmpIPredicate::slt;
  Value runs =
      arith::CmpIOp::create(rewriter, loop.getLoc(), predicate,
                            loop.getLowerBound(), loop.getUpperBound());
  auto guard = scf::IfOp::create(rewriter, loop.getLoc(), runs,
                                 /*withElseRegion=*/false);
  rewriter.moveOpBefore(loop, guard.thenBlock()->getTerminator());
}

static void promote(scf::ForOp loop, MutableArrayRef<Accumulator> accumulators,
                    bool knownTrips, RewriterBase &rewriter) {
  if (!knownTrips)
    guardEmptyLoop(loop, rewriter);
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits =
      llvm::map_to_vector(accumulators, [&](Accumulator &acc) -> Value {
        return memref::LoadOp::create(rewriter, loc, acc.store.getMemRef(),
                                      acc.store.getIndices());
      });
  FailureOr<LoopLikeOpInterface> promoted = loop.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return llvm::map_to_vector(accumulators, [](Accumulator &acc) -> Value {
          return acc.store.getValue();
        });
      });
  assert(succeeded(promoted) && "scf.for takes any iter_args");
  auto newLoop = cast<scf::ForOp>(promoted->getOperation());
  unsigned first = newLoop.getNumResults() - accumulators.size();
  rewriter.setInsertionPointAfter(newLoop);
  for (auto [i, acc] : llvm::enumerate(accumulators)) {
    Value carried = newLoop.getRegionIterArgs()[first + i];
    for (memref::LoadOp load : acc.loads)
      rewriter.replaceOp(load, carried);
    memref::StoreOp::create(rewriter, loc, newLoop.getResult(first + i),
                            acc.store.getMemRef(), acc.store.getIndices());
    rewriter.eraseOp(acc.store);
  }
}

namespace {
struct TPPromoteAccumulatorsPass
    : public tp::impl::TPPromoteAccumulatorsBase<TPPromoteAccumulatorsPass> {
  void runOnOperation() override {
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    // Inner loops first: a promoted inner loop's load and store may then be
    // the outer loop's accumulator.
    SmallVector<scf::ForOp> loops;
    getOperation()->walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      // A guarded loop's results could not be used after the guard.
      if ((trips && trips->isZero()) || (!trips && loop.getNumResults()))
        continue;
      SmallVector<Accumulator> accumulators = findAccumulators(loop, aliases);
      if (!accumulators.empty())
        promote(loop, accumulators, trips.has_value(), rewriter);
    }
  }
};
} // namespace

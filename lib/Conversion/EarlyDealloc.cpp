//===- EarlyDealloc.cpp - free buffers after their last use ---------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPEARLYDEALLOC
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

/// The op of `dealloc`'s block after which the buffer is dead, or null when
/// a use may alias it in a way views do not describe.
static Operation *lastUse(memref::DeallocOp dealloc) {
  Block *block = dealloc->getBlock();
  Operation *last = dealloc.getMemref().getDefiningOp();
  if (!last || last->getBlock() != block)
    return nullptr;
  SmallVector<Value> aliases{dealloc.getMemref()};
  for (size_t i = 0; i < aliases.size(); ++i) {
    for (OpOperand &use : aliases[i].getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      if (view && view.getViewSource() == aliases[i])
        llvm::append_range(aliases, user->getResults());
      else if (llvm::any_of(user->getResultTypes(),
                            llvm::IsaPred<BaseMemRefType>))
        return nullptr;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return nullptr;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

namespace {
struct TPEarlyDeallocPass
    : public tp::impl::TPEarlyDeallocBase<TPEarlyDeallocPass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation()->walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs)
      if (Operation *last = lastUse(dealloc))
        dealloc->moveAfter(last);
  }
};
} // namespace

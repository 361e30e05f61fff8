//===- UnpackWeights.cpp - a packed parameter argument as weights ---------===//
//
// tp-shard decides a cut per argument; a weight that is a slice of a packed
// argument has none of its own. Each slice becomes the argument of a weight
// whose elements the loader reads from the one checkpoint tensor.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"

#include "WeightRows.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPUNPACKWEIGHTS
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct TPUnpackWeightsPass
    : tp::impl::TPUnpackWeightsBase<TPUnpackWeightsPass> {
  void runOnOperation() override;
};

} // namespace

void TPUnpackWeightsPass::runOnOperation() {
  ModuleOp module = getOperation();
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal() ||
        !SymbolTable::symbolKnownUseEmpty(func.getOperation(), module))
      continue;
    unsigned unpacked = 0, packs = 0;
    // From the last argument: unpacking one moves those after it. Flat
    // ones only: rows of a matrix may be a model's input read in parts
    // (tp-split-fused-projections unpacks those of a weight, which it
    // knows for one).
    for (unsigned i = func.getNumArguments(); i-- > 0;) {
      auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      if (!type || type.getRank() != 1)
        continue;
      std::optional<int64_t> scale = rowScale(func, i);
      std::optional<SmallVector<tensor::ExtractSliceOp>> slices =
          rowSlices(func.getArgument(i));
      if (!scale || !slices)
        continue;
      unpacked += unpackRows(func, i, *slices, *scale);
      ++packs;
    }
    // At the function's location: printing it would print the model.
    if (packs)
      emitRemark(func.getLoc())
          << "took " << unpacked << " weights out of " << packs
          << " packed argument" << (packs == 1 ? "" : "s")
          << ": each its own argument, read from the packed checkpoint "
             "tensor";
  }
}

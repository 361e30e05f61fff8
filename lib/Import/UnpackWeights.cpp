//===- UnpackWeights.cpp - a packed parameter argument as weights ---------===//
//
// tp-shard decides a cut per argument; a weight that is a slice of a packed
// argument (or rows of one, a fused projection's sections) has none of its
// own. Each slice becomes the argument of a weight whose elements the
// loader reads from the one checkpoint tensor.
//
//===----------------------------------------------------------------------===//

#include "tp/IR/TPDialect.h"
#include "tp/Import/Passes.h"

#include "WholeRows.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"

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

/// The slices of `arg` when it packs weights: a static tensor that only
/// static, unit-stride slices of whole rows read (every dimension but the
/// first whole), at least two of them, one size at each offset.
static std::optional<SmallVector<tensor::ExtractSliceOp>>
packedSlices(BlockArgument arg) {
  auto type = dyn_cast<RankedTensorType>(arg.getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape())
    return std::nullopt;
  // Not rank-reducing: an element read as a 0-D tensor is no weight the
  // loader reads rows of.
  for (Operation *user : arg.getUsers())
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
        !slice || !takesWholeRows(slice))
      return std::nullopt;
  // In the order they are packed in, then in program order (a use list's
  // is not).
  SmallVector<tensor::ExtractSliceOp> slices;
  arg.getParentRegion()->walk([&](tensor::ExtractSliceOp slice) {
    if (slice.getSource() == arg)
      slices.push_back(slice);
  });
  if (slices.size() < 2)
    return std::nullopt;
  // A checkpoint tensor holds one weight per name and offset: two sizes at
  // one offset would be two.
  DenseMap<int64_t, int64_t> sizeAt;
  for (tensor::ExtractSliceOp slice : slices)
    if (sizeAt
            .try_emplace(slice.getStaticOffsets()[0], slice.getStaticSizes()[0])
            .first->second != slice.getStaticSizes()[0])
      return std::nullopt;
  llvm::stable_sort(slices,
                    [](tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
                      return a.getStaticOffsets()[0] < b.getStaticOffsets()[0];
                    });
  return slices;
}

/// Whether argument `i` of `func` already says how it is cut or read from a
/// checkpoint (tp.* attributes but its name), which its parts could not
/// all keep.
static bool placed(FunctionOpInterface func, unsigned i) {
  return llvm::any_of(func.getArgAttrs(i), [](NamedAttribute attr) {
    return attr.getName().strref().starts_with("tp.") &&
           attr.getName() != TPDialect::getNameAttrName();
  });
}

/// The static type every slice of `slices` is reshaped to by the one op
/// that reads it (buddy-mlir's [N*K] -> [N, K]), if there is one.
static RankedTensorType reshapedType(ArrayRef<tensor::ExtractSliceOp> slices) {
  RankedTensorType type;
  for (tensor::ExtractSliceOp slice : slices) {
    auto expand = slice->hasOneUse()
                      ? dyn_cast<tensor::ExpandShapeOp>(*slice->user_begin())
                      : nullptr;
    if (!expand || !expand.getResultType().hasStaticShape() ||
        (type && expand.getResultType() != type))
      return nullptr;
    type = expand.getResultType();
  }
  return type;
}

/// Replaces argument `index` of `func` by one argument per part its slices
/// read, in its place; returns how many.
static unsigned unpack(FunctionOpInterface func, unsigned index,
                       ArrayRef<tensor::ExtractSliceOp> slices) {
  MLIRContext *ctx = func.getContext();
  BlockArgument packed = func.getArgument(index);
  auto packedType = cast<RankedTensorType>(packed.getType());
  NamedAttrList common(func.getArgAttrDict(index));
  if (!common.get(TPDialect::getNameAttrName()))
    common.set(TPDialect::getNameAttrName(),
               StringAttr::get(ctx, "arg" + Twine(index)));
  common.set(TPDialect::getCheckpointShapeAttrName(),
             DenseI64ArrayAttr::get(ctx, packedType.getShape()));

  // One argument per part: a checkpoint holds one tensor per name and
  // offset. It takes the shape every read of the part reshapes it to, else
  // the slice's, and the reshapes stay.
  llvm::MapVector<std::pair<int64_t, int64_t>,
                  SmallVector<tensor::ExtractSliceOp>>
      parts;
  for (tensor::ExtractSliceOp slice : slices)
    parts[{slice.getStaticOffsets()[0], slice.getStaticSizes()[0]}].push_back(
        slice);
  SmallVector<unsigned> indices;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  for (auto &[key, partSlices] : parts) {
    NamedAttrList partAttrs = common;
    partAttrs.set(TPDialect::getCheckpointOffsetAttrName(),
                  IntegerAttr::get(IntegerType::get(ctx, 64), key.first));
    RankedTensorType reshaped = reshapedType(partSlices);
    indices.push_back(index);
    types.push_back(reshaped ? reshaped : partSlices.front().getType());
    attrs.push_back(partAttrs.getDictionary(ctx));
    locs.push_back(partSlices.front().getLoc());
  }
  if (failed(func.insertArguments(indices, types, attrs, locs)))
    llvm_unreachable("a function on tensors takes more arguments");
  for (auto [i, entry] : llvm::enumerate(parts))
    for (tensor::ExtractSliceOp slice : entry.second) {
      // A part of another type than its slices is their reshapes' result.
      Value weight = func.getArgument(index + i);
      Operation *read = slice;
      if (weight.getType() != slice.getType())
        read = *slice->user_begin();
      read->getResult(0).replaceAllUsesWith(weight);
      read->erase();
      if (read != slice.getOperation())
        slice->erase();
    }
  if (failed(func.eraseArgument(index + parts.size())))
    llvm_unreachable("a function on tensors drops an unused argument");
  return parts.size();
}

void TPUnpackWeightsPass::runOnOperation() {
  ModuleOp module = getOperation();
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal() ||
        !SymbolTable::symbolKnownUseEmpty(func.getOperation(), module))
      continue;
    unsigned unpacked = 0, packs = 0;
    // From the last argument: unpacking one moves those after it.
    for (unsigned i = func.getNumArguments(); i-- > 0;)
      if (std::optional<SmallVector<tensor::ExtractSliceOp>> slices =
              packedSlices(func.getArgument(i));
          slices && !placed(func, i)) {
        unpacked += unpack(func, i, *slices);
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

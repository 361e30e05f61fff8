//===- WeightRows.cpp - weights read as rows of one argument --------------===//

#include "WeightRows.h"

#include "tp/IR/TPDialect.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::tp;

BlockArgument mlir::tp::functionArgument(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || !arg.getOwner()->isEntryBlock() ||
      !isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return nullptr;
  return arg;
}

bool mlir::tp::takesWholeRows(tensor::ExtractSliceOp slice) {
  RankedTensorType source = slice.getSourceType();
  if (!source.hasStaticShape() || !slice.hasUnitStride() ||
      slice.getType().getRank() != source.getRank() ||
      ShapedType::isDynamic(slice.getStaticOffsets()[0]) ||
      ShapedType::isDynamic(slice.getStaticSizes()[0]))
    return false;
  for (int64_t d = 1, e = source.getRank(); d < e; ++d)
    if (slice.getStaticOffsets()[d] != 0 ||
        slice.getStaticSizes()[d] != source.getDimSize(d))
      return false;
  return true;
}

std::optional<SmallVector<tensor::ExtractSliceOp>>
mlir::tp::rowSlices(BlockArgument arg) {
  // Not rank-reducing: an element read as a 0-D tensor is no weight the
  // loader reads rows of.
  for (Operation *user : arg.getUsers())
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
        !slice || !takesWholeRows(slice))
      return std::nullopt;
  // In program order (a use list's is not).
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

/// Elements of one row of `shape`.
static int64_t rowElements(ArrayRef<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t size : shape.drop_front())
    elements *= size;
  return elements;
}

std::optional<int64_t> mlir::tp::rowScale(FunctionOpInterface func,
                                          unsigned index) {
  auto type = dyn_cast<RankedTensorType>(func.getArgument(index).getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape())
    return std::nullopt;
  auto offset = func.getArgAttrOfType<IntegerAttr>(
      index, TPDialect::getCheckpointOffsetAttrName());
  auto stored = func.getArgAttrOfType<DenseI64ArrayAttr>(
      index, TPDialect::getCheckpointShapeAttrName());
  for (NamedAttribute attr : func.getArgAttrs(index)) {
    StringRef name = attr.getName().strref();
    if (name.starts_with("tp.") && name != TPDialect::getNameAttrName() &&
        !(offset && (name == TPDialect::getCheckpointOffsetAttrName() ||
                     name == TPDialect::getCheckpointShapeAttrName())))
      return std::nullopt;
  }
  if (!offset)
    return 1;
  int64_t row = rowElements(type.getShape());
  int64_t storedRow = stored ? rowElements(stored.asArrayRef()) : 0;
  if (!storedRow || row % storedRow != 0)
    return std::nullopt;
  return row / storedRow;
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

unsigned mlir::tp::unpackRows(FunctionOpInterface func, unsigned index,
                              ArrayRef<tensor::ExtractSliceOp> slices,
                              int64_t scale) {
  MLIRContext *ctx = func.getContext();
  auto packedType = cast<RankedTensorType>(func.getArgument(index).getType());
  NamedAttrList common(func.getArgAttrDict(index));
  if (!common.get(TPDialect::getNameAttrName()))
    common.set(TPDialect::getNameAttrName(),
               StringAttr::get(ctx, "arg" + Twine(index)));
  // Rows of a checkpoint tensor already: rows of that tensor.
  int64_t first = 0;
  if (auto offset = dyn_cast_or_null<IntegerAttr>(
          common.get(TPDialect::getCheckpointOffsetAttrName())))
    first = offset.getInt();
  else
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
    partAttrs.set(
        TPDialect::getCheckpointOffsetAttrName(),
        IntegerAttr::get(IntegerType::get(ctx, 64), first + key.first * scale));
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

//===- TPDialect.cpp - tensor-parallel dialect ----------------------------===//

#include "tp/IR/TPDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tp;

#include "tp/IR/TPEnums.cpp.inc"
#include "tp/IR/TPOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tp/IR/TPAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "tp/IR/TPOps.cpp.inc"

void TPDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tp/IR/TPAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tp/IR/TPOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ShardAttr
//===----------------------------------------------------------------------===//

LogicalResult ShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                int64_t dim, int64_t outer, int64_t replicas) {
  if (dim < 0)
    return emitError() << "shard dimension must be non-negative, got " << dim;
  if (outer < 1)
    return emitError() << "shard blocks ('outer') must be positive, got "
                       << outer;
  if (replicas < 1)
    return emitError() << "shard replicas must be positive, got " << replicas;
  return success();
}

FailureOr<SmallVector<int64_t>>
ShardAttr::getLocalShape(ArrayRef<int64_t> shape, int64_t numRanks) const {
  if (numRanks % getReplicas() != 0)
    return failure();
  int64_t parts = numRanks / getReplicas();
  if (getDim() >= static_cast<int64_t>(shape.size()) ||
      shape[getDim()] % (getOuter() * parts) != 0)
    return failure();
  SmallVector<int64_t> local(shape);
  local[getDim()] /= parts;
  return local;
}

//===----------------------------------------------------------------------===//
// Attribute verification on functions and modules
//===----------------------------------------------------------------------===//

/// The type of argument `argIndex` of function `op` while it is still a
/// ranked shaped type (after lowering it may be a memref descriptor); null
/// otherwise, where the attribute checks that need it do not apply.
static ShapedType rankedArgumentType(Operation *op, unsigned regionIndex,
                                     unsigned argIndex) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  auto type = fn && regionIndex == 0
                  ? dyn_cast<ShapedType>(fn.getArgumentTypes()[argIndex])
                  : ShapedType();
  return type && type.hasRank() ? type : ShapedType();
}

/// Whether argument `argIndex` of function `op` carries attribute `name`;
/// false for another op's region arguments.
static bool argumentHas(Operation *op, unsigned regionIndex, unsigned argIndex,
                        StringRef name) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  return fn && regionIndex == 0 && fn.getArgAttr(argIndex, name);
}

LogicalResult TPDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  if (attr.getName() == getNameAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << getNameAttrName()
                             << "' must be a string, on argument " << argIndex;
    return success();
  }
  if (attr.getName() == getCheckpointShapeAttrName()) {
    auto shape = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!shape || shape.empty() ||
        llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d < 1; }))
      return op->emitError()
             << "'" << getCheckpointShapeAttrName()
             << "' must be an array<i64> of positive sizes, on argument "
             << argIndex;
    // Rows of a packed tensor may be read in another shape (a flat
    // tensor's elements as a matrix); the manifest checks they fit.
    bool rows =
        argumentHas(op, regionIndex, argIndex, getCheckpointOffsetAttrName());
    ShapedType type = rankedArgumentType(op, regionIndex, argIndex);
    if (type && !rows && type.getRank() != int64_t(shape.size()))
      return op->emitError() << "'" << getCheckpointShapeAttrName() << "' has "
                             << shape.size() << " sizes for argument "
                             << argIndex << " of rank " << type.getRank();
    return success();
  }
  if (attr.getName() == getCheckpointOffsetAttrName()) {
    auto offset = dyn_cast<IntegerAttr>(attr.getValue());
    if (!offset || offset.getInt() < 0)
      return op->emitError()
             << "'" << getCheckpointOffsetAttrName()
             << "' must be a non-negative integer, on argument " << argIndex;
    // The rows lie in a named tensor whose shape the manifest checks them
    // against.
    bool inFunction = isa<FunctionOpInterface>(op) && regionIndex == 0;
    for (StringRef needed : {getCheckpointShapeAttrName(), getNameAttrName()})
      if (inFunction && !argumentHas(op, regionIndex, argIndex, needed))
        return op->emitError() << "'" << getCheckpointOffsetAttrName()
                               << "' on argument " << argIndex << " needs the '"
                               << needed << "' of the tensor it reads rows of";
    return success();
  }
  if (attr.getName() == getPositionsAttrName()) {
    auto positions = dyn_cast<IntegerAttr>(attr.getValue());
    if (!positions || positions.getInt() < 1)
      return op->emitError()
             << "'" << getPositionsAttrName()
             << "' must be a positive integer, on argument " << argIndex;
    ShapedType type = rankedArgumentType(op, regionIndex, argIndex);
    if (type && (type.getRank() != 4 || type.isDynamicDim(2) ||
                 type.getDimSize(2) > positions.getInt()))
      return op->emitError()
             << "'" << getPositionsAttrName() << "' " << positions.getInt()
             << " is on argument " << argIndex << " of type " << type
             << ", not a cache [B, kv_heads, W, head_dim] of W <= "
             << positions.getInt() << " rows";
    return success();
  }
  if (attr.getName() == getStackAttrName()) {
    auto stack = dyn_cast<DictionaryAttr>(attr.getValue());
    auto dim = stack ? stack.getAs<IntegerAttr>("dim") : IntegerAttr();
    auto parts = stack ? stack.getAs<ArrayAttr>("parts") : ArrayAttr();
    if (!dim || !parts || parts.size() < 2)
      return op->emitError()
             << "'" << getStackAttrName()
             << "' must be {dim = D, parts = [...]} of two parts or more, on "
                "argument "
             << argIndex;
    int64_t total = 0;
    for (Attribute part : parts) {
      auto dict = dyn_cast<DictionaryAttr>(part);
      auto size = dict ? dict.getAs<IntegerAttr>("size") : IntegerAttr();
      if (!size || size.getInt() < 1 ||
          !isa_and_nonnull<StringAttr>(dict.get(getNameAttrName())))
        return op->emitError()
               << "'" << getStackAttrName() << "' on argument " << argIndex
               << ": each part needs a positive 'size' and a '"
               << getNameAttrName() << "'";
      total += size.getInt();
    }
    ShapedType type = rankedArgumentType(op, regionIndex, argIndex);
    if (type && (dim.getInt() < 0 || dim.getInt() >= type.getRank() ||
                 type.getDimSize(dim.getInt()) != total))
      return op->emitError()
             << "'" << getStackAttrName() << "' stacks " << total
             << " along dimension " << dim.getInt() << " of argument "
             << argIndex << " of type " << type;
    return success();
  }
  if (attr.getName() != getShardAttrName())
    return op->emitError() << "unknown tp argument attribute '"
                           << attr.getName().getValue() << "'";
  auto shard = dyn_cast<ShardAttr>(attr.getValue());
  if (!shard)
    return op->emitError() << "'" << getShardAttrName()
                           << "' must be a #tp.shard, on argument " << argIndex;
  ShapedType type = rankedArgumentType(op, regionIndex, argIndex);
  if (!type)
    return success();
  if (shard.getDim() >= type.getRank())
    return op->emitError() << "argument " << argIndex << " has no dimension "
                           << shard.getDim() << " to split";
  // The argument holds the local shard: its part of each block.
  int64_t local = type.getDimSize(shard.getDim());
  if (!ShapedType::isDynamic(local) && local % shard.getOuter() != 0)
    return op->emitError() << "argument " << argIndex << " holds " << local
                           << " of dimension " << shard.getDim()
                           << ", which is not a part of each of "
                           << shard.getOuter() << " blocks";
  return success();
}

LogicalResult TPDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  if (attr.getName() == getManifestAttrName()) {
    if (!isa<ModuleOp>(op) || !isa<StringAttr>(attr.getValue()))
      return op->emitError() << "'" << getManifestAttrName()
                             << "' must be a string on a module";
    return success();
  }
  if (attr.getName() == getEosTokenIdsAttrName()) {
    auto ids = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!isa<ModuleOp>(op) || !ids || ids.empty() ||
        llvm::any_of(ids.asArrayRef(), [](int64_t id) { return id < 0; }))
      return op->emitError() << "'" << getEosTokenIdsAttrName()
                             << "' must be an array<i64> of token ids (>= 0) "
                                "on a module";
    return success();
  }
  if (attr.getName() != getSizeAttrName())
    return op->emitError() << "unknown tp attribute '"
                           << attr.getName().getValue() << "'";
  auto size = dyn_cast<IntegerAttr>(attr.getValue());
  if (!isa<ModuleOp>(op) || !size || size.getInt() < 1)
    return op->emitError() << "'" << getSizeAttrName()
                           << "' must be a positive integer on a module";
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The group size a gather or scatter implies: the ratio of the larger to
/// the smaller extent along `dim`. Checks everything else matches.
static LogicalResult verifyResize(Operation *op, RankedTensorType small,
                                  RankedTensorType large, int64_t dim) {
  if (small.getElementType() != large.getElementType())
    return op->emitOpError("operand and result element types differ");
  if (small.getRank() != large.getRank())
    return op->emitOpError("operand and result ranks differ");
  if (dim < 0 || dim >= small.getRank())
    return op->emitOpError("dim ")
           << dim << " out of range for rank " << small.getRank();
  for (int64_t i = 0, e = small.getRank(); i < e; ++i) {
    if (i == dim)
      continue;
    if (small.getDimSize(i) != large.getDimSize(i))
      return op->emitOpError("dimension ")
             << i << " differs (" << small.getDimSize(i) << " vs "
             << large.getDimSize(i) << ") but only dim " << dim
             << " may change";
  }
  int64_t s = small.getDimSize(dim), l = large.getDimSize(dim);
  if (ShapedType::isDynamic(s) || ShapedType::isDynamic(l))
    return success();
  if (s == 0 || l % s != 0)
    return op->emitOpError("extent ")
           << l << " along dim " << dim << " is not a multiple of " << s;
  auto module = op->getParentOfType<ModuleOp>();
  auto size =
      module ? module->getAttrOfType<IntegerAttr>(TPDialect::getSizeAttrName())
             : IntegerAttr();
  if (size && l / s != size.getInt())
    return op->emitOpError("implies a group of ")
           << l / s << " ranks (" << s << " -> " << l << " along dim " << dim
           << ") but the module is for tp.size = " << size.getInt();
  return success();
}

LogicalResult AllGatherOp::verify() {
  return verifyResize(*this, getInput().getType(), getResult().getType(),
                      getDim());
}

LogicalResult ReduceScatterOp::verify() {
  return verifyResize(*this, getResult().getType(), getInput().getType(),
                      getDim());
}

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

// Syntax: `replicated` | `partial` |
//         `split dim = D, factors = [f0, ...], factor = I`
Attribute ShardAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return {};
  std::optional<ShardKind> kind = symbolizeShardKind(keyword);
  if (!kind) {
    parser.emitError(loc, "expected 'replicated', 'split' or 'partial'");
    return {};
  }
  int64_t dim = -1, factor = -1;
  SmallVector<int64_t> factors;
  if (*kind == ShardKind::Split) {
    if (parser.parseKeyword("dim") || parser.parseEqual() ||
        parser.parseInteger(dim) || parser.parseComma() ||
        parser.parseKeyword("factors") || parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
          return parser.parseInteger(factors.emplace_back());
        }) ||
        parser.parseComma() || parser.parseKeyword("factor") ||
        parser.parseEqual() || parser.parseInteger(factor))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardAttr>(parser.getContext(), *kind, dim, factors,
                                      factor);
}

void ShardAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyShardKind(getKind());
  if (isSplit()) {
    printer << " dim = " << getDim() << ", factors = [";
    llvm::interleaveComma(getFactors(), printer);
    printer << "], factor = " << getFactor();
  }
  printer << ">";
}

LogicalResult ShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                ShardKind kind, int64_t dim,
                                ArrayRef<int64_t> factors, int64_t factor) {
  if (kind != ShardKind::Split) {
    if (dim != -1 || !factors.empty() || factor != -1)
      return emitError() << "only a split shard has a dimension and factors";
    return success();
  }
  if (dim < 0)
    return emitError() << "split dimension must be non-negative, got " << dim;
  if (factors.empty())
    return emitError() << "split needs at least one factor";
  if (llvm::any_of(factors, [](int64_t f) { return f < 1; }))
    return emitError() << "factors must be positive";
  if (factor < 0 || factor >= static_cast<int64_t>(factors.size()))
    return emitError() << "split factor index " << factor
                       << " out of range for " << factors.size() << " factors";
  return success();
}

int64_t ShardAttr::getOuter() const {
  int64_t outer = 1;
  for (int64_t f : getFactors().take_front(getFactor()))
    outer *= f;
  return outer;
}

FailureOr<SmallVector<int64_t>>
ShardAttr::getLocalShape(ArrayRef<int64_t> shape, int64_t numRanks) const {
  SmallVector<int64_t> local(shape);
  if (!isSplit())
    return local;
  if (getDim() >= static_cast<int64_t>(shape.size()))
    return failure();
  int64_t product = 1;
  for (int64_t f : getFactors())
    product *= f;
  if (product != shape[getDim()] || getFactors()[getFactor()] % numRanks != 0)
    return failure();
  local[getDim()] /= numRanks;
  return local;
}

//===----------------------------------------------------------------------===//
// Attribute verification on functions and modules
//===----------------------------------------------------------------------===//

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
  if (attr.getName() != getShardAttrName())
    return op->emitError() << "unknown tp argument attribute '"
                           << attr.getName().getValue() << "'";
  auto shard = dyn_cast<ShardAttr>(attr.getValue());
  if (!shard)
    return op->emitError() << "'" << getShardAttrName()
                           << "' must be a #tp.shard, on argument " << argIndex;
  if (!shard.isSplit())
    return success();
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || regionIndex != 0)
    return success();
  // After lowering the argument may be a memref or an LLVM descriptor; the
  // checks apply while it is still shaped.
  auto type = dyn_cast<ShapedType>(fn.getArgumentTypes()[argIndex]);
  if (!type || !type.hasRank())
    return success();
  if (shard.getDim() >= type.getRank())
    return op->emitError() << "argument " << argIndex
                           << " has no dimension " << shard.getDim()
                           << " to split";
  // The argument holds the local shard; the factors describe the full dim.
  auto module = op->getParentOfType<ModuleOp>();
  auto size = module ? module->getAttrOfType<IntegerAttr>(getSizeAttrName())
                     : IntegerAttr();
  if (!size)
    return success();
  int64_t full = 1;
  for (int64_t f : shard.getFactors())
    full *= f;
  int64_t local = type.getDimSize(shard.getDim());
  if (!ShapedType::isDynamic(local) && local * size.getInt() != full)
    return op->emitError() << "argument " << argIndex << " holds " << local
                           << " of dimension " << shard.getDim()
                           << ", but the full extent " << full << " over "
                           << size.getInt() << " ranks gives "
                           << full / size.getInt();
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
  if (attr.getName() != getSizeAttrName())
    return op->emitError() << "unknown tp attribute '" << attr.getName().getValue() << "'";
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
  auto size = module ? module->getAttrOfType<IntegerAttr>(
                           TPDialect::getSizeAttrName())
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

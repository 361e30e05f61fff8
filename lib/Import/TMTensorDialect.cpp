//===- TMTensorDialect.cpp - torch-mlir's TMTensor ops --------------------===//
//
// The verifiers check what torch-mlir's do (the batch, head and sequence
// dimensions the attention's operands share; the scan's shapes and region)
// and, since the decompositions rely on them, the ranks, element types and
// the outputs' shapes too.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/TMTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tp::tm_tensor;

#include "tp/Import/TMTensorOpsDialect.cpp.inc"

#define GET_OP_CLASSES
#include "tp/Import/TMTensorOps.cpp.inc"

void TMTensorDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tp/Import/TMTensorOps.cpp.inc"
      >();
}

LogicalResult AttentionOp::verify() {
  if (getInputs().size() != 3 && getInputs().size() != 4)
    return emitOpError("takes query, key, value and an optional mask, got ")
           << getInputs().size() << " inputs";
  if (getOutputs().size() != 1)
    return emitOpError("writes one output, got ") << getOutputs().size();
  auto query = cast<ShapedType>(getInputs()[0].getType());
  auto key = cast<ShapedType>(getInputs()[1].getType());
  auto value = cast<ShapedType>(getInputs()[2].getType());
  auto output = cast<ShapedType>(getOutputs()[0].getType());
  if (!getResult().empty() &&
      (getResult().size() != 1 || getResult()[0].getType() != output))
    return emitOpError("result must have the output's type ") << output;

  struct Named {
    StringRef name;
    ShapedType type;
  };
  SmallVector<Named> operands = {
      {"query", query}, {"key", key}, {"value", value}, {"output", output}};
  if (getInputs().size() == 4)
    operands.push_back({"mask", cast<ShapedType>(getInputs()[3].getType())});
  for (const Named &operand : operands) {
    if (!operand.type.hasRank() || operand.type.getRank() < 2 ||
        operand.type.getRank() != query.getRank())
      return emitOpError("operands must be ranked, of one rank, at least 2: ")
             << operand.name << " is " << operand.type;
    Type element = operand.type.getElementType();
    bool boolMask = operand.name == "mask" && element.isInteger(1);
    if (!boolMask && element != query.getElementType())
      return emitOpError() << operand.name << " must hold "
                           << query.getElementType()
                           << (operand.name == "mask" ? " or i1" : "")
                           << ", as the query does, got " << element;
  }
  if (!isa<FloatType>(query.getElementType()))
    return emitOpError("query must hold floats, got ")
           << query.getElementType();

  // The dimensions the operands share, each static size of one the same:
  // query [B..., M, K1], key [B..., K2, K1], value [B..., K2, N], output
  // [B..., M, N], mask [B..., M, K2].
  struct Use {
    size_t operand;
    int64_t dim;
  };
  auto agree = [&](const Twine &what, ArrayRef<Use> uses) -> LogicalResult {
    std::optional<Use> first;
    for (Use use : uses) {
      if (use.operand >= operands.size())
        continue; // no mask
      const Named &at = operands[use.operand];
      int64_t size = at.type.getDimSize(use.dim);
      if (ShapedType::isDynamic(size))
        continue;
      if (!first) {
        first = use;
        continue;
      }
      const Named &seen = operands[first->operand];
      int64_t seenSize = seen.type.getDimSize(first->dim);
      if (size != seenSize)
        return emitOpError()
               << "the " << what << " is " << seenSize << " in the "
               << seen.name << " " << seen.type << " but " << size << " in the "
               << at.name << " " << at.type;
    }
    return success();
  };
  int64_t rank = query.getRank();
  for (int64_t i = 0; i < rank - 2; ++i)
    if (failed(agree("batch dimension " + Twine(i),
                     {{0, i}, {1, i}, {2, i}, {3, i}, {4, i}})))
      return failure();
  int64_t rows = rank - 2, cols = rank - 1;
  return success(
      succeeded(agree("query length", {{0, rows}, {3, rows}, {4, rows}})) &&
      succeeded(agree("head dimension", {{0, cols}, {1, cols}})) &&
      succeeded(agree("key length", {{1, rows}, {2, rows}, {4, cols}})) &&
      succeeded(agree("value width", {{2, cols}, {3, cols}})));
}

LogicalResult ScanOp::verify() {
  if (getInputs().size() != 1 || getOutputs().size() != 2)
    return emitOpError("takes one input and two outputs (output, "
                       "accumulator), got ")
           << getInputs().size() << " and " << getOutputs().size();
  auto input = dyn_cast<RankedTensorType>(getInputs()[0].getType());
  auto output = dyn_cast<RankedTensorType>(getOutputs()[0].getType());
  auto accumulator = dyn_cast<RankedTensorType>(getOutputs()[1].getType());
  if (!input || !output || !accumulator)
    return emitOpError("operands must be ranked tensors");
  int64_t dim = getDimension();
  if (dim < 0 || dim >= input.getRank())
    return emitOpError("dimension ")
           << dim << " is outside the input " << input;
  // torch-mlir's verifier lets a dynamic size stand for a static one.
  if (output.getElementType() != input.getElementType() ||
      failed(verifyCompatibleShape(output.getShape(), input.getShape())))
    return emitOpError("output ")
           << output << " must be of the input's shape and type " << input;
  SmallVector<int64_t> rest(input.getShape());
  rest.erase(rest.begin() + dim);
  if (accumulator.getElementType() != input.getElementType() ||
      failed(verifyCompatibleShape(accumulator.getShape(), rest)))
    return emitOpError("accumulator ") << accumulator << " must be the input "
                                       << input << " without dimension " << dim;
  if (!getResults().empty() &&
      (getResults().size() != 2 || getResults()[0].getType() != output ||
       getResults()[1].getType() != accumulator))
    return emitOpError("results must have the outputs' types");
  return success();
}

/// A scatter, sort or topk on tensors returns its outputs, updated.
static LogicalResult verifyResultsAreOutputs(Operation *op,
                                             ValueRange outputs) {
  if (op->getResultTypes() != TypeRange(outputs.getTypes()))
    return op->emitOpError("results must have the outputs' types");
  return success();
}

/// The region of a scan, scatter, sort or topk: takes `arguments`, yields
/// one `yielded`.
static LogicalResult verifyRegion(Operation *op, Region &region,
                                  TypeRange arguments, Type yielded) {
  Block &body = region.front();
  if (TypeRange(body.getArgumentTypes()) != arguments) {
    InFlightDiagnostic diag = op->emitOpError("region must take (");
    llvm::interleaveComma(arguments, diag);
    return diag << ")";
  }
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield || yield.getOperands().size() != 1 ||
      yield.getOperands()[0].getType() != yielded)
    return op->emitOpError("region must yield one ") << yielded;
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  Type element = cast<ShapedType>(getInputs()[0].getType()).getElementType();
  return verifyRegion(*this, getRegion(), {element, element}, element);
}

LogicalResult ScatterOp::verify() {
  if (getInputs().size() != 2 || getOutputs().size() != 1)
    return emitOpError("takes two inputs (updates, indices) and one output "
                       "(original), got ")
           << getInputs().size() << " and " << getOutputs().size();
  auto updates = dyn_cast<RankedTensorType>(getInputs()[0].getType());
  auto indices = dyn_cast<RankedTensorType>(getInputs()[1].getType());
  auto original = dyn_cast<RankedTensorType>(getOutputs()[0].getType());
  if (!updates || !indices || !original)
    return emitOpError("operands must be ranked tensors");
  if (indices.getRank() != 2 || !indices.getElementType().isSignlessInteger() ||
      indices.isDynamicDim(1))
    return emitOpError("indices must be [N, depth] integers with a static "
                       "depth, got ")
           << indices;
  int64_t depth = indices.getDimSize(1);
  ArrayRef<int64_t> dimensionMap = getDimensionMap();
  if (static_cast<int64_t>(dimensionMap.size()) != depth)
    return emitOpError("dimension_map has ")
           << dimensionMap.size() << " entries for indices of depth " << depth;
  if (updates.getRank() < 1 ||
      failed(verifyCompatibleShape({updates.getDimSize(0)},
                                   {indices.getDimSize(0)})))
    return emitOpError("updates ")
           << updates << " must have the indices' first dimension " << indices;
  if (updates.getElementType() != original.getElementType())
    return emitOpError("updates ")
           << updates << " must have the original's element type " << original;
  // The slice of an update covers the original's last dimensions; the
  // indices must place it in each of the others.
  int64_t sliceRank = updates.getRank() - 1;
  if (sliceRank > original.getRank())
    return emitOpError("an update's slice has more dimensions than the "
                       "original ")
           << original;
  llvm::SmallDenseSet<int64_t> mapped;
  for (int64_t dim : dimensionMap)
    if (dim < 0 || dim >= original.getRank() || !mapped.insert(dim).second)
      return emitOpError("dimension_map entry ")
             << dim << " is outside the original " << original
             << " or repeated";
  for (int64_t dim = 0; dim < original.getRank() - sliceRank; ++dim)
    if (!mapped.contains(dim))
      return emitOpError("dimension ")
             << dim << " of the original " << original
             << " is neither indexed nor covered by an update's slice";
  return verifyResultsAreOutputs(*this, getOutputs());
}

LogicalResult ScatterOp::verifyRegions() {
  Type element = cast<ShapedType>(getOutputs()[0].getType()).getElementType();
  return verifyRegion(*this, getRegion(), {element, element}, element);
}

LogicalResult SortOp::verify() {
  if (!getInputs().empty() || getOutputs().empty())
    return emitOpError("sorts its outputs: takes no inputs and at least one "
                       "output, got ")
           << getInputs().size() << " and " << getOutputs().size();
  auto first = dyn_cast<RankedTensorType>(getOutputs()[0].getType());
  for (Value output : getOutputs()) {
    auto type = dyn_cast<RankedTensorType>(output.getType());
    if (!type || !first || type.getShape() != first.getShape())
      return emitOpError("outputs must be ranked tensors of one shape, got ")
             << output.getType();
  }
  int64_t dim = getDimension();
  if (dim < 0 || dim >= first.getRank())
    return emitOpError("dimension ")
           << dim << " is outside the outputs' " << first;
  return verifyResultsAreOutputs(*this, getOutputs());
}

LogicalResult SortOp::verifyRegions() {
  SmallVector<Type> pairs;
  for (Value output : getOutputs())
    pairs.append(2, cast<ShapedType>(output.getType()).getElementType());
  return verifyRegion(*this, getRegion(), pairs,
                      IntegerType::get(getContext(), 1));
}

LogicalResult TopkOp::verify() {
  if ((getInputs().size() != 1 && getInputs().size() != 2) ||
      getOutputs().size() != 2)
    return emitOpError("takes values and optional indices, and two outputs "
                       "(values, indices), got ")
           << getInputs().size() << " and " << getOutputs().size();
  auto values = dyn_cast<RankedTensorType>(getInputs()[0].getType());
  auto outValues = dyn_cast<RankedTensorType>(getOutputs()[0].getType());
  auto outIndices = dyn_cast<RankedTensorType>(getOutputs()[1].getType());
  if (!values || !outValues || !outIndices)
    return emitOpError("operands must be ranked tensors");
  int64_t dim = getDimension();
  if (dim < 0 || dim >= values.getRank())
    return emitOpError("dimension ")
           << dim << " is outside the values " << values;
  if (outValues.getElementType() != values.getElementType())
    return emitOpError("output values ")
           << outValues << " must have the values' element type " << values;
  // torch-mlir's loops write the position along the dimension as an i32.
  if (!outIndices.getElementType().isInteger(32) ||
      outIndices.getShape() != outValues.getShape())
    return emitOpError("output indices ")
           << outIndices << " must be i32 of the output values' shape "
           << outValues;
  if (getInputs().size() == 2) {
    auto indices = dyn_cast<RankedTensorType>(getInputs()[1].getType());
    if (!indices || !indices.getElementType().isInteger(32) ||
        failed(verifyCompatibleShape(indices.getShape(), values.getShape())))
      return emitOpError("indices ")
             << getInputs()[1].getType() << " must be i32 of the values' shape "
             << values;
  }
  SmallVector<int64_t> shape(values.getShape());
  shape[dim] = outValues.getRank() == values.getRank()
                   ? outValues.getDimSize(dim)
                   : ShapedType::kDynamic;
  if (failed(verifyCompatibleShape(outValues.getShape(), shape)))
    return emitOpError("output values ")
           << outValues << " must have the values' shape " << values
           << " but along dimension " << dim;
  return verifyResultsAreOutputs(*this, getOutputs());
}

LogicalResult TopkOp::verifyRegions() {
  Type element = cast<ShapedType>(getInputs()[0].getType()).getElementType();
  return verifyRegion(*this, getRegion(), {element, element},
                      IntegerType::get(getContext(), 1));
}

//===- TMTensorDialect.cpp - torch-mlir's attention op --------------------===//
//
// The verifier checks what torch-mlir's does (the batch, head and sequence
// dimensions the operands share) and, since the decomposition relies on
// them, the ranks, element types and the output's shape too.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/TMTensorDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"

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

static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
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
        (query.hasRank() && operand.type.getRank() != query.getRank()))
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

  // [B..., M, K1], [B..., K2, K1], [B..., K2, N], [B..., M, N], [B..., M, K2]
  int64_t rank = query.getRank();
  int64_t m = query.getDimSize(rank - 2), k1 = query.getDimSize(rank - 1);
  int64_t k2 = key.getDimSize(rank - 2), n = value.getDimSize(rank - 1);
  auto expect = [&](const Named &operand, int64_t rows, int64_t cols,
                    StringRef what) -> LogicalResult {
    ArrayRef<int64_t> shape = operand.type.getShape();
    for (int64_t i = 0; i < rank - 2; ++i)
      if (!compatible(shape[i], query.getDimSize(i)))
        return emitOpError() << operand.name << " and query differ in batch "
                             << "dimension " << i << ": " << operand.type
                             << " against " << query;
    if (!compatible(shape[rank - 2], rows) ||
        !compatible(shape[rank - 1], cols))
      return emitOpError() << operand.name << " " << operand.type
                           << " must end in " << what;
    return success();
  };
  if (failed(expect(operands[1], k2, k1,
                    "[length, the query's head dimension]")) ||
      failed(expect(operands[2], k2, n, "[the key's length, width]")) ||
      failed(
          expect(operands[3], m, n, "[the query's length, the value's width]")))
    return failure();
  if (operands.size() == 5 &&
      failed(
          expect(operands[4], m, k2, "[the query's length, the key's length]")))
    return failure();
  return success();
}

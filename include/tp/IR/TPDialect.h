//===- TPDialect.h - tensor-parallel dialect --------------------*- C++ -*-===//
//
// The `tp` dialect: the `#tp.shard` attribute and the collectives.
//
//===----------------------------------------------------------------------===//

#ifndef TP_IR_TPDIALECT_H
#define TP_IR_TPDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tp/IR/TPEnums.h.inc"

#include "tp/IR/TPOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tp/IR/TPAttrs.h.inc"

#define GET_OP_CLASSES
#include "tp/IR/TPOps.h.inc"

#endif // TP_IR_TPDIALECT_H

//===- TMTensorDialect.h - torch-mlir's TMTensor ops -----------*- C++ -*-===//
//
// torch-mlir's TMTensor ops (attention, scan, scatter, sort, topk), declared
// as torch-mlir declares them, so that tp-import reads torch-mlir's
// linalg-on-tensors output (TMTensorOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef TP_IMPORT_TMTENSORDIALECT_H
#define TP_IMPORT_TMTENSORDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tp/Import/TMTensorOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "tp/Import/TMTensorOps.h.inc"

#endif // TP_IMPORT_TMTENSORDIALECT_H

//===- Passes.h - importing graphs of other front-ends ----------*- C++ -*-===//

#ifndef TP_IMPORT_PASSES_H
#define TP_IMPORT_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Import/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Import/Passes.h.inc"

/// What tp-import does with the weights a graph gives as constants.
struct ImportOptions : public PassPipelineOptions<ImportOptions> {
  Option<std::string> weights{
      *this, "weights",
      llvm::cl::desc("the safetensors checkpoint to write the values of the "
                     "weights given as constants to; without it they become "
                     "arguments with their shapes only")};
  Option<bool> keepWeightValues{
      *this, "keep-weight-values",
      llvm::cl::desc("leave the weights whose values the module holds as "
                     "constants; only elided ones become arguments"),
      llvm::cl::init(false)};
  Option<bool> tosa{
      *this, "tosa",
      llvm::cl::desc("run the TOSA conversions; false leaves them out for a "
                     "module without TOSA ops, where each would only walk it"),
      llvm::cl::init(true)};
};

/// Whether `op` holds an op of the TOSA dialect: what the TOSA conversions
/// of buildImportPipeline work on.
bool containsTosa(Operation *op);

/// Brings a graph from another front-end to what tp-shard takes (func,
/// arith, math, tensor, linalg on f32, its weights as arguments): the
/// upstream shard annotations and the front-end's timing calls are
/// stripped, calls inlined, the private symbols nothing uses dropped
/// (symbol-dce), torch-mlir's attention decomposed, a half-precision graph
/// widened to f32, the weight constants made arguments
/// (tp-externalize-weights), TOSA converted with the upstream
/// TOSA-to-linalg, -arith and -tensor passes and the shapes TOSA leaves
/// behind dropped, each section of a sliced projection computed from its
/// rows of the weight, and the weights read as slices of one argument made
/// arguments of their own (tp-unpack-weights).
void buildImportPipeline(OpPassManager &pm,
                         const ImportOptions &options = ImportOptions());

/// Registers buildImportPipeline as `tp-import`.
void registerImportPipeline();

} // namespace mlir::tp

#endif // TP_IMPORT_PASSES_H

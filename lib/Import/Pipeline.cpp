//===- Pipeline.cpp - the tp-import pipeline ------------------------------===//

#include "tp/Import/Passes.h"
#include "tp/Transforms/Passes.h"

#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::tp::buildImportPipeline(OpPassManager &pm,
                                   const ImportOptions &options) {
  pm.addPass(createTPStripShardAnnotations());
  // Timing calls buddy-mlir puts around each operator: the compiled model
  // would need its runtime wherever it is loaded.
  pm.addPass(createTPStripInstrumentation());
  // tp-shard does not cut across calls (a called function keeps its
  // signature): layers written as calls of one function are inlined, with
  // no simplification beside it, which would rewrite the rest of the graph.
  pm.addPass(createInlinerPass(llvm::StringMap<OpPassManager>(),
                               [](OpPassManager &) {}));
  // Parameters held in immutable globals are constants like the others.
  pm.addPass(createTPFoldConstantGlobals());
  // Private symbols nothing uses: the functions inlined above, and the
  // `ml_program.global @global_seed` of torch-mlir's TorchScript modules,
  // which no op of an inference graph reads, and the globals folded above.
  pm.addPass(createSymbolDCEPass());
  // torch-mlir writes attention as one tm_tensor.attention.
  pm.addPass(createTPDecomposeTMAttention());
  // It writes cumsum as a tm_tensor.scan.
  pm.addPass(createTPDecomposeTMScan());
  // And index_put (a KV cache's update), sort and topk (a router) as
  // tm_tensor ops that its own lowering makes loops of.
  pm.addPass(createTPTMTensorToLoops());
  // The runtime computes in f32. Before the weights become arguments, so
  // that they are f32 weights, values included.
  pm.addPass(createTPWidenFloats());
  // Weights carved out of one flat parameter argument (buddy-mlir's
  // runtime layout) become arguments, which tp-shard can cut.
  pm.addPass(createTPUnpackWeights());
  // tp-shard cuts weight arguments only; front-ends give weights as
  // constants (dense_resource, or splats in stripped models). Before the
  // TOSA conversions: their pattern drivers merge equal constants, and two
  // elided resources, or two weights stripped to the same splat, are equal
  // constants but different weights.
  TPExternalizeWeightsOptions weights;
  weights.file = options.weights;
  weights.keepValues = options.keepWeightValues;
  pm.addPass(createTPExternalizeWeights(weights));
  if (options.tosa) {
    OpPassManager &func = pm.nest<func::FuncOp>();
    // The passes of upstream's tosa-to-linalg-pipeline without its
    // tosa-validate, which rejects the i64 tosa.cast front-ends emit for
    // token ids and masks.
    func.addPass(tosa::createTosaOptionalDecompositionsPass());
    func.addPass(tosa::createTosaInferShapesPass());
    func.addPass(tosa::createTosaToLinalgNamed());
    func.addPass(tosa::createTosaToLinalg());
    func.addPass(createTosaToArithPass());
    func.addPass(createTosaToTensorPass());
    func.addPass(createTPDropDeadTosaShapes());
  }
  // On linalg, the weights arguments: a fused projection sliced into
  // sections computes each from its rows of the weight, a weight of its
  // own.
  pm.addPass(createTPSplitFusedProjections());
}

bool mlir::tp::containsTosa(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return isa_and_nonnull<tosa::TosaDialect>(nested->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

void mlir::tp::registerImportPipeline() {
  PassPipelineRegistration<ImportOptions>(
      "tp-import",
      "Bring a graph from another front-end (TOSA, upstream shard "
      "annotations, weights as constants) to the func, arith, math, tensor "
      "and linalg that tp-shard takes, its weights arguments",
      [](OpPassManager &pm, const ImportOptions &options) {
        buildImportPipeline(pm, options);
      });
}

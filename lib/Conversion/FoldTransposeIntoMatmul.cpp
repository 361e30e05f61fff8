//===- FoldTransposeIntoMatmul.cpp - GEMMs read transposed operands -------===//
//
// matmul(transpose(w), x) -> matmul(w, x) with w's map results swapped, for
// the swaps of the last two dimensions the runtime's GEMM takes as a
// transpose flag (tp-linalg-to-runtime). The transpose is a linalg.transpose
// or a copy generic that permutes (torch-mlir's TorchScript path).
//
//===----------------------------------------------------------------------===//

#include "CopyGenerics.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFOLDTRANSPOSEINTOMATMUL
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

template <typename GemmOp> struct FoldTranspose : OpRewritePattern<GemmOp> {
  using OpRewritePattern<GemmOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool folded = false;
    for (unsigned i = 0; i < 2; ++i) {
      Value source = tp::getSwappedSource(inputs[i]);
      if (!source)
        continue;
      SmallVector<AffineExpr> results(maps[i].getResults());
      std::swap(results[results.size() - 2], results.back());
      maps[i] =
          AffineMap::get(maps[i].getNumDims(), 0, results, op.getContext());
      inputs[i] = source;
      folded = true;
    }
    if (!folded)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperands(0, 2, inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct TPFoldTransposeIntoMatmulPass
    : tp::impl::TPFoldTransposeIntoMatmulBase<TPFoldTransposeIntoMatmulPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTranspose<linalg::MatmulOp>,
                 FoldTranspose<linalg::BatchMatmulOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

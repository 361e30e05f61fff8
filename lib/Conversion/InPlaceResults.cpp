//===- InPlaceResults.cpp - results a model updates in its arguments ------===//
//
// A generating model returns its KV caches: the argument with this step's
// rows inserted. One-shot bufferization writes those rows into the
// argument's buffer and returns that buffer; as an out-parameter the result
// would then be copied whole, every step, into a buffer of the caller's:
// bytes that grow with the cache length. The result is dropped instead, and
// the manifest says which argument holds it after the call.
//
//===----------------------------------------------------------------------===//

#include "ManifestAttr.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/JSON.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPINPLACERESULTS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

/// The argument of `fn` that `value` is, through casts to its own type.
static BlockArgument returnedArgument(func::FuncOp fn, Value value) {
  Type type = value.getType();
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner()->getParentOp() != fn || arg.getType() != type)
    return nullptr;
  return arg;
}

/// Drops the results of `fn` that are one of its arguments' buffers and
/// records `"in_place": <argument>` on them in `function` (its manifest
/// entry).
static LogicalResult dropInPlaceResults(func::FuncOp fn,
                                        llvm::json::Object &function) {
  llvm::json::Array *results = function.getArray("results");
  if (!fn.getBody().hasOneBlock() || !results ||
      results->size() != fn.getNumResults())
    return fn.emitError("does not match its manifest entry (run "
                        "tp-model-manifest before the lowering)");
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  llvm::BitVector dropped(fn.getNumResults());
  for (auto [j, value] : llvm::enumerate(ret.getOperands())) {
    BlockArgument arg = returnedArgument(fn, value);
    if (!arg)
      continue;
    (*(*results)[j].getAsObject())["in_place"] = int64_t(arg.getArgNumber());
    dropped.set(j);
  }
  ret->eraseOperands(dropped);
  return fn.eraseResults(dropped);
}

namespace {
struct TPInPlaceResultsPass
    : public tp::impl::TPInPlaceResultsBase<TPInPlaceResultsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<std::optional<llvm::json::Value>> manifest = readManifest(module);
    if (failed(manifest))
      return signalPassFailure();
    if (!*manifest)
      return;
    for (llvm::json::Value &entry : manifestFunctions(**manifest)) {
      llvm::json::Object *function = entry.getAsObject();
      std::optional<StringRef> name =
          function ? function->getString("name") : std::nullopt;
      auto fn = name ? module.lookupSymbol<func::FuncOp>(*name) : nullptr;
      if (!fn || fn.isExternal()) {
        module.emitError() << "the manifest's function "
                           << (name ? "@" + name->str() : "(unnamed)")
                           << " is not in the module";
        return signalPassFailure();
      }
      if (failed(dropInPlaceResults(fn, *function)))
        return signalPassFailure();
    }
    writeManifest(module, **manifest);
  }
};
} // namespace

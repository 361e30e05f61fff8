//===- FoldConstantGlobals.cpp - immutable globals read as constants ------===//
//
// Weights are found as constants (tp-externalize-weights); a parameter held
// in an immutable ml_program global is one under another name.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPFOLDCONSTANTGLOBALS
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct TPFoldConstantGlobalsPass
    : tp::impl::TPFoldConstantGlobalsBase<TPFoldConstantGlobalsPass> {
  void runOnOperation() override;
};

} // namespace

/// Replaces `load` of `global` by a constant of its value; fails at the
/// load when the global has none.
static LogicalResult fold(Operation *load, ml_program::GlobalOp global) {
  // An `#ml_program.extern` value is typed but has no elements.
  auto value = dyn_cast_or_null<ElementsAttr>(global.getValueAttr());
  if (!value || value.getType() != load->getResult(0).getType())
    return load->emitOpError("reads @")
           << global.getSymName()
           << ", an immutable global without a value of its type in the "
              "module: tp-mlir cannot give it one";
  OpBuilder b(load);
  Location loc = NameLoc::get(global.getSymNameAttr(), load->getLoc());
  Value constant = arith::ConstantOp::create(b, loc, cast<TypedAttr>(value));
  load->getResult(0).replaceAllUsesWith(constant);
  load->erase();
  return success();
}

void TPFoldConstantGlobalsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTableCollection symbols;
  SmallVector<std::pair<Operation *, ml_program::GlobalOp>> loads;
  module.walk([&](Operation *op) {
    SymbolRefAttr name;
    if (auto load = dyn_cast<ml_program::GlobalLoadConstOp>(op))
      name = load.getGlobalAttr();
    else if (auto load = dyn_cast<ml_program::GlobalLoadOp>(op))
      name = load.getGlobalAttr();
    if (!name)
      return;
    auto global =
        symbols.lookupNearestSymbolFrom<ml_program::GlobalOp>(op, name);
    if (global && !global.getIsMutable())
      loads.emplace_back(op, global);
  });
  for (auto [load, global] : loads)
    if (failed(fold(load, global)))
      return signalPassFailure();
}

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
#include "mlir/Interfaces/FunctionInterfaces.h"

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

/// The constants made so far: one per global and function, at the start of
/// the function in the order of their first loads.
struct Made {
  DenseMap<std::pair<Operation *, Operation *>, Value> constants;
  DenseMap<Operation *, Operation *> lastInFunction;
};

} // namespace

/// The constant of `global`'s value in `func`, one per global and function:
/// a layer inlined N times loads a global N times, and splats of one value
/// would otherwise become N weights. Fails at `load` when the global has no
/// value a constant can hold.
static FailureOr<Value> constantOf(Operation *load, ml_program::GlobalOp global,
                                   FunctionOpInterface func, Made &made) {
  Value &constant = made.constants[{global, func}];
  if (constant)
    return constant;
  // An `#ml_program.extern` value is typed but not a constant's.
  auto value = dyn_cast_or_null<TypedAttr>(global.getValueAttr());
  Type type = load->getResult(0).getType();
  if (!value || value.getType() != type ||
      !arith::ConstantOp::isBuildableWith(value, type))
    return load->emitOpError("reads @")
           << global.getSymName()
           << ", an immutable global without a value of its type in the "
              "module: tp-mlir cannot give it one";
  Operation *&last = made.lastInFunction[func];
  OpBuilder b = last ? OpBuilder(last->getBlock(), ++last->getIterator())
                     : OpBuilder::atBlockBegin(&func.getFunctionBody().front());
  Location loc = NameLoc::get(global.getSymNameAttr(), load->getLoc());
  constant = arith::ConstantOp::create(b, loc, value);
  last = constant.getDefiningOp();
  return constant;
}

void TPFoldConstantGlobalsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTableCollection symbols;
  Made made;
  SmallVector<Operation *> folded;
  WalkResult walk = module.walk([&](Operation *op) {
    SymbolRefAttr name;
    if (auto load = dyn_cast<ml_program::GlobalLoadConstOp>(op))
      name = load.getGlobalAttr();
    else if (auto load = dyn_cast<ml_program::GlobalLoadOp>(op))
      name = load.getGlobalAttr();
    auto func = op->getParentOfType<FunctionOpInterface>();
    if (!name || !func)
      return WalkResult::advance();
    auto global =
        symbols.lookupNearestSymbolFrom<ml_program::GlobalOp>(op, name);
    if (!global || global.getIsMutable())
      return WalkResult::advance();
    FailureOr<Value> constant = constantOf(op, global, func, made);
    if (failed(constant))
      return WalkResult::interrupt();
    op->getResult(0).replaceAllUsesWith(*constant);
    folded.push_back(op);
    return WalkResult::advance();
  });
  for (Operation *op : folded)
    op->erase();
  if (walk.wasInterrupted())
    signalPassFailure();
}

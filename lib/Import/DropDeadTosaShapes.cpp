//===- DropDeadTosaShapes.cpp - erase shapes the TOSA conversion left -----===//
//
// The upstream TOSA conversions replace the ops that read a
// tosa.const_shape but not the shape itself, so the imported graph would
// still need the tosa dialect for ops with no effect.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPDROPDEADTOSASHAPES
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

struct TPDropDeadTosaShapesPass
    : tp::impl::TPDropDeadTosaShapesBase<TPDropDeadTosaShapesPass> {
  void runOnOperation() override {
    SmallVector<tosa::ConstShapeOp> shapes;
    getOperation()->walk(
        [&](tosa::ConstShapeOp shape) { shapes.push_back(shape); });
    bool failed = false;
    for (tosa::ConstShapeOp shape : shapes) {
      if (shape->use_empty()) {
        shape->erase();
        continue;
      }
      Operation *user = *shape->user_begin();
      user->emitOpError("was not converted from TOSA: it still reads a "
                        "tosa.const_shape")
              .attachNote(shape.getLoc())
          << "the shape";
      failed = true;
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace

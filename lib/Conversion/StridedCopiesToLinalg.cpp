//===- StridedCopiesToLinalg.cpp - strided copies as inline loops ---------===//
//
// A memref.copy between contiguous buffers lowers to a memcpy; any other
// becomes a call of libmlir_c_runner_utils's memrefCopy, which walks the
// layouts element by element through their descriptors. A decode step's
// KV cache writes are such copies (each layer's new keys and values, B x
// heads x d_head floats, into their position of the caches): with the
// memmoves memrefCopy made, 1.3 ms of a 21 ms GPT-2-small step at batch 8.
// As linalg.copy they become the loop lowering's loops, whose inner one
// LLVM vectorizes: 0.2 ms.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSTRIDEDCOPIESTOLINALG
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

/// Whether the LLVM lowering copies a buffer of `type` by a memcpy, as
/// upstream's MemRefCopyOpLowering decides (an identity layout, or a static
/// contiguous row-major view of at least one element).
static bool copiesByMemcpy(MemRefType type) {
  return type.getLayout().isIdentity() ||
         (type.hasStaticShape() && type.getNumElements() > 0 &&
          memref::isStaticShapeAndContiguousRowMajor(type));
}

namespace {
struct TPStridedCopiesToLinalgPass
    : public tp::impl::TPStridedCopiesToLinalgBase<
          TPStridedCopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      // Ranked views only: linalg.copy takes no unranked memref.
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (source && target &&
          !(copiesByMemcpy(source) && copiesByMemcpy(target)))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      linalg::CopyOp::create(builder, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy->erase();
    }
  }
};
} // namespace

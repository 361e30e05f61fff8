//===- WholeRows.h - slices the checkpoint loader reads as rows -*- C++ -*-===//
//
// tp.checkpoint_offset names whole rows of a checkpoint tensor: the slices
// that become weights of their own must take whole rows.
//
//===----------------------------------------------------------------------===//

#ifndef TP_IMPORT_WHOLEROWS_H
#define TP_IMPORT_WHOLEROWS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tp {

/// Whether `slice` takes whole rows of a static tensor, as a tensor of its
/// rank: a static offset and size in the first dimension, every other
/// dimension whole, unit strides.
inline bool takesWholeRows(tensor::ExtractSliceOp slice) {
  RankedTensorType source = slice.getSourceType();
  if (!source.hasStaticShape() || !slice.hasUnitStride() ||
      slice.getType().getRank() != source.getRank() ||
      ShapedType::isDynamic(slice.getStaticOffsets()[0]) ||
      ShapedType::isDynamic(slice.getStaticSizes()[0]))
    return false;
  for (int64_t d = 1, e = source.getRank(); d < e; ++d)
    if (slice.getStaticOffsets()[d] != 0 ||
        slice.getStaticSizes()[d] != source.getDimSize(d))
      return false;
  return true;
}

} // namespace mlir::tp

#endif // TP_IMPORT_WHOLEROWS_H

//===- WeightRows.h - weights read as rows of one argument ------*- C++ -*-===//
//
// tp-shard decides a cut per argument; a weight read as a slice of another
// argument (buddy-mlir's flat parameters, a fused projection's sections)
// has none of its own. Such a slice becomes an argument whose rows the
// loader reads from the one checkpoint tensor (tp.checkpoint_offset).
//
//===----------------------------------------------------------------------===//

#ifndef TP_IMPORT_WEIGHTROWS_H
#define TP_IMPORT_WEIGHTROWS_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {

/// `value` as an argument of a function's entry block, else null.
BlockArgument functionArgument(Value value);

/// Whether `slice` takes whole rows of a static tensor, as a tensor of its
/// rank: a static offset and size in the first dimension, every other
/// dimension whole, unit strides.
bool takesWholeRows(tensor::ExtractSliceOp slice);

/// The slices that read argument `arg` when only slices of whole rows do,
/// at least two, one size at each offset: in the order of their rows, then
/// in program order.
std::optional<SmallVector<tensor::ExtractSliceOp>> rowSlices(BlockArgument arg);

/// How many rows of its checkpoint tensor one row of argument `index` of
/// `func` is, when its rows can become arguments of their own: 1 for an
/// argument with no tp. attribute but tp.name; for rows of a checkpoint
/// tensor already (tp.checkpoint_offset), the ratio of their row sizes,
/// which must divide. None for an argument whose cut or checkpoint shape
/// (a padded table) its parts could not all keep.
std::optional<int64_t> rowScale(FunctionOpInterface func, unsigned index);

/// Replaces argument `index` of `func` by one argument per part `slices`
/// read, in its place, named after it (`arg<index>` when it has no name),
/// with the checkpoint tensor's shape and the part's first row in it
/// (`scale` rows of it per row of the argument: rowScale). A part takes the
/// shape every read of it reshapes it to, else the slice's. Returns how
/// many parts.
unsigned unpackRows(FunctionOpInterface func, unsigned index,
                    ArrayRef<tensor::ExtractSliceOp> slices, int64_t scale);

} // namespace mlir::tp

#endif // TP_IMPORT_WEIGHTROWS_H

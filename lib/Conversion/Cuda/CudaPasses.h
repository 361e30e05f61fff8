//===- CudaPasses.h - the cuda lowering's own passes ------------*- C++ -*-===//
//
// Internal to MLIRTPCudaLowering (CudaPipeline.cpp builds the pipeline).
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_CONVERSION_CUDA_CUDAPASSES_H
#define TP_LIB_CONVERSION_CUDA_CUDAPASSES_H

#include "tp/Conversion/CudaPipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tp {

// register<Pass>() for the passes of include/tp/Conversion/CudaPasses.td
// (CudaPipeline.h declares their create<Pass>()).
#define GEN_PASS_REGISTRATION
#include "tp/Conversion/CudaPasses.h.inc"

/// The buffer `v` views, through casts, subviews, reshapes and memref.view.
Value viewedBuffer(Value v);

/// Whether `op` may stand between kernel loops (or the linalg ops they come
/// from) and move aside: a static allocation, a deallocation, or an op that
/// neither reads nor writes memory and has no regions.
bool movesAsideOfKernels(Operation *op);

/// Folds partial results `in` of a reduction (one value, or an
/// argmax/argmin's value and index) into accumulators `acc` by `combiner`;
/// an index is taken where `better(in value, acc value)` holds and, with
/// `breakTies`, where the values are equal and its index is smaller (the
/// partials' order is not the elements'); without, as the loop does with
/// its init.
SmallVector<Value> mergeReduction(OpBuilder &b, Location loc,
                                  Operation *combiner,
                                  std::optional<arith::CmpFPredicate> better,
                                  ValueRange in, ValueRange acc,
                                  bool breakTies);

/// Marks the scf.parallel of a row kernel (tp-row-kernels).
inline constexpr llvm::StringLiteral kRowKernelAttrName = "tpcuda.row_kernel";

/// Whether `op` is a row kernel's loop over rows.
bool isRowKernel(Operation *op);

/// The gpu.all_reduce operation of a reduction's combiner, if it has one.
std::optional<gpu::AllReduceOperation> blockReductionOf(Operation *combiner);

/// The combiner and predicate of `op`'s body, if it is an argmax/argmin:
/// result 0 folds the element into accumulator 0 by maximumf or minimumf
/// (the combiner), result 1 is `select(cmpf better(element, acc0), index,
/// acc1)`, the accumulators read nowhere else and the index growing with
/// the position along reduction loop `dim` (plus a value defined outside
/// `op`): the first occurrence has the smallest index. (maxnumf's neutral
/// element, NaN, never compares better: a partial's index would be lost.)
std::optional<std::pair<Operation *, arith::CmpFPredicate>>
argExtremum(linalg::GenericOp op, unsigned dim);

/// Whether tp-row-kernels runs `op` (on tensors or buffers) as a reduction
/// of a row kernel: tp-split-reductions leaves it then.
bool takesRowKernel(linalg::LinalgOp op);

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_CUDA_CUDAPASSES_H

//===- ShardingAnalysis.h - find the column -> row cuts ---------*- C++ -*-===//
//
// The analysis half of `tp-shard`: which dimension of which value each rank
// holds a part of, and which collectives that costs. It reads only structure
// (indexing maps, iterator types, reassociations, slice offsets), never op or
// argument names. The rewrite (TPShard.cpp) applies its result.
//
//===----------------------------------------------------------------------===//

#ifndef TP_TRANSFORMS_SHARDINGANALYSIS_H
#define TP_TRANSFORMS_SHARDINGANALYSIS_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include <string>

namespace mlir::tp {

/// How one dimension of a value is cut: the dimension is read as `outer`
/// equal blocks, each split into tp-size contiguous parts. `outer` = 1 is a
/// plain contiguous cut; a fused QKV column [3*h*dh] cut between heads has
/// `outer` = 3. Two cuts hold the same elements iff they are equal.
struct DimCut {
  int64_t dim = -1;
  int64_t outer = 1;
  bool operator==(const DimCut &other) const {
    return dim == other.dim && outer == other.outer;
  }
  bool operator!=(const DimCut &other) const { return !(*this == other); }
};

/// A collective the plan needs.
struct PlannedCollective {
  enum class Kind { AllReduce, AllGather };
  Kind kind;
  /// AllReduce: the contraction whose result 0 holds partial sums.
  /// AllGather: the op that needs the full value of `use`.
  Operation *op = nullptr;
  OpOperand *use = nullptr;
  /// An all-reduce after a contraction over a cut weight dimension: the one
  /// collective a column -> row pair is meant to cost.
  bool narrowing = false;
  /// Bytes of the full tensor moved (what each rank receives).
  int64_t bytes = 0;
  /// Why a non-narrowing collective is needed.
  std::string reason;
};

/// One column -> row pair (or a group of them that share a cut, like the
/// Q, K and V projections that meet in attention).
struct ShardRegion {
  /// The contraction the cut was started from.
  Operation *seed = nullptr;
  /// Every value that holds a part of its full tensor, function arguments
  /// (the weights to shrink) included, in discovery order.
  llvm::MapVector<Value, DimCut> cuts;
  SmallVector<PlannedCollective> collectives;
};

struct ShardPlan {
  int64_t tpSize = 1;
  SmallVector<ShardRegion> regions;
};

/// Elements of a ranked tensor type, each dynamic dimension counted as 1
/// (sizes are then per unit of each dynamic dimension, a dynamic batch say).
int64_t staticElements(Type type);
/// Bytes of those elements: what a collective of the type moves.
int64_t tensorBytes(Type type);

/// Follows ops that only move or repeat elements (reshapes, transposes,
/// broadcasts, copy-like generics) back from `value` to where the elements
/// come from: a weight argument, say.
Value weightSource(Value value);

/// Finds the cuts of `func` for `tpSize` ranks. Emits a diagnostic at the
/// op concerned and fails when no cut keeps a pair free of extra
/// communication, unless `allowFallback`, in which case the extra
/// collectives are part of the plan and reported as remarks.
FailureOr<ShardPlan> analyzeSharding(FunctionOpInterface func, int64_t tpSize,
                                     bool allowFallback);

} // namespace mlir::tp

#endif // TP_TRANSFORMS_SHARDINGANALYSIS_H

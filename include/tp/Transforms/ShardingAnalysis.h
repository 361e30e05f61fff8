//===- ShardingAnalysis.h - find the column -> row cuts ---------*- C++ -*-===//
//
// The analysis half of `tp-shard`: which dimension of which value each rank
// holds a part of, and which collectives that costs. It reads only structure
// (indexing maps, iterator types, reassociations, slice offsets), never op
// names; argument names (`tp.name`) only tell which arguments of different
// functions are the same weight. The rewrite (TPShard.cpp) applies its result.
//
//===----------------------------------------------------------------------===//

#ifndef TP_TRANSFORMS_SHARDINGANALYSIS_H
#define TP_TRANSFORMS_SHARDINGANALYSIS_H

#include "tp/Transforms/CutRuleOpInterface.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {

/// One column -> row pair (or a group of them that share a cut, like the
/// Q, K and V projections that meet in attention).
struct ShardRegion {
  /// The contraction the cut was started from.
  Operation *seed = nullptr;
  /// Every value that holds a part of its full tensor, function arguments
  /// (the weights to shrink) included, in discovery order.
  CutMap cuts;
  /// Values whose defining op produces a coarser cut than theirs: each rank
  /// slices its part out (CutPropagation::refine).
  CutMap refinements;
  SmallVector<PlannedCollective> collectives;
};

struct ShardPlan {
  int64_t tpSize = 1;
  SmallVector<ShardRegion> regions;
  /// Contractions computed whole on every rank, each with why (the remark
  /// the analysis emitted there), for explain.
  SmallVector<std::pair<Operation *, std::string>> wholeSeeds;
};

/// The cut a function's analysis should give an argument: the one another
/// function of the module gives the same weight (`tp.name` and type), so
/// that each rank holds one part of it for both (analyzeModuleSharding).
struct RequiredCut {
  DimCut cut;
  /// The weight's `tp.name` and the function whose cut it is, for the
  /// remarks.
  StringAttr name, by;
};
/// Required cuts by argument.
using RequiredCuts = DenseMap<Value, RequiredCut>;

/// Elements of a ranked tensor type, each dynamic dimension counted as 1
/// (sizes are then per unit of each dynamic dimension, a dynamic batch say).
int64_t staticElements(Type type);
/// Bytes of those elements: what a collective of the type moves.
int64_t tensorBytes(Type type);

/// "file:line:col" where the location holds one, else the location: how
/// messages name an op of the input.
std::string fileLineCol(Location loc);

/// Follows ops that only move or repeat elements (reshapes, transposes,
/// broadcasts, copy-like generics) back from `value` to where the elements
/// come from: a weight argument, say.
Value weightSource(Value value);

/// A function argument, possibly moved or repeated (see weightSource).
bool isWeight(Value value);

/// True if every result is `init + f(inputs)`: then summing over a cut loop
/// on each rank and adding the ranks' results is the full reduction, as long
/// as the init is counted once.
bool isSumReduction(linalg::LinalgOp op);

/// A linalg.broadcast, or a generic that only repeats its one input along
/// new dimensions (all loops parallel, the body yields the input).
bool isBroadcast(linalg::LinalgOp op);

/// The kind (max or min) of an arg reduction over loop `loop` of `op`: the
/// extreme of its one input (result 0) and the index of `loop` where it
/// first occurs (result 1), an argmax; nothing for any other op. Where
/// `offset` is given, the index may have a value defined outside `op` added
/// (a rank's first position, after tp-shard), which goes there (null if
/// none).
std::optional<ReductionKind> argReduction(linalg::LinalgOp op, unsigned loop,
                                          Value *offset = nullptr);

/// `value` before the integer casts it went through (index_cast, extsi,
/// extui, trunci).
Value stripIntegerCasts(Value value);

/// Whether `index` is read from an input element of `generic` (through
/// integer casts): a position the data decides, as a token id, not a loop
/// index or a constant.
bool isReadFromInput(Value index, linalg::GenericOp generic);

/// The generic a lookup `extract` runs in: one that yields the element it
/// reads (an embedding: `table[id, j]`), or, after tp-shard, that element
/// where the rank holds its row; null otherwise.
linalg::GenericOp getLookupGeneric(Operation *extract);

/// Finds the cuts of `func` for `tpSize` ranks. Emits a diagnostic at the
/// op concerned and fails when no cut keeps a pair free of extra
/// communication, unless `allowFallback`, in which case the extra
/// collectives are part of the plan and reported as remarks. Among cuts of
/// equal communication, those that give the arguments of `required` their
/// cut win, and a region or a lookup that does so is cut even where it
/// would be left whole as not worth its collectives; a required cut no clean
/// cut gives is not met (the caller checks). `keepSignature`: something in
/// the module calls `func` (or otherwise names it) and passes and takes
/// whole values, so no argument is cut; tp-shard does not rewrite calls.
FailureOr<ShardPlan>
analyzeSharding(FunctionOpInterface func, int64_t tpSize, bool allowFallback,
                const RequiredCuts &required = RequiredCuts(),
                bool keepSignature = false);

/// Finds the cuts of each of `funcs` (the functions of one module, in
/// order) for `tpSize` ranks, so that a weight several public ones read (the
/// same `tp.name` and type) gets one cut in all where their rules allow:
/// the cut most of them give it (the first such function's on a tie), which
/// the others are analyzed again to give it (analyzeSharding's `required`).
/// One that cannot keeps its own cut, with a remark at the weight naming
/// both functions. A weight one function reads is cut as analyzeSharding
/// cuts it. Emits the diagnostics of the plans kept only; at tp 1 none, and
/// a function without a plan gets an empty one (one rank holds everything).
/// A function the module calls keeps its signature (`keepSignature`).
/// Returns a plan per function, failure where its analysis failed.
SmallVector<FailureOr<ShardPlan>, 0>
analyzeModuleSharding(ArrayRef<FunctionOpInterface> funcs, int64_t tpSize,
                      bool allowFallback);

} // namespace mlir::tp

#endif // TP_TRANSFORMS_SHARDINGANALYSIS_H

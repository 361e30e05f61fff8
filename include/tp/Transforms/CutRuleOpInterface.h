//===- CutRuleOpInterface.h - how one op kind carries a cut -----*- C++ -*-===//
//
// The vocabulary of tp-shard's analysis that op rules speak: a cut of one
// dimension (DimCut), the collectives a plan needs (PlannedCollective), and
// the propagation state a rule reads and extends (CutPropagation). The rules
// themselves are external models of CutRuleOpInterface, one file per
// dialect in lib/Transforms/CutRules/.
//
//===----------------------------------------------------------------------===//

#ifndef TP_TRANSFORMS_CUTRULEOPINTERFACE_H
#define TP_TRANSFORMS_CUTRULEOPINTERFACE_H

#include "tp/IR/TPDialect.h"

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include <deque>
#include <optional>
#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tp {

/// How one dimension of a value is cut: the dimension is read as `outer`
/// equal blocks, each split into `parts(N)` contiguous parts, N the tp size;
/// rank r holds part r / `replicas` of every block. `outer` = 1 is a plain
/// contiguous cut; a fused QKV column [3*h*dh] cut between heads has
/// `outer` = 3. `replicas` > 1 gives each part to that many consecutive
/// ranks: the K/V heads of grouped-query attention with fewer kv heads than
/// ranks (each kv head read by N / kv ranks). `subDim` >= 0 has those
/// `replicas` ranks split another dimension among them instead of each
/// holding it whole: `subDim` is cut into `replicas` contiguous parts and
/// rank r holds part r % `replicas`, so no two ranks hold the same elements
/// (decode attention batched over kv heads: a kv head on 2 ranks, each with
/// its query heads of the group). Two cuts hold the same elements iff they
/// are equal.
struct DimCut {
  int64_t dim = -1;
  int64_t outer = 1;
  int64_t replicas = 1;
  int64_t subDim = -1;
  int64_t parts(int64_t numRanks) const { return numRanks / replicas; }
  /// The part of each block rank `rank` holds.
  int64_t partOf(int64_t rank) const { return rank / replicas; }
  bool operator==(const DimCut &other) const {
    return dim == other.dim && outer == other.outer &&
           replicas == other.replicas && subDim == other.subDim;
  }
  bool operator!=(const DimCut &other) const { return !(*this == other); }
};

/// The cut of every value of a region, in discovery order.
using CutMap = llvm::MapVector<Value, DimCut>;

/// A collective the plan needs.
struct PlannedCollective {
  enum class Kind {
    /// Result 0 of `op` holds a partial `reduction` over the ranks; every
    /// rank needs the whole reduction.
    AllReduce,
    /// `use` needs the whole of its cut operand.
    AllGather,
    /// Results 0 and 1 of `op` hold the `reduction` (max or min) of each
    /// rank's part and the position of its first occurrence (an argmax);
    /// every rank needs the extreme over all ranks and its first position.
    ArgReduce,
  };
  /// What the collective is for, which decides whether a plan needs it.
  enum class Purpose {
    /// The all-reduce after a contraction over a cut weight dimension: the
    /// one collective a column -> row pair is meant to cost.
    Pair,
    /// The all-reduce that sums a vocabulary-parallel lookup.
    Lookup,
    /// An all-reduce that completes a reduction of one value over the cut
    /// dimension (a max, a sum of exponentials): small, as the reduction's
    /// result is.
    Combine,
    /// Anything else: an all-gather, or an all-reduce of partial scores
    /// when the cut falls inside heads.
    Other,
  };
  Kind kind;
  ReductionKind reduction = ReductionKind::Sum;
  Operation *op = nullptr;
  OpOperand *use = nullptr;
  Purpose purpose = Purpose::Other;
  /// Bytes of the full tensor moved (what each rank receives).
  int64_t bytes = 0;
  /// Why a collective other than a pair's or a lookup's is needed.
  std::string reason;

  /// The collective a clean region is made of: a pair's or a lookup's.
  bool isPlanned() const {
    return purpose == Purpose::Pair || purpose == Purpose::Lookup;
  }

  /// The value the collective makes whole (the partial result or the cut
  /// operand), for its type and size.
  Value value() const { return use ? use->get() : op->getResult(0); }
  /// "an all-reduce of partial sums", "an all-gather": for messages.
  std::string describe() const;
};

/// One attempt at a cut: spreads it from a start value through the ops that
/// read or write each cut value to a fixpoint, by their rules.
class CutPropagation {
public:
  /// `wholeArguments`: the function's arguments cannot be cut (its callers
  /// pass them whole).
  CutPropagation(int64_t numRanks, const DenseSet<Value> &taken,
                 bool wholeArguments = false)
      : numRanks(numRanks), taken(taken), wholeArguments(wholeArguments) {}

  /// Spreads `cut` from `start`; `at` is the op blamed if `start` itself
  /// cannot take it. On failure `rejected` says where and why.
  LogicalResult run(Value start, DimCut cut, Operation *at);

  //===--- what op rules use ---------------------------------------------===//

  int64_t getNumRanks() const { return numRanks; }
  /// The cut of `v`, if it is cut.
  std::optional<DimCut> lookup(Value v) const;
  /// Records that `v` is cut by `cut` (checking that it can be), for `at`.
  LogicalResult mark(Value v, DimCut cut, Operation *at);
  /// Records why `op` cannot take the cut; the first reason wins.
  /// `indivisible`: the number of ranks is what fails (see Failure).
  LogicalResult fail(Operation *op, const Twine &message,
                     bool indivisible = false);
  /// `use` needs the whole of its cut operand: an all-gather before it.
  void gather(OpOperand &use, const Twine &reason);
  /// Result 0 of `op` holds a partial `kind` reduction: an all-reduce
  /// after it, for `purpose`. `withIndex`: result 1 holds the position of
  /// the extreme (PlannedCollective::Kind::ArgReduce).
  void reduce(Operation *op, ReductionKind kind,
              PlannedCollective::Purpose purpose, const Twine &reason,
              bool withIndex = false);
  /// Another cut worth a separate attempt (another factor of a reshape).
  void hint(Value start, DimCut cut) { hints.push_back({start, cut}); }
  /// `v` stays whole and is read whole to make a cut value (a single K/V
  /// head repeated for the local query heads).
  void readWhole(Value v) { broadcastReads.insert(v); }
  /// `v` is cut by its recorded cut, but its defining op can only produce
  /// `produced`, a cut with fewer parts that holds it: each rank slices its
  /// part out of what it computes (a kv head repeated for the query heads,
  /// when ranks outnumber kv heads).
  void refine(Value v, DimCut produced) { refinements[v] = produced; }

  //===--- the outcome ---------------------------------------------------===//

  CutMap cuts;
  SmallVector<PlannedCollective> collectives;
  SetVector<Value> broadcastReads;
  /// Values whose defining op produces a coarser cut (see refine).
  CutMap refinements;
  struct Failure {
    Operation *op;
    std::string message;
    /// The number of ranks is what fails, not the ops: a dimension it does
    /// not divide (another tp size might do).
    bool indivisible = false;
  };
  std::optional<Failure> rejected;
  SmallVector<std::pair<Value, DimCut>> hints;

private:
  LogicalResult visit(Operation *op);
  LogicalResult visitUnknown(Operation *op);

  int64_t numRanks;
  const DenseSet<Value> &taken;
  bool wholeArguments;
  std::deque<Value> worklist;
  DenseSet<Operation *> reduced;
  DenseSet<OpOperand *> gathered;
};

/// The rule for ops whose operands and results all have one shape and are
/// cut alike (elementwise ops; the rules of other ops reuse it).
LogicalResult propagateSameCut(Operation *op, CutPropagation &state);

/// Attaches the rules of lib/Transforms/CutRules/ to the ops they cover.
void registerCutRuleExternalModels(DialectRegistry &registry);
void registerArithCutRules(DialectRegistry &registry);
void registerFuncCutRules(DialectRegistry &registry);
void registerLinalgCutRules(DialectRegistry &registry);
void registerTensorCutRules(DialectRegistry &registry);

} // namespace mlir::tp

#include "tp/Transforms/CutRuleOpInterface.h.inc"

#endif // TP_TRANSFORMS_CUTRULEOPINTERFACE_H

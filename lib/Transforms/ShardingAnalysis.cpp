//===- ShardingAnalysis.cpp - find the column -> row cuts ----------------===//
//
// A cut starts at the output dimension of a contraction with a weight operand
// (a widening matmul) and spreads, in both directions, to every value that
// must hold the matching part for the ops between to stay rank-local, by
// each op's rule (CutPropagation.cpp, the rules in CutRules/). A sum over
// the cut dimension ends it: its result is a partial sum, and one all-reduce
// makes it whole again.
//
// The first cut tried for a seed is the contiguous one; a reshape it cannot
// pass proposes the cuts that would (one per factor of the group), and each
// is tried in turn. The cheapest in communication wins.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <set>

using namespace mlir;
using namespace mlir::tp;

int64_t mlir::tp::staticElements(Type type) {
  int64_t elements = 1;
  for (int64_t size : cast<RankedTensorType>(type).getShape())
    if (!ShapedType::isDynamic(size))
      elements *= size;
  return elements;
}

int64_t mlir::tp::tensorBytes(Type type) {
  return staticElements(type) *
         llvm::divideCeil(cast<RankedTensorType>(type).getElementTypeBitWidth(),
                          8);
}

Value mlir::tp::weightSource(Value value) {
  while (true) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return value;
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      value = transpose.getInput();
      continue;
    }
    if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def)) {
      value = broadcast.getInput();
      continue;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
    if (!linalgOp || linalgOp.getNumDpsInputs() != 1 ||
        linalgOp.getNumReductionLoops() != 0)
      return value;
    // The body yields the input element unchanged, read through a
    // permutation or a broadcast.
    Block *body = linalgOp.getBlock();
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    if (yield.getNumOperands() != 1 ||
        yield.getOperand(0) != body->getArgument(0) ||
        !linalgOp.getMatchingIndexingMap(linalgOp.getDpsInputOperand(0))
             .isProjectedPermutation())
      return value;
    value = linalgOp.getDpsInputs()[0];
  }
}

/// A weight broadcast over the batch is how torch-mlir feeds `x @ W` on 3-D
/// activations to linalg.batch_matmul.
bool mlir::tp::isWeight(Value value) {
  auto arg = dyn_cast<BlockArgument>(weightSource(value));
  return arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

bool mlir::tp::isSumReduction(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (auto [i, yielded] : llvm::enumerate(yield.getOperands())) {
    Operation *add = yielded.getDefiningOp();
    if (!isa_and_nonnull<arith::AddFOp, arith::AddIOp>(add))
      return false;
    Value acc = body->getArgument(op.getNumDpsInputs() + i);
    Value lhs = add->getOperand(0), rhs = add->getOperand(1);
    if ((lhs == acc) == (rhs == acc))
      return false;
    if (!acc.hasOneUse())
      return false;
  }
  return true;
}

bool mlir::tp::isBroadcast(linalg::LinalgOp op) {
  if (isa<linalg::BroadcastOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getBody()->getArgument(0);
}

//===----------------------------------------------------------------------===//
// Seeds and the choice between cuts
//===----------------------------------------------------------------------===//

namespace {
/// A contraction with a weight operand and the output dim that only the
/// weight indexes: cutting it is the column cut.
struct Seed {
  linalg::LinalgOp op;
  int64_t resultDim;
};

struct Candidate {
  CutMap cuts;
  SmallVector<PlannedCollective> collectives;
  SetVector<Value> broadcastReads;
  bool hasNarrowing = false;
  int64_t extra = 0, total = 0;
  /// Lower is better: a pair first, then the least extra communication.
  std::tuple<bool, int64_t, int64_t> cost() const {
    return {!hasNarrowing, extra, total};
  }
};
} // namespace

static std::optional<Seed> asSeed(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || op.getNumReductionLoops() == 0 ||
      !isSumReduction(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap outMap = maps.back();
  ArrayRef<AffineMap> inputMaps = ArrayRef(maps).drop_back();
  // The weight is a right operand (`x @ W`); the first input is the data,
  // even when it is itself a function argument.
  for (unsigned w = 1, e = inputMaps.size(); w < e; ++w) {
    if (!isWeight(op.getDpsInputs()[w]))
      continue;
    for (auto [pos, expr] : llvm::enumerate(outMap.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || !inputMaps[w].isFunctionOfDim(dim.getPosition()))
        continue;
      bool onlyWeight =
          llvm::all_of(llvm::seq<unsigned>(0, e), [&](unsigned i) {
            return i == w || !inputMaps[i].isFunctionOfDim(dim.getPosition());
          });
      if (onlyWeight)
        return Seed{op, static_cast<int64_t>(pos)};
    }
  }
  return std::nullopt;
}

/// Attaches one note per distinct rejected cut to `diag`.
static void noteRejected(InFlightDiagnostic &diag,
                         ArrayRef<CutPropagation::Failure> rejected,
                         StringRef prefix) {
  std::set<std::pair<Operation *, std::string>> said;
  for (const CutPropagation::Failure &f : rejected)
    if (said.insert({f.op, f.message}).second)
      diag.attachNote(f.op->getLoc())
          << prefix << "'" << f.op->getName() << "' " << f.message;
}

/// Reports each collective `best` needs beyond the narrowing all-reduces,
/// with the cheaper cuts that were rejected as notes.
static void describeFallbacks(const Candidate &best, bool asError,
                              int64_t tpSize,
                              ArrayRef<CutPropagation::Failure> rejected) {
  for (const PlannedCollective &c : best.collectives) {
    if (c.narrowing)
      continue;
    InFlightDiagnostic diag = asError ? c.op->emitError() : c.op->emitRemark();
    diag << "tensor-parallel cut for " << tpSize << " ranks needs "
         << c.describe() << " of " << c.value().getType() << " here ("
         << c.bytes << " bytes per rank per forward pass): " << c.reason;
    if (asError)
      diag << "; accept it with allow-fallback=true (tp-compile: "
              "--allow-fallback)";
    noteRejected(diag, rejected, "a cut without it was rejected: ");
  }
}

/// "file:line:col" where the location has one, else the location.
static std::string where(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc))
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
  else
    os << loc;
  return s;
}

/// Why the seed's output has no cut between attention heads, when that is
/// why: a reshape after the seed that splits its cut dimension into
/// [.., heads, head_dim] with heads that `tpSize` does not divide, as
/// "8 heads of 64 (tensor.expand_shape at f:1:2) do not divide among 3
/// ranks". The dimension is followed through slices, reshapes that keep it
/// whole and parallel linalg ops (bias adds, transposes); the attention
/// contraction ends the search. A cut that fails for any other reason has
/// its notes.
static std::optional<std::string> undividedHeads(const Seed &seed,
                                                 int64_t tpSize) {
  SmallVector<std::pair<Value, int64_t>> worklist{
      {seed.op->getResult(0), seed.resultDim}};
  DenseSet<std::pair<Value, int64_t>> seen;
  auto follow = [&](Value v, int64_t dim) {
    if (seen.insert({v, dim}).second)
      worklist.push_back({v, dim});
  };
  while (!worklist.empty()) {
    std::pair<Value, int64_t> item = worklist.pop_back_val();
    Value value = item.first;
    int64_t dim = item.second;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
        ArrayRef<int64_t> shape = expand.getResultType().getShape();
        SmallVector<int64_t> factors =
            llvm::filter_to_vector(expand.getReassociationIndices()[dim],
                                   [&](int64_t d) { return shape[d] != 1; });
        if (factors.size() == 1) {
          follow(expand.getResult(), factors.front());
          continue;
        }
        if (factors.size() < 2)
          continue;
        // Heads are the factor before the innermost, the head dimension.
        int64_t heads = shape[factors[factors.size() - 2]];
        if (heads % tpSize == 0)
          continue;
        return (Twine(heads) + " heads of " + Twine(shape[factors.back()]) +
                " (" + expand->getName().getStringRef() + " at " +
                where(expand.getLoc()) + ") do not divide among " +
                Twine(tpSize) + " ranks")
            .str();
      }
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user)) {
        ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
        for (auto [merged, group] :
             llvm::enumerate(collapse.getReassociationIndices()))
          if (llvm::is_contained(group, dim) &&
              llvm::all_of(
                  group, [&](int64_t d) { return d == dim || shape[d] == 1; }))
            follow(collapse.getResult(), merged);
        continue;
      }
      if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user)) {
        llvm::SmallBitVector dropped = slice.getDroppedDims();
        if (!dropped.test(dim))
          follow(
              slice.getResult(),
              dim - llvm::count_if(llvm::seq<int64_t>(0, dim),
                                   [&](int64_t d) { return dropped.test(d); }));
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (!linalgOp || linalgOp.getNumReductionLoops() != 0 ||
          linalgOp.isDpsInit(&use))
        continue;
      auto loop = dyn_cast<AffineDimExpr>(
          linalgOp.getMatchingIndexingMap(&use).getResult(dim));
      if (!loop)
        continue;
      for (OpResult result : linalgOp->getResults()) {
        AffineMap map = linalgOp.getIndexingMapMatchingResult(result);
        if (std::optional<unsigned> pos = map.getResultPosition(
                getAffineDimExpr(loop.getPosition(), user->getContext())))
          follow(result, *pos);
      }
    }
  }
  return std::nullopt;
}

static void reportNoCut(const Seed &seed, int64_t tpSize,
                        ArrayRef<CutPropagation::Failure> failures) {
  InFlightDiagnostic diag = seed.op->emitError()
                            << "no tensor-parallel cut for " << tpSize
                            << " ranks of output dimension " << seed.resultDim
                            << " of " << seed.op->getResult(0).getType()
                            << " keeps the values after it local; ";
  if (std::optional<std::string> heads = undividedHeads(seed, tpSize))
    diag << *heads << "; ";
  diag << "each cut tried fails (see notes)";
  noteRejected(diag, failures, "");
}

/// The ops `seed`'s result reaches before any other seed, through ops
/// `keep` accepts.
static SetVector<Operation *>
sliceUpToSeeds(Operation *seed, const DenseSet<Operation *> &seedOps,
               function_ref<bool(Operation *)> keep) {
  ForwardSliceOptions options;
  // (The filter sees the seed itself first.)
  options.filter = [&](Operation *op) {
    return op == seed || (!seedOps.contains(op) && keep(op));
  };
  SetVector<Operation *> slice;
  getForwardSlice(seed, &slice, options);
  return slice;
}

static bool reachesBroadcast(Operation *seed,
                             const DenseSet<Operation *> &seedOps) {
  SetVector<Operation *> slice =
      sliceUpToSeeds(seed, seedOps, [](Operation *) { return true; });
  return llvm::any_of(slice, [](Operation *op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    return linalgOp && isBroadcast(linalgOp);
  });
}

FailureOr<ShardPlan> mlir::tp::analyzeSharding(FunctionOpInterface func,
                                               int64_t tpSize,
                                               bool allowFallback) {
  ShardPlan plan;
  plan.tpSize = tpSize;
  DenseSet<Value> taken;
  DenseSet<Operation *> covered;

  SmallVector<Seed> seeds;
  func->walk([&](linalg::LinalgOp op) {
    if (std::optional<Seed> seed = asSeed(op))
      seeds.push_back(*seed);
  });
  DenseSet<Operation *> seedOps;
  for (const Seed &s : seeds)
    seedOps.insert(s.op);
  // Seeds no cut keeps local, decided once every other seed is placed.
  struct Unplaced {
    Seed seed;
    SmallVector<CutPropagation::Failure> failures;
  };
  SmallVector<Unplaced> unplaced;
  SetVector<Value> broadcastReads;

  for (Seed &seed : seeds) {
    if (covered.contains(seed.op) ||
        llvm::any_of(seed.op->getOperands(),
                     [&](Value v) { return taken.contains(v); }))
      continue;
    Value result = seed.op->getResult(0);
    SmallVector<std::pair<Value, DimCut>> queue{{result, {seed.resultDim, 1}}};
    DenseSet<std::pair<Value, std::pair<int64_t, int64_t>>> tried;
    std::optional<Candidate> best;
    SmallVector<CutPropagation::Failure> failures;
    for (size_t i = 0; i < queue.size() && i < 16; ++i) {
      auto [start, cut] = queue[i];
      if (!tried.insert({start, {cut.dim, cut.outer}}).second)
        continue;
      CutPropagation attempt(tpSize, taken);
      LogicalResult propagated = attempt.run(start, cut, seed.op);
      llvm::append_range(queue, attempt.hints);
      if (failed(propagated)) {
        failures.push_back(*attempt.rejected);
        continue;
      }
      Candidate candidate;
      candidate.cuts = std::move(attempt.cuts);
      candidate.collectives = std::move(attempt.collectives);
      candidate.broadcastReads = std::move(attempt.broadcastReads);
      for (const PlannedCollective &c : candidate.collectives) {
        candidate.total += c.bytes;
        if (!c.narrowing)
          candidate.extra += c.bytes;
        candidate.hasNarrowing |= c.narrowing;
      }
      if (!best || candidate.cost() < best->cost())
        best = std::move(candidate);
      // The first clean cut found is the simplest (contiguous cuts first).
      if (best->hasNarrowing && best->extra == 0)
        break;
    }

    if (!best) {
      // Only a seed whose result reaches a broadcast before any other seed
      // can be left whole (see below); any other failure is reported now:
      // later seeds would only report its consequences.
      if (reachesBroadcast(seed.op, seedOps)) {
        unplaced.push_back({seed, std::move(failures)});
        continue;
      }
      reportNoCut(seed, tpSize, failures);
      return failure();
    }

    if (!best->hasNarrowing) {
      auto diag = allowFallback ? seed.op->emitRemark() : seed.op->emitError();
      diag << "widening contraction has no narrowing partner: its cut "
              "output dimension "
           << seed.resultDim << " of " << result.getType()
           << " is never summed over by a contraction with a weight";
      if (!allowFallback) {
        diag << "; the fallback gathers it (" << best->extra
             << " bytes per rank per forward pass)";
        for (const PlannedCollective &c : best->collectives)
          diag.attachNote(c.op->getLoc()) << c.reason;
        return failure();
      }
    }
    if (best->extra > 0) {
      describeFallbacks(*best, !allowFallback, tpSize, failures);
      if (!allowFallback)
        return failure();
    }

    broadcastReads.insert(best->broadcastReads.begin(),
                          best->broadcastReads.end());
    ShardRegion region;
    region.seed = seed.op;
    region.cuts = std::move(best->cuts);
    region.collectives = std::move(best->collectives);
    for (auto &[value, cut] : region.cuts) {
      taken.insert(value);
      if (Operation *def = value.getDefiningOp())
        covered.insert(def);
      for (Operation *user : value.getUsers())
        covered.insert(user);
    }
    plan.regions.push_back(std::move(region));
  }

  // A seed without a cut may stay whole on every rank when what it computes
  // reaches a broadcast that makes a cut region's cut dimension, through
  // ops that are neither cut nor other seeds (multi-query attention: the
  // one K/V head, repeated for each local query head; Megatron replicates
  // K and V the same way). Any other is an error: the first one, since
  // later ones mostly follow from it.
  for (Unplaced &u : unplaced) {
    // A region planned after it may have cut it after all.
    if (covered.contains(u.seed.op))
      continue;
    Value result = u.seed.op->getResult(0);
    SetVector<Operation *> slice =
        sliceUpToSeeds(u.seed.op, seedOps, [&](Operation *op) {
          return llvm::none_of(op->getResults(),
                               [&](Value v) { return taken.contains(v); });
        });
    auto read = [&](Value v) { return broadcastReads.contains(v); };
    if (read(result) || llvm::any_of(slice, [&](Operation *op) {
          return llvm::any_of(op->getResults(), read);
        })) {
      u.seed.op->emitRemark()
          << "left whole on every rank: no cut for " << tpSize
          << " ranks of output dimension " << u.seed.resultDim << " of "
          << result.getType()
          << ", and the cut regions read it through a broadcast";
      continue;
    }
    reportNoCut(u.seed, tpSize, u.failures);
    return failure();
  }
  return plan;
}

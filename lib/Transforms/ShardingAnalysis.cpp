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
// The functions of a module are planned together (analyzeModuleSharding, at
// the end): a weight several of them read gets one cut, so that each rank
// holds one part of it for all.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

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

Value mlir::tp::stripIntegerCasts(Value value) {
  while (
      isa_and_nonnull<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
                      arith::ExtUIOp, arith::TruncIOp>(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

bool mlir::tp::isReadFromInput(Value index, linalg::GenericOp generic) {
  auto arg = dyn_cast<BlockArgument>(stripIntegerCasts(index));
  if (!arg)
    return false;
  return arg.getOwner() == generic.getBody() &&
         arg.getArgNumber() < generic.getNumDpsInputs();
}

linalg::GenericOp mlir::tp::getLookupGeneric(Operation *extract) {
  auto generic = dyn_cast<linalg::GenericOp>(extract->getParentOp());
  if (!generic || generic.getNumResults() != 1)
    return nullptr;
  Value yielded = generic.getBody()->getTerminator()->getOperand(0);
  // The rank-local lookup tp-shard writes yields the element or zero.
  if (auto select = yielded.getDefiningOp<arith::SelectOp>())
    yielded = select.getTrueValue();
  return yielded == extract->getResult(0) ? generic : nullptr;
}

//===----------------------------------------------------------------------===//
// Seeds and the choice between cuts
//===----------------------------------------------------------------------===//

namespace {
/// A contraction with a weight operand and the output dim that only the
/// weight indexes: cutting it is the column cut.
struct Seed {
  /// A contraction with a weight operand whose output dim `dim` only the
  /// weight indexes: cutting it is the column cut. Or a lookup of a weight
  /// table (`lookup`) whose rows the ids pick: cutting them is the
  /// vocabulary-parallel embedding; `op` is the generic that reads it.
  Operation *op;
  int64_t dim;
  /// Where the cut starts: the contraction's result, or the table.
  Value start;
  /// The weight argument the contraction or the lookup reads.
  Value weight;
  bool lookup = false;
  /// A lookup seeded only because another function cuts its table so.
  const RequiredCut *shared = nullptr;
};

struct Candidate {
  CutMap cuts;
  SmallVector<PlannedCollective> collectives;
  SetVector<Value> broadcastReads;
  CutMap refinements;
  bool hasNarrowing = false;
  int64_t extra = 0, total = 0;
  /// Required cuts (analyzeSharding's `required`) it cuts differently.
  int64_t violations = 0;
  /// Lower is better: a pair first, then the least extra communication,
  /// then the cut another function gives a shared weight.
  std::tuple<bool, int64_t, int64_t, int64_t> cost() const {
    return {!hasNarrowing, extra, violations, total};
  }
};
} // namespace

/// Whether every collective of `candidate` is one its cut is meant to
/// cost: a pair's or a lookup's all-reduce, an all-gather of a value the
/// function returns (the caller takes it whole: the logits of Megatron's
/// vocabulary-parallel LM head, a hidden state returned as well), or, in a
/// region without a pair, an all-reduce combining a reduction over the cut
/// dimension (a softmax's max and sum of exponentials over the vocabulary,
/// one value per row). Anything else is a fallback.
static bool needsNoFallback(const Candidate &candidate) {
  bool pair =
      llvm::any_of(candidate.collectives, [](const PlannedCollective &c) {
        return c.purpose == PlannedCollective::Purpose::Pair;
      });
  return llvm::all_of(candidate.collectives, [&](const PlannedCollective &c) {
    if (c.isPlanned())
      return true;
    if (c.kind == PlannedCollective::Kind::AllGather)
      return c.op->hasTrait<OpTrait::ReturnLike>();
    return !pair && c.purpose == PlannedCollective::Purpose::Combine;
  });
}

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
        return Seed{op, static_cast<int64_t>(pos), op->getResult(0),
                    weightSource(op.getDpsInputs()[w])};
    }
  }
  return std::nullopt;
}

/// A lookup in `op` of a weight table at rows its input holds (an
/// embedding), worth cutting: the table's memory saved per rank is at least
/// kLookupCutRatio times the bytes the all-reduce of the lookup moves per
/// forward pass. A vocabulary table is (BERT-base: 47 MB saved at tp 2 for
/// 22 KB per pass); position and token-type tables are not. A table another
/// function cuts on the rows (`required`) is worth it in any case: left
/// whole here, each rank would hold it whole besides its part.
constexpr int64_t kLookupCutRatio = 64;
static std::optional<Seed> asLookupSeed(linalg::GenericOp op, int64_t tpSize,
                                        const RequiredCuts &required) {
  std::optional<Seed> seed;
  op.getBody()->walk([&](tensor::ExtractOp extract) {
    if (getLookupGeneric(extract) != op || !isWeight(extract.getTensor()))
      return WalkResult::advance();
    for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
      if (!isReadFromInput(index, op))
        continue;
      int64_t ranks = std::max<int64_t>(tpSize, 2);
      int64_t saved =
          tensorBytes(extract.getTensor().getType()) / ranks * (ranks - 1);
      Value table = extract.getTensor();
      Seed found{op, static_cast<int64_t>(dim), table, weightSource(table),
                 /*lookup=*/true};
      auto it = required.find(table);
      if (saved >= kLookupCutRatio * tensorBytes(op->getResult(0).getType())) {
        seed = found;
      } else if (it != required.end() && it->second.cut == DimCut{found.dim}) {
        seed = found;
        seed->shared = &it->second;
      }
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return seed;
}

/// Says at `seed` that its cut, not worth it by `why` alone, is kept
/// because another function cuts the same weight so (`shared`).
static void remarkShared(Operation *seed, const Twine &why,
                         const RequiredCut &shared) {
  seed->emitRemark() << "cut although " << why << ": @" << shared.by.getValue()
                     << " cuts '" << shared.name.getValue()
                     << "' the same way, and each rank holds one part of it "
                        "for both";
}

/// The required cut `region` gives one of its arguments, if any.
static const RequiredCut *sharedCut(const ShardRegion &region,
                                    const RequiredCuts &required) {
  for (auto &[value, cut] : region.cuts)
    if (auto it = required.find(value);
        it != required.end() && it->second.cut == cut)
      return &it->second;
  return nullptr;
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
    if (c.isPlanned())
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

std::string mlir::tp::fileLineCol(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
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
      {seed.op->getResult(0), seed.dim}};
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
                fileLineCol(expand.getLoc()) + ") do not divide among " +
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

/// Whether the tp size is what keeps `seed` from a clean cut: the contiguous
/// cut, tried first, needs a dimension the ranks do not divide, or the seed's
/// output splits into heads they do not divide. Leaving the seed whole would
/// then hide a tp size that does not fit the model. (The alternatives tried
/// after it are guesses; one failing on divisibility says little.)
static bool tpSizeFails(const Seed &seed,
                        ArrayRef<CutPropagation::Failure> failures,
                        int64_t tpSize) {
  return (!failures.empty() && failures.front().indivisible) ||
         undividedHeads(seed, tpSize).has_value();
}

/// Whether `seed`'s result, or what a chain of ops each its only reader
/// makes of it, is read by slices alone, two or more: a fused projection's
/// sections, which no cut of equal blocks may fit.
static bool readInSections(Operation *seed) {
  Value value = seed->getResult(0);
  while (true) {
    if (!value.hasOneUse())
      return llvm::range_size(value.getUsers()) > 1 &&
             llvm::all_of(value.getUsers(), [](Operation *user) {
               return isa<tensor::ExtractSliceOp>(user);
             });
    Operation *user = *value.user_begin();
    if (user->getNumResults() != 1 ||
        !isa<linalg::LinalgOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            user))
      return false;
    value = user->getResult(0);
  }
}

/// Points a seed whose result is read in sections to tp-import.
static void noteSections(InFlightDiagnostic &diag, Operation *seed) {
  if (readInSections(seed))
    diag.attachNote(seed->getLoc())
        << "its result is read in sections: where the weight is stored "
           "[out, in], tp-import computes each section from its rows of the "
           "weight, a projection of its own (tp-split-fused-projections)";
}

static void reportNoCut(const Seed &seed, int64_t tpSize,
                        ArrayRef<CutPropagation::Failure> failures) {
  InFlightDiagnostic diag = seed.op->emitError()
                            << "no tensor-parallel cut for " << tpSize
                            << " ranks of output dimension " << seed.dim
                            << " of " << seed.op->getResult(0).getType()
                            << " keeps the values after it local; ";
  if (std::optional<std::string> heads = undividedHeads(seed, tpSize))
    diag << *heads << "; ";
  diag << "each cut tried fails (see notes)";
  noteSections(diag, seed.op);
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

/// Whether what `seed` computes reaches another seed before the function's
/// results (an LM head reaches only the results, through the argmax).
static bool reachesSeed(Operation *seed, const DenseSet<Operation *> &seedOps) {
  SetVector<Operation *> slice =
      sliceUpToSeeds(seed, seedOps, [](Operation *) { return true; });
  slice.insert(seed);
  return llvm::any_of(slice, [&](Operation *op) {
    return llvm::any_of(op->getUsers(), [&](Operation *user) {
      return user != seed && seedOps.contains(user);
    });
  });
}

/// Multiply-adds of the contractions a region cuts or sums, per pair it
/// holds (blocks that share a value, one mask read by every layer's
/// attention, are one region of many pairs): the work one pair's
/// collectives divide among the ranks.
static int64_t workPerPair(const ShardRegion &region) {
  SetVector<Operation *> ops;
  for (auto &[value, cut] : region.cuts)
    if (Operation *def = value.getDefiningOp())
      ops.insert(def);
  for (const PlannedCollective &c : region.collectives)
    if (c.kind != PlannedCollective::Kind::AllGather)
      ops.insert(c.op);
  int64_t work = 0;
  for (Operation *op : ops) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp.getNumReductionLoops() == 0)
      continue;
    int64_t iterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      if (!ShapedType::isDynamic(range))
        iterations *= range;
    work += iterations;
  }
  int64_t pairs =
      llvm::count_if(region.collectives, [](const PlannedCollective &c) {
        return c.purpose == PlannedCollective::Purpose::Pair;
      });
  return work / std::max<int64_t>(pairs, 1);
}

/// A region whose pairs do less than 1/kSliverRatio of the work of the
/// function's largest pair pays the same collective for a sliver of the
/// saving: a BERT pooler and classifier on one token, next to blocks on
/// every token. It is dropped, its values computed whole on every rank (as
/// Megatron keeps the pooler). Lookups are kept: they save memory, not work.
/// So is a region that gives a weight the cut another function gives it
/// (`required`): whole here, each rank would hold the weight whole besides
/// its part, which costs more than the sliver saves (one LM head for
/// @prefill's one position, cut for @decode's).
constexpr int64_t kSliverRatio = 16;
static void dropSlivers(ShardPlan &plan, const RequiredCuts &required) {
  auto isLookup = [](const ShardRegion &region) {
    return llvm::any_of(region.collectives, [](const PlannedCollective &c) {
      return c.purpose == PlannedCollective::Purpose::Lookup;
    });
  };
  int64_t most = 0;
  for (const ShardRegion &region : plan.regions)
    if (!isLookup(region))
      most = std::max(most, workPerPair(region));
  llvm::erase_if(plan.regions, [&](const ShardRegion &region) {
    int64_t work = workPerPair(region);
    if (isLookup(region) || work * kSliverRatio >= most)
      return false;
    std::string why =
        ("its cut would divide " + Twine(work) +
         " multiply-adds per pair, under 1/" + Twine(kSliverRatio) +
         " of the largest pair's " + Twine(most))
            .str();
    if (const RequiredCut *shared = sharedCut(region, required)) {
      remarkShared(region.seed, why, *shared);
      return false;
    }
    why += ": not worth its collectives";
    region.seed->emitRemark() << "left whole on every rank: " << why;
    plan.wholeSeeds.push_back({region.seed, why});
    return true;
  });
}

FailureOr<ShardPlan> mlir::tp::analyzeSharding(FunctionOpInterface func,
                                               int64_t tpSize,
                                               bool allowFallback,
                                               const RequiredCuts &required,
                                               bool keepSignature) {
  ShardPlan plan;
  plan.tpSize = tpSize;
  DenseSet<Value> taken;
  DenseSet<Operation *> covered;

  SmallVector<Seed> seeds;
  func->walk([&](linalg::LinalgOp op) {
    std::optional<Seed> seed = asSeed(op);
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
        generic && !seed)
      seed = asLookupSeed(generic, tpSize, required);
    if (seed)
      seeds.push_back(*seed);
  });
  DenseSet<Operation *> seedOps;
  for (const Seed &s : seeds)
    seedOps.insert(s.op);
  // Seeds no cut keeps local, decided once every other seed is placed.
  struct Unplaced {
    enum class Why {
      /// No cut of any tp size keeps the values after it local.
      NoCut,
      /// The cut needs collectives beyond the narrowing all-reduce.
      NeedsFallback,
      /// No cut for this tp size; whole only if a broadcast reads it.
      Indivisible,
      /// No cut for this tp size, and no other seed reads what it computes.
      IndivisibleOutput,
    };
    Seed seed;
    SmallVector<CutPropagation::Failure> failures;
    Why why;
    /// NeedsFallback: the plan that would have cut it.
    std::optional<Candidate> fallback;
  };
  SmallVector<Unplaced, 0> unplaced;
  SetVector<Value> broadcastReads;

  for (Seed &seed : seeds) {
    if (covered.contains(seed.op) ||
        llvm::any_of(seed.op->getOperands(),
                     [&](Value v) { return taken.contains(v); }))
      continue;
    Value result = seed.op->getResult(0);
    SmallVector<std::pair<Value, DimCut>> queue{{seed.start, {seed.dim, 1}}};
    // A weight another function cuts is tried first with that cut.
    if (auto it = required.find(seed.weight); it != required.end())
      queue.insert(queue.begin(), {seed.weight, it->second.cut});
    std::set<std::tuple<void *, int64_t, int64_t, int64_t, int64_t>> tried;
    std::optional<Candidate> best;
    SmallVector<CutPropagation::Failure> failures;
    for (size_t i = 0; i < queue.size() && i < 16; ++i) {
      auto [start, cut] = queue[i];
      if (!tried
               .insert({start.getAsOpaquePointer(), cut.dim, cut.outer,
                        cut.replicas, cut.subDim})
               .second)
        continue;
      CutPropagation attempt(tpSize, taken, keepSignature);
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
      candidate.refinements = std::move(attempt.refinements);
      for (const PlannedCollective &c : candidate.collectives) {
        candidate.total += c.bytes;
        if (!c.isPlanned())
          candidate.extra += c.bytes;
        candidate.hasNarrowing |= c.isPlanned();
      }
      for (auto &[arg, shared] : required)
        if (auto it = candidate.cuts.find(arg);
            it != candidate.cuts.end() && it->second != shared.cut)
          ++candidate.violations;
      if (!best || candidate.cost() < best->cost())
        best = std::move(candidate);
      // The first clean cut found is the simplest (contiguous cuts first).
      if (best->hasNarrowing && best->extra == 0 && best->violations == 0)
        break;
    }

    // A lookup is cut only where the cut is clean; a table left whole is
    // read whole by every rank, which is always right.
    if (seed.lookup && (!best || !needsNoFallback(*best)))
      continue;

    if (!best) {
      // A seed no cut of any size keeps local (an op after it reads the
      // index of the cut loop, say) is computed whole on every rank, as is
      // one whose result reaches a broadcast before any other seed (see
      // below), and one whose dimension is smaller than the tp size, which
      // no larger tp size cuts either (a classifier of two labels). Any
      // other failure is the tp size's and is reported now: later seeds
      // would only report its consequences.
      int64_t extent = cast<ShapedType>(seed.op->getResult(0).getType())
                           .getDimSize(seed.dim);
      bool indivisible =
          tpSizeFails(seed, failures, tpSize) && extent >= tpSize;
      // What reaches no other seed (an LM head over a vocabulary the tp size
      // does not divide: GPT-2's 50257) costs only its own work whole on
      // every rank; heads that do not divide stay an error.
      bool output = indivisible && !undividedHeads(seed, tpSize) &&
                    !reachesSeed(seed.op, seedOps);
      if (indivisible && !output && !reachesBroadcast(seed.op, seedOps)) {
        reportNoCut(seed, tpSize, failures);
        return failure();
      }
      unplaced.push_back({seed, std::move(failures),
                          output        ? Unplaced::Why::IndivisibleOutput
                          : indivisible ? Unplaced::Why::Indivisible
                                        : Unplaced::Why::NoCut,
                          std::nullopt});
      continue;
    }

    // Without a narrowing partner, a cut whose values leave the function is
    // gathered there (the LM head); any other needs fallback collectives.
    // Without allow-fallback the seed then stays whole on every rank, which
    // costs no communication, unless the tp size is what failed.
    if (!best->hasNarrowing && !needsNoFallback(*best) && !allowFallback &&
        !tpSizeFails(seed, failures, tpSize)) {
      unplaced.push_back({seed, std::move(failures),
                          Unplaced::Why::NeedsFallback, std::move(best)});
      continue;
    }

    if (!best->hasNarrowing && !needsNoFallback(*best)) {
      auto diag = allowFallback ? seed.op->emitRemark() : seed.op->emitError();
      diag << "widening contraction has no narrowing partner: its cut "
              "output dimension "
           << seed.dim << " of " << result.getType()
           << " is never summed over by a contraction with a weight";
      if (!allowFallback) {
        if (std::optional<std::string> heads = undividedHeads(seed, tpSize))
          diag << "; " << *heads;
        diag << "; the fallback gathers it (" << best->extra
             << " bytes per rank per forward pass)";
        for (const PlannedCollective &c : best->collectives)
          diag.attachNote(c.op->getLoc()) << c.reason;
        return failure();
      }
    }
    if (best->extra > 0 && !needsNoFallback(*best)) {
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
    region.refinements = std::move(best->refinements);
    if (seed.shared && region.cuts.lookup(seed.weight) == seed.shared->cut)
      remarkShared(seed.op,
                   "its table saves under " + Twine(kLookupCutRatio) +
                       " times the bytes its all-reduce moves",
                   *seed.shared);
    for (auto &[value, cut] : region.cuts) {
      taken.insert(value);
      if (Operation *def = value.getDefiningOp())
        covered.insert(def);
      for (Operation *user : value.getUsers())
        covered.insert(user);
    }
    plan.regions.push_back(std::move(region));
  }

  dropSlivers(plan, required);

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
    // Remarked at the seed and kept for explain.
    auto leaveWhole = [&](const Twine &why) {
      plan.wholeSeeds.push_back({u.seed.op, why.str()});
      return u.seed.op->emitRemark() << "left whole on every rank: " << why;
    };
    std::string type;
    llvm::raw_string_ostream(type) << result.getType();
    if (u.why == Unplaced::Why::NoCut) {
      InFlightDiagnostic diag = leaveWhole(
          "no tensor-parallel cut of output dimension " + Twine(u.seed.dim) +
          " of '" + type +
          "' keeps the values after it local; each cut tried fails (see "
          "notes)");
      noteSections(diag, u.seed.op);
      noteRejected(diag, u.failures, "");
      continue;
    }
    if (u.why == Unplaced::Why::IndivisibleOutput) {
      InFlightDiagnostic diag = leaveWhole(
          "output dimension " + Twine(u.seed.dim) + " of '" + type +
          "' does not divide among " + Twine(tpSize) +
          " ranks, and no other contraction with a weight reads what it "
          "computes (padded to a "
          "multiple of " +
          Twine(tpSize) + ", as Megatron-LM pads a vocabulary, it is cut)");
      noteRejected(diag, u.failures, "");
      continue;
    }
    if (u.why == Unplaced::Why::NeedsFallback) {
      InFlightDiagnostic diag = leaveWhole(
          "its cut output dimension " + Twine(u.seed.dim) + " of '" + type +
          "' is never summed over by a contraction with a weight, and "
          "gathering it would cost " +
          Twine(u.fallback->extra) +
          " bytes per rank per forward pass (allow-fallback=true accepts "
          "that)");
      for (const PlannedCollective &c : u.fallback->collectives)
        diag.attachNote(c.op->getLoc()) << c.reason;
      continue;
    }
    SetVector<Operation *> slice =
        sliceUpToSeeds(u.seed.op, seedOps, [&](Operation *op) {
          return llvm::none_of(op->getResults(),
                               [&](Value v) { return taken.contains(v); });
        });
    auto read = [&](Value v) { return broadcastReads.contains(v); };
    if (read(result) || llvm::any_of(slice, [&](Operation *op) {
          return llvm::any_of(op->getResults(), read);
        })) {
      leaveWhole("no cut for " + Twine(tpSize) + " ranks of output dimension " +
                 Twine(u.seed.dim) + " of '" + type +
                 "', and the cut regions read it through a broadcast");
      continue;
    }
    reportNoCut(u.seed, tpSize, u.failures);
    return failure();
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Weights several functions read
//===----------------------------------------------------------------------===//

namespace {
/// One analysis of a function: its plan and the diagnostics it emitted,
/// held back until the plan is the one kept.
struct Attempt {
  FailureOr<ShardPlan> plan = failure();
  SmallVector<Diagnostic> diagnostics;
};

/// An argument of function `func` that another function reads too.
struct Reader {
  unsigned func;
  BlockArgument arg;
};

/// The one cut decided for a shared weight, and its first reader that cuts
/// it so.
struct Decision {
  RequiredCut required;
  Reader by;
};
} // namespace

static Attempt attemptSharding(FunctionOpInterface func, int64_t tpSize,
                               bool allowFallback, const RequiredCuts &required,
                               bool keepSignature) {
  Attempt attempt;
  ScopedDiagnosticHandler hold(func->getContext(), [&](Diagnostic &diag) {
    attempt.diagnostics.push_back(std::move(diag));
    return success();
  });
  attempt.plan =
      analyzeSharding(func, tpSize, allowFallback, required, keepSignature);
  // At tp 1 every cut is exact, so the plan is the one larger tp sizes
  // would use where one exists (a tp-1 build then runs the same program,
  // all-reduces over one rank included, as the baseline of a scaling run);
  // where none does, one rank holds everything and nothing is cut.
  if (tpSize == 1 && failed(attempt.plan))
    attempt.plan = ShardPlan{};
  return attempt;
}

static std::optional<DimCut> cutOf(const ShardPlan &plan, Value arg) {
  for (const ShardRegion &region : plan.regions)
    if (auto it = region.cuts.find(arg); it != region.cuts.end())
      return it->second;
  return std::nullopt;
}

/// Analyzes `func` again with its `required` cuts. A cut the plan does not
/// give moves from `required` to `unmet`, and the analysis is repeated
/// without it (a preference kept for nothing may have cost another): the
/// plan returned gives every cut left in `required`.
static Attempt meetRequired(FunctionOpInterface func, int64_t tpSize,
                            bool allowFallback, bool keepSignature,
                            RequiredCuts &required, DenseSet<Value> &unmet) {
  while (true) {
    Attempt attempt =
        attemptSharding(func, tpSize, allowFallback, required, keepSignature);
    SmallVector<Value> missed;
    for (auto &[arg, shared] : required)
      if (failed(attempt.plan) || cutOf(*attempt.plan, arg) != shared.cut)
        missed.push_back(arg);
    if (missed.empty())
      return attempt;
    for (Value arg : missed) {
      required.erase(arg);
      unmet.insert(arg);
    }
  }
}

static ShardAttr shardAttr(MLIRContext *ctx, DimCut cut) {
  return ShardAttr::get(ctx, cut.dim, cut.outer, cut.replicas);
}

SmallVector<FailureOr<ShardPlan>, 0>
mlir::tp::analyzeModuleSharding(ArrayRef<FunctionOpInterface> funcs,
                                int64_t tpSize, bool allowFallback) {
  // A function that the module calls keeps the signature its callers use.
  SmallVector<bool> called;
  for (FunctionOpInterface func : funcs)
    called.push_back(
        !SymbolTable::symbolKnownUseEmpty(func, func->getParentOp()));
  SmallVector<Attempt, 0> attempts;
  for (auto [func, keepSignature] : llvm::zip_equal(funcs, called))
    attempts.push_back(attemptSharding(func, tpSize, allowFallback,
                                       RequiredCuts(), keepSignature));

  // The weights several public functions read, by name and type: the
  // runtime, which calls them, gives such a weight one buffer where their
  // cuts agree, else one per cut. (A private function's arguments are its
  // callers' values, not buffers of their own.)
  llvm::MapVector<std::pair<Attribute, Type>, SmallVector<Reader>> shared;
  for (unsigned i = 0, e = funcs.size(); i < e; ++i) {
    FunctionOpInterface func = funcs[i];
    if (!func.isPublic())
      continue;
    for (BlockArgument arg : func.getArguments())
      if (auto name = func.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), TPDialect::getNameAttrName()))
        shared[{name, arg.getType()}].push_back({i, arg});
  }
  shared.remove_if([](const auto &entry) {
    ArrayRef<Reader> readers = entry.second;
    return llvm::all_of(readers, [&](const Reader &r) {
      return r.func == readers.front().func;
    });
  });

  // One cut per shared weight: if any function cuts it, the cut most of
  // them give it (the first's on a tie), which the others are analyzed
  // again to give it too. Leaving it whole where another function cuts it
  // would keep it whole on every rank besides the part. Each reader is
  // required a cut once and keeps it or gives it up (`unmet`), so this
  // ends.
  SmallVector<RequiredCuts> required(funcs.size());
  DenseMap<std::pair<Attribute, Type>, Decision> decided;
  DenseSet<Value> unmet;
  auto cutIn = [&](const Reader &r) -> std::optional<DimCut> {
    return cutOf(*attempts[r.func].plan, r.arg);
  };
  bool changed = true;
  while (changed) {
    changed = false;
    SetVector<unsigned> again;
    for (auto &[key, readers] : shared) {
      SmallVector<Reader> planned;
      for (const Reader &r : readers)
        if (succeeded(attempts[r.func].plan))
          planned.push_back(r);
      auto it = decided.find(key);
      if (it == decided.end()) {
        std::optional<Reader> choice;
        int64_t votes = 0;
        for (const Reader &r : planned) {
          std::optional<DimCut> cut = cutIn(r);
          if (!cut)
            continue;
          int64_t n = llvm::count_if(
              planned, [&](const Reader &o) { return cutIn(o) == cut; });
          if (n > votes) {
            choice = r;
            votes = n;
          }
        }
        if (!choice || votes == static_cast<int64_t>(planned.size()))
          continue;
        auto name = cast<StringAttr>(key.first);
        it = decided
                 .insert({key,
                          {{*cutIn(*choice), name,
                            SymbolTable::getSymbolName(funcs[choice->func])},
                           *choice}})
                 .first;
      }
      const RequiredCut &target = it->second.required;
      for (const Reader &r : planned) {
        if (cutIn(r) == target.cut || unmet.contains(r.arg) ||
            required[r.func].contains(r.arg))
          continue;
        required[r.func][r.arg] = target;
        again.insert(r.func);
        changed = true;
      }
    }
    for (unsigned f : again)
      attempts[f] = meetRequired(funcs[f], tpSize, allowFallback, called[f],
                                 required[f], unmet);
  }

  // The diagnostics of the plans kept, and the weights held once per cut;
  // none at tp 1, where they would be about a size not asked for.
  SmallVector<FailureOr<ShardPlan>, 0> plans;
  for (unsigned i = 0, e = funcs.size(); i < e; ++i) {
    FunctionOpInterface func = funcs[i];
    Attempt &attempt = attempts[i];
    plans.push_back(std::move(attempt.plan));
    if (tpSize == 1)
      continue;
    DiagnosticEngine &engine = func->getContext()->getDiagEngine();
    for (Diagnostic &diag : attempt.diagnostics)
      engine.emit(std::move(diag));
    for (auto &[key, readers] : shared) {
      auto it = decided.find(key);
      if (it == decided.end() || failed(plans.back()))
        continue;
      const Decision &decision = it->second;
      for (const Reader &r : readers) {
        if (r.func != i || !unmet.contains(r.arg))
          continue;
        // (A plan made for another weight may have given it the cut after
        // all.)
        std::optional<DimCut> own = cutOf(*plans.back(), r.arg);
        if (own == decision.required.cut)
          continue;
        MLIRContext *ctx = func->getContext();
        InFlightDiagnostic diag =
            emitRemark(r.arg.getLoc())
            << "weight '" << decision.required.name.getValue() << "' is ";
        if (own)
          diag << "cut " << shardAttr(ctx, *own);
        else
          diag << "left whole";
        StringRef self = SymbolTable::getSymbolName(func).getValue();
        diag << " by @" << self << " and " << (own ? "" : "cut ")
             << shardAttr(ctx, decision.required.cut) << " by @"
             << decision.required.by.getValue() << ", which no cut of @" << self
             << " gives it: each rank holds it once per cut";
        diag.attachNote(decision.by.arg.getLoc())
            << "cut " << shardAttr(ctx, decision.required.cut) << " here";
      }
    }
  }
  return plans;
}

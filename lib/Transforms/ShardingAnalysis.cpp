//===- ShardingAnalysis.cpp - find the column -> row cuts ----------------===//
//
// A cut starts at the output dimension of a contraction with a weight operand
// (a widening matmul) and spreads, in both directions, to every value that
// must hold the matching part for the ops between to stay rank-local:
//
//  * through linalg ops by their indexing maps: a cut on an operand dim is a
//    cut on a loop; every operand and result indexed by that loop is cut the
//    same way. A sum reduction over the cut loop ends the cut: its result is
//    a partial sum, and one all-reduce makes it whole again;
//  * through reshapes by their reassociation: the cut must land on a whole
//    factor (the heads factor of [3, h, dh], not the `3`);
//  * through slices by their offsets: a slice must take whole blocks.
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
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <deque>
#include <numeric>
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
         llvm::divideCeil(
             cast<RankedTensorType>(type).getElementTypeBitWidth(), 8);
}

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
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

/// A function argument, possibly moved or repeated: a weight. A weight
/// broadcast over the batch is how torch-mlir feeds `x @ W` on 3-D
/// activations to linalg.batch_matmul.
static bool isWeight(Value value) {
  auto arg = dyn_cast<BlockArgument>(weightSource(value));
  return arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

/// True if every result is `init + f(inputs)`: then summing over a cut loop
/// on each rank and adding the ranks' results is the full reduction, as long
/// as the init is counted once.
static bool isSumReduction(linalg::LinalgOp op) {
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

/// A linalg.broadcast, or a generic that only repeats its one input along
/// new dimensions (all loops parallel, the body yields the input).
static bool isBroadcast(linalg::LinalgOp op) {
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

/// For a cut on a dim that a reshape splits into `sizes` (row-major), the
/// position within `sizes` that holds the whole cut and the cut there.
static std::optional<std::pair<unsigned, int64_t>>
refineCut(ArrayRef<int64_t> sizes, int64_t outer, int64_t numRanks) {
  int64_t before = 1;
  for (auto [j, size] : llvm::enumerate(sizes)) {
    if (size != 1 && outer % before == 0 &&
        size % ((outer / before) * numRanks) == 0)
      return std::make_pair(static_cast<unsigned>(j), outer / before);
    before *= size;
  }
  return std::nullopt;
}

/// The cuts of the unsplit dim that would pass the reshape: one per factor
/// that tp-size divides, cutting that factor in each block before it.
static SmallVector<int64_t> cutsThatPass(ArrayRef<int64_t> sizes,
                                         int64_t numRanks) {
  SmallVector<int64_t> outers;
  int64_t before = 1;
  for (int64_t size : sizes) {
    if (size != 1 && size % numRanks == 0)
      outers.push_back(before);
    before *= size;
  }
  return outers;
}

/// Why no factor of a reshaped dim can carry a cut.
static std::string describeNoFactor(int64_t dim, ArrayRef<int64_t> sizes,
                                    int64_t outer, int64_t numRanks,
                                    StringRef verb) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << verb << " dimension " << dim << " as [";
  llvm::interleave(sizes, os, " x ");
  os << "]: a cut into " << numRanks << " parts";
  if (outer > 1)
    os << " of each of " << outer << " blocks";
  os << " must fall on one whole factor (for attention: between heads), "
        "and no factor fits";
  return s;
}

namespace {

/// One attempt: spreads a cut from a start value to a fixpoint.
class CutPropagation {
public:
  CutPropagation(int64_t numRanks, const DenseSet<Value> &taken)
      : numRanks(numRanks), taken(taken) {}

  /// Spreads `cut` from `start`. False on a hard failure: `failure` says
  /// where and why, `hints` lists start points worth trying instead.
  bool run(Value start, DimCut cut, Operation *at);

  llvm::MapVector<Value, DimCut> cuts;
  SmallVector<PlannedCollective> collectives;
  /// Uncut values a broadcast reads whole to make a cut result (a single
  /// K/V head repeated for the local query heads): computed whole on every
  /// rank, they need no cut of their own.
  SetVector<Value> broadcastReads;
  struct Failure {
    Operation *op;
    std::string message;
  };
  std::optional<Failure> failure;
  SmallVector<std::pair<Value, DimCut>> hints;

private:
  std::optional<DimCut> lookup(Value v) const {
    auto it = cuts.find(v);
    if (it == cuts.end())
      return std::nullopt;
    return it->second;
  }
  bool fail(Operation *op, const Twine &message) {
    if (!failure)
      failure = Failure{op, message.str()};
    return false;
  }
  bool mark(Value v, DimCut cut, Operation *at);
  bool visit(Operation *op);
  bool visitLinalg(linalg::LinalgOp op);
  bool visitExpand(tensor::ExpandShapeOp op);
  bool visitCollapse(tensor::CollapseShapeOp op);
  bool visitExtractSlice(tensor::ExtractSliceOp op);
  bool visitInsertSlice(tensor::InsertSliceOp op);
  bool visitConcat(tensor::ConcatOp op);
  bool visitSoftmax(linalg::SoftmaxOp op);
  bool visitSameShape(Operation *op);
  bool visitUnknown(Operation *op);
  void gather(OpOperand &use, const Twine &reason);
  void partialSum(linalg::LinalgOp op, unsigned loop);

  int64_t numRanks;
  const DenseSet<Value> &taken;
  std::deque<Value> worklist;
  DenseSet<Operation *> reductions;
  DenseSet<OpOperand *> gathered;
};

} // namespace

bool CutPropagation::run(Value start, DimCut cut, Operation *at) {
  if (!mark(start, cut, at))
    return false;
  while (!worklist.empty()) {
    Value v = worklist.front();
    worklist.pop_front();
    if (Operation *def = v.getDefiningOp())
      if (!visit(def))
        return false;
    for (Operation *user : v.getUsers())
      if (!visit(user))
        return false;
  }
  return true;
}

bool CutPropagation::mark(Value v, DimCut cut, Operation *at) {
  if (std::optional<DimCut> old = lookup(v)) {
    if (*old == cut)
      return true;
    return fail(at, llvm::formatv("needs dimension {0} of a value cut in {1} "
                                  "blocks, which is already cut on dimension "
                                  "{2} in {3} blocks",
                                  cut.dim, cut.outer, old->dim, old->outer));
  }
  if (taken.contains(v))
    return fail(at, "needs a cut of a value that another pair already cuts "
                    "differently");
  // Other dimensions (a dynamic batch, say) may be dynamic.
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.isDynamicDim(cut.dim))
    return fail(at, llvm::formatv("can only cut a static dimension, got "
                                  "dimension {0} of {1}",
                                  cut.dim, typeString(v.getType())));
  int64_t size = type.getDimSize(cut.dim);
  if (size % (cut.outer * numRanks) != 0)
    return fail(at, llvm::formatv("cannot cut dimension {0} of {1} ({2} "
                                  "blocks of {3}) into {4} equal parts",
                                  cut.dim, typeString(type), cut.outer,
                                  size / cut.outer, numRanks));
  cuts.insert({v, cut});
  worklist.push_back(v);
  return true;
}

void CutPropagation::gather(OpOperand &use, const Twine &reason) {
  if (!gathered.insert(&use).second)
    return;
  PlannedCollective c;
  c.kind = PlannedCollective::Kind::AllGather;
  c.op = use.getOwner();
  c.use = &use;
  c.bytes = tensorBytes(use.get().getType());
  c.reason = reason.str();
  collectives.push_back(std::move(c));
}

void CutPropagation::partialSum(linalg::LinalgOp op, unsigned loop) {
  if (!reductions.insert(op).second)
    return;
  PlannedCollective c;
  c.kind = PlannedCollective::Kind::AllReduce;
  c.op = op;
  c.bytes = tensorBytes(op->getResult(0).getType());
  for (OpOperand *input : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(input).isFunctionOfDim(loop) &&
        isWeight(input->get()))
      c.narrowing = true;
  if (!c.narrowing)
    c.reason = "it sums over the cut dimension of two activations (in "
               "attention: the cut falls inside each head), so every rank "
               "holds partial scores that must be summed before any "
               "nonlinear use";
  collectives.push_back(std::move(c));
}

bool CutPropagation::visit(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return visitLinalg(linalgOp);
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op))
    return visitSoftmax(softmax);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return visitExpand(expand);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return visitCollapse(collapse);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return visitExtractSlice(slice);
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return visitInsertSlice(insert);
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return visitConcat(concat);
  if (isa<tensor::EmptyOp>(op))
    return true;
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    // Reading the size of an uncut dimension (a dynamic batch) is local.
    std::optional<int64_t> index = dim.getConstantIndex();
    std::optional<DimCut> cut = lookup(dim.getSource());
    if (index && cut && *index != cut->dim)
      return true;
    return fail(op, "reads the size of a cut dimension, which differs "
                    "between the full tensor and a rank's part");
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense && dense.isSplat())
      return true;
    return fail(op, "a non-uniform constant cannot be cut without knowing "
                    "the rank; pass it as a function argument instead "
                    "(tp-externalize-weights does)");
  }
  if (op->hasTrait<OpTrait::Elementwise>())
    return visitSameShape(op);
  return visitUnknown(op);
}

bool CutPropagation::visitUnknown(Operation *op) {
  for (OpResult result : op->getResults())
    if (lookup(result))
      return fail(op, "cannot produce a cut value: the analysis does not "
                      "know how this op moves elements");
  for (OpOperand &use : op->getOpOperands())
    if (lookup(use.get()))
      gather(use, llvm::formatv("'{0}' needs the full value: the analysis "
                                "cannot place it on a part",
                                op->getName()));
  return true;
}

bool CutPropagation::visitSameShape(Operation *op) {
  std::optional<DimCut> cut;
  auto consider = [&](Value v) {
    if (std::optional<DimCut> c = lookup(v))
      cut = c;
  };
  llvm::for_each(op->getOperands(), consider);
  llvm::for_each(op->getResults(), consider);
  if (!cut)
    return true;
  for (Value v : op->getOperands())
    if (!mark(v, *cut, op))
      return false;
  for (Value v : op->getResults())
    if (!mark(v, *cut, op))
      return false;
  return true;
}

bool CutPropagation::visitLinalg(linalg::LinalgOp op) {
  // Indexing maps are rebuilt on each query for some ops; fetch them once.
  // They are in operand order (inputs, then inits); result i uses init i's.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numInputs = op.getNumDpsInputs();
  auto resultMap = [&](OpResult r) { return maps[numInputs + r.getResultNumber()]; };
  // The cut loop, from whichever operand or result is cut already.
  std::optional<std::pair<unsigned, int64_t>> loop;
  auto consider = [&](Value v, AffineMap map) {
    std::optional<DimCut> cut = lookup(v);
    if (!cut)
      return true;
    auto dimExpr = dyn_cast<AffineDimExpr>(map.getResult(cut->dim));
    if (!dimExpr)
      return fail(op, llvm::formatv("indexes cut dimension {0} by {1}, not "
                                    "by a single loop",
                                    cut->dim, map.getResult(cut->dim)));
    std::pair<unsigned, int64_t> here{dimExpr.getPosition(), cut->outer};
    if (loop && *loop != here)
      return fail(op, llvm::formatv("receives two different cuts (loop {0} "
                                    "and loop {1})",
                                    loop->first, here.first));
    loop = here;
    return true;
  };
  for (OpOperand &operand : op->getOpOperands())
    if (!consider(operand.get(), maps[operand.getOperandNumber()]))
      return false;
  for (OpResult result : op->getResults())
    if (!consider(result, resultMap(result)))
      return false;
  if (!loop)
    return true;
  auto [l, outer] = *loop;

  bool usesIndex = false;
  op.getBlock()->walk([&](linalg::IndexOp index) {
    usesIndex |= index.getDim() == l;
  });
  if (usesIndex)
    return fail(op, llvm::formatv("reads the index of cut loop {0}, which "
                                  "differs between ranks",
                                  l));

  bool reduction =
      op.getIteratorTypesArray()[l] == utils::IteratorType::reduction;
  if (reduction && !isSumReduction(op)) {
    // A max or a normalisation over the cut: only the whole input will do.
    for (OpResult result : op->getResults())
      if (lookup(result))
        return fail(op, "reduces over the cut loop but its result is "
                        "needed cut");
    for (OpOperand *input : op.getDpsInputOperands())
      if (lookup(input->get()))
        gather(*input, llvm::formatv("'{0}' reduces nonlinearly over the cut "
                                     "dimension",
                                     op->getName()));
    return true;
  }

  auto markIndexed = [&](Value v, AffineMap map) {
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      if (auto dimExpr = dyn_cast<AffineDimExpr>(expr);
          dimExpr && dimExpr.getPosition() == l) {
        if (!mark(v, DimCut{static_cast<int64_t>(pos), outer}, op))
          return false;
      } else if (expr.isFunctionOfDim(l)) {
        return fail(op, llvm::formatv("indexes an operand by {0}, which "
                                      "mixes the cut loop with others",
                                      expr));
      }
    }
    return true;
  };
  for (OpOperand &operand : op->getOpOperands())
    if (!markIndexed(operand.get(), maps[operand.getOperandNumber()]))
      return false;
  if (reduction) {
    if (op->getNumResults() != 1)
      return fail(op, "sums several results over the cut loop; only single "
                      "result reductions get an all-reduce");
    for (OpResult result : op->getResults())
      if (lookup(result))
        return fail(op, "sums over the cut loop but its result is needed "
                        "cut");
    partialSum(op, l);
    return true;
  }
  for (OpResult result : op->getResults())
    if (!markIndexed(result, resultMap(result)))
      return false;
  if (isBroadcast(op))
    for (OpOperand *input : op.getDpsInputOperands())
      if (!lookup(input->get()))
        broadcastReads.insert(input->get());
  return true;
}

bool CutPropagation::visitSoftmax(linalg::SoftmaxOp op) {
  std::optional<DimCut> cut = lookup(op.getInput());
  if (!cut)
    cut = lookup(op.getOutput());
  if (!cut)
    cut = lookup(op.getResult()[0]);
  if (!cut)
    return true;
  if (cut->dim == static_cast<int64_t>(op.getDimension())) {
    if (lookup(op.getResult()[0]))
      return fail(op, "normalises over the cut dimension but its result is "
                      "needed cut");
    gather(op.getInputMutable(), "softmax normalises over the cut dimension");
    return true;
  }
  return mark(op.getInput(), *cut, op) && mark(op.getOutput(), *cut, op) &&
         mark(op.getResult()[0], *cut, op);
}

bool CutPropagation::visitExpand(tensor::ExpandShapeOp op) {
  SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  if (std::optional<DimCut> cut = lookup(op.getSrc())) {
    ReassociationIndices &group = groups[cut->dim];
    SmallVector<int64_t> sizes;
    for (int64_t d : group)
      sizes.push_back(shape[d]);
    // Another factor of the group may be the one that keeps ops local
    // further on (heads rather than q|k|v): worth a try either way.
    for (int64_t outer : cutsThatPass(sizes, numRanks))
      hints.push_back({op.getSrc(), DimCut{cut->dim, outer}});
    auto refined = refineCut(sizes, cut->outer, numRanks);
    if (!refined)
      return fail(op, describeNoFactor(cut->dim, sizes, cut->outer, numRanks,
                                       "unfolds"));
    if (!mark(op.getResult(),
              DimCut{group[refined->first], refined->second}, op))
      return false;
  }
  if (std::optional<DimCut> cut = lookup(op.getResult())) {
    for (auto [srcDim, group] : llvm::enumerate(groups)) {
      int64_t before = 1;
      for (int64_t d : group) {
        if (d == cut->dim)
          return mark(op.getSrc(),
                      DimCut{static_cast<int64_t>(srcDim), cut->outer * before},
                      op);
        before *= shape[d];
      }
    }
  }
  return true;
}

bool CutPropagation::visitCollapse(tensor::CollapseShapeOp op) {
  SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
  ArrayRef<int64_t> shape = op.getSrcType().getShape();
  if (std::optional<DimCut> cut = lookup(op.getSrc())) {
    for (auto [resDim, group] : llvm::enumerate(groups)) {
      int64_t before = 1;
      for (int64_t d : group) {
        if (d == cut->dim) {
          if (!mark(op.getResult(),
                    DimCut{static_cast<int64_t>(resDim), cut->outer * before},
                    op))
            return false;
        }
        before *= shape[d];
      }
    }
  }
  if (std::optional<DimCut> cut = lookup(op.getResult())) {
    ReassociationIndices &group = groups[cut->dim];
    SmallVector<int64_t> sizes;
    for (int64_t d : group)
      sizes.push_back(shape[d]);
    for (int64_t outer : cutsThatPass(sizes, numRanks))
      hints.push_back({op.getResult(), DimCut{cut->dim, outer}});
    auto refined = refineCut(sizes, cut->outer, numRanks);
    if (!refined)
      return fail(op, describeNoFactor(cut->dim, sizes, cut->outer, numRanks,
                                       "folds"));
    return mark(op.getSrc(), DimCut{group[refined->first], refined->second},
                op);
  }
  return true;
}

bool CutPropagation::visitExtractSlice(tensor::ExtractSliceOp op) {
  std::optional<DimCut> srcCut = lookup(op.getSource());
  std::optional<DimCut> resCut = lookup(op.getResult());
  if (!srcCut && !resCut)
    return true;
  ArrayRef<int64_t> offsets = op.getStaticOffsets();
  ArrayRef<int64_t> sizes = op.getStaticSizes();
  ArrayRef<int64_t> strides = op.getStaticStrides();
  ArrayRef<int64_t> srcShape = op.getSourceType().getShape();
  // The source dims that a rank-reducing slice keeps, in result order.
  llvm::SmallBitVector dropped = op.getDroppedDims();
  SmallVector<int64_t> kept;
  for (int64_t i = 0, e = srcShape.size(); i < e; ++i)
    if (!dropped.test(i))
      kept.push_back(i);
  int64_t d = srcCut ? srcCut->dim : kept[resCut->dim];
  // Other dims may be sliced any way (RoPE's strided halves of dh).
  if (ShapedType::isDynamic(offsets[d]) || ShapedType::isDynamic(sizes[d]) ||
      strides[d] != 1)
    return fail(op, "slices a cut dimension with a dynamic offset or a "
                    "stride");
  if (dropped.test(d))
    return fail(op, "takes a single index of a cut dimension");
  int64_t rd = llvm::find(kept, d) - kept.begin();
  if (srcCut) {
    int64_t block = srcShape[d] / srcCut->outer;
    DimCut cut{rd, srcCut->outer};
    if (offsets[d] != 0 || sizes[d] != srcShape[d]) {
      if (offsets[d] % block != 0 || sizes[d] % block != 0) {
        // Blocks as large as the slice's alignment would pass (q|k|v
        // slices of a fused projection propose 3 blocks).
        int64_t aligned =
            std::gcd(std::gcd(offsets[d], sizes[d]), srcShape[d]);
        hints.push_back({op.getSource(), DimCut{d, srcShape[d] / aligned}});
        return fail(op, llvm::formatv("takes [{0}, {1}) of a dimension cut "
                                      "in blocks of {2}: not whole blocks",
                                      offsets[d], offsets[d] + sizes[d],
                                      block));
      }
      cut.outer = sizes[d] / block;
    }
    if (!mark(op.getResult(), cut, op))
      return false;
  }
  if (resCut) {
    int64_t block = sizes[d] / resCut->outer;
    if (srcShape[d] % block != 0 || offsets[d] % block != 0)
      return fail(op, llvm::formatv("takes [{0}, {1}), which is not made of "
                                    "whole blocks of {2}",
                                    offsets[d], offsets[d] + sizes[d], block));
    return mark(op.getSource(), DimCut{d, srcShape[d] / block}, op);
  }
  return true;
}

/// An insert that covers the whole cut dimension keeps the cut: each rank
/// inserts its part into its part.
bool CutPropagation::visitInsertSlice(tensor::InsertSliceOp op) {
  std::optional<DimCut> cut = lookup(op.getResult());
  if (!cut)
    cut = lookup(op.getDest());
  if (!cut)
    cut = lookup(op.getSource());
  if (!cut)
    return true;
  if (op.getSourceType().getRank() != op.getResultType().getRank())
    return fail(op, "rank-reducing inserts into a cut tensor are not "
                    "supported");
  int64_t d = cut->dim;
  if (op.getStaticOffsets()[d] != 0 || op.getStaticStrides()[d] != 1 ||
      op.getStaticSizes()[d] != op.getResultType().getDimSize(d))
    return fail(op, "inserts a part of a cut dimension");
  return mark(op.getSource(), *cut, op) && mark(op.getDest(), *cut, op) &&
         mark(op.getResult(), *cut, op);
}

bool CutPropagation::visitConcat(tensor::ConcatOp op) {
  std::optional<DimCut> cut = lookup(op.getResult());
  for (Value input : op.getInputs())
    if (!cut)
      cut = lookup(input);
  if (!cut)
    return true;
  if (cut->dim == static_cast<int64_t>(op.getDim()))
    return fail(op, "concatenates along the cut dimension");
  return visitSameShape(op);
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
  llvm::MapVector<Value, DimCut> cuts;
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
      bool onlyWeight = llvm::all_of(llvm::seq<unsigned>(0, e), [&](unsigned i) {
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
    const char *what = c.kind == PlannedCollective::Kind::AllReduce
                           ? "an all-reduce of partial sums"
                           : "an all-gather";
    Type type = c.kind == PlannedCollective::Kind::AllReduce
                    ? c.op->getResult(0).getType()
                    : c.use->get().getType();
    InFlightDiagnostic diag = asError ? c.op->emitError() : c.op->emitRemark();
    diag << "tensor-parallel cut for " << tpSize << " ranks needs " << what
         << " of " << type << " here (" << c.bytes
         << " bytes per rank per forward pass): " << c.reason;
    if (asError)
      diag << "; pass allow-fallback=true to accept it";
    noteRejected(diag, rejected, "a cut without it was rejected: ");
  }
}

static void reportNoCut(const Seed &seed, int64_t tpSize,
                        ArrayRef<CutPropagation::Failure> failures) {
  InFlightDiagnostic diag = seed.op->emitError()
                            << "no tensor-parallel cut for " << tpSize
                            << " ranks of output dimension " << seed.resultDim
                            << " of " << seed.op->getResult(0).getType()
                            << " keeps the values after it local; each cut "
                               "tried fails (see notes)";
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
      bool ok = attempt.run(start, cut, seed.op);
      llvm::append_range(queue, attempt.hints);
      if (!ok) {
        failures.push_back(*attempt.failure);
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
      auto diag = allowFallback ? seed.op->emitRemark()
                                : seed.op->emitError();
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

//===- CutPropagation.cpp - spread a cut through the ops' rules -----------===//
//
// The driver of one attempt at a cut: a worklist of cut values; each op that
// defines or reads one applies its rule (CutRuleOpInterface). Ops without a
// rule keep a cut when elementwise and otherwise need their cut operands
// whole.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/CutRuleOpInterface.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::tp;

#include "tp/Transforms/CutRuleOpInterface.cpp.inc"

static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// "1 block", "3 blocks".
static std::string blocks(int64_t n) {
  return (Twine(n) + (n == 1 ? " block" : " blocks")).str();
}

/// "3 blocks", "1 block, each part on 2 ranks", "1 block, each part on 2
/// ranks that split dimension 2".
static std::string blocks(DimCut cut) {
  std::string s = blocks(cut.outer);
  if (cut.replicas > 1)
    s += (", each part on " + Twine(cut.replicas) + " ranks").str();
  if (cut.subDim >= 0)
    s += (" that split dimension " + Twine(cut.subDim)).str();
  return s;
}

std::string PlannedCollective::describe() const {
  if (kind == Kind::AllGather)
    return "an all-gather";
  if (kind == Kind::ArgReduce)
    return ("two all-reduces (" + stringifyReductionKind(reduction) +
            " of the values, min of their positions)")
        .str();
  if (reduction == ReductionKind::Sum)
    return "an all-reduce of partial sums";
  return ("an all-reduce (" + stringifyReductionKind(reduction) +
          ") of partial results")
      .str();
}

std::optional<DimCut> CutPropagation::lookup(Value v) const {
  auto it = cuts.find(v);
  if (it == cuts.end())
    return std::nullopt;
  return it->second;
}

LogicalResult CutPropagation::fail(Operation *op, const Twine &message,
                                   bool indivisible) {
  if (!rejected)
    rejected = Failure{op, message.str(), indivisible};
  return failure();
}

LogicalResult CutPropagation::run(Value start, DimCut cut, Operation *at) {
  if (failed(mark(start, cut, at)))
    return failure();
  while (!worklist.empty()) {
    Value v = worklist.front();
    worklist.pop_front();
    if (Operation *def = v.getDefiningOp())
      if (failed(visit(def)))
        return failure();
    for (Operation *user : v.getUsers())
      if (failed(visit(user)))
        return failure();
  }
  // A rule may refuse a collective without failing its op (gather).
  return failure(rejected.has_value());
}

LogicalResult CutPropagation::mark(Value v, DimCut cut, Operation *at) {
  if (std::optional<DimCut> old = lookup(v)) {
    if (*old == cut)
      return success();
    return fail(at,
                llvm::formatv("needs dimension {0} of a value cut in {1}, "
                              "which is already cut on dimension {2} in "
                              "{3}",
                              cut.dim, blocks(cut), old->dim, blocks(*old)));
  }
  if (taken.contains(v))
    return fail(at, "needs a cut of a value that another pair already cuts "
                    "differently");
  auto arg = dyn_cast<BlockArgument>(v);
  bool isArgument =
      arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (isArgument && wholeArguments)
    return fail(at, llvm::formatv("needs a cut of argument #{0}, which the "
                                  "callers of its function in this module "
                                  "pass whole (tp-shard does not cut across "
                                  "calls: inline them first)",
                                  arg.getArgNumber()));
  // Other dimensions (a dynamic batch, say) may be dynamic.
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.isDynamicDim(cut.dim))
    return fail(at, llvm::formatv("can only cut a static dimension, got "
                                  "dimension {0} of {1}",
                                  cut.dim, typeString(v.getType())));
  int64_t size = type.getDimSize(cut.dim);
  // Rules derive replicas from cuts of this attempt, which divide it.
  assert(cut.replicas >= 1 && numRanks % cut.replicas == 0 &&
         "replicas must divide the number of ranks");
  assert((cut.subDim < 0 || (cut.replicas > 1 && cut.subDim != cut.dim)) &&
         "a sub-dimension is split by the replicas of another one");
  if (cut.subDim >= 0) {
    // `#tp.shard` records one dimension: the caller could not slice it.
    if (isArgument)
      return fail(at, llvm::formatv("needs an argument cut on two dimensions "
                                    "({0} and {1}), which no '#tp.shard' "
                                    "records",
                                    cut.dim, cut.subDim));
    if (type.isDynamicDim(cut.subDim))
      return fail(at, llvm::formatv("can only cut a static dimension, got "
                                    "dimension {0} of {1}",
                                    cut.subDim, typeString(v.getType())));
    if (type.getDimSize(cut.subDim) % cut.replicas != 0)
      return fail(at,
                  llvm::formatv("cannot cut dimension {0} of {1} into {2} "
                                "equal parts among the ranks that share a "
                                "part of dimension {3}",
                                cut.subDim, typeString(type), cut.replicas,
                                cut.dim),
                  /*indivisible=*/true);
  }
  int64_t parts = cut.parts(numRanks);
  if (size % (cut.outer * parts) != 0)
    return fail(at,
                llvm::formatv("cannot cut dimension {0} of {1}{2} into "
                              "{3} equal parts",
                              cut.dim, typeString(type),
                              cut.outer == 1 ? std::string()
                                             : llvm::formatv(" ({0} of {1})",
                                                             blocks(cut.outer),
                                                             size / cut.outer)
                                                   .str(),
                              parts),
                /*indivisible=*/true);
  cuts.insert({v, cut});
  worklist.push_back(v);
  return success();
}

void CutPropagation::gather(OpOperand &use, const Twine &reason) {
  if (!gathered.insert(&use).second)
    return;
  if (std::optional<DimCut> cut = lookup(use.get()); cut && cut->subDim >= 0) {
    (void)fail(use.getOwner(),
               llvm::formatv("needs the whole of a value cut on dimensions "
                             "{0} and {1}: no all-gather assembles it",
                             cut->dim, cut->subDim));
    return;
  }
  if (std::optional<DimCut> cut = lookup(use.get()); cut && cut->replicas > 1) {
    (void)fail(use.getOwner(),
               llvm::formatv("needs the whole of a value whose parts {0} "
                             "ranks each hold: no all-gather assembles it",
                             cut->replicas));
    return;
  }
  PlannedCollective c;
  c.kind = PlannedCollective::Kind::AllGather;
  c.op = use.getOwner();
  c.use = &use;
  c.bytes = tensorBytes(use.get().getType());
  c.reason = reason.str();
  collectives.push_back(std::move(c));
}

void CutPropagation::reduce(Operation *op, ReductionKind kind,
                            PlannedCollective::Purpose purpose,
                            const Twine &reason, bool withIndex) {
  if (!reduced.insert(op).second)
    return;
  PlannedCollective c;
  c.kind = withIndex ? PlannedCollective::Kind::ArgReduce
                     : PlannedCollective::Kind::AllReduce;
  c.reduction = kind;
  c.op = op;
  c.purpose = purpose;
  // The positions travel as f32, as the values do (TPShard.cpp).
  c.bytes = tensorBytes(op->getResult(0).getType()) * (withIndex ? 2 : 1);
  c.reason = reason.str();
  collectives.push_back(std::move(c));
}

LogicalResult CutPropagation::visit(Operation *op) {
  if (auto rule = dyn_cast<CutRuleOpInterface>(op))
    return rule.propagateCuts(*this);
  if (op->hasTrait<OpTrait::Elementwise>())
    return propagateSameCut(op, *this);
  return visitUnknown(op);
}

LogicalResult CutPropagation::visitUnknown(Operation *op) {
  for (OpResult result : op->getResults())
    if (lookup(result))
      return fail(op, "cannot produce a cut value: the analysis does not "
                      "know how this op moves elements");
  for (OpOperand &use : op->getOpOperands())
    if (lookup(use.get()))
      gather(use, llvm::formatv("'{0}' needs the full value: the analysis "
                                "cannot place it on a part",
                                op->getName()));
  return success();
}

LogicalResult mlir::tp::propagateSameCut(Operation *op, CutPropagation &state) {
  std::optional<DimCut> cut;
  auto consider = [&](Value v) {
    if (std::optional<DimCut> c = state.lookup(v))
      cut = c;
  };
  llvm::for_each(op->getOperands(), consider);
  llvm::for_each(op->getResults(), consider);
  if (!cut)
    return success();
  for (Value v : op->getOperands())
    if (failed(state.mark(v, *cut, op)))
      return failure();
  for (Value v : op->getResults())
    if (failed(state.mark(v, *cut, op)))
      return failure();
  return success();
}

void mlir::tp::registerCutRuleExternalModels(DialectRegistry &registry) {
  registerArithCutRules(registry);
  registerFuncCutRules(registry);
  registerLinalgCutRules(registry);
  registerTensorCutRules(registry);
}

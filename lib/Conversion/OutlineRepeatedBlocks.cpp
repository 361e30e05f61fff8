//===- OutlineRepeatedBlocks.cpp - one function per repeated block --------===//
//
// A transformer's forward pass is one straight-line function holding N copies
// of the same block, each reading its own weights. LLVM's optimisation and
// code generation cost more than linearly in the size of one function body,
// so the depth of the model, not its structure, set the compile time. Here
// each repeated block becomes one private function that every layer calls
// with its own weights, and LLVM sees each distinct block once.
//
// The analysis (which ops form the instances of a block) is in the first half
// of the file, the rewrite (the callee and the calls) in the second.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPOUTLINEREPEATEDBLOCKS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// Analysis: which ops are the instances of a repeated block.
//===----------------------------------------------------------------------===//

/// The entry block's ops in order, constants and the terminator left out: a
/// callee clones the small constants and takes the others (weights) as
/// arguments, so where the canonicalizer put them does not break a
/// repetition.
struct Body {
  Block *block = nullptr;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> index;
};

/// One occurrence of the block: `size` ops of the body from `begin`, the
/// values it reads from outside in the order of first use, and the results
/// used after it.
struct Instance {
  unsigned begin = 0;
  SmallVector<Value> liveIns;
  /// For each use of an outside value, in walk order, its place in liveIns:
  /// instances that agree here pass the same outside value where the
  /// reference does.
  SmallVector<unsigned> liveInUses;
  /// (op position in the instance, result number) of the results used
  /// after the instance.
  SmallVector<std::pair<unsigned, unsigned>> liveOuts;
};

/// A repetition found in the body: period `period` (ops per block), and the
/// instances, each starting `period` ops after the previous one.
struct Repetition {
  unsigned period = 0;
  SmallVector<unsigned> begins;
};

/// Scalar live-ins the callee recomputes (recomputeScalars), and the
/// argument of each rank-0 tensor they are computed from.
struct Recomputed {
  SmallVector<Value> values;
  SmallVector<std::pair<Value, unsigned>> rootArgs;
};

/// A candidate period with the longest run of ops that repeats with it.
struct Candidate {
  unsigned period, start, length; // ops [start, start + length) are periodic
  unsigned coverage() const { return (length / period) * period; }
};

} // namespace

static bool isConstant(Operation *op) {
  return op && op->hasTrait<OpTrait::ConstantLike>() &&
         op->getNumOperands() == 0 && op->getNumRegions() == 0;
}

/// Whether `v` is a constant the callee gets a copy of: a scalar or a small
/// table. Other constant tensors, splats included, are weights compiled into
/// the model (each layer its own: a stripped model's splat biases differ
/// from layer to layer), passed like weights given as arguments.
static bool isClonedConstant(Value v) {
  Operation *def = v.getDefiningOp();
  if (!isConstant(def))
    return false;
  auto shaped = dyn_cast<ShapedType>(v.getType());
  if (!shaped)
    return true;
  ElementsAttr elements;
  return matchPattern(v, m_Constant(&elements)) &&
         elements.getNumElements() <= 16;
}

/// Whether `v` is a scalar computed by pure ops from rank-0 tensors and
/// constants (a generating model's position: `tensor.extract`, then
/// `arith.index_cast`); those tensors go to `roots`.
static bool isRecomputable(Value v, SetVector<Value> &roots) {
  Operation *def = v.getDefiningOp();
  if (!def || isa<ShapedType>(v.getType()) || def->getNumRegions() ||
      def->getNumResults() != 1 || !isPure(def))
    return false;
  for (Value operand : def->getOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(operand.getType());
    if (isClonedConstant(operand))
      continue;
    if (tensor && tensor.getRank() == 0)
      roots.insert(operand);
    else if (!isRecomputable(operand, roots))
      return false;
  }
  return true;
}

/// Whether ops [begin, begin + size) of the body use `v`, or a scalar they
/// compute from it, as a dynamic size (of a tensor.empty or a slice): the
/// host needs such a value anyway.
static bool usedAsSize(const Body &body, unsigned begin, unsigned size,
                       Value v) {
  DenseSet<Value> derived{v};
  auto isDerived = [&](Value x) { return derived.contains(x); };
  for (unsigned i = begin; i < begin + size; ++i) {
    WalkResult result =
        body.ops[i]->walk<WalkOrder::PreOrder>([&](Operation *op) {
          if (llvm::none_of(op->getOperands(), isDerived))
            return WalkResult::advance();
          auto slice = dyn_cast<OffsetSizeAndStrideOpInterface>(op);
          if (isa<tensor::EmptyOp>(op) ||
              (slice && llvm::any_of(slice.getSizes(), isDerived)))
            return WalkResult::interrupt();
          if (op->getNumRegions() == 0 && isPure(op))
            for (Value result : op->getResults())
              if (!isa<ShapedType>(result.getType()))
                derived.insert(result);
          return WalkResult::advance();
        });
    if (result.wasInterrupted())
      return true;
  }
  return false;
}

/// Erases `op` when nothing uses it and it has no effect, then the ops
/// that computed its operands likewise.
static void eraseIfDead(Operation *op) {
  if (!op || !op->use_empty() || !isPure(op))
    return;
  SmallVector<Operation *> defs;
  for (Value operand : op->getOperands())
    defs.push_back(operand.getDefiningOp());
  op->erase();
  for (Operation *def : defs)
    eraseIfDead(def);
}

/// Whether `op` makes a tensor from static information only: a tensor.empty
/// of a static shape, or a fill of one by a cloned constant.
static bool isMaterialized(Operation *op) {
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(op))
    return empty.getDynamicSizes().empty();
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  if (!fill || !fill.hasPureTensorSemantics() ||
      !isClonedConstant(fill.getInputs()[0]))
    return false;
  Operation *init = fill.getOutputs()[0].getDefiningOp();
  return isa_and_nonnull<tensor::EmptyOp>(init) && isMaterialized(init);
}

/// A copy of the materialized value `v`, its empty tensor included, at the
/// insertion point of `b`.
static Value rematerialize(OpBuilder &b, Value v) {
  Operation *def = v.getDefiningOp();
  IRMapping mapping;
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    mapping.map(fill.getOutputs()[0], rematerialize(b, fill.getOutputs()[0]));
  return b.clone(*def, mapping)->getResult(0);
}

/// Gives each op of `block` its own copy, right before it, of the empty
/// tensors and constant fills it reads as operands (not those its regions
/// read). CSE leaves one of each shape for the whole function, among the
/// first layer's ops (torch-mlir's graphs come so), and the first layer
/// then differs from the others. Where nothing is outlined, the later CSE
/// joins the copies again.
static void rematerializeFills(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isMaterialized(&op))
      continue;
    OpBuilder b(&op);
    DenseMap<Value, Value> copies;
    for (OpOperand &use : op.getOpOperands()) {
      Value v = use.get();
      if (!isMaterialized(v.getDefiningOp()))
        continue;
      auto [it, inserted] = copies.try_emplace(v);
      if (inserted)
        it->second = rematerialize(b, v);
      use.set(it->second);
      eraseIfDead(v.getDefiningOp());
    }
  }
}

static Body collectBody(Block &block) {
  Body body;
  body.block = &block;
  for (Operation &op : block.without_terminator()) {
    if (isConstant(&op))
      continue;
    body.index[&op] = body.ops.size();
    body.ops.push_back(&op);
  }
  return body;
}

/// The structure of `op`, its regions included, without where its operands
/// come from (beyond the values of constants): the same in every layer,
/// including the first, which reads the function's input where the others
/// read the previous layer. Instances are checked exactly later.
static llvm::hash_code structureHash(Operation *op) {
  auto operandHash = [](Value v) -> llvm::hash_code {
    if (!isClonedConstant(v))
      return llvm::hash_code(0);
    return OperationEquivalence::computeHash(
        v.getDefiningOp(), OperationEquivalence::ignoreHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations);
  };
  llvm::hash_code hash = 0;
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    hash = llvm::hash_combine(hash, nested->getNumRegions(),
                              OperationEquivalence::computeHash(
                                  nested, operandHash,
                                  OperationEquivalence::ignoreHashValue,
                                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

static bool isContraction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalg::isaContractionOpInterface(linalgOp);
}

/// For each position b in [0, n], the number of values defined before the
/// b-th op of the body and used at or after it: what a block boundary there
/// would pass from one instance to the next.
static SmallVector<unsigned> liveAcross(const Body &body) {
  unsigned n = body.ops.size();
  SmallVector<int> delta(n + 2, 0);
  for (auto [i, op] : llvm::enumerate(body.ops)) {
    for (Value result : op->getResults()) {
      unsigned last = i;
      for (Operation *user : result.getUsers()) {
        Operation *ancestor = body.block->findAncestorOpInBlock(*user);
        auto it = body.index.find(ancestor);
        last =
            std::max<unsigned>(last, it == body.index.end() ? n : it->second);
      }
      if (last > i) {
        ++delta[i + 1];
        --delta[last + 1];
      }
    }
  }
  SmallVector<unsigned> live(n + 1, 0);
  int running = 0;
  for (unsigned b = 0; b <= n; ++b) {
    running += delta[b];
    live[b] = running;
  }
  return live;
}

/// Every period whose longest periodic run holds at least two blocks with a
/// contraction each (so that a repeated LayerNorm or a chain of pointwise
/// ops does not win over the layer), best coverage first, shorter periods
/// first among equals.
static SmallVector<Candidate> findCandidates(const Body &body) {
  unsigned n = body.ops.size();
  SmallVector<llvm::hash_code> tokens;
  tokens.reserve(n);
  SmallVector<unsigned> contractions(n + 1, 0);
  for (auto [i, op] : llvm::enumerate(body.ops)) {
    tokens.push_back(structureHash(op));
    contractions[i + 1] = contractions[i] + isContraction(op);
  }
  // A run of at least two blocks repeats the first block's contraction one
  // period later: only the distances between contractions of the same
  // structure can be periods, a few per layer rather than every length up
  // to half the body (which cost time quadratic in the depth).
  DenseMap<llvm::hash_code, SmallVector<unsigned>> contractionsByToken;
  for (auto [i, op] : llvm::enumerate(body.ops))
    if (isContraction(op))
      contractionsByToken[tokens[i]].push_back(i);
  llvm::SetVector<unsigned> periods;
  for (auto &entry : contractionsByToken)
    for (auto [k, first] : llvm::enumerate(entry.second))
      for (unsigned second : ArrayRef(entry.second).drop_front(k + 1))
        if (2 * (second - first) <= n)
          periods.insert(second - first);
  SmallVector<Candidate> candidates;
  for (unsigned p : periods) {
    Candidate best{p, 0, 0};
    unsigned run = 0;
    for (unsigned i = 0; i + p < n; ++i) {
      run = tokens[i] == tokens[i + p] ? run + 1 : 0;
      // ops [i + 1 - run, i + p] repeat with period p.
      if (run && run + p > best.length)
        best = {p, i + 1 - run, run + p};
    }
    if (best.length < 2 * p ||
        contractions[best.start + p] == contractions[best.start])
      continue;
    candidates.push_back(best);
  }
  llvm::sort(candidates, [](const Candidate &a, const Candidate &b) {
    return std::make_pair(-int64_t(a.coverage()), a.period) <
           std::make_pair(-int64_t(b.coverage()), b.period);
  });
  return candidates;
}

/// The block boundary within the run: the phase that keeps the most whole
/// instances, then the one with the fewest values live across it (ideally
/// the residual stream alone), then the earliest.
static Repetition choosePhase(const Candidate &c, ArrayRef<unsigned> live) {
  unsigned bestPhase = 0, bestCount = 0, bestLive = ~0u;
  for (unsigned phase = 0; phase < c.period; ++phase) {
    unsigned count = (c.length - phase) / c.period;
    unsigned across = live[c.start + phase];
    if (count > bestCount || (count == bestCount && across < bestLive)) {
      bestPhase = phase;
      bestCount = count;
      bestLive = across;
    }
  }
  Repetition rep;
  rep.period = c.period;
  for (unsigned k = 0; k < bestCount; ++k)
    rep.begins.push_back(c.start + bestPhase + k * c.period);
  return rep;
}

/// The live-ins and live-outs of ops [begin, begin + size) of the body.
static Instance describe(const Body &body, unsigned begin, unsigned size) {
  Instance inst;
  inst.begin = begin;
  auto inside = [&](Operation *op) {
    Operation *ancestor = body.block->findAncestorOpInBlock(*op);
    auto it = body.index.find(ancestor);
    return it != body.index.end() && it->second >= begin &&
           it->second < begin + size;
  };
  DenseMap<Value, unsigned> liveInIndex;
  for (unsigned i = begin; i < begin + size; ++i) {
    body.ops[i]->walk<WalkOrder::PreOrder>([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        if (isClonedConstant(operand))
          continue;
        Operation *def = operand.getDefiningOp();
        Operation *owner = def ? def : operand.getParentRegion()->getParentOp();
        if (def ? inside(def)
                : owner != body.block->getParentOp() && inside(owner))
          continue;
        auto [it, inserted] =
            liveInIndex.try_emplace(operand, inst.liveIns.size());
        if (inserted)
          inst.liveIns.push_back(operand);
        inst.liveInUses.push_back(it->second);
      }
    });
  }
  for (unsigned i = begin; i < begin + size; ++i)
    for (OpResult result : body.ops[i]->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inside(user); }))
        inst.liveOuts.push_back({i - begin, result.getResultNumber()});
  return inst;
}

/// Whether instance `other` computes what `ref` does, op for op: the same
/// ops with the same attributes and types, reading values of their own
/// instance where `ref` reads its own, equal constants where it reads
/// constants, and outside values in the same pattern.
static bool sameBlock(const Body &body, const Instance &ref,
                      const Instance &other, unsigned size) {
  if (ref.liveIns.size() != other.liveIns.size() ||
      ref.liveInUses != other.liveInUses)
    return false;
  for (auto [a, b] : llvm::zip(ref.liveIns, other.liveIns))
    if (a.getType() != b.getType())
      return false;
  DenseMap<Value, Value> map;
  DenseSet<Value> mapped;
  auto check = [&](Value a, Value b) -> LogicalResult {
    auto it = map.find(a);
    if (it != map.end())
      return success(it->second == b);
    if (isClonedConstant(a) || isClonedConstant(b))
      return success(isClonedConstant(a) && isClonedConstant(b) &&
                     OperationEquivalence::isEquivalentTo(
                         a.getDefiningOp(), b.getDefiningOp(),
                         OperationEquivalence::IgnoreLocations));
    // An outside value of `ref` must be outside `other` too; which one is
    // the live-in pattern's business.
    return success(!mapped.contains(b));
  };
  auto mark = [&](Value a, Value b) {
    map[a] = b;
    mapped.insert(b);
  };
  for (unsigned i = 0; i < size; ++i)
    if (!OperationEquivalence::isEquivalentTo(
            body.ops[ref.begin + i], body.ops[other.begin + i], check, mark,
            OperationEquivalence::IgnoreLocations))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Rewrite: one private function per block, a call per instance.
//===----------------------------------------------------------------------===//

/// Whether the bufferized form of `type` can take and return its buffers as
/// bare pointers (convert-func-to-llvm's `llvm.bareptr`): shapes are static
/// and, after bufferization with identity layouts, strides are too.
static bool takesBarePointers(FunctionType type) {
  auto fits = [](Type t) {
    if (auto memref = dyn_cast<MemRefType>(t))
      return memref.hasStaticShape() && memref.getLayout().isIdentity();
    if (auto shaped = dyn_cast<ShapedType>(t))
      return isa<RankedTensorType>(t) && shaped.hasStaticShape();
    return true;
  };
  return llvm::all_of(type.getInputs(), fits) &&
         llvm::all_of(type.getResults(), fits);
}

/// The callee: `ref`'s ops cloned, its constants cloned in, its live-ins as
/// arguments and `liveOuts` as results. LLVM must not inline it back: that
/// would undo the point.
static func::FuncOp
createCallee(func::FuncOp parent, const Body &body, const Instance &ref,
             unsigned size, ArrayRef<std::pair<unsigned, unsigned>> liveOuts,
             const Recomputed &recomputed, SymbolTable &symbols) {
  MLIRContext *ctx = parent.getContext();
  SmallVector<Type> argTypes, resultTypes;
  for (Value v : ref.liveIns)
    argTypes.push_back(v.getType());
  for (auto [op, result] : liveOuts)
    resultTypes.push_back(
        body.ops[ref.begin + op]->getResult(result).getType());
  OpBuilder b(ctx);
  b.setInsertionPointAfter(parent);
  std::string name;
  for (unsigned i = 0; name.empty() || symbols.lookup(name); ++i)
    name = (parent.getName() + "_block" + Twine(i)).str();
  auto callee =
      func::FuncOp::create(b, body.ops[ref.begin]->getLoc(), name,
                           FunctionType::get(ctx, argTypes, resultTypes));
  callee.setPrivate();
  // Internal linkage lets LLVM drop the descriptor fields a block never
  // reads; noinline keeps one body however many layers call it.
  callee->setAttr("llvm.linkage",
                  LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
  callee->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  // Each buffer as one pointer rather than its descriptor's fields (a dozen
  // weights of rank 1 to 3 are over 80 arguments): the calls, one per
  // layer, are most of what LLVM compiles in the entry.
  if (takesBarePointers(callee.getFunctionType()))
    callee->setAttr("llvm.bareptr", b.getUnitAttr());
  symbols.insert(callee);

  Block *entry = callee.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  // A root appended for a recomputed scalar may also be the reference's
  // value in another argument: the body reads that one.
  for (auto [v, arg] : llvm::zip(ref.liveIns, entry->getArguments()))
    if (!mapping.contains(v))
      mapping.map(v, arg);
  for (unsigned i = 0; i < size; ++i)
    body.ops[ref.begin + i]->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (isClonedConstant(operand) &&
            operand.getDefiningOp()->getBlock() == body.block &&
            !mapping.contains(operand))
          mapping.map(
              operand,
              b.clone(*operand.getDefiningOp())
                  ->getResult(cast<OpResult>(operand).getResultNumber()));
    });
  // The recomputed scalars, from their roots' arguments.
  IRMapping chain;
  for (auto [root, arg] : recomputed.rootArgs)
    chain.map(root, entry->getArgument(arg));
  BackwardSliceOptions upToRoots;
  upToRoots.inclusive = true;
  upToRoots.filter = [&](Operation *op) {
    return llvm::none_of(op->getResults(),
                         [&](Value r) { return chain.contains(r); });
  };
  for (Value v : recomputed.values) {
    SetVector<Operation *> ops;
    (void)getBackwardSlice(v, &ops, upToRoots);
    for (Operation *op : ops)
      if (!chain.contains(op->getResult(0)))
        b.clone(*op, chain);
    mapping.map(v, chain.lookup(v));
  }
  for (unsigned i = 0; i < size; ++i)
    b.clone(*body.ops[ref.begin + i], mapping);
  SmallVector<Value> results;
  for (auto [op, result] : liveOuts)
    results.push_back(
        mapping.lookup(body.ops[ref.begin + op]->getResult(result)));
  func::ReturnOp::create(b, callee.getLoc(), results);
  return callee;
}

/// Replaces the ops of `inst` by a call of `callee`.
static void replaceByCall(const Body &body, const Instance &inst, unsigned size,
                          ArrayRef<std::pair<unsigned, unsigned>> liveOuts,
                          func::FuncOp callee) {
  ArrayRef<Operation *> ops = ArrayRef(body.ops).slice(inst.begin, size);
  DenseSet<Operation *> inside(ops.begin(), ops.end());
  OpBuilder b(ops.back()->getContext());
  b.setInsertionPointAfter(ops.back());
  auto call =
      func::CallOp::create(b, ops.front()->getLoc(), callee, inst.liveIns);
  for (auto [i, out] : llvm::enumerate(liveOuts))
    ops[out.first]
        ->getResult(out.second)
        .replaceUsesWithIf(call.getResult(i), [&](OpOperand &use) {
          return !inside.contains(
              body.block->findAncestorOpInBlock(*use.getOwner()));
        });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

/// The scalar live-ins the callee computes itself from the rank-0 tensors
/// they come from (isRecomputable), which replace them among the live-ins
/// of the `chosen` instances: a value every instance reads, used for no
/// dynamic size. A generating model's position then crosses the call as
/// the tensor, not as a number read on the caller's side: on the cuda
/// backend its load can go into the kernels that use it (the offset of the
/// cache write), and a step needs no read of device memory on the host.
static Recomputed recomputeScalars(const Body &body,
                                   MutableArrayRef<Instance> instances,
                                   ArrayRef<unsigned> chosen, unsigned size) {
  const Instance &ref = instances[chosen.front()];
  Recomputed recomputed;
  SetVector<Value> roots;
  SmallVector<bool> drop(ref.liveIns.size(), false);
  for (auto [index, value] : llvm::enumerate(ref.liveIns)) {
    // Lambdas cannot capture structured bindings before C++20.
    size_t i = index;
    Value v = value;
    SetVector<Value> its;
    if (!isRecomputable(v, its) || llvm::any_of(chosen, [&](unsigned k) {
          return instances[k].liveIns[i] != v ||
                 usedAsSize(body, instances[k].begin, size, v);
        }))
      continue;
    drop[i] = true;
    recomputed.values.push_back(v);
    roots.insert(its.begin(), its.end());
  }
  if (recomputed.values.empty())
    return recomputed;
  for (unsigned k : chosen) {
    SmallVector<Value> liveIns;
    for (auto [i, v] : llvm::enumerate(instances[k].liveIns))
      if (!drop[i])
        liveIns.push_back(v);
    instances[k].liveIns = std::move(liveIns);
  }
  // A root that is a live-in already, in the same place in every instance
  // (the position a mask reads), stays one argument.
  for (Value root : roots) {
    auto at = llvm::find(ref.liveIns, root);
    unsigned j = at - ref.liveIns.begin();
    if (at == ref.liveIns.end() || llvm::any_of(chosen, [&](unsigned k) {
          return instances[k].liveIns[j] != root;
        })) {
      j = ref.liveIns.size();
      for (unsigned k : chosen)
        instances[k].liveIns.push_back(root);
    }
    recomputed.rootArgs.push_back({root, j});
  }
  return recomputed;
}

/// Finds and outlines one repeated block of `fn`; false when there is none.
static bool outlineOnce(func::FuncOp fn, SymbolTable &symbols) {
  Body body = collectBody(fn.getBody().front());
  SmallVector<Candidate> candidates = findCandidates(body);
  if (candidates.empty())
    return false;
  SmallVector<unsigned> live = liveAcross(body);
  // A weaker period can win on structure and still fail the exact check
  // (the same ops wired differently): the next candidates get a chance.
  for (const Candidate &candidate : ArrayRef(candidates).take_front(4)) {
    Repetition rep = choosePhase(candidate, live);
    unsigned size = rep.period;
    SmallVector<Instance> instances;
    for (unsigned begin : rep.begins)
      instances.push_back(describe(body, begin, size));
    // The reference is the first instance that most others agree with.
    SmallVector<unsigned> chosen;
    for (unsigned r = 0; r < instances.size(); ++r) {
      SmallVector<unsigned> agree{r};
      for (unsigned k = 0; k < instances.size(); ++k)
        if (k != r && sameBlock(body, instances[r], instances[k], size))
          agree.push_back(k);
      if (agree.size() > chosen.size())
        chosen = std::move(agree);
      if (2 * chosen.size() > instances.size())
        break;
    }
    if (chosen.size() < 2)
      continue;
    llvm::sort(chosen);
    // One callee for all: it returns what any instance uses afterwards
    // (the last layer's outputs may be read where the others' are not).
    SmallVector<std::pair<unsigned, unsigned>> liveOuts;
    for (unsigned k : chosen)
      llvm::append_range(liveOuts, instances[k].liveOuts);
    llvm::sort(liveOuts);
    liveOuts.erase(llvm::unique(liveOuts), liveOuts.end());
    Recomputed recomputed = recomputeScalars(body, instances, chosen, size);
    func::FuncOp callee = createCallee(fn, body, instances[chosen.front()],
                                       size, liveOuts, recomputed, symbols);
    // Last first: each call then reads the values the earlier instances
    // still define, and their replacement reaches the call.
    for (unsigned k : llvm::reverse(chosen))
      replaceByCall(body, instances[k], size, liveOuts, callee);
    for (Value v : recomputed.values)
      eraseIfDead(v.getDefiningOp());
    return true;
  }
  return false;
}

namespace {
struct TPOutlineRepeatedBlocksPass
    : public tp::impl::TPOutlineRepeatedBlocksBase<
          TPOutlineRepeatedBlocksPass> {
  using TPOutlineRepeatedBlocksBase::TPOutlineRepeatedBlocksBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> entries;
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal() && fn.getBody().hasOneBlock())
        entries.push_back(fn);
    for (func::FuncOp fn : entries) {
      rematerializeFills(fn.getBody().front());
      // Each round takes the block with the largest coverage; a model of
      // two kinds of layers gets two functions.
      unsigned rounds = 0;
      while (rounds < maxBlocks && outlineOnce(fn, symbols))
        ++rounds;
      // Constants only the outlined blocks read.
      for (Operation &op : llvm::make_early_inc_range(fn.getBody().front()))
        if (isConstant(&op) && op.use_empty())
          op.erase();
    }
  }
};

} // namespace

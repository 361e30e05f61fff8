//===- TPShard.cpp - rewrite a graph into its per-rank program ------------===//
//
// The rewrite half of `tp-shard`: given the plan of ShardingAnalysis, every
// cut value takes its rank-local type, the ops whose attributes spell out
// shapes (reshapes, slices, constants) follow, weight arguments shrink and
// say how to cut the full tensor, and the planned collectives go in.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/Explain.h"
#include "tp/Transforms/Passes.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSHARD
#include "tp/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

/// Gives every use of a tensor.empty, a splat constant or a fill of either
/// its own copy, so that one use can be cut while another is not.
static void privatizeInitTensors(FunctionOpInterface func) {
  SmallVector<Operation *> inits;
  func->walk([&](Operation *op) {
    if (op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return;
    if (isa<tensor::EmptyOp>(op) || matchPattern(op, m_Constant()) ||
        isa<linalg::FillOp>(op))
      inits.push_back(op);
  });
  // Walk order is producers first, so a fill's private init copies are made
  // after the fill itself has been copied per use; uses are counted then, as
  // an empty read by one shared fill has a use per copy of the fill.
  for (Operation *op : llvm::reverse(inits)) {
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        op->getResult(0).getUses(), [](OpOperand &use) { return &use; });
    if (uses.size() < 2)
      continue;
    OpBuilder builder(op);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      builder.setInsertionPoint(use->getOwner());
      Operation *copy = builder.clone(*op);
      use->set(copy->getResult(0));
    }
  }
}

static RankedTensorType localType(Type full, DimCut cut, int64_t tpSize) {
  auto type = cast<RankedTensorType>(full);
  SmallVector<int64_t> shape(type.getShape());
  shape[cut.dim] /= cut.parts(tpSize);
  if (cut.subDim >= 0)
    shape[cut.subDim] /= cut.replicas;
  return type.clone(shape);
}

/// Gives the users of `value`, whose defining op produces it cut by
/// `produced` rather than by its finer `cut`, their part: each rank slices
/// it out of what it computes, at an offset its rank decides. `value` has
/// its (fine) local type on entry.
static void refine(OpBuilder &builder, Value value, DimCut cut, DimCut produced,
                   int64_t tpSize) {
  auto fine = cast<RankedTensorType>(value.getType());
  // Rank r holds fine part r / cut.replicas; within its produced part, that
  // is part (r / cut.replicas) % k of k.
  int64_t k = cut.parts(tpSize) / produced.parts(tpSize);
  int64_t size = fine.getDimSize(cut.dim);
  SmallVector<int64_t> coarseShape(fine.getShape());
  coarseShape[cut.dim] *= k;
  value.setType(fine.clone(coarseShape));

  Location loc = value.getLoc();
  builder.setInsertionPointAfterValue(value);
  auto index = [&](int64_t i) {
    return arith::ConstantIndexOp::create(builder, loc, i);
  };
  Value part = arith::RemUIOp::create(
      builder, loc,
      arith::DivUIOp::create(builder, loc, RankOp::create(builder, loc),
                             index(cut.replicas)),
      index(k));
  SmallVector<OpFoldResult> offsets(fine.getRank(), builder.getIndexAttr(0));
  offsets[cut.dim] =
      arith::MulIOp::create(builder, loc, part, index(size)).getResult();
  SmallVector<OpFoldResult> sizes =
      llvm::map_to_vector(fine.getShape(), [&](int64_t d) -> OpFoldResult {
        return builder.getIndexAttr(d);
      });
  SmallVector<OpFoldResult> strides(fine.getRank(), builder.getIndexAttr(1));
  auto slice = tensor::ExtractSliceOp::create(builder, loc, fine, value,
                                              offsets, sizes, strides);
  value.replaceAllUsesExcept(slice.getResult(), slice);
}

static bool isZeroInit(Value init) {
  if (matchPattern(init, m_AnyZeroFloat()) || matchPattern(init, m_Zero()))
    return true;
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && (matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
                  matchPattern(fill.getInputs()[0], m_Zero()));
}

/// Reduces the partial result of `op` over the ranks. For a sum, an init
/// that is not zero and that the op reads (a bias accumulated into the
/// contraction) would be counted once per rank, so it is taken out and
/// added once, after the sum.
static void insertAllReduce(OpBuilder &builder, linalg::LinalgOp op,
                            ReductionKind kind) {
  Location loc = op.getLoc();
  OpOperand *init = op.getDpsInitOperand(0);
  Value bias;
  builder.setInsertionPoint(op);
  if (kind == ReductionKind::Sum && op.payloadUsesValueFromOperand(init) &&
      !isZeroInit(init->get())) {
    bias = init->get();
    Type elementType = cast<RankedTensorType>(bias.getType()).getElementType();
    Value empty = tensor::EmptyOp::create(
        builder, loc, tensor::getMixedSizes(builder, loc, bias), elementType);
    Value zero = arith::ConstantOp::create(builder, loc,
                                           builder.getZeroAttr(elementType));
    init->set(linalg::FillOp::create(builder, loc, zero, empty).getResult(0));
  }
  builder.setInsertionPointAfter(op);
  Value partial = op->getResult(0);
  auto allReduce =
      AllReduceOp::create(builder, loc, partial.getType(), partial, kind);
  Value full = allReduce;
  if (bias) {
    Value empty = tensor::EmptyOp::create(
        builder, loc, tensor::getMixedSizes(builder, loc, bias),
        cast<RankedTensorType>(bias.getType()).getElementType());
    full = linalg::AddOp::create(builder, loc, ValueRange{full, bias},
                                 ValueRange{empty})
               .getResult(0);
  }
  partial.replaceAllUsesExcept(full, allReduce);
}

/// An elementwise generic over `inputs` (all of `resultType`'s shape)
/// yielding `body` of their elements.
static Value
elementwise(OpBuilder &builder, Location loc, RankedTensorType resultType,
            ValueRange inputs,
            function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value empty = tensor::EmptyOp::create(builder, loc, resultType.getShape(),
                                        resultType.getElementType());
  SmallVector<AffineMap> maps(
      inputs.size() + 1, builder.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, resultType, inputs, empty, maps, iterators,
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(b, l, body(b, l, args.drop_back()));
             })
      .getResult(0);
}

/// Combines the ranks' extremes (result 0 of `op`, `kind`) and their
/// global positions (result 1): the extreme over the ranks, then the
/// smallest position among the ranks that hold it, as the unsharded op's
/// first occurrence. Positions travel as f32 (exact below 2^24, which the
/// analysis checked), so the collectives stay those of float tensors.
/// A NaN has no place in that order (MPI's max over one returns what its
/// operand order gives, so ranks could disagree) and where the unsharded
/// scan would put it depends on its body: a rank whose extreme is NaN
/// offers position -1, so every rank gets -1 for that row, whatever the
/// others hold: an index no table has (tp-run refuses such an id), never a
/// plausible one. (An argmax left whole keeps the scan's answer.)
static void insertArgCombine(OpBuilder &builder, linalg::LinalgOp op,
                             ReductionKind kind) {
  Location loc = op.getLoc();
  builder.setInsertionPointAfter(op);
  Value value = op->getResult(0), position = op->getResult(1);
  auto valueType = cast<RankedTensorType>(value.getType());
  auto positionType = cast<RankedTensorType>(position.getType());
  auto extreme = AllReduceOp::create(builder, loc, valueType, value, kind);
  auto floatType = valueType.clone(builder.getF32Type());
  Value candidates = elementwise(
      builder, loc, floatType, ValueRange{value, extreme, position},
      [&](OpBuilder &b, Location l, ValueRange e) -> Value {
        Value held =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, e[0], e[1]);
        Value at = arith::SIToFPOp::create(b, l, b.getF32Type(), e[2]);
        Value none = arith::ConstantOp::create(
            b, l, b.getF32FloatAttr(std::numeric_limits<float>::infinity()));
        Value nan =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, e[0], e[0]);
        Value invalid =
            arith::ConstantOp::create(b, l, b.getF32FloatAttr(-1.0f));
        return arith::SelectOp::create(
            b, l, nan, invalid, arith::SelectOp::create(b, l, held, at, none));
      });
  Value first = AllReduceOp::create(builder, loc, floatType, candidates,
                                    ReductionKind::Min);
  Value firstPosition =
      elementwise(builder, loc, positionType, ValueRange{first},
                  [&](OpBuilder &b, Location l, ValueRange e) -> Value {
                    return arith::FPToSIOp::create(
                        b, l, positionType.getElementType(), e[0]);
                  });
  value.replaceAllUsesExcept(extreme, SmallPtrSet<Operation *, 2>{
                                          extreme, candidates.getDefiningOp()});
  position.replaceAllUsesExcept(firstPosition, candidates.getDefiningOp());
}

/// Gives `use` the full value of its cut operand.
static void insertAllGather(OpBuilder &builder, OpOperand &use, DimCut cut,
                            int64_t tpSize) {
  Location loc = use.getOwner()->getLoc();
  builder.setInsertionPoint(use.getOwner());
  Value local = use.get();
  auto localTy = cast<RankedTensorType>(local.getType());
  SmallVector<int64_t> fullShape(localTy.getShape());
  fullShape[cut.dim] *= tpSize;
  if (cut.outer == 1) {
    use.set(AllGatherOp::create(builder, loc, localTy.clone(fullShape), local,
                                cut.dim));
    return;
  }
  // Each of the `outer` blocks was cut on its own: gather within blocks.
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> blocked, gatheredShape;
  for (int64_t d = 0, e = localTy.getRank(); d < e; ++d) {
    if (d == cut.dim) {
      groups.push_back({static_cast<int64_t>(blocked.size()),
                        static_cast<int64_t>(blocked.size()) + 1});
      blocked.append({cut.outer, localTy.getDimSize(d) / cut.outer});
      gatheredShape.append(
          {cut.outer, localTy.getDimSize(d) / cut.outer * tpSize});
      continue;
    }
    groups.push_back({static_cast<int64_t>(blocked.size())});
    blocked.push_back(localTy.getDimSize(d));
    gatheredShape.push_back(localTy.getDimSize(d));
  }
  Value split = tensor::ExpandShapeOp::create(
      builder, loc, localTy.clone(blocked), local, groups);
  Value gathered = AllGatherOp::create(
      builder, loc, localTy.clone(gatheredShape), split, cut.dim + 1);
  use.set(tensor::CollapseShapeOp::create(
      builder, loc, localTy.clone(fullShape), gathered, groups));
}

/// The shard attributes of a function's arguments and results, by number:
/// setting them one by one would rebuild the attribute arrays once each.
struct SignatureShards {
  DenseMap<unsigned, ShardAttr> args;
  /// A result left cut: its shard and its rank-local type.
  DenseMap<unsigned, std::pair<ShardAttr, Type>> results;
};

/// Applies one region; the shards of the arguments it cuts and of the
/// results it leaves cut (returned by `returns`) go to `shards`.
static void applyRegion(FunctionOpInterface func, const ShardRegion &region,
                        ArrayRef<func::ReturnOp> returns, int64_t tpSize,
                        SignatureShards &shards) {
  MLIRContext *ctx = func->getContext();
  OpBuilder builder(ctx);
  // Gathers read the local value, so they go in once types are local.
  for (auto [value, cut] : region.cuts) {
    value.setType(localType(value.getType(), cut, tpSize));
    if (auto arg = dyn_cast<BlockArgument>(value))
      if (arg.getOwner()->getParentOp() == func.getOperation())
        shards.args[arg.getArgNumber()] =
            ShardAttr::get(ctx, cut.dim, cut.outer, cut.replicas);
  }
  // The ops that define or read a cut value, except those that read it
  // gathered (whole).
  DenseSet<Operation *> gathering;
  for (const PlannedCollective &c : region.collectives)
    if (c.kind == PlannedCollective::Kind::AllGather)
      gathering.insert(c.op);
  SetVector<Operation *> touched;
  for (auto &[value, cut] : region.cuts) {
    if (Operation *def = value.getDefiningOp())
      touched.insert(def);
    for (Operation *user : value.getUsers())
      if (!gathering.contains(user))
        touched.insert(user);
  }
  for (Operation *op : touched)
    if (auto rule = dyn_cast<CutRuleOpInterface>(op))
      rule.localizeShapes(region.cuts, tpSize);
  // After the rules: the slices read the full local tensor.
  for (auto [value, produced] : region.refinements)
    refine(builder, value, region.cuts.lookup(value), produced, tpSize);
  for (const PlannedCollective &c : region.collectives) {
    switch (c.kind) {
    case PlannedCollective::Kind::AllReduce:
      insertAllReduce(builder, cast<linalg::LinalgOp>(c.op), c.reduction);
      break;
    case PlannedCollective::Kind::AllGather:
      insertAllGather(builder, *c.use, region.cuts.lookup(c.use->get()),
                      tpSize);
      break;
    case PlannedCollective::Kind::ArgReduce:
      insertArgCombine(builder, cast<linalg::LinalgOp>(c.op), c.reduction);
      break;
    }
  }
  // Returned values not gathered above stay cut (the state a function
  // updates and returns, see FuncCutRules.cpp).
  for (func::ReturnOp ret : returns)
    for (OpOperand &use : ret->getOpOperands())
      if (auto it = region.cuts.find(use.get()); it != region.cuts.end())
        shards.results[use.getOperandNumber()] = {
            ShardAttr::get(ctx, it->second.dim, it->second.outer,
                           it->second.replicas),
            use.get().getType()};
}

/// Emits one warning for `weights` (a model has hundreds), at the first and
/// at its location only: printing the op would print the weight. `what` is
/// the plural ("are constants"), `fix` what would make them cut.
static void warnUncut(ArrayRef<Operation *> weights, StringRef what,
                      StringRef fix) {
  if (weights.empty())
    return;
  InFlightDiagnostic warning = emitWarning(weights.front()->getLoc());
  warning << "this weight";
  if (weights.size() > 1)
    warning << " and " << weights.size() - 1 << " more";
  warning << " " << what << ", so "
          << (weights.size() > 1 ? "they are" : "it is")
          << " not cut: every rank holds "
          << (weights.size() > 1 ? "them" : "it") << " and computes with "
          << (weights.size() > 1 ? "them" : "it") << " whole; " << fix;
}

/// tp-shard cuts weight arguments only; a weight read from anything else
/// stays whole on every rank, computed with whole. Correct, but not tensor
/// parallel: say so, once per function and kind.
static void warnUncutWeights(FunctionOpInterface func) {
  SetVector<Operation *> constants, splats, slices;
  func->walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0)
      return;
    // getDpsInputs() returns a vector by value: a range over it in the for
    // header would outlive it.
    SmallVector<Value> inputs = op.getDpsInputs();
    for (Value input : llvm::drop_begin(inputs)) {
      Value source = weightSource(input);
      if (auto constant = source.getDefiningOp<arith::ConstantOp>()) {
        auto elements = dyn_cast<ElementsAttr>(constant.getValue());
        if (elements && elements.isSplat())
          splats.insert(constant);
        else if (elements)
          constants.insert(constant);
        continue;
      }
      // A weight carved out of one buffer that packs them all.
      auto slice = source.getDefiningOp<tensor::ExtractSliceOp>();
      if (slice && isWeight(slice.getSource()))
        slices.insert(slice);
    }
  });
  warnUncut(constants.getArrayRef(),
            constants.size() > 1 ? "are constants" : "is a constant",
            "tp-import (weights=FILE keeps their values; tp-compile "
            "--weights-out) makes constants arguments that tp-shard cuts");
  warnUncut(splats.getArrayRef(),
            splats.size() > 1 ? "are splat constants (one value each, as in "
                                "weights stripped from a model)"
                              : "is a splat constant (one value, as in "
                                "weights stripped from a model)",
            "tp-import (tp-compile --weights-out) makes the splats read as "
            "weights arguments that tp-shard cuts");
  warnUncut(slices.getArrayRef(),
            slices.size() > 1
                ? "are slices of an argument that packs several weights"
                : "is a slice of an argument that packs several weights",
            "tp-import (tp-compile) makes each static slice of a flat "
            "argument an argument of its own, read from the packed "
            "checkpoint tensor, which tp-shard cuts");
}

/// tp-shard takes the unsharded graph: a module that already holds a
/// per-rank program (its tp size, collectives, shard attributes) would be
/// cut again, on top of its shards.
static LogicalResult checkNotSharded(ModuleOp module) {
  if (auto size =
          module->getAttrOfType<IntegerAttr>(TPDialect::getSizeAttrName()))
    return module.emitError()
           << "module is already sharded for " << size.getInt() << " ranks ('"
           << TPDialect::getSizeAttrName()
           << "'); tp-shard takes the unsharded graph";
  WalkResult walk = module->walk([](Operation *op) {
    if (isa<TPDialect>(op->getDialect())) {
      op->emitError() << "is a collective of an already sharded program; "
                         "tp-shard takes the unsharded graph";
      return WalkResult::interrupt();
    }
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func)
      return WalkResult::advance();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (func.getArgAttr(i, TPDialect::getShardAttrName())) {
        func->emitError() << "argument " << i << " is already a shard ('"
                          << TPDialect::getShardAttrName()
                          << "'); tp-shard takes the unsharded graph";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// The analysis follows values through ops; an op that writes a buffer
/// passes nothing on, so a cut would silently stop at it.
static LogicalResult checkTensorSemantics(FunctionOpInterface func) {
  WalkResult walk = func->walk([](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics())
      return WalkResult::advance();
    op.emitError() << "reads or writes a buffer: tp-shard works on tensors "
                      "(run it before bufferization)";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// tp-opt parses TOSA, upstream shard annotations and torch-mlir's
/// attention, which the analysis does not follow: a graph in them would come
/// out unsharded without a word.
static LogicalResult checkImported(FunctionOpInterface func) {
  WalkResult walk = func->walk([](Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    if (dialect != "tosa" && dialect != "shard" && dialect != "tm_tensor")
      return WalkResult::advance();
    op->emitOpError() << "is not linalg: tp-shard takes func, arith, math, "
                         "tensor and linalg; run --tp-import first";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// Gives `func` its local argument and result types and the shard
/// attributes.
static void updateSignature(FunctionOpInterface func,
                            const SignatureShards &shards) {
  MLIRContext *ctx = func->getContext();
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  for (BlockArgument arg : func.getArguments()) {
    argTypes.push_back(arg.getType());
    NamedAttrList attrs(func.getArgAttrDict(arg.getArgNumber()));
    if (ShardAttr shard = shards.args.lookup(arg.getArgNumber()))
      attrs.set(TPDialect::getShardAttrName(), shard);
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  SmallVector<Type> resultTypes(func.getResultTypes());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0, e = resultTypes.size(); i < e; ++i) {
    NamedAttrList attrs(func.getResultAttrDict(i));
    if (auto it = shards.results.find(i); it != shards.results.end()) {
      attrs.set(TPDialect::getShardAttrName(), it->second.first);
      resultTypes[i] = it->second.second;
    }
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  func.setType(FunctionType::get(ctx, argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
}

namespace {
struct TPShardPass : public tp::impl::TPShardBase<TPShardPass> {
  using TPShardBase::TPShardBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    TPShardBase::getDependentDialects(registry);
    registerCutRuleExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tpSize < 1) {
      module.emitError() << "tp-size must be at least 1, got "
                         << static_cast<int64_t>(tpSize);
      return signalPassFailure();
    }
    if (failed(checkNotSharded(module)))
      return signalPassFailure();
    bool anyFailed = false;
    SmallVector<FunctionOpInterface> funcs;
    module.walk([&](FunctionOpInterface func) {
      // Functions of other type systems (llvm.func) hold no tensors.
      if (func.isExternal() || !isa<FunctionType>(func.getFunctionType()))
        return;
      if (failed(checkImported(func)) || failed(checkTensorSemantics(func))) {
        anyFailed = true;
        return;
      }
      if (tpSize > 1)
        warnUncutWeights(func);
      privatizeInitTensors(func);
      funcs.push_back(func);
    });
    // All functions are planned before any is rewritten: a weight several
    // of them read gets one cut.
    SmallVector<FailureOr<ShardPlan>, 0> plans =
        analyzeModuleSharding(funcs, tpSize, allowFallback);
    for (auto [func, plan] : llvm::zip_equal(funcs, plans)) {
      if (failed(plan)) {
        anyFailed = true;
        continue;
      }
      // Once, not per region: a deep model has two regions per layer.
      SmallVector<func::ReturnOp> returns;
      func->walk([&](func::ReturnOp ret) { returns.push_back(ret); });
      SignatureShards shards;
      for (const ShardRegion &region : plan->regions)
        applyRegion(func, region, returns, tpSize, shards);
      updateSignature(func, shards);
      if (explain)
        explainPlan(func, *plan, llvm::errs());
    }
    if (anyFailed)
      return signalPassFailure();
    module->setAttr(
        TPDialect::getSizeAttrName(),
        IntegerAttr::get(IntegerType::get(&getContext(), 64), tpSize));
  }
};
} // namespace

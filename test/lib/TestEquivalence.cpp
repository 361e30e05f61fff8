//===- TestEquivalence.cpp - emulate the ranks and compare ----------------===//
//
// The equivalence oracle. For each function @f of the module this pass
//
//  1. shards a copy with tp-shard (`@f` itself stays the reference),
//  2. builds `@f_emulated` with @f's signature: it cuts each full weight into
//     the N parts the shard attributes describe and runs the N per-rank
//     bodies in lockstep, op by op, so that an all-reduce becomes the sum of
//     the N ranks' operands and an all-gather their concatenation,
//  3. builds `@main`, which fills every argument with the same deterministic
//     pseudo-random values, calls both, and prints the largest difference and
//     EQUIVALENT or MISMATCH.
//
// Lowered with upstream passes and run by mlir-runner, it is the numerical
// evidence that the per-rank program computes what the original computes.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"
#include "tp/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// `type` with the shard's dimension read as [outer, block]: the shape and
/// the reassociation that merges it back.
struct BlockedView {
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> groups;
};
static BlockedView blockedView(RankedTensorType type, ShardAttr shard) {
  BlockedView view;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t at = view.shape.size();
    if (d == shard.getDim()) {
      view.groups.push_back({at, at + 1});
      view.shape.append(
          {shard.getOuter(), type.getDimSize(d) / shard.getOuter()});
    } else {
      view.groups.push_back({at});
      view.shape.push_back(type.getDimSize(d));
    }
  }
  return view;
}

/// Rank `rank`'s part of the full tensor `full`, as `shard` describes it.
static Value cutForRank(OpBuilder &b, Location loc, Value full, ShardAttr shard,
                        int64_t rank, int64_t numRanks) {
  auto type = cast<RankedTensorType>(full.getType());
  int64_t dim = shard.getDim();
  int64_t parts = numRanks / shard.getReplicas();
  // Take part `rank / replicas` of `parts` of every block.
  auto [blocked, groups] = blockedView(type, shard);
  Value view =
      tensor::ExpandShapeOp::create(b, loc, type.clone(blocked), full, groups);
  SmallVector<int64_t> offsets(blocked.size(), 0), sizes(blocked);
  sizes[dim + 1] /= parts;
  offsets[dim + 1] = rank / shard.getReplicas() * sizes[dim + 1];
  SmallVector<int64_t> strides(blocked.size(), 1);
  MLIRContext *ctx = b.getContext();
  Value part = tensor::ExtractSliceOp::create(
      b, loc, view, getAsIndexOpFoldResult(ctx, offsets),
      getAsIndexOpFoldResult(ctx, sizes), getAsIndexOpFoldResult(ctx, strides));
  SmallVector<int64_t> localShape(type.getShape());
  localShape[dim] /= parts;
  return tensor::CollapseShapeOp::create(b, loc, type.clone(localShape), part,
                                         groups);
}

/// The full tensor of type `full` from the ranks' `parts`, as `shard`
/// describes them: the inverse of cutForRank.
static Value joinRanks(OpBuilder &b, Location loc, ArrayRef<Value> parts,
                       ShardAttr shard, RankedTensorType full) {
  auto local = cast<RankedTensorType>(parts.front().getType());
  // Concatenate the blocks of one rank per distinct part (every
  // `replicas`-th), and merge again.
  auto [blocked, groups] = blockedView(local, shard);
  SmallVector<Value> views;
  for (size_t r = 0; r < parts.size(); r += shard.getReplicas())
    views.push_back(tensor::ExpandShapeOp::create(b, loc, local.clone(blocked),
                                                  parts[r], groups));
  Value joined = tensor::ConcatOp::create(b, loc, shard.getDim() + 1, views);
  return tensor::CollapseShapeOp::create(b, loc, full, joined, groups);
}

/// The elementwise `kind` reduction of `values`.
static Value reduceValues(OpBuilder &b, Location loc, ReductionKind kind,
                          ArrayRef<Value> values) {
  Value acc = values.front();
  auto type = cast<RankedTensorType>(acc.getType());
  for (Value v : values.drop_front()) {
    Value empty = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, acc), type.getElementType());
    SmallVector<Value> ins{acc, v}, outs{empty};
    switch (kind) {
    case ReductionKind::Sum:
      acc = linalg::AddOp::create(b, loc, ins, outs).getResult(0);
      break;
    case ReductionKind::Max:
      acc = linalg::MaxOp::create(b, loc, ins, outs).getResult(0);
      break;
    case ReductionKind::Min:
      acc = linalg::MinOp::create(b, loc, ins, outs).getResult(0);
      break;
    }
  }
  return acc;
}

/// Builds the lockstep emulation of `sharded` with `original`'s signature.
static func::FuncOp emulate(OpBuilder &b, func::FuncOp original,
                            func::FuncOp sharded, int64_t numRanks,
                            bool dropAllReduce) {
  Location loc = original.getLoc();
  auto emu =
      func::FuncOp::create(b, loc, original.getName().str() + "_emulated",
                           original.getFunctionType());
  Block *entry = emu.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<IRMapping> ranks(numRanks);
  for (BlockArgument arg : sharded.getArguments()) {
    Value full = entry->getArgument(arg.getArgNumber());
    auto shard = sharded.getArgAttrOfType<ShardAttr>(
        arg.getArgNumber(), TPDialect::getShardAttrName());
    for (int64_t r = 0; r < numRanks; ++r)
      ranks[r].map(arg,
                   shard ? cutForRank(b, loc, full, shard, r, numRanks) : full);
  }
  for (Operation &op : sharded.getBody().front()) {
    auto operands = [&](unsigned i) {
      return llvm::map_to_vector(
          ranks, [&](IRMapping &m) { return m.lookup(op.getOperand(i)); });
    };
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // A result left cut (a state the function updates) is joined from
      // the ranks' parts; any other is whole on every rank.
      SmallVector<Value> results;
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        auto shard = sharded.getResultAttrOfType<ShardAttr>(
            i, TPDialect::getShardAttrName());
        results.push_back(shard ? joinRanks(b, loc, operands(i), shard,
                                            cast<RankedTensorType>(
                                                original.getResultTypes()[i]))
                                : ranks[0].lookup(v));
      }
      func::ReturnOp::create(b, loc, results);
      continue;
    }
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      // `dropAllReduce` keeps rank 0's partial sum: the oracle must see it.
      SmallVector<Value> partials = operands(0);
      Value sum = dropAllReduce ? partials.front()
                                : reduceValues(b, op.getLoc(), reduce.getKind(),
                                               partials);
      for (IRMapping &m : ranks)
        m.map(op.getResult(0), sum);
      continue;
    }
    if (auto gather = dyn_cast<AllGatherOp>(op)) {
      Value all = tensor::ConcatOp::create(b, op.getLoc(), gather.getDim(),
                                           operands(0));
      for (IRMapping &m : ranks)
        m.map(op.getResult(0), all);
      continue;
    }
    if (isa<RankOp>(op)) {
      for (auto [r, m] : llvm::enumerate(ranks))
        m.map(op.getResult(0),
              arith::ConstantIndexOp::create(b, op.getLoc(), r).getResult());
      continue;
    }
    if (isa<ReduceScatterOp>(op)) {
      op.emitError("the emulation does not support reduce_scatter yet");
      return nullptr;
    }
    for (IRMapping &m : ranks)
      b.clone(op, m);
  }
  return emu;
}

/// `x` (an f32 in [-0.5, 0.5)) as a `type` element: floats rounded or
/// extended; integers 0 or 1. Integer arguments are token ids, positions and
/// masks, read as indices (an embedding row, `tensor.extract` in a gather)
/// or as flags: 0 and 1 are rows of every table and both values of a mask,
/// where larger values could read out of bounds.
static Value fromF32(OpBuilder &b, Location loc, Value x, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type)) {
    if (floatType.getWidth() < 32)
      return arith::TruncFOp::create(b, loc, type, x);
    if (floatType.getWidth() > 32)
      return arith::ExtFOp::create(b, loc, type, x);
    return x;
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value positive =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, zero);
  if (type.isInteger(1))
    return positive;
  Type wide = type.isIndex() ? b.getI64Type() : type;
  Value bit = arith::ExtUIOp::create(b, loc, wide, positive);
  return type.isIndex() ? arith::IndexCastOp::create(b, loc, type, bit) : bit;
}

/// An element of any float or integer type as an f32, to compare in f32.
static Value toF32(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type();
  if (auto floatType = dyn_cast<FloatType>(x.getType())) {
    if (floatType.getWidth() < 32)
      return arith::ExtFOp::create(b, loc, f32, x);
    if (floatType.getWidth() > 32)
      return arith::TruncFOp::create(b, loc, f32, x);
    return x;
  }
  if (x.getType().isIndex())
    x = arith::IndexCastOp::create(b, loc, b.getI64Type(), x);
  return arith::SIToFPOp::create(b, loc, f32, x);
}

/// Deterministic values in [-0.5, 0.5) that differ per element and per
/// argument: fract(sin(i * 12.9898 + seed * 78.233) * 43758.5453) - 0.5.
static Value pseudoRandom(OpBuilder &b, Location loc, RankedTensorType type,
                          int64_t seed) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(type.getRank())};
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange) {
        Value linear = arith::ConstantIndexOp::create(nb, nl, 0);
        for (int64_t d = 0; d < type.getRank(); ++d) {
          Value size =
              arith::ConstantIndexOp::create(nb, nl, type.getDimSize(d));
          Value idx = linalg::IndexOp::create(nb, nl, d);
          linear = arith::AddIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, linear, size), idx);
        }
        Type f32 = nb.getF32Type();
        Value i = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), linear);
        Value x = arith::SIToFPOp::create(nb, nl, f32, i);
        auto cst = [&](double v) {
          return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
        };
        x = arith::AddFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, x, cst(12.9898)),
            cst(seed * 78.233));
        x = arith::MulFOp::create(nb, nl, math::SinOp::create(nb, nl, x),
                                  cst(43758.5453));
        x = arith::SubFOp::create(nb, nl, x, math::FloorOp::create(nb, nl, x));
        x = arith::SubFOp::create(nb, nl, x, cst(0.5));
        linalg::YieldOp::create(nb, nl,
                                fromF32(nb, nl, x, type.getElementType()));
      });
  return generic.getResult(0);
}

/// max over all elements of |a - b| (or |a| without b), as an f32 scalar.
static Value maxAbs(OpBuilder &b, Location loc, Value a, Value other) {
  auto type = cast<RankedTensorType>(a.getType());
  Type f32 = b.getF32Type();
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value init =
      linalg::FillOp::create(
          b, loc, zero,
          ValueRange{tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f32)})
          .getResult(0);
  SmallVector<Value> ins{a};
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(type.getRank())};
  if (other) {
    ins.push_back(other);
    maps.push_back(maps.front());
  }
  maps.push_back(AffineMap::get(type.getRank(), 0, b.getContext()));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value d = toF32(nb, nl, args[0]);
        if (other)
          d = arith::SubFOp::create(nb, nl, d, toF32(nb, nl, args[1]));
        d = math::AbsFOp::create(nb, nl, d);
        Value max = arith::MaximumFOp::create(nb, nl, d, args.back());
        linalg::YieldOp::create(nb, nl, max);
      });
  return tensor::ExtractOp::create(b, loc, generic.getResult(0), ValueRange{});
}

/// What the oracle passes for argument `i` of type `type`: pseudo-random
/// tensors, with `dynamicSize` for each dynamic dimension; `scalar` for an
/// index or integer (a decode step's position), as a float too. Null, with
/// an error at `ref`, for another type.
static Value argumentValue(OpBuilder &b, func::FuncOp ref, Type type,
                           unsigned i, int64_t dynamicSize, int64_t scalar) {
  Location loc = ref.getLoc();
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    SmallVector<int64_t> shape(tensor.getShape());
    for (int64_t &size : shape)
      if (ShapedType::isDynamic(size))
        size = dynamicSize;
    Value value = pseudoRandom(b, loc, tensor.clone(shape), i + 1);
    return value.getType() == type
               ? value
               : tensor::CastOp::create(b, loc, type, value).getResult();
  }
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, scalar);
  if (isa<IntegerType>(type))
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, scalar));
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, scalar));
  ref.emitError() << "the equivalence oracle fills ranked tensors, indices, "
                     "integers and floats; argument #"
                  << i << " is " << type;
  return nullptr;
}

/// Appends to `main` the comparison of `ref` with `emu` on the same inputs.
static LogicalResult compareInMain(OpBuilder &b, func::FuncOp ref,
                                   func::FuncOp emu, double tolerance,
                                   int64_t dynamicSize, int64_t scalar) {
  Location loc = ref.getLoc();
  SmallVector<Value> args;
  for (auto [i, type] : llvm::enumerate(ref.getArgumentTypes())) {
    args.push_back(argumentValue(b, ref, type, i, dynamicSize, scalar));
    if (!args.back())
      return failure();
  }
  auto refCall = func::CallOp::create(b, loc, ref, args);
  auto emuCall = func::CallOp::create(b, loc, emu, args);
  Value diff = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value scale = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  for (auto [r, e] : llvm::zip(refCall.getResults(), emuCall.getResults())) {
    diff = arith::MaximumFOp::create(b, loc, diff, maxAbs(b, loc, r, e));
    scale = arith::MaximumFOp::create(b, loc, scale, maxAbs(b, loc, r, {}));
  }
  std::string name = "tp-equivalence @" + ref.getName().str();
  vector::PrintOp::create(b, loc, name + " max_abs_diff = ");
  vector::PrintOp::create(b, loc, diff);
  vector::PrintOp::create(b, loc, name + " max_abs_ref = ");
  vector::PrintOp::create(b, loc, scale);
  Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1));
  Value bound = arith::MulFOp::create(
      b, loc, arith::MaximumFOp::create(b, loc, scale, one),
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(tolerance)));
  Value ok =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, diff, bound);
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location tl) {
        vector::PrintOp::create(tb, tl, "EQUIVALENT\n");
        scf::YieldOp::create(tb, tl);
      },
      [&](OpBuilder &eb, Location el) {
        vector::PrintOp::create(eb, el, "MISMATCH\n");
        scf::YieldOp::create(eb, el);
      });
  return success();
}

struct TestEquivalencePass
    : public PassWrapper<TestEquivalencePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestEquivalencePass)

  TestEquivalencePass() = default;
  TestEquivalencePass(const TestEquivalencePass &other) : PassWrapper(other) {}

  StringRef getArgument() const final { return "tp-test-equivalence"; }
  StringRef getDescription() const final {
    return "Shard each function, emulate its ranks in one function and "
           "build a main that compares it with the original";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<TPDialect, arith::ArithDialect, func::FuncDialect,
                    linalg::LinalgDialect, math::MathDialect, scf::SCFDialect,
                    tensor::TensorDialect, vector::VectorDialect>();
  }

  Option<int64_t> tpSize{*this, "tp-size", llvm::cl::init(2),
                         llvm::cl::desc("number of ranks to emulate")};
  Option<bool> allowFallback{*this, "allow-fallback", llvm::cl::init(false),
                             llvm::cl::desc("passed to tp-shard")};
  Option<bool> dropAllReduce{
      *this, "drop-all-reduce", llvm::cl::init(false),
      llvm::cl::desc("emulate a broken all-reduce (checks the oracle fails)")};
  Option<double> tolerance{*this, "tolerance", llvm::cl::init(1e-4),
                           llvm::cl::desc("max |diff| / max(1, max |ref|)")};
  Option<int64_t> dynamicSize{
      *this, "dynamic-size", llvm::cl::init(3),
      llvm::cl::desc("the size of each dynamic dimension of an argument")};
  Option<int64_t> scalarValue{
      *this, "scalar-value", llvm::cl::init(1),
      llvm::cl::desc("the value of each scalar argument (a position)")};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> originals;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (!f.isExternal())
        originals.push_back(f);

    // Shard copies in a module of their own.
    OpBuilder b(&getContext());
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(module.getLoc());
    b.setInsertionPointToStart(scratch->getBody());
    SmallVector<func::FuncOp> sharded =
        llvm::map_to_vector(originals, [&](func::FuncOp f) {
          return cast<func::FuncOp>(b.clone(*f));
        });
    PassManager pm(&getContext());
    TPShardOptions options;
    options.tpSize = tpSize;
    options.allowFallback = allowFallback;
    pm.addPass(createTPShard(options));
    if (failed(pm.run(*scratch)))
      return signalPassFailure();

    b.setInsertionPointToEnd(module.getBody());
    auto main = func::FuncOp::create(b, module.getLoc(), "main",
                                     b.getFunctionType({}, {}));
    Block *mainBody = main.addEntryBlock();
    for (auto [original, shard] : llvm::zip(originals, sharded)) {
      b.setInsertionPoint(main);
      func::FuncOp emu = emulate(b, original, shard, tpSize, dropAllReduce);
      if (!emu)
        return signalPassFailure();
      b.setInsertionPointToEnd(mainBody);
      if (failed(compareInMain(b, original, emu, tolerance, dynamicSize,
                               scalarValue)))
        return signalPassFailure();
      // The lowered module is plain upstream: drop the tp attributes.
      original.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
    }
    b.setInsertionPointToEnd(mainBody);
    func::ReturnOp::create(b, module.getLoc());
    // linalg.softmax has no loop lowering; its decomposition does.
    if (failed(decomposeAggregatedOps(module)))
      return signalPassFailure();
  }
};

} // namespace

namespace mlir::tp::test {
void registerTestCudaEmulation();
void registerTestPasses() {
  PassRegistration<TestEquivalencePass>();
  registerTestCudaEmulation();
}
} // namespace mlir::tp::test

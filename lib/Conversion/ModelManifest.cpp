//===- ModelManifest.cpp - the manifest of a per-rank program -------------===//
//
// What a launcher needs to know about a compiled model before calling it
// (runtime/include/tprt/model.h), read off the sharded entry function while
// its arguments still say which weight they hold and how it is cut.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"
#include "tp/Transforms/ShardingAnalysis.h"
#include "tprt/tprt.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPMODELMANIFEST
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

/// The public functions with a body: the model's entries (`@forward`, or
/// `@prefill` and `@decode` of a generating model); private ones are their
/// helpers, the blocks tp-outline-repeated-blocks outlines.
static FailureOr<SmallVector<func::FuncOp>> findEntries(ModuleOp module) {
  SmallVector<func::FuncOp> entries;
  for (func::FuncOp fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal() && !fn.isPrivate())
      entries.push_back(fn);
  if (entries.empty())
    return module.emitError("no function with a body to compile");
  return entries;
}

/// The C symbol a launcher calls `fn` by: `tp_model_<name>`, every
/// character C does not take in a name replaced by '_'.
static std::string entrySymbol(func::FuncOp fn) {
  std::string symbol = "tp_model_";
  for (char c : fn.getName())
    symbol.push_back(llvm::isAlnum(c) ? c : '_');
  return symbol;
}

static llvm::json::Array shapeJson(ArrayRef<int64_t> shape) {
  return llvm::json::Array(shape);
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// The manifest's name of a tensor element type the runtime can pass (f32,
/// and the integer types front-ends give token ids, positions and masks),
/// or none.
static std::optional<StringRef> dtypeName(Type type) {
  std::optional<StringRef> name = tp::runtimeTypeName(type);
  if (name && llvm::is_contained({"f32", "i64", "i32", "i1"}, *name))
    return name;
  return std::nullopt;
}

/// The function argument a value is computed from through integer casts
/// and reshapes (ids truncated to i32, reshaped to [B*S]), if any.
static BlockArgument castSource(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(def);
    if (!generic || generic.getNumDpsInputs() != 1 ||
        generic.getNumReductionLoops() != 0)
      return nullptr;
    value = generic.getDpsInputs()[0];
  }
  return dyn_cast<BlockArgument>(value);
}

/// The argument of token ids: the integer input of the function's largest
/// lookup (a linalg.generic yielding an element of a weight table, the
/// vocabulary embedding), traced back through casts, and the table; null
/// without one. A launcher counts tokens from it rather than from, say, a
/// position-ids buffer of the same rank.
static std::pair<BlockArgument, Value> tokenIds(func::FuncOp fn) {
  BlockArgument ids;
  Value table;
  int64_t largest = 0;
  fn.walk([&](tensor::ExtractOp extract) {
    linalg::GenericOp lookup = getLookupGeneric(extract);
    if (!lookup || lookup.getNumDpsInputs() != 1 ||
        !isWeight(extract.getTensor()))
      return;
    auto input = cast<RankedTensorType>(lookup.getDpsInputs()[0].getType());
    int64_t size = staticElements(extract.getTensor().getType());
    if (!input.getElementType().isInteger() || size <= largest)
      return;
    if (BlockArgument arg = castSource(lookup.getDpsInputs()[0]);
        arg && arg.getOwner()->getParentOp() == fn.getOperation()) {
      ids = arg;
      table = extract.getTensor();
      largest = size;
    }
  });
  return {ids, table};
}

/// `shape` (a rank's part) as the full tensor, and the manifest's `shard`
/// (null for a whole tensor).
static std::pair<SmallVector<int64_t>, llvm::json::Value>
fullShapeAndShard(ArrayRef<int64_t> shape, ShardAttr shard, int64_t tpSize) {
  SmallVector<int64_t> full(shape);
  if (!shard)
    return {full, nullptr};
  full[shard.getDim()] *= tpSize / shard.getReplicas();
  llvm::json::Object json{{"dim", shard.getDim()}, {"outer", shard.getOuter()}};
  if (shard.getReplicas() > 1)
    json["replicas"] = shard.getReplicas();
  return {full, std::move(json)};
}

/// The manifest's entry for `fn`: its symbol, arguments and results.
static FailureOr<llvm::json::Object> buildFunction(func::FuncOp fn,
                                                   int64_t tpSize) {
  auto [ids, table] = tokenIds(fn);
  // The vocabulary: the rows of a [V, D] table the function takes whole
  // or cut, so that a launcher can refuse ids outside it.
  std::optional<int64_t> vocab;
  if (auto tableArg = dyn_cast_or_null<BlockArgument>(table);
      tableArg && tableArg.getOwner()->getParentOp() == fn.getOperation() &&
      cast<RankedTensorType>(table.getType()).getRank() == 2) {
    auto shard = fn.getArgAttrOfType<ShardAttr>(tableArg.getArgNumber(),
                                                TPDialect::getShardAttrName());
    vocab =
        fullShapeAndShard(cast<RankedTensorType>(table.getType()).getShape(),
                          shard, tpSize)
            .first[0];
    // A padded table: the ids lie in the checkpoint's rows. Not a table
    // packed with other weights, whose rows are theirs too.
    unsigned i = tableArg.getArgNumber();
    if (auto stored = fn.getArgAttrOfType<DenseI64ArrayAttr>(
            i, TPDialect::getCheckpointShapeAttrName());
        stored && !fn.getArgAttr(i, TPDialect::getCheckpointOffsetAttrName()))
      vocab = stored[0];
  }
  llvm::json::Array args, results;
  // A checkpoint holds one tensor per name: two arguments of one name read
  // the same tensor (or the same rows of it), so they must take the same full
  // shape, and all read it whole, or all rows of one packed shape.
  llvm::StringMap<std::pair<unsigned, SmallVector<int64_t>>> named;
  llvm::StringMap<std::pair<unsigned, std::string>> readAs;
  // A model that names none of its arguments is bound by position, as
  // before names existed: argument 0 the input, the others weights.
  bool anyNamed = llvm::any_of(fn.getArguments(), [&](BlockArgument arg) {
    return fn.getArgAttr(arg.getArgNumber(), TPDialect::getNameAttrName());
  });
  // The entry of a tensor of local type `type` with argument attributes
  // `attrs`, argument `i` of the function or a part of it.
  auto describe = [&](DictionaryAttr attrs, Type argType, unsigned i,
                      bool isIds) -> FailureOr<llvm::json::Object> {
    auto type = dyn_cast<RankedTensorType>(argType);
    std::optional<StringRef> dtype =
        type ? dtypeName(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !dtype)
      return fn.emitError("argument ")
             << i << " must be a static tensor of f32, i64, i32 or i1, got "
             << argType;
    auto name = attrs.getAs<StringAttr>(TPDialect::getNameAttrName());
    auto shard = attrs.getAs<ShardAttr>(TPDialect::getShardAttrName());
    auto [full, shardJson] = fullShapeAndShard(type.getShape(), shard, tpSize);
    auto offset =
        attrs.getAs<IntegerAttr>(TPDialect::getCheckpointOffsetAttrName());
    auto stored =
        attrs.getAs<DenseI64ArrayAttr>(TPDialect::getCheckpointShapeAttrName());
    if (name) {
      std::string key = name.str();
      if (offset)
        key += "@" + std::to_string(offset.getInt());
      auto [it, inserted] = named.try_emplace(key, i, full);
      if (!inserted && it->second.second != full)
        return fn.emitError("arguments ")
               << it->second.first << " and " << i << " are both named '"
               << name.getValue() << "' but take different shapes: "
               << shapeString(it->second.second) << " and "
               << shapeString(full);
      std::string how = offset && stored
                            ? "rows of " + shapeString(stored.asArrayRef())
                            : "the whole tensor";
      auto [as, first] = readAs.try_emplace(name, i, how);
      if (!first && as->second.second != how)
        return fn.emitError("arguments ")
               << as->second.first << " and " << i << " are both named '"
               << name.getValue() << "' but read " << as->second.second
               << " and " << how;
    }
    llvm::json::Object entry{
        {"name", name ? name.str() : ("arg" + Twine(i)).str()},
        {"named", bool(name)},
        {"dtype", *dtype},
        {"shape", shapeJson(full)},
        {"local_shape", shapeJson(type.getShape())},
        {"shard", std::move(shardJson)}};
    if (stored) {
      ArrayRef<int64_t> storedShape = stored.asArrayRef();
      if (offset) {
        // Whole rows from `offset`: rows [offset, offset + D0) of a tensor
        // as wide as the argument, or as many elements as it holds of a
        // tensor of another rank.
        int64_t row = ShapedType::getNumElements(storedShape.drop_front());
        int64_t count = ShapedType::getNumElements(full);
        if (count < 1 || count % row != 0 || offset.getInt() > storedShape[0] ||
            count / row > storedShape[0] - offset.getInt() ||
            (storedShape.size() == full.size() &&
             storedShape.drop_front() != ArrayRef(full).drop_front()))
          return fn.emitError("argument ")
                 << i << " of shape " << shapeString(full)
                 << " is not whole rows from " << offset.getInt() << " of "
                 << shapeString(storedShape)
                 << ", as it is held in the checkpoint";
        entry["checkpoint_offset"] = offset.getInt();
      } else if (size_t(storedShape.size()) != full.size() ||
                 llvm::any_of(llvm::zip(storedShape, full), [](auto pair) {
                   return std::get<0>(pair) > std::get<1>(pair);
                 })) {
        return fn.emitError("argument ")
               << i << " is held in the checkpoint as "
               << shapeString(storedShape) << ", which " << shapeString(full)
               << " does not pad";
      }
      entry["checkpoint_shape"] = shapeJson(storedShape);
    }
    // A named argument has no role here: the launcher reads it from the
    // checkpoint when one holds its name and takes it as an input otherwise.
    if (!name)
      entry["role"] = anyNamed || i == 0 ? "input" : "weight";
    else if (offset) // rows of a checkpoint tensor: never an input
      entry["role"] = "weight";
    if (auto positions =
            attrs.getAs<IntegerAttr>(TPDialect::getPositionsAttrName()))
      entry["positions"] = positions.getInt();
    if (isIds) {
      entry["tokens"] = true;
      if (vocab)
        entry["vocab"] = *vocab;
    }
    return entry;
  };
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    DictionaryAttr attrs = fn.getArgAttrDict(i);
    if (!attrs)
      attrs = DictionaryAttr::get(fn.getContext());
    auto stack = attrs.getAs<DictionaryAttr>(TPDialect::getStackAttrName());
    if (!stack) {
      FailureOr<llvm::json::Object> entry =
          describe(attrs, arg.getType(), i, arg == ids);
      if (failed(entry))
        return failure();
      args.push_back(std::move(*entry));
      continue;
    }
    // Weights stacked along `dim` (tp-stack-weights): the loader builds
    // the argument from each part's slice, read as that argument would be.
    auto type = cast<RankedTensorType>(arg.getType());
    int64_t dim = stack.getAs<IntegerAttr>("dim").getInt();
    llvm::json::Array parts;
    for (auto part :
         stack.getAs<ArrayAttr>("parts").getAsRange<DictionaryAttr>()) {
      SmallVector<int64_t> shape(type.getShape());
      shape[dim] = part.getAs<IntegerAttr>("size").getInt();
      FailureOr<llvm::json::Object> entry =
          describe(part, type.clone(shape), i, false);
      if (failed(entry))
        return failure();
      parts.push_back(std::move(*entry));
    }
    FailureOr<llvm::json::Object> entry = describe(attrs, type, i, false);
    if (failed(entry))
      return failure();
    (*entry)["role"] = "weight";
    (*entry)["stack"] =
        llvm::json::Object{{"dim", dim}, {"parts", std::move(parts)}};
    args.push_back(std::move(*entry));
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    auto type = dyn_cast<RankedTensorType>(t);
    std::optional<StringRef> dtype =
        type ? dtypeName(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !dtype)
      return fn.emitError("result ")
             << i << " must be a static tensor of f32, i64, i32 or i1, got "
             << t;
    // A result keeps its name (a cache returned under its argument's),
    // and a cut one (the caches again) its shard: it is never gathered.
    auto name =
        fn.getResultAttrOfType<StringAttr>(i, TPDialect::getNameAttrName());
    auto shard =
        fn.getResultAttrOfType<ShardAttr>(i, TPDialect::getShardAttrName());
    auto [full, shardJson] = fullShapeAndShard(type.getShape(), shard, tpSize);
    results.push_back(llvm::json::Object{
        {"name", name ? name.str() : ("result" + Twine(i)).str()},
        {"dtype", *dtype},
        {"shape", shapeJson(full)},
        {"local_shape", shapeJson(type.getShape())},
        {"shard", std::move(shardJson)}});
  }
  return llvm::json::Object{{"name", fn.getName().str()},
                            {"symbol", entrySymbol(fn)},
                            {"args", std::move(args)},
                            {"results", std::move(results)}};
}

/// The arguments of `entry` that it returns under their own name (a KV
/// cache passed in and returned with this step's rows).
static llvm::BitVector stateArguments(func::FuncOp entry) {
  llvm::StringSet<> returned;
  for (unsigned i = 0; i < entry.getNumResults(); ++i)
    if (auto name = entry.getResultAttrOfType<StringAttr>(
            i, TPDialect::getNameAttrName()))
      returned.insert(name.getValue());
  llvm::BitVector state(entry.getNumArguments());
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    if (auto name =
            entry.getArgAttrOfType<StringAttr>(i, TPDialect::getNameAttrName()))
      state[i] = returned.contains(name.getValue());
  return state;
}

namespace {
struct TPModelManifestPass
    : public tp::impl::TPModelManifestBase<TPModelManifestPass> {
  using TPModelManifestBase::TPModelManifestBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (backend != "cpu" && backend != "cuda") {
      module.emitError() << "unknown backend '" << backend << "' (cpu or cuda)";
      return signalPassFailure();
    }
    FailureOr<SmallVector<func::FuncOp>> entries = findEntries(module);
    if (failed(entries))
      return signalPassFailure();
    auto size =
        module->getAttrOfType<IntegerAttr>(TPDialect::getSizeAttrName());
    llvm::json::Array functions;
    llvm::StringMap<func::FuncOp> symbols;
    for (func::FuncOp entry : *entries) {
      FailureOr<llvm::json::Object> function =
          buildFunction(entry, size ? size.getInt() : 1);
      if (failed(function))
        return signalPassFailure();
      auto [it, inserted] = symbols.try_emplace(entrySymbol(entry), entry);
      if (!inserted) {
        entry.emitError("exported as ")
            << it->first() << " like @" << it->second.getName()
            << ": rename one of them";
        return signalPassFailure();
      }
      functions.push_back(std::move(*function));
    }
    llvm::json::Object manifest{{"abi_version", int64_t(TPRT_ABI_VERSION)},
                                {"backend", backend},
                                {"tp_size", size ? size.getInt() : 1},
                                {"functions", std::move(functions)}};
    if (auto ends = module->getAttrOfType<DenseI64ArrayAttr>(
            TPDialect::getEosTokenIdsAttrName()))
      manifest["eos_token_ids"] = llvm::json::Array(ends.asArrayRef());
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(manifest));
    module->setAttr(TPDialect::getManifestAttrName(),
                    StringAttr::get(&getContext(), text));
    // The attributes are in the manifest now; LLVM would warn of a
    // result's tp.name.
    for (func::FuncOp entry : *entries) {
      llvm::BitVector state = stateArguments(entry);
      entry.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
      // The launcher passes the same weights and inputs to every call: only
      // a state (a KV cache) may be updated in its argument's buffer.
      for (unsigned i = 0; i < entry.getNumArguments(); ++i)
        if (!state.test(i))
          entry.setArgAttr(
              i, bufferization::BufferizationDialect::kWritableAttrName,
              BoolAttr::get(&getContext(), false));
      entry.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
      entry->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
    }
  }
};
} // namespace

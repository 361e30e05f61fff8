//===- ModelManifest.cpp - the manifest of a per-rank program -------------===//
//
// What a launcher needs to know about a compiled model before calling it
// (runtime/include/tprt/model.h), read off the sharded entry function while
// its arguments still say which weight they hold and how it is cut.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"
#include "tp/Transforms/ShardingAnalysis.h"
#include "tprt/tprt.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPMODELMANIFEST
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

/// The one public function with a body: the model's forward pass (private
/// ones are its helpers, the blocks tp-outline-repeated-blocks outlines).
static FailureOr<func::FuncOp> findEntry(ModuleOp module) {
  func::FuncOp entry;
  for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || fn.isPrivate())
      continue;
    if (entry)
      return fn.emitError("a model has one function with a body; also "
                          "found @")
             << entry.getName();
    entry = fn;
  }
  if (!entry)
    return module.emitError("no function with a body to compile");
  return entry;
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
  if (type.isF32())
    return StringRef("f32");
  if (type.isSignlessInteger(64))
    return StringRef("i64");
  if (type.isSignlessInteger(32))
    return StringRef("i32");
  if (type.isSignlessInteger(1))
    return StringRef("i1");
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
/// vocabulary embedding), traced back through casts; null without one. A
/// launcher counts tokens from it rather than from, say, a position-ids
/// buffer of the same rank.
static BlockArgument tokenIds(func::FuncOp fn) {
  BlockArgument ids;
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
      largest = size;
    }
  });
  return ids;
}

static FailureOr<llvm::json::Object>
buildManifest(func::FuncOp fn, int64_t tpSize, StringRef backend) {
  BlockArgument ids = tokenIds(fn);
  llvm::json::Array args, results;
  // A checkpoint holds one tensor per name: two arguments of one name read
  // the same tensor, so they must take the same full shape.
  llvm::StringMap<std::pair<unsigned, SmallVector<int64_t>>> named;
  // A model that names none of its arguments is bound by position, as
  // before names existed: argument 0 the input, the others weights.
  bool anyNamed = llvm::any_of(fn.getArguments(), [&](BlockArgument arg) {
    return fn.getArgAttr(arg.getArgNumber(), TPDialect::getNameAttrName());
  });
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<StringRef> dtype =
        type ? dtypeName(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !dtype)
      return fn.emitError("argument ")
             << i << " must be a static tensor of f32, i64, i32 or i1, got "
             << arg.getType();
    auto name =
        fn.getArgAttrOfType<StringAttr>(i, TPDialect::getNameAttrName());
    auto shard =
        fn.getArgAttrOfType<ShardAttr>(i, TPDialect::getShardAttrName());
    SmallVector<int64_t> full(type.getShape());
    llvm::json::Value shardJson = nullptr;
    if (shard) {
      full[shard.getDim()] *= tpSize / shard.getReplicas();
      llvm::json::Object json{{"dim", shard.getDim()},
                              {"outer", shard.getOuter()}};
      if (shard.getReplicas() > 1)
        json["replicas"] = shard.getReplicas();
      shardJson = std::move(json);
    }
    if (name) {
      auto [it, inserted] = named.try_emplace(name, i, full);
      if (!inserted && it->second.second != full)
        return fn.emitError("arguments ")
               << it->second.first << " and " << i << " are both named '"
               << name.getValue() << "' but take different shapes: "
               << shapeString(it->second.second) << " and "
               << shapeString(full);
    }
    llvm::json::Object entry{
        {"name", name ? name.str() : ("arg" + Twine(i)).str()},
        {"named", bool(name)},
        {"dtype", *dtype},
        {"shape", shapeJson(full)},
        {"local_shape", shapeJson(type.getShape())},
        {"shard", std::move(shardJson)}};
    // A named argument has no role here: the launcher reads it from the
    // checkpoint when one holds its name and takes it as an input otherwise.
    if (!name)
      entry["role"] = anyNamed || i == 0 ? "input" : "weight";
    if (arg == ids)
      entry["tokens"] = true;
    args.push_back(std::move(entry));
  }
  for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
    auto type = dyn_cast<RankedTensorType>(t);
    std::optional<StringRef> dtype =
        type ? dtypeName(type.getElementType()) : std::nullopt;
    if (!type || !type.hasStaticShape() || !dtype)
      return fn.emitError("result ")
             << i << " must be a static tensor of f32, i64, i32 or i1, got "
             << t;
    results.push_back(
        llvm::json::Object{{"name", ("result" + Twine(i)).str()},
                           {"dtype", *dtype},
                           {"shape", shapeJson(type.getShape())}});
  }
  return llvm::json::Object{{"abi_version", int64_t(TPRT_ABI_VERSION)},
                            {"backend", backend},
                            {"tp_size", tpSize},
                            {"function", fn.getName().str()},
                            {"args", std::move(args)},
                            {"results", std::move(results)}};
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
    FailureOr<func::FuncOp> entry = findEntry(module);
    if (failed(entry))
      return signalPassFailure();
    auto size =
        module->getAttrOfType<IntegerAttr>(TPDialect::getSizeAttrName());
    FailureOr<llvm::json::Object> manifest =
        buildManifest(*entry, size ? size.getInt() : 1, backend);
    if (failed(manifest))
      return signalPassFailure();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(std::move(*manifest));
    module->setAttr(TPDialect::getManifestAttrName(),
                    StringAttr::get(&getContext(), text));
    entry->setAllArgAttrs(ArrayRef<DictionaryAttr>{});
    (*entry)->setAttr("llvm.emit_c_interface", UnitAttr::get(&getContext()));
  }
};
} // namespace

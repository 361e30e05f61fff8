//===- ExternalizeWeights.cpp - weights given inline become arguments -----===//
//
// tp-shard cuts weight arguments and leaves the slicing of their values to
// the runtime; a constant would have to be sliced per rank inside the one
// SPMD program. So the constants become arguments first, and their values
// the checkpoint the runtime slices, when the module holds them: a model
// printed with its resources elided, or stripped to splats, is still worth
// cutting and compiling to see the program, with its weights' shapes only.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/Passes.h"
#include "tp/Transforms/ShardingAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPEXTERNALIZEWEIGHTS
#include "tp/Transforms/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// How a constant is a weight.
enum class WeightKind {
  /// Its values are in the module: a non-splat dense<..> or a
  /// dense_resource with its blob.
  Data,
  /// One value for every element (weights stripped from a model).
  Splat,
  /// A dense_resource whose blob the module does not hold.
  Elided,
};

/// A weight on its way to an argument and maybe to the checkpoint. The bytes
/// belong to the context (attribute storage or a resource blob), which
/// outlives the pass.
struct Weight {
  std::string name;
  RankedTensorType type;
  WeightKind kind = WeightKind::Data;
  ArrayRef<char> bytes;
  float splat = 0;
};

/// The printer's placeholder for a resource it did not print: every elided
/// resource is parsed back as this one key, so it names no particular
/// weight.
constexpr StringLiteral kElidedKey = "__elided__";

/// A constant op (arith.constant, tosa.const, ...) of a function.
struct Constant {
  Operation *op;
  Attribute value;
  WeightKind kind;
  /// The uses that move to its argument: all of them, except for a splat,
  /// whose other uses are constants of the program.
  SmallVector<OpOperand *> uses;
};

/// Whether a constant of `type` and `value` is a tensor a weight could be,
/// and of what kind. Scalars (a scale, an epsilon) and integer tensors with
/// their values (position ids) are not weights. An elided integer resource
/// is: without its values the program cannot be compiled, so they must come
/// from a checkpoint (torch-mlir's i64 position ids buffer printed elided).
std::optional<WeightKind> candidateKind(Type resultType, Attribute value) {
  auto type = dyn_cast<RankedTensorType>(resultType);
  if (!type || type.getRank() == 0)
    return std::nullopt;
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (resource && !resource.getRawHandle().getBlob() &&
      (type.getElementType().isF32() || type.getElementType().isInteger()))
    return WeightKind::Elided;
  if (!type.getElementType().isF32())
    return std::nullopt;
  if (resource)
    return WeightKind::Data;
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return std::nullopt;
  return dense.isSplat() ? WeightKind::Splat : WeightKind::Data;
}

/// A sum reduction of a product of inputs (matmul, batch_matmul, their
/// generic forms): the op whose operands weights are.
bool isContraction(linalg::LinalgOp op) {
  return op.getNumReductionLoops() > 0 && op.getNumDpsInputs() >= 2 &&
         isSumReduction(op);
}

/// Whether `use` reads its value as a weight: a contraction's input, or a
/// table gathered from at computed indices (an embedding), possibly after
/// ops that only move or repeat elements (weightSource's reshapes,
/// transposes, broadcasts). A splat read otherwise (a matmul's zero init, a
/// scale, a mask) is a constant of the program, not a parameter.
bool readsAsWeight(OpOperand &use) {
  Value source = weightSource(use.get());
  SmallVector<OpOperand *> worklist{&use};
  while (!worklist.empty()) {
    OpOperand *operand = worklist.pop_back_val();
    Operation *user = operand->getOwner();
    if (auto extract = dyn_cast<tensor::ExtractOp>(user))
      if (llvm::any_of(extract.getIndices(), [](Value index) {
            return !matchPattern(index, m_Constant());
          }))
        return true;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
      if (linalgOp.isDpsInput(operand) && isContraction(linalgOp))
        return true;
    for (Value result : user->getResults())
      if (weightSource(result) == source)
        for (OpOperand &next : result.getUses())
          worklist.push_back(&next);
  }
  return false;
}

/// The little-endian fp32 bytes of a Data weight, or an error at `op` when
/// the blob does not match its type.
FailureOr<ArrayRef<char>> bytesOf(const Constant &c) {
  static_assert(llvm::endianness::native == llvm::endianness::little,
                "checkpoints are little-endian: copy the bytes swapped");
  auto type = cast<RankedTensorType>(c.op->getResult(0).getType());
  size_t size = size_t(type.getNumElements()) * sizeof(float);
  if (auto dense = dyn_cast<DenseElementsAttr>(c.value))
    return dense.getRawData();
  auto resource = cast<DenseResourceElementsAttr>(c.value);
  ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
  if (data.size() != size)
    return emitError(c.op->getLoc(), "dense_resource<")
           << resource.getRawHandle().getKey() << "> holds " << data.size()
           << " bytes, " << type << " takes " << size;
  return data;
}

/// The name a weight's argument starts from: its resource key, else what
/// its location calls it, else the line it came from, so a user can find
/// the constant in the file the front-end wrote.
std::string baseName(const Constant &c) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(c.value))
    if (resource.getRawHandle().getKey() != kElidedKey)
      return resource.getRawHandle().getKey().str();
  if (auto name = c.op->getLoc()->findInstanceOf<NameLoc>())
    return name.getName().str();
  if (auto file = c.op->getLoc()->findInstanceOf<FileLineColLoc>())
    return ("const_L" + Twine(file.getLine())).str();
  return "const";
}

/// `base`, or `base_1`, `base_2`, ... whichever is not taken yet.
std::string uniqueName(StringRef base, llvm::StringSet<> &taken) {
  std::string name = base.str();
  for (unsigned i = 1; !taken.insert(name).second; ++i)
    name = (base + "_" + Twine(i)).str();
  return name;
}

/// Writes the safetensors file: an 8-byte little-endian header length, the
/// JSON header (padded with spaces to 8 bytes, as the Python writer does),
/// the tensors' bytes in order. Weights without a value are left out.
void writeSafetensors(raw_ostream &os, ArrayRef<Weight> weights) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const Weight &w : weights) {
    if (w.kind == WeightKind::Elided)
      continue;
    llvm::json::Array shape;
    for (int64_t d : w.type.getShape())
      shape.push_back(d);
    uint64_t size = uint64_t(w.type.getNumElements()) * sizeof(float);
    header[w.name] = llvm::json::Object{
        {"dtype", "F32"},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + size}}};
    offset += size;
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(header));
  text.append((8 - text.size() % 8) % 8, ' ');
  llvm::support::endian::write<uint64_t>(os, text.size(),
                                         llvm::endianness::little);
  os << text;
  for (const Weight &w : weights) {
    if (w.kind == WeightKind::Data)
      os.write(w.bytes.data(), w.bytes.size());
    if (w.kind != WeightKind::Splat)
      continue;
    // A splat of a large weight is written in pieces, not materialised.
    SmallVector<float> piece(std::min<int64_t>(w.type.getNumElements(), 4096),
                             w.splat);
    for (int64_t left = w.type.getNumElements(); left > 0;
         left -= piece.size()) {
      size_t n = std::min<int64_t>(left, piece.size());
      os.write(reinterpret_cast<const char *>(piece.data()), n * sizeof(float));
    }
  }
}

struct TPExternalizeWeightsPass
    : public tp::impl::TPExternalizeWeightsBase<TPExternalizeWeightsPass> {
  using TPExternalizeWeightsBase::TPExternalizeWeightsBase;

  void runOnOperation() override;

  /// Makes the weights of `func` arguments, recording them in `weights`.
  LogicalResult externalize(func::FuncOp func, llvm::StringSet<> &taken,
                            SmallVectorImpl<Weight> &weights);
  /// Says what happened to the values of `weights` when they were not all
  /// written: a remark, or a warning when a checkpoint misses some.
  void report(ModuleOp module, ArrayRef<Weight> weights);
};

} // namespace

LogicalResult
TPExternalizeWeightsPass::externalize(func::FuncOp func,
                                      llvm::StringSet<> &taken,
                                      SmallVectorImpl<Weight> &weights) {
  SmallVector<Constant> found;
  func.walk([&](Operation *op) {
    Attribute value;
    if (op->getNumResults() != 1 || !matchPattern(op, m_Constant(&value)) ||
        op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>() != func)
      return;
    std::optional<WeightKind> kind =
        candidateKind(op->getResult(0).getType(), value);
    if (!kind || (keepValues && *kind != WeightKind::Elided))
      return;
    Constant c{op, value, *kind, {}};
    for (OpOperand &use : op->getUses())
      if (c.kind != WeightKind::Splat || readsAsWeight(use))
        c.uses.push_back(&use);
    if (c.kind != WeightKind::Splat || !c.uses.empty())
      found.push_back(std::move(c));
  });
  if (found.empty())
    return success();
  if (!SymbolTable::symbolKnownUseEmpty(func, func->getParentOp())) {
    // Correct as it is, only not cut; tp-shard warns about the weights too.
    emitWarning(func.getLoc(), "keeps its ")
        << found.size()
        << " constant weights: the function is called, so it cannot take "
           "them as arguments";
    return success();
  }
  // One value with its data known is one weight wherever it appears; an
  // elided resource or a splat says nothing about which weight it is.
  DenseMap<Attribute, BlockArgument> argOf;
  for (Constant &c : found) {
    bool sameValueSameWeight =
        c.kind == WeightKind::Data ||
        (c.kind == WeightKind::Elided &&
         cast<DenseResourceElementsAttr>(c.value).getRawHandle().getKey() !=
             kElidedKey);
    BlockArgument arg =
        sameValueSameWeight ? argOf.lookup(c.value) : BlockArgument();
    if (!arg) {
      Type type = c.op->getResult(0).getType();
      Weight weight;
      weight.name = uniqueName(baseName(c), taken);
      weight.type = cast<RankedTensorType>(type);
      weight.kind = c.kind;
      if (c.kind == WeightKind::Data) {
        FailureOr<ArrayRef<char>> bytes = bytesOf(c);
        if (failed(bytes))
          return failure();
        weight.bytes = *bytes;
      } else if (c.kind == WeightKind::Splat) {
        weight.splat = cast<DenseElementsAttr>(c.value).getSplatValue<float>();
      }
      unsigned index = func.getNumArguments();
      Builder b(func.getContext());
      auto attrs = b.getDictionaryAttr(b.getNamedAttr(
          TPDialect::getNameAttrName(), b.getStringAttr(weight.name)));
      if (failed(func.insertArgument(index, type, attrs, c.op->getLoc())))
        return failure();
      arg = func.getArgument(index);
      if (sameValueSameWeight)
        argOf[c.value] = arg;
      weights.push_back(std::move(weight));
    }
    for (OpOperand *use : c.uses)
      use->set(arg);
    if (c.op->use_empty())
      c.op->erase();
  }
  return success();
}

void TPExternalizeWeightsPass::report(ModuleOp module,
                                      ArrayRef<Weight> weights) {
  unsigned elided = llvm::count_if(
      weights, [](const Weight &w) { return w.kind == WeightKind::Elided; });
  unsigned dropped = file.empty() ? weights.size() - elided : 0;
  if (!file.empty()) {
    if (elided)
      emitWarning(module.getLoc())
          << elided
          << " weights became arguments without a value: the module holds "
             "none for them (elided resources), so '"
          << file << "' does not either; tp-run needs them from another "
          << "checkpoint";
    return;
  }
  if (weights.empty())
    return;
  InFlightDiagnostic remark = emitRemark(module.getLoc());
  remark << weights.size()
         << " weights became arguments with their shapes only: ";
  if (dropped)
    remark << (elided ? "the values of " + Twine(dropped) + " were dropped"
                      : Twine("their values were dropped"))
           << " (file=FILE writes them to a checkpoint; tp-import: "
              "weights=FILE, tp-compile: --weights-out FILE)";
  if (dropped && elided)
    remark << ", " << elided << " had none";
  else if (elided)
    remark << "the module holds no value for them";
  if (elided)
    remark << " (elided resources)";
}

void TPExternalizeWeightsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (keepValues && !file.empty()) {
    emitError(module.getLoc(), "tp-externalize-weights: keep-values leaves "
                               "the values in the module, file= would not "
                               "get them");
    return signalPassFailure();
  }
  // Diagnostics name locations only: printing an op would print a function
  // or an inline weight whole.
  std::unique_ptr<llvm::ToolOutputFile> out;
  if (!file.empty()) {
    std::string error;
    out = openOutputFile(file, &error);
    if (!out) {
      emitError(module.getLoc(), "cannot write the weights to '")
          << file << "': " << error;
      return signalPassFailure();
    }
  }
  llvm::StringSet<> taken;
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(
              i, TPDialect::getNameAttrName()))
        taken.insert(name.getValue());

  SmallVector<Weight> weights;
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && failed(externalize(func, taken, weights)))
      return signalPassFailure();
  report(module, weights);
  // With file=, the file is written even empty: a stale one from an
  // earlier run would otherwise be taken for this model's.
  if (!out)
    return;
  writeSafetensors(out->os(), weights);
  if (out->os().has_error()) {
    emitError(module.getLoc(), "cannot write the weights to '")
        << file << "': " << out->os().error().message();
    out->os().clear_error();
    return signalPassFailure();
  }
  out->keep();
}

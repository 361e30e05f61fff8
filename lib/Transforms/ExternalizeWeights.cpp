//===- ExternalizeWeights.cpp - weights given inline become arguments -----===//
//
// tp-shard cuts weight arguments and leaves the slicing of their values to
// the runtime; a constant would have to be sliced per rank inside the one
// SPMD program. So the constants become arguments first, and their values
// the checkpoint the runtime slices.
//
//===----------------------------------------------------------------------===//

#include "tp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
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

/// A constant's value on its way to the checkpoint. The bytes belong to the
/// context (attribute storage or a resource blob), which outlives the pass.
struct Weight {
  std::string name;
  RankedTensorType type;
  ArrayRef<char> bytes;
};

/// Whether `op` is a weight this pass moves: a non-splat f32 tensor.
bool isInlineWeight(arith::ConstantOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!type || !type.getElementType().isF32())
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue()))
    return !dense.isSplat();
  return isa<DenseResourceElementsAttr>(op.getValue());
}

/// The little-endian fp32 bytes of `op`'s value, or an error at `op` when
/// the module does not hold them (an elided resource).
FailureOr<ArrayRef<char>> bytesOf(arith::ConstantOp op) {
  static_assert(llvm::endianness::native == llvm::endianness::little,
                "checkpoints are little-endian: copy the bytes swapped");
  auto type = cast<RankedTensorType>(op.getType());
  size_t size = size_t(type.getNumElements()) * sizeof(float);
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue()))
    return dense.getRawData();
  auto resource = cast<DenseResourceElementsAttr>(op.getValue());
  const AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return emitError(op.getLoc(), "the value of dense_resource<")
           << resource.getRawHandle().getKey()
           << "> is not in the module (elided?): nothing to write";
  if (blob->getData().size() != size)
    return emitError(op.getLoc(), "dense_resource<")
           << resource.getRawHandle().getKey() << "> holds "
           << blob->getData().size() << " bytes, " << type << " takes " << size;
  return blob->getData();
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
/// the tensors' bytes in order.
void writeSafetensors(raw_ostream &os, ArrayRef<Weight> weights) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const Weight &w : weights) {
    llvm::json::Array shape;
    for (int64_t d : w.type.getShape())
      shape.push_back(d);
    header[w.name] = llvm::json::Object{
        {"dtype", "F32"},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + w.bytes.size()}}};
    offset += w.bytes.size();
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(header));
  text.append((8 - text.size() % 8) % 8, ' ');
  llvm::support::endian::write<uint64_t>(os, text.size(),
                                         llvm::endianness::little);
  os << text;
  for (const Weight &w : weights)
    os.write(w.bytes.data(), w.bytes.size());
}

struct TPExternalizeWeightsPass
    : public tp::impl::TPExternalizeWeightsBase<TPExternalizeWeightsPass> {
  using TPExternalizeWeightsBase::TPExternalizeWeightsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Diagnostics name locations only: printing an op would print a
    // function or an inline weight whole.
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
    unsigned inlineCount = 0;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<arith::ConstantOp> constants;
      func.walk([&](arith::ConstantOp op) {
        if (isInlineWeight(op) &&
            op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>() == func)
          constants.push_back(op);
      });
      if (constants.empty())
        continue;
      if (!SymbolTable::symbolKnownUseEmpty(func, module)) {
        emitError(func.getLoc(), "cannot take its ")
            << constants.size()
            << " constant weights as arguments: the function is called";
        return signalPassFailure();
      }
      DenseMap<Attribute, BlockArgument> argOf;
      for (arith::ConstantOp op : constants) {
        BlockArgument &arg = argOf[op.getValue()];
        if (!arg) {
          FailureOr<ArrayRef<char>> bytes = bytesOf(op);
          if (failed(bytes))
            return signalPassFailure();
          std::string base =
              isa<DenseResourceElementsAttr>(op.getValue())
                  ? cast<DenseResourceElementsAttr>(op.getValue())
                        .getRawHandle()
                        .getKey()
                        .str()
                  : ("const" + Twine(inlineCount++)).str();
          std::string name = uniqueName(base, taken);
          unsigned index = func.getNumArguments();
          OpBuilder b(op);
          auto attrs = b.getDictionaryAttr(b.getNamedAttr(
              TPDialect::getNameAttrName(), b.getStringAttr(name)));
          if (failed(
                  func.insertArgument(index, op.getType(), attrs, op.getLoc())))
            return signalPassFailure();
          arg = func.getArgument(index);
          weights.push_back(
              {name, cast<RankedTensorType>(op.getType()), *bytes});
        }
        op.replaceAllUsesWith(arg);
        op.erase();
      }
    }
    // With file=, the file is written even empty: a stale one from an
    // earlier run would otherwise be taken for this model's.
    if (!out) {
      if (weights.empty())
        return;
      emitError(module.getLoc(), "tp-externalize-weights: ")
          << weights.size()
          << " constant weights became arguments but no file= was given for "
             "their values";
      return signalPassFailure();
    }
    writeSafetensors(out->os(), weights);
    if (out->os().has_error()) {
      emitError(module.getLoc(), "cannot write the weights to '")
          << file << "': " << out->os().error().message();
      out->os().clear_error();
      return signalPassFailure();
    }
    out->keep();
  }
};

} // namespace

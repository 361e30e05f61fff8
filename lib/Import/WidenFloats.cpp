//===- WidenFloats.cpp - half-precision graphs computed in f32 ------------===//
//
// Front-ends export a model in the precision it was trained or saved in:
// torch-mlir writes bf16 or f16 tensors where the PyTorch model was
// `.half()` or `.to(torch.bfloat16)`. tp-mlir's runtime computes in f32
// (its GEMMs, its collectives; tp-run widens bf16 and f16 checkpoints as it
// loads them), so the graph is widened in place: every bf16 and f16 type,
// in values, block arguments, function signatures and attributes (constant
// values converted exactly), becomes f32. The casts the graph made between
// its own precision and f32 (a norm or softmax computed upcast) then cast
// f32 to f32 and go.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPWIDENFLOATS
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isNarrow(Type type) { return isa<BFloat16Type, Float16Type>(type); }

/// Whether `type` is, or holds, a bf16 or f16.
bool holdsNarrow(Type type) {
  bool found = false;
  type.walk([&](Type nested) { found |= isNarrow(nested); });
  return found;
}

/// The values of a bf16 or f16 elements attribute, exactly, as f32.
SmallVector<float> widenedValues(ElementsAttr attr) {
  SmallVector<float> values;
  values.reserve(attr.getNumElements());
  for (APFloat value : attr.getValues<APFloat>())
    values.push_back(value.convertToFloat());
  return values;
}

/// What the replacer below cannot widen: a function defined elsewhere
/// (its callers would pass f32), an op that reinterprets the bits of a
/// 16-bit float, an attribute holding narrow floats in a form it does not
/// know.
LogicalResult checkWidenable(Operation *op) {
  if (auto func = dyn_cast<FunctionOpInterface>(op);
      func && func.isExternal() && holdsNarrow(func.getFunctionType()))
    return func.emitOpError("is defined outside the module and takes or "
                            "returns 16-bit floats: widening its calls to "
                            "f32 would break them");
  if (isa<arith::BitcastOp, tensor::BitcastOp>(op) &&
      (holdsNarrow(op->getOperand(0).getType()) ||
       holdsNarrow(op->getResult(0).getType())))
    return op->emitOpError("reinterprets the bits of a 16-bit float: the "
                           "graph cannot be computed in f32");
  for (NamedAttribute named : op->getAttrs()) {
    auto typed = dyn_cast<TypedAttr>(named.getValue());
    if (!typed || !holdsNarrow(typed.getType()) ||
        isa<FloatAttr, DenseElementsAttr, DenseResourceElementsAttr>(typed))
      continue;
    return op->emitOpError("holds '")
           << named.getName().getValue() << "' of " << typed.getType()
           << ", which tp-mlir cannot widen to f32";
  }
  return success();
}

struct TPWidenFloatsPass : tp::impl::TPWidenFloatsBase<TPWidenFloatsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Type f32 = Float32Type::get(ctx);

    bool any = false;
    WalkResult walk = module.walk([&](Operation *op) {
      bool narrow = llvm::any_of(op->getResultTypes(), holdsNarrow) ||
                    llvm::any_of(op->getOperandTypes(), holdsNarrow);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          narrow |= llvm::any_of(block.getArgumentTypes(), holdsNarrow);
      if (auto func = dyn_cast<FunctionOpInterface>(op))
        narrow |= holdsNarrow(func.getFunctionType());
      for (NamedAttribute named : op->getAttrs())
        if (auto typed = dyn_cast<TypedAttr>(named.getValue()))
          narrow |= holdsNarrow(typed.getType());
      any |= narrow;
      return narrow && failed(checkWidenable(op)) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!any)
      return;

    // The functions whose signatures change, for the remark.
    SmallVector<func::FuncOp> changed;
    for (auto func : module.getOps<func::FuncOp>())
      if (holdsNarrow(func.getFunctionType()))
        changed.push_back(func);

    AttrTypeReplacer replacer;
    replacer.addReplacement([&](Type type) -> std::optional<Type> {
      if (isNarrow(type))
        return f32;
      return std::nullopt;
    });
    // Attributes whose values are narrow floats: their values converted,
    // since the replacer would otherwise give the old bits the new type.
    replacer.addReplacement([&](FloatAttr attr) -> std::optional<Attribute> {
      if (!isNarrow(attr.getType()))
        return std::nullopt;
      return FloatAttr::get(f32, attr.getValue().convertToFloat());
    });
    replacer.addReplacement(
        [&](DenseElementsAttr attr) -> std::optional<Attribute> {
          auto type = dyn_cast<ShapedType>(attr.getType());
          if (!type || !isNarrow(type.getElementType()))
            return std::nullopt;
          auto wide = type.clone(f32);
          if (attr.isSplat())
            return DenseElementsAttr::get(
                wide, attr.getSplatValue<APFloat>().convertToFloat());
          return DenseElementsAttr::get(wide, ArrayRef(widenedValues(attr)));
        });
    // A resource keeps its key (tp-externalize-weights names the weight
    // after it); its blob, where the module holds one, is rewritten once.
    llvm::SmallPtrSet<DialectResourceBlobManager::BlobEntry *, 8> widened;
    replacer.addReplacement(
        [&](DenseResourceElementsAttr attr) -> std::optional<Attribute> {
          ShapedType type = attr.getType();
          if (!isNarrow(type.getElementType()))
            return std::nullopt;
          DenseResourceElementsHandle handle = attr.getRawHandle();
          auto *entry = handle.getResource();
          if (entry && entry->getBlob() && widened.insert(entry).second) {
            ArrayRef<char> bytes = entry->getBlob()->getData();
            const llvm::fltSemantics &semantics =
                cast<FloatType>(type.getElementType()).getFloatSemantics();
            SmallVector<float> values;
            for (size_t at = 0; at + 2 <= bytes.size(); at += 2) {
              uint16_t bits;
              std::memcpy(&bits, bytes.data() + at, 2);
              values.push_back(
                  APFloat(semantics, APInt(16, bits)).convertToFloat());
            }
            entry->setBlob(HeapAsmResourceBlob::allocateAndCopyInferAlign(
                ArrayRef<float>(values)));
          }
          return DenseResourceElementsAttr::get(type.clone(f32), handle);
        });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);

    // The graph's own casts between its precision and f32 are f32 to f32.
    SmallVector<Operation *> casts;
    module.walk([&](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op) &&
          op->getOperand(0).getType() == op->getResult(0).getType())
        casts.push_back(op);
    });
    for (Operation *cast : casts) {
      cast->getResult(0).replaceAllUsesWith(cast->getOperand(0));
      cast->erase();
    }

    for (func::FuncOp func : changed)
      emitRemark(func.getLoc(), "computes in f32: its bf16 and f16 values, "
                                "arguments and results included, were "
                                "widened");
    if (failed(verify(module)))
      return signalPassFailure();
  }
};

} // namespace

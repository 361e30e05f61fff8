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

namespace mlir::tp {
#define GEN_PASS_DEF_TPWIDENFLOATS
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

bool isNarrow(Type type) { return isa<BFloat16Type, Float16Type>(type); }

WalkResult stopAtNarrow(Type type) {
  return isNarrow(type) ? WalkResult::interrupt() : WalkResult::advance();
}

/// Whether `type` is, or holds, a bf16 or f16.
bool holdsNarrow(Type type) { return type.walk(stopAtNarrow).wasInterrupted(); }

/// Whether `op` has a bf16 or f16 in its results, its attributes (a
/// function's type among them) or the arguments of its blocks.
bool mentionsNarrow(Operation *op) {
  if (llvm::any_of(op->getResultTypes(), holdsNarrow) ||
      op->getAttrDictionary().walk(stopAtNarrow).wasInterrupted())
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Type type : block.getArgumentTypes())
        if (holdsNarrow(type))
          return true;
  return false;
}

/// A narrow float's value, exactly, as an f32.
APFloat widen(const APFloat &value) { return APFloat(value.convertToFloat()); }

/// The same as the bits of the f32.
APInt widenBits(const APFloat &value) { return widen(value).bitcastToAPInt(); }

/// Whether `attr` holds narrow floats in a form the replacer below converts
/// (a scalar, dense values, a resource, each of a narrow float type itself);
/// other attributes that hold them (complex values, strings) it cannot.
bool isWidenable(TypedAttr attr) {
  Type element = getElementTypeOrSelf(attr.getType());
  return isa<FloatAttr, DenseIntOrFPElementsAttr, DenseResourceElementsAttr>(
             attr) &&
         isNarrow(element);
}

/// Why the module cannot be widened, reported at the op; success if it
/// can. A function defined elsewhere would be called with f32; an op that
/// reinterprets the bits of a 16-bit float would read f32 bits; an
/// attribute of another form would keep its old bits under a new type; a
/// resource blob read as several types, or of a size its type does not
/// give, cannot be rewritten once for all its readers.
LogicalResult checkWidenable(ModuleOp module) {
  DenseMap<DialectResourceBlobManager::BlobEntry *,
           std::pair<Type, Operation *>>
      blobTypes;
  WalkResult walk = module.walk([&](Operation *op) -> WalkResult {
    if (auto func = dyn_cast<FunctionOpInterface>(op);
        func && func.isExternal() && holdsNarrow(func.getFunctionType()))
      return func.emitOpError("is defined outside the module and takes or "
                              "returns 16-bit floats: widening its calls to "
                              "f32 would break them");
    StringRef name = op->getName().getStringRef();
    if ((op->getName().stripDialect() == "bitcast" || name == "memref.view") &&
        (llvm::any_of(op->getOperandTypes(), holdsNarrow) ||
         llvm::any_of(op->getResultTypes(), holdsNarrow)))
      return op->emitOpError("reinterprets the bits of a 16-bit float: the "
                             "graph cannot be computed in f32");
    WalkResult attrs = op->getAttrDictionary().walk([&](TypedAttr attr) {
      if (!holdsNarrow(attr.getType()) || isWidenable(attr))
        return WalkResult::advance();
      op->emitOpError("holds ")
          << attr << ", narrow floats that tp-mlir cannot widen to f32";
      return WalkResult::interrupt();
    });
    if (attrs.wasInterrupted())
      return WalkResult::interrupt();
    return op->getAttrDictionary().walk([&](DenseResourceElementsAttr attr) {
      ShapedType type = attr.getType();
      auto *entry = attr.getRawHandle().getResource();
      if (!entry || !entry->getBlob())
        return WalkResult::advance();
      auto [seen, first] =
          blobTypes.try_emplace(entry, type.getElementType(), op);
      StringRef key = attr.getRawHandle().getKey();
      if (!first && seen->second.first != type.getElementType() &&
          (isNarrow(type.getElementType()) || isNarrow(seen->second.first))) {
        InFlightDiagnostic diag = op->emitOpError("reads resource '")
                                  << key << "' as " << type.getElementType()
                                  << ": its blob cannot be widened for all "
                                     "its readers";
        diag.attachNote(seen->second.second->getLoc())
            << "also read as " << seen->second.first;
        return WalkResult::interrupt();
      }
      size_t bytes = entry->getBlob()->getData().size();
      if (isNarrow(type.getElementType()) &&
          bytes != 2 * size_t(type.getNumElements())) {
        op->emitOpError("reads resource '")
            << key << "' as " << type << ", but it holds " << bytes << " bytes";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  });
  return failure(walk.wasInterrupted());
}
struct TPWidenFloatsPass : tp::impl::TPWidenFloatsBase<TPWidenFloatsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Type f32 = Float32Type::get(ctx);

    // Nothing to do for an f32 graph (what tp-mlir's builders write): the
    // walk over its types stops at the first narrow one.
    bool any = module
                   .walk([](Operation *op) {
                     return mentionsNarrow(op) ? WalkResult::interrupt()
                                               : WalkResult::advance();
                   })
                   .wasInterrupted();
    if (!any)
      return;
    if (failed(checkWidenable(module)))
      return signalPassFailure();

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
    // Attributes of narrow floats get their values converted: the replacer
    // would otherwise give the old bits the new type.
    replacer.addReplacement([&](FloatAttr attr) -> std::optional<Attribute> {
      if (!isNarrow(attr.getType()))
        return std::nullopt;
      return FloatAttr::get(f32, widen(attr.getValue()));
    });
    replacer.addReplacement(
        [&](DenseIntOrFPElementsAttr attr) -> std::optional<Attribute> {
          if (!isNarrow(attr.getElementType()))
            return std::nullopt;
          return cast<DenseFPElementsAttr>(attr).mapValues(f32, widenBits);
        });
    // A resource keeps its key (tp-externalize-weights names the weight
    // after it); its blob, where the module holds one, is rewritten once
    // (checkWidenable: every reader reads it as the same type).
    llvm::SmallPtrSet<DialectResourceBlobManager::BlobEntry *, 8> widened;
    replacer.addReplacement([&](DenseResourceElementsAttr attr)
                                -> std::optional<Attribute> {
      ShapedType type = attr.getType();
      if (!isNarrow(type.getElementType()))
        return std::nullopt;
      DenseResourceElementsHandle handle = attr.getRawHandle();
      auto *entry = handle.getResource();
      if (entry && entry->getBlob() && widened.insert(entry).second) {
        ArrayRef<char> bytes = entry->getBlob()->getData();
        const llvm::fltSemantics &semantics =
            cast<FloatType>(type.getElementType()).getFloatSemantics();
        SmallVector<uint32_t> bits(bytes.size() / 2);
        for (size_t i = 0; i < bits.size(); ++i) {
          uint16_t narrow;
          std::memcpy(&narrow, bytes.data() + 2 * i, 2);
          bits[i] =
              widenBits(APFloat(semantics, APInt(16, narrow))).getZExtValue();
        }
        entry->setBlob(HeapAsmResourceBlob::allocateAndCopyInferAlign(
            ArrayRef<uint32_t>(bits)));
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

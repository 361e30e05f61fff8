//===- ModelInterface.cpp - the functions a launcher calls ----------------===//
//
// `tp_model_manifest` and one `tp_model_<entry>` per entry function (see
// runtime/include/tprt/model.h), added to the lowered module: a launcher
// dlopens the model and needs no knowledge of MLIR's calling convention.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/CudaPipeline.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/JSON.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPMODELINTERFACE
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

/// Marks the arguments of `function` (a manifest entry) that the lowering
/// stored as bf16.
static LogicalResult markBf16(ModuleOp module, llvm::json::Object &function) {
  auto all = module->getAttrOfType<DictionaryAttr>(kBf16ArgsAttrName);
  std::optional<StringRef> name = function.getString("name");
  auto bf16 = all && name ? all.getAs<DenseI64ArrayAttr>(*name) : nullptr;
  if (!bf16)
    return success();
  llvm::json::Array *args = function.getArray("args");
  for (int64_t i : bf16.asArrayRef()) {
    if (!args || i < 0 || size_t(i) >= args->size())
      return module.emitError()
             << "'" << kBf16ArgsAttrName << "' names argument " << i << " of @"
             << *name << ", which the manifest does not have";
    (*(*args)[i].getAsObject())["dtype"] = "bf16";
  }
  return success();
}

/// Launchers call the entry through its C interface only, which unpacks
/// the descriptors and calls the expanded form: every descriptor field an
/// argument, thousands for a deep model, on which LLVM's interprocedural
/// passes cost more than linearly in the depth. The expanded body moves into
/// the C interface instead (its entry block, with those arguments, is
/// branched to); where the C interface does more than one call (results to
/// store), the expanded form becomes internal, for LLVM to inline.
static void mergeIntoCInterface(ModuleOp module, LLVM::LLVMFuncOp cInterface,
                                LLVM::LLVMFuncOp expanded) {
  if (expanded.isExternal())
    return;
  Region &body = cInterface.getBody();
  auto ret = body.hasOneBlock()
                 ? dyn_cast<LLVM::ReturnOp>(body.front().getTerminator())
                 : nullptr;
  auto call =
      ret ? dyn_cast_or_null<LLVM::CallOp>(ret->getPrevNode()) : nullptr;
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(expanded, module);
  if (!call || call.getCallee() != expanded.getName() ||
      call.getNumResults() != 0 || ret.getNumOperands() != 0 || !uses ||
      !llvm::hasSingleElement(*uses)) {
    expanded.setLinkage(LLVM::Linkage::Internal);
    return;
  }
  Block *entry = &expanded.getBody().front();
  OpBuilder b(call);
  LLVM::BrOp::create(b, call.getLoc(), call.getArgOperands(), entry);
  ret.erase();
  call.erase();
  body.getBlocks().splice(body.end(), expanded.getBody().getBlocks());
  expanded.erase();
}

/// `tp_model_manifest()`: the address of the manifest text.
static void addManifestFunction(OpBuilder &b, Location loc, StringRef text) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  std::string data = text.str();
  data.push_back('\0');
  auto strTy = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), data.size());
  LLVM::GlobalOp::create(b, loc, strTy, /*isConstant=*/true,
                         LLVM::Linkage::Internal, "tp_manifest_text",
                         b.getStringAttr(data));
  auto fn = LLVM::LLVMFuncOp::create(b, loc, "tp_model_manifest",
                                     LLVM::LLVMFunctionType::get(ptr, {}));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(fn.addEntryBlock(b));
  Value address = LLVM::AddressOfOp::create(b, loc, ptr, "tp_manifest_text");
  LLVM::ReturnOp::create(b, loc, address);
}

/// `symbol(void **buffers)`: loads the descriptor pointers at `slots` of
/// `buffers` and calls the C interface of the entry with them.
static void addEntryFunction(OpBuilder &b, Location loc, StringRef symbol,
                             LLVM::LLVMFuncOp callee, ArrayRef<int32_t> slots) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto fn = LLVM::LLVMFuncOp::create(
      b, loc, symbol,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}));
  OpBuilder::InsertionGuard guard(b);
  Block *body = fn.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> descriptors;
  for (int32_t slot : slots) {
    Value address = LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                                        ArrayRef<LLVM::GEPArg>{slot});
    descriptors.push_back(LLVM::LoadOp::create(b, loc, ptr, address));
  }
  LLVM::CallOp::create(b, loc, callee, descriptors);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
}

/// The entry function of `function` (a manifest entry): its C interface
/// takes one descriptor per argument, then per result not updated in place
/// (tp-in-place-results); a launcher passes every argument's, then every
/// result's.
static LogicalResult addEntry(ModuleOp module, OpBuilder &b,
                              llvm::json::Object &function) {
  std::optional<StringRef> name = function.getString("name");
  std::optional<StringRef> symbol = function.getString("symbol");
  llvm::json::Array *args = function.getArray("args");
  llvm::json::Array *results = function.getArray("results");
  if (!name || !symbol || !args || !results)
    return module.emitError()
           << "a function of '" << TPDialect::getManifestAttrName()
           << "' lacks its name, symbol, args or results";
  std::string cInterface = ("_mlir_ciface_" + *name).str();
  auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(cInterface);
  if (!callee)
    return module.emitError() << "no @" << cInterface
                              << ": the entry was not lowered with "
                                 "llvm.emit_c_interface";
  if (auto expanded = module.lookupSymbol<LLVM::LLVMFuncOp>(*name))
    mergeIntoCInterface(module, callee, expanded);
  if (failed(markBf16(module, function)))
    return failure();
  SmallVector<int32_t> slots;
  for (size_t i = 0; i < args->size() + results->size(); ++i) {
    const llvm::json::Object *result =
        i < args->size() ? nullptr : (*results)[i - args->size()].getAsObject();
    if (!result || !result->get("in_place"))
      slots.push_back(int32_t(i));
  }
  addEntryFunction(b, module.getLoc(), *symbol, callee, slots);
  return success();
}

namespace {
struct TPModelInterfacePass
    : public tp::impl::TPModelInterfaceBase<TPModelInterfacePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto text =
        module->getAttrOfType<StringAttr>(TPDialect::getManifestAttrName());
    if (!text) {
      module.emitError() << "no '" << TPDialect::getManifestAttrName()
                         << "': run tp-model-manifest before the lowering";
      return signalPassFailure();
    }
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
    llvm::json::Object *manifest = parsed ? parsed->getAsObject() : nullptr;
    llvm::json::Array *functions =
        manifest ? manifest->getArray("functions") : nullptr;
    if (!functions) {
      if (!parsed)
        llvm::consumeError(parsed.takeError());
      module.emitError() << "'" << TPDialect::getManifestAttrName()
                         << "' is not a manifest (JSON with functions)";
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    for (llvm::json::Value &function : *functions) {
      if (!function.getAsObject()) {
        module.emitError() << "a function of '"
                           << TPDialect::getManifestAttrName()
                           << "' is not an object";
        return signalPassFailure();
      }
      if (failed(addEntry(module, b, *function.getAsObject())))
        return signalPassFailure();
    }
    module->removeAttr(kBf16ArgsAttrName);

    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::json::Value(std::move(*manifest));
    module->removeAttr(TPDialect::getManifestAttrName());
    addManifestFunction(b, module.getLoc(), json);
  }
};
} // namespace

//===- ModelInterface.cpp - the functions a launcher calls ----------------===//
//
// `tp_model_manifest` and `tp_model_forward` of runtime/include/tprt/model.h,
// added to the lowered module: a launcher dlopens the model and needs no
// knowledge of MLIR's calling convention.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/CudaPipeline.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/JSON.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPMODELINTERFACE
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

/// Marks the arguments the lowering stored as bf16 in the manifest.
static LogicalResult markBf16(ModuleOp module, llvm::json::Object &manifest) {
  auto bf16 = module->getAttrOfType<DenseI64ArrayAttr>(kBf16ArgsAttrName);
  if (!bf16)
    return success();
  llvm::json::Array *args = manifest.getArray("args");
  for (int64_t i : bf16.asArrayRef()) {
    if (!args || i < 0 || size_t(i) >= args->size())
      return module.emitError()
             << "'" << kBf16ArgsAttrName << "' names argument " << i
             << ", which the manifest does not have";
    (*(*args)[i].getAsObject())["dtype"] = "bf16";
  }
  module->removeAttr(kBf16ArgsAttrName);
  return success();
}

/// Launchers call the entry through its C interface only, which unpacks
/// the descriptors and calls the expanded form: every descriptor field an
/// argument, thousands for a deep model, on which LLVM's interprocedural
/// passes cost more than linearly in the depth. The expanded body moves into
/// the C interface instead (its entry block's arguments replaced by the
/// unpacked fields); where the C interface does more than one call (results
/// to store), the expanded form becomes internal, for LLVM to inline.
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
  // Other uses of the expanded form: in the other top-level ops (not in its
  // own body, a deep model's largest, which no model calls recursively).
  auto usedElsewhere = [&] {
    for (Operation &op : module.getBody()->getOperations())
      if (&op != expanded && &op != cInterface &&
          !SymbolTable::symbolKnownUseEmpty(expanded, &op))
        return true;
    return false;
  };
  if (!call || call.getCallee() != expanded.getName() ||
      call.getNumResults() != 0 || ret.getNumOperands() != 0 ||
      usedElsewhere()) {
    expanded.setLinkage(LLVM::Linkage::Internal);
    return;
  }
  // No branch: a block argument per descriptor field would be a phi for
  // LLVM to fold, thousands of them.
  Block *entry = &expanded.getBody().front();
  for (auto [arg, field] :
       llvm::zip(entry->getArguments(), call.getArgOperands()))
    arg.replaceAllUsesWith(field);
  ret.erase();
  call.erase();
  body.front().getOperations().splice(body.front().end(),
                                      entry->getOperations());
  entry->erase();
  body.getBlocks().splice(body.end(), expanded.getBody().getBlocks());
  expanded.erase();
}

/// Where a value used by `users` is best defined: before the first of them
/// when they are all in `block`, else at `fallback`. A load placed so lives
/// only across the layer that reads it, not across the whole forward pass.
static Operation *firstUserIn(Block *block, ValueRange values,
                              Operation *fallback) {
  Operation *first = nullptr;
  for (Value value : values)
    for (Operation *user : value.getUsers()) {
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return fallback;
      if (!first || ancestor->isBeforeInBlock(first))
        first = ancestor;
    }
  return first ? first : fallback;
}

/// Loads of a whole descriptor whose fields are only extracted become loads
/// of those fields, each next to what reads it. The C interface loads every
/// descriptor on entry: for a deep model hundreds of values live across the
/// whole body, which LLVM's code generation pays for more than linearly.
/// Descriptors are the launcher's and stay unchanged during the call, so a
/// field may be read any time.
static void sinkDescriptorLoads(LLVM::LLVMFuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  SmallVector<LLVM::LoadOp> loads;
  fn.walk([&](LLVM::LoadOp load) {
    if (isa<LLVM::LLVMStructType>(load.getType()) &&
        llvm::all_of(load->getUsers(), [](Operation *user) {
          return isa<LLVM::ExtractValueOp>(user);
        }))
      loads.push_back(load);
  });
  for (LLVM::LoadOp load : loads) {
    for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
      auto extract = cast<LLVM::ExtractValueOp>(user);
      if (extract.use_empty()) {
        extract.erase();
        continue;
      }
      OpBuilder b(
          firstUserIn(extract->getBlock(), extract.getResult(), extract));
      SmallVector<LLVM::GEPArg> indices{0};
      for (int64_t i : extract.getPosition())
        indices.push_back(int32_t(i));
      Value field = LLVM::GEPOp::create(
          b, extract.getLoc(), ptr, load.getType(), load.getAddr(), indices);
      extract.getResult().replaceAllUsesWith(
          LLVM::LoadOp::create(b, extract.getLoc(), extract.getType(), field));
      extract.erase();
    }
    load.erase();
  }
}

/// Folds the descriptors the expanded entry rebuilt from the unpacked
/// fields (insertvalue chains) back to the fields, and drops what is then
/// unused: most of the C interface's body for a deep model. (Only these
/// folds, in one sweep: a greedy rewrite of the whole body costs more.)
static void foldDescriptorRoundTrips(LLVM::LLVMFuncOp fn) {
  fn.walk([](LLVM::ExtractValueOp extract) {
    SmallVector<OpFoldResult> folded;
    if (succeeded(extract->fold(folded)) && folded.size() == 1)
      if (auto value = dyn_cast<Value>(folded.front());
          value && value != extract.getResult()) {
        extract.getResult().replaceAllUsesWith(value);
        extract.erase();
      }
  });
  for (Block &block : llvm::reverse(fn.getBody()))
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isOpTriviallyDead(&op))
        op.erase();
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

/// `tp_model_forward(void **buffers)`: the C interface's body, each
/// descriptor pointer loaded from `buffers` next to what reads it, when the
/// C interface has one (the entry's C interface, with as many arguments as
/// buffers, is then gone: on x86-64 all but six of them are on the stack,
/// and code generation costs more than linearly in how many are read);
/// otherwise a call of it with every descriptor pointer loaded.
static void addForwardFunction(OpBuilder &b, Location loc,
                               LLVM::LLVMFuncOp callee, unsigned numBuffers) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto fn = LLVM::LLVMFuncOp::create(
      b, loc, "tp_model_forward",
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}));
  OpBuilder::InsertionGuard guard(b);
  auto loadBuffer = [&](OpBuilder &b, Value buffers, unsigned i) -> Value {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, buffers,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    return LLVM::LoadOp::create(b, loc, ptr, slot);
  };
  bool inlineBody =
      !callee.isExternal() && callee.getNumArguments() == numBuffers &&
      llvm::all_of(callee.getArgumentTypes(), [&](Type t) { return t == ptr; });
  if (inlineBody) {
    Region &body = fn.getBody();
    body.takeBody(callee.getBody());
    Block *entry = &body.front();
    Value buffers = entry->insertArgument(0u, ptr, loc);
    for (unsigned i = 0; i < numBuffers; ++i) {
      BlockArgument arg = entry->getArgument(1);
      OpBuilder at(firstUserIn(entry, arg, &entry->front()));
      arg.replaceAllUsesWith(loadBuffer(at, buffers, i));
      entry->eraseArgument(1);
    }
    callee.erase();
    return;
  }
  Block *body = fn.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> descriptors;
  for (unsigned i = 0; i < numBuffers; ++i)
    descriptors.push_back(loadBuffer(b, body->getArgument(0), i));
  LLVM::CallOp::create(b, loc, callee, descriptors);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
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
    std::optional<StringRef> entry =
        manifest ? manifest->getString("function") : std::nullopt;
    llvm::json::Array *args = manifest ? manifest->getArray("args") : nullptr;
    llvm::json::Array *results =
        manifest ? manifest->getArray("results") : nullptr;
    if (!entry || !args || !results) {
      if (!parsed)
        llvm::consumeError(parsed.takeError());
      module.emitError() << "'" << TPDialect::getManifestAttrName()
                         << "' is not a manifest (JSON with function, args "
                            "and results)";
      return signalPassFailure();
    }
    std::string cInterface = ("_mlir_ciface_" + *entry).str();
    auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(cInterface);
    if (!callee) {
      module.emitError() << "no @" << cInterface
                         << ": the entry was not lowered with "
                            "llvm.emit_c_interface";
      return signalPassFailure();
    }
    if (auto expanded = module.lookupSymbol<LLVM::LLVMFuncOp>(*entry))
      mergeIntoCInterface(module, callee, expanded);
    if (!callee.isExternal()) {
      foldDescriptorRoundTrips(callee);
      sinkDescriptorLoads(callee);
    }
    unsigned numBuffers = args->size() + results->size();
    if (failed(markBf16(module, *manifest)))
      return signalPassFailure();

    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::json::Value(std::move(*manifest));
    module->removeAttr(TPDialect::getManifestAttrName());
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    addManifestFunction(b, module.getLoc(), json);
    addForwardFunction(b, module.getLoc(), callee, numBuffers);
  }
};
} // namespace

//===- ModelInterface.cpp - the functions a launcher calls ----------------===//
//
// `tp_model_manifest` and one `tp_model_<entry>` per entry function (see
// runtime/include/tprt/model.h), added to the lowered module: a launcher
// dlopens the model and needs no knowledge of MLIR's calling convention.
//
//===----------------------------------------------------------------------===//

#include "ManifestAttr.h"
#include "tp/Conversion/CudaPipeline.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"

#include "mlir/Analysis/CFGLoopInfo.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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
    llvm::json::Object &arg = *(*args)[i].getAsObject();
    arg["dtype"] = "bf16";
    // The loader narrows each part of a stack (tp-stack-weights) as it
    // reads it.
    if (llvm::json::Object *stack = arg.getObject("stack"))
      if (llvm::json::Array *parts = stack->getArray("parts"))
        for (llvm::json::Value &part : *parts)
          (*part.getAsObject())["dtype"] = "bf16";
  }
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

/// The blocks of `body` inside a loop (from the lowered loops of the ops
/// that stay in the entry, an embedding lookup say).
static DenseSet<Block *> blocksInLoops(Region &body) {
  DenseSet<Block *> inLoop;
  if (body.hasOneBlock())
    return inLoop;
  DominanceInfo dominance;
  CFGLoopInfo loops(dominance.getDomTree(&body));
  for (Block &block : body)
    if (loops.getLoopFor(&block))
      inLoop.insert(&block);
  return inLoop;
}

/// Where a value read by the users of `values` is best defined: before the
/// first of them when they are all in one block outside any loop, else at
/// `fallback`. A load placed so lives only across the layer that reads it,
/// not across the whole forward pass, and the layers' calls look alike
/// (tp-roll-repeated-calls rolls them); in a loop it would run every
/// iteration.
static Operation *firstUser(ValueRange values, Operation *fallback,
                            const DenseSet<Block *> &inLoop) {
  Operation *first = nullptr;
  for (Value value : values)
    for (Operation *user : value.getUsers()) {
      if (first && user->getBlock() != first->getBlock())
        return fallback;
      if (!first || user->isBeforeInBlock(first))
        first = user;
    }
  if (!first || inLoop.contains(first->getBlock()))
    return fallback;
  return first;
}

/// Loads of a whole descriptor whose fields are only extracted become loads
/// of those fields, each next to what reads it. The C interface loads every
/// descriptor on entry: for a deep model hundreds of values live across the
/// whole body, which LLVM's code generation pays for more than linearly.
/// Descriptors are the launcher's and stay unchanged during the call, so a
/// field may be read any time.
static void sinkDescriptorLoads(LLVM::LLVMFuncOp fn,
                                const DenseSet<Block *> &inLoop) {
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
      OpBuilder b(firstUser(extract.getResult(), extract, inLoop));
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

/// `symbol(void **buffers)` for an entry whose C interface `callee` takes
/// the descriptors at `slots` of `buffers` (a result updated in place has
/// none): the C interface's body, each descriptor pointer loaded from
/// `buffers` next to what reads it, when the C interface has one (it is
/// then gone: on x86-64 all but six of its arguments are on the stack, and
/// code generation costs more than linearly in how many are read);
/// otherwise a call of it with every descriptor pointer loaded.
static void addEntryFunction(OpBuilder &b, Location loc, StringRef symbol,
                             LLVM::LLVMFuncOp callee, ArrayRef<int32_t> slots,
                             const DenseSet<Block *> &inLoop) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto fn = LLVM::LLVMFuncOp::create(
      b, loc, symbol,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}));
  OpBuilder::InsertionGuard guard(b);
  auto loadBuffer = [&](OpBuilder &b, Value buffers, unsigned i) -> Value {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, buffers,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    return LLVM::LoadOp::create(b, loc, ptr, slot);
  };
  bool inlineBody =
      !callee.isExternal() && callee.getNumArguments() == slots.size() &&
      llvm::all_of(callee.getArgumentTypes(), [&](Type t) { return t == ptr; });
  if (inlineBody) {
    Region &body = fn.getBody();
    body.takeBody(callee.getBody());
    Block *entry = &body.front();
    Value buffers = entry->insertArgument(0u, ptr, loc);
    for (int32_t slot : slots) {
      BlockArgument arg = entry->getArgument(1);
      OpBuilder at(firstUser(arg, &entry->front(), inLoop));
      arg.replaceAllUsesWith(loadBuffer(at, buffers, slot));
      entry->eraseArgument(1);
    }
    callee.erase();
    return;
  }
  Block *body = fn.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> descriptors;
  for (int32_t slot : slots)
    descriptors.push_back(loadBuffer(b, body->getArgument(0), slot));
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
  DenseSet<Block *> inLoop;
  if (!callee.isExternal()) {
    foldDescriptorRoundTrips(callee);
    inLoop = blocksInLoops(callee.getBody());
    sinkDescriptorLoads(callee, inLoop);
  }
  if (failed(markBf16(module, function)))
    return failure();
  SmallVector<int32_t> slots;
  for (size_t i = 0; i < args->size() + results->size(); ++i) {
    const llvm::json::Object *result =
        i < args->size() ? nullptr : (*results)[i - args->size()].getAsObject();
    if (!result || !result->get("in_place"))
      slots.push_back(int32_t(i));
  }
  addEntryFunction(b, module.getLoc(), *symbol, callee, slots, inLoop);
  return success();
}

namespace {
struct TPModelInterfacePass
    : public tp::impl::TPModelInterfaceBase<TPModelInterfacePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<std::optional<llvm::json::Value>> manifest = readManifest(module);
    if (failed(manifest))
      return signalPassFailure();
    if (!*manifest) {
      module.emitError() << "no '" << TPDialect::getManifestAttrName()
                         << "': run tp-model-manifest before the lowering";
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    for (llvm::json::Value &function : manifestFunctions(**manifest)) {
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
    os << **manifest;
    module->removeAttr(TPDialect::getManifestAttrName());
    addManifestFunction(b, module.getLoc(), json);
  }
};
} // namespace

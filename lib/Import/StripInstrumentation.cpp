//===- StripInstrumentation.cpp - remove a front-end's timing calls -------===//
//
// buddy-mlir times each operator of its graphs from inside them (rtclock()
// around the operator, record_timing(name, seconds) after it). The model
// computes the same without those calls, and without them it loads where
// the front-end's runtime is absent. A call goes only when the callee is
// known instrumentation and nothing but other removed calls reads what it
// returns: a model that computes with a clock reading keeps it.
//
//===----------------------------------------------------------------------===//

#include "tp/Import/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSTRIPINSTRUMENTATION
#include "tp/Import/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

/// The functions front-ends are known to time their graphs with: MLIR's
/// runner utils' clock, and buddy-mlir's per-operator record.
static constexpr llvm::StringLiteral kKnownInstrumentation[] = {
    "rtclock", "record_timing"};

/// Whether `fn` may be instrumentation named in `names`: a declaration
/// whose signature holds no tensor or memref, so that a call of it can
/// neither read nor write the model's data.
static bool isInstrumentation(func::FuncOp fn, const llvm::StringSet<> &names) {
  if (!fn.isExternal() || !names.contains(fn.getSymName()))
    return false;
  auto isData = [](Type type) { return isa<TensorType, BaseMemRefType>(type); };
  FunctionType type = fn.getFunctionType();
  return llvm::none_of(type.getInputs(), isData) &&
         llvm::none_of(type.getResults(), isData);
}

/// An op that can go with the calls it feeds: no side effect, no region,
/// not a terminator (a return is free of effects, but it is the model's).
static bool isRemovableLink(Operation *op) {
  return op->getNumRegions() == 0 && !op->hasTrait<OpTrait::IsTerminator>() &&
         isMemoryEffectFree(op);
}

/// Whether every use of `value` is, through removable links, one of
/// `calls`; the links are added to `links`. Otherwise `reader` is the first
/// op outside that reads it.
static bool feedsOnly(Value value, const llvm::SetVector<Operation *> &calls,
                      llvm::SetVector<Operation *> &links, Operation *&reader) {
  for (Operation *user : value.getUsers()) {
    if (calls.contains(user) || links.contains(user))
      continue;
    if (!isRemovableLink(user)) {
      reader = user;
      return false;
    }
    links.insert(user);
    for (Value result : user->getResults())
      if (!feedsOnly(result, calls, links, reader))
        return false;
  }
  return true;
}

/// Whether nothing outside the module can refer to `symbol`: a private
/// symbol, or an LLVM global of private or internal linkage (the name
/// strings: their symbol visibility is public, their linkage says local).
static bool isLocal(Operation *symbol) {
  if (auto global = dyn_cast<LLVM::GlobalOp>(symbol))
    return global.getLinkage() == LLVM::Linkage::Private ||
           global.getLinkage() == LLVM::Linkage::Internal;
  auto op = dyn_cast<SymbolOpInterface>(symbol);
  return op && op.isPrivate();
}

namespace {

struct TPStripInstrumentationPass
    : tp::impl::TPStripInstrumentationBase<TPStripInstrumentationPass> {
  using TPStripInstrumentationBase::TPStripInstrumentationBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> names;
    for (StringRef name : kKnownInstrumentation)
      names.insert(name);
    for (const std::string &name : functions)
      names.insert(name);

    // The calls of instrumentation functions, then, until nothing changes,
    // those whose results something else reads are dropped.
    SymbolTable symbols(module);
    llvm::SetVector<Operation *> calls;
    module.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && isInstrumentation(callee, names))
        calls.insert(call);
    });
    llvm::SetVector<Operation *> links;
    llvm::MapVector<Operation *, Operation *> keptFor;
    for (bool changed = true; changed;) {
      changed = false;
      links.clear();
      for (Operation *call : llvm::to_vector(calls)) {
        Operation *reader = nullptr;
        llvm::SetVector<Operation *> own;
        bool removable = llvm::all_of(call->getResults(), [&](Value result) {
          return feedsOnly(result, calls, own, reader);
        });
        if (removable) {
          links.insert(own.begin(), own.end());
          continue;
        }
        calls.remove(call);
        keptFor[call] = reader;
        changed = true;
      }
    }
    for (auto [call, reader] : keptFor) {
      InFlightDiagnostic warning =
          call->emitWarning("kept this call of the instrumentation function @")
          << cast<func::CallOp>(call).getCallee()
          << ": something other than instrumentation reads its result";
      warning.attachNote(reader->getLoc()) << "read here";
    }
    if (calls.empty())
      return;

    // One remark per function, naming the functions.
    llvm::MapVector<Operation *, llvm::SetVector<StringRef>> perFunction;
    llvm::DenseMap<Operation *, unsigned> counts;
    for (Operation *call : calls) {
      Operation *fn = call->getParentOfType<FunctionOpInterface>();
      perFunction[fn].insert(cast<func::CallOp>(call).getCallee());
      ++counts[fn];
    }
    for (auto &[fn, callees] : perFunction) {
      InFlightDiagnostic remark = fn->emitRemark()
                                  << "removed " << counts[fn]
                                  << " calls of instrumentation functions (";
      llvm::interleaveComma(callees, remark,
                            [&](StringRef name) { remark << "@" << name; });
      remark << "): their results feed only each other, not the model";
    }

    // The calls, the links between them, then what only they read, and the
    // private symbols only they named.
    llvm::SetVector<Operation *> erased(calls.begin(), calls.end());
    erased.insert(links.begin(), links.end());
    llvm::SetVector<Operation *> producers;
    llvm::SetVector<StringAttr> named;
    auto collect = [&](Operation *op) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && !erased.contains(def))
          producers.insert(def);
      op->getAttrDictionary().walk(
          [&](SymbolRefAttr ref) { named.insert(ref.getRootReference()); });
    };
    for (Operation *op : erased)
      collect(op);
    for (Operation *op : erased)
      op->dropAllReferences();
    for (Operation *op : erased)
      op->erase();
    while (!producers.empty()) {
      Operation *op = producers.pop_back_val();
      if (!op->use_empty() || !isRemovableLink(op))
        continue;
      collect(op);
      op->erase();
    }
    for (StringAttr name : named) {
      Operation *symbol = symbols.lookup(name);
      if (symbol && isLocal(symbol) &&
          SymbolTable::symbolKnownUseEmpty(symbol, module))
        symbols.erase(symbol);
    }
  }
};

} // namespace

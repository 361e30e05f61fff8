//===- PanelWeights.cpp - weights the runtime's GEMMs read in panels ------===//
//
// A decode step multiplies a few rows of activations by every weight, and
// the runtime's register tiles read op(b), k x n, down strips of columns:
// across a [k, n] weight's rows, or 16 rows of an [n, k] one at a time,
// transposed in registers; reads the hardware prefetchers do not follow.
// Laid out in column panels (runtime/lib/Panels.h), op(b) is one stream.
// The layout is the loader's to make, once, and every reader of the buffer
// must expect it: so only a weight that the runtime's GEMM reads, always
// whole and as b, and nothing else reads but element loads (the lookup of a
// tied embedding, which the LM head reads as b transposed), is laid out so:
// the manifest says so, and the loads are rewritten to read the panels.
//
//===----------------------------------------------------------------------===//

#include "ManifestAttr.h"
#include "RuntimeCalls.h"
#include "tp/Conversion/Passes.h"
#include "tp/IR/TPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "tprt/tprt.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Support/JSON.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPPANELWEIGHTS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

static constexpr StringRef kMatmul = "tprt_matmul_f32";
static constexpr StringRef kMatmulPanels = "tprt_matmul_panels_f32";

namespace {

/// Whether `type` is a static [k, n] f32 buffer with the identity layout.
bool isWholeMatrix(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getRank() == 2 && memref.hasStaticShape() &&
         memref.getLayout().isIdentity() && memref.getElementType().isF32();
}

/// Whether tprt_matmul_f32 `call` reads its b transposed; nothing where
/// that is not a constant.
std::optional<bool> transposesB(func::CallOp call) {
  if (matchPattern(call.getOperand(4), m_Zero()))
    return false;
  if (matchPattern(call.getOperand(4), m_One()))
    return true;
  return std::nullopt;
}

/// The function argument `value` is, through casts; null if none.
BlockArgument argumentOf(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && arg.getOwner()->isEntryBlock() &&
                 isa<func::FuncOp>(arg.getOwner()->getParentOp())
             ? arg
             : nullptr;
}

/// The arguments of the module's functions that may hold a weight, joined
/// where they hold the same buffer: an argument and the callee's argument
/// it is passed as, and the entries' arguments of one manifest name. A
/// class is laid out in panels only if none of its arguments is read
/// otherwise than by a GEMM as b.
struct WeightClasses {
  llvm::EquivalenceClasses<Value> classes;
  llvm::DenseSet<Value> readOtherwise;
  llvm::DenseMap<Value, SmallVector<func::CallOp>> gemms;
  /// Element loads (an embedding lookup), rewritten to read the panels.
  llvm::DenseMap<Value, SmallVector<memref::LoadOp>> loads;
  /// Arguments whose uses are still to be followed.
  SmallVector<Value> pending;

  void add(Value arg) {
    if (!classes.contains(arg))
      pending.push_back(arg);
    classes.insert(arg);
  }

  /// Follows the uses of `arg` (through casts) from `value`.
  void visitUses(Value arg, Value value, ModuleOp module) {
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto cast = dyn_cast<memref::CastOp>(user)) {
        visitUses(arg, cast.getResult(), module);
        continue;
      }
      auto call = dyn_cast<func::CallOp>(user);
      if (call && call.getCallee() == kMatmul && use.getOperandNumber() == 1 &&
          transposesB(call).has_value()) {
        gemms[arg].push_back(call);
        continue;
      }
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        loads[arg].push_back(load);
        continue;
      }
      auto callee =
          call ? module.lookupSymbol<func::FuncOp>(call.getCallee()) : nullptr;
      if (callee && !callee.isExternal() && callee.isPrivate()) {
        Value param = callee.getArgument(use.getOperandNumber());
        add(param);
        classes.unionSets(arg, param);
        continue;
      }
      readOtherwise.insert(arg);
    }
  }

  /// Follows every added argument's uses.
  void visitAll(ModuleOp module) {
    while (!pending.empty()) {
      Value arg = pending.pop_back_val();
      if (isWholeMatrix(arg.getType()))
        visitUses(arg, arg, module);
      else
        readOtherwise.insert(arg);
    }
  }

  /// A parameter that some call passes anything but an argument of its own
  /// class (a fresh buffer, an out-parameter, another weight) holds no
  /// weight there; nor does one of a function reached otherwise than by
  /// calls (through func.constant).
  void excludeMisfedParameters(ModuleOp module) {
    module.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal())
        return;
      for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
        Value param = callee.getArgument(i);
        BlockArgument source = argumentOf(operand);
        if (classes.contains(param) && (!source || !classes.contains(source) ||
                                        !classes.isEquivalent(source, param)))
          readOtherwise.insert(param);
      }
    });
    for (auto fn : module.getOps<func::FuncOp>()) {
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(fn, module);
      if (uses && llvm::all_of(*uses, [](const SymbolTable::SymbolUse &use) {
            return isa<func::CallOp>(use.getUser());
          }))
        continue;
      for (BlockArgument param : fn.getArguments())
        if (classes.contains(param))
          readOtherwise.insert(param);
    }
  }

  /// The layout of the class led by `leader`: the panels of the weight, or
  /// of its transpose, where its GEMMs all read it the one way and nothing
  /// else reads it; empty otherwise.
  StringRef layoutOf(Value leader) {
    std::optional<bool> transposed;
    for (auto member = classes.findLeader(leader);
         member != classes.member_end(); ++member) {
      if (readOtherwise.count(*member))
        return {};
      for (func::CallOp call : gemms.lookup(*member)) {
        if (transposed && transposed != transposesB(call))
          return {};
        transposed = transposesB(call);
      }
    }
    if (!transposed)
      return {};
    return *transposed ? "transposed_panels" : "panels";
  }
};

/// The arguments of manifest entry `function` that a result is read back
/// from (`in_place`): a launcher reads them as it laid them out.
llvm::SmallDenseSet<int64_t> readBackArguments(llvm::json::Object &function) {
  llvm::SmallDenseSet<int64_t> arguments;
  llvm::json::Array *results = function.getArray("results");
  if (!results)
    return arguments;
  for (llvm::json::Value &result : *results)
    if (llvm::json::Object *object = result.getAsObject())
      if (std::optional<int64_t> j = object->getInteger("in_place"))
        arguments.insert(*j);
  return arguments;
}

struct TPPanelWeightsPass
    : public tp::impl::TPPanelWeightsBase<TPPanelWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<std::optional<llvm::json::Value>> manifest = readManifest(module);
    if (failed(manifest))
      return signalPassFailure();
    if (!*manifest)
      return;

    // Each entry argument with its manifest entry.
    SmallVector<std::pair<BlockArgument, llvm::json::Object *>> entryArgs;
    llvm::StringMap<BlockArgument> byName;
    WeightClasses weights;
    for (llvm::json::Value &entry : manifestFunctions(**manifest)) {
      llvm::json::Object *function = entry.getAsObject();
      std::optional<StringRef> name =
          function ? function->getString("name") : std::nullopt;
      auto fn = name ? module.lookupSymbol<func::FuncOp>(*name) : nullptr;
      llvm::json::Array *args = function ? function->getArray("args") : nullptr;
      if (!fn || fn.isExternal() || !args ||
          args->size() > fn.getNumArguments()) {
        module.emitError() << "the manifest's function "
                           << (name ? "@" + name->str() : "(unnamed)")
                           << " does not match the module";
        return signalPassFailure();
      }
      llvm::SmallDenseSet<int64_t> readBack = readBackArguments(*function);
      // Arguments past the manifest's are the results' out-parameters.
      for (auto [i, json] : llvm::enumerate(*args)) {
        BlockArgument arg = fn.getArgument(i);
        llvm::json::Object *object = json.getAsObject();
        std::optional<StringRef> argName =
            object ? object->getString("name") : std::nullopt;
        if (!object || !argName || object->getString("dtype") != "f32")
          continue;
        weights.add(arg);
        if (readBack.contains(int64_t(i)))
          weights.readOtherwise.insert(arg);
        entryArgs.push_back({arg, object});
        auto [it, inserted] = byName.try_emplace(*argName, arg);
        if (!inserted)
          weights.classes.unionSets(it->second, arg);
      }
    }
    // Every argument reached from an entry's, through the calls.
    weights.visitAll(module);
    weights.excludeMisfedParameters(module);
    // Decided for every class before any call is rewritten.
    llvm::DenseMap<Value, StringRef> layouts;
    for (auto [arg, object] : entryArgs) {
      Value leader = *weights.classes.findLeader(arg);
      if (!layouts.count(leader))
        layouts[leader] = weights.layoutOf(leader);
    }
    for (auto [arg, object] : entryArgs)
      if (StringRef layout = layouts.lookup(*weights.classes.findLeader(arg));
          !layout.empty())
        (*object)["layout"] = layout;
    for (auto &[member, calls] : weights.gemms)
      if (!layouts.lookup(*weights.classes.findLeader(member)).empty())
        for (func::CallOp call : calls)
          usePanels(call);
    for (auto &[member, loads] : weights.loads)
      if (StringRef layout =
              layouts.lookup(*weights.classes.findLeader(member));
          !layout.empty())
        for (memref::LoadOp load : loads)
          readPanels(load, member, layout == "transposed_panels");
    auto matmul = module.lookupSymbol<func::FuncOp>(kMatmul);
    if (matmul && SymbolTable::symbolKnownUseEmpty(matmul, module))
      matmul.erase();

    writeManifest(module, **manifest);
  }

  /// `call` of tprt_matmul_f32 as tprt_matmul_panels_f32, which takes the
  /// same operands.
  static void usePanels(func::CallOp call) {
    auto matmul =
        call->getParentOfType<ModuleOp>().lookupSymbol<func::FuncOp>(kMatmul);
    func::FuncOp fn = declareRuntimeFunc(call, kMatmulPanels,
                                         matmul.getFunctionType().getInputs());
    call.setCallee(fn.getSymName());
  }

  /// `load` of element [r, c] of `weight` as a load of that element where
  /// the loader put it: op(b) (the weight, or its transpose when
  /// `transposed`), k x n, in panels of TPRT_PANEL_COLS columns.
  static void readPanels(memref::LoadOp load, Value weight, bool transposed) {
    auto type = cast<MemRefType>(weight.getType());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    Value r = load.getIndices()[0], c = load.getIndices()[1];
    auto [row, col] = transposed ? std::pair(c, r) : std::pair(r, c);
    int64_t k = transposed ? cols : rows, n = transposed ? rows : cols;

    OpBuilder b(load);
    Location loc = load.getLoc();
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value first =
        arith::AndIOp::create(b, loc, col, constant(-TPRT_PANEL_COLS));
    // Only the last panel may be narrower.
    Value width = n % TPRT_PANEL_COLS == 0
                      ? constant(TPRT_PANEL_COLS)
                      : arith::MinSIOp::create(
                            b, loc, constant(TPRT_PANEL_COLS),
                            arith::SubIOp::create(b, loc, constant(n), first));
    Value offset = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc,
                              arith::MulIOp::create(b, loc, first, constant(k)),
                              arith::MulIOp::create(b, loc, row, width)),
        arith::SubIOp::create(b, loc, col, first));
    auto flat = memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get({rows * cols}, type.getElementType()), weight,
        /*offset=*/0, /*sizes=*/{rows * cols}, /*strides=*/{1});
    load.getMemrefMutable().assign(flat);
    load.getIndicesMutable().assign(offset);
  }
};

} // namespace

//===- GemmBf16.cpp - bf16 GEMM operands, weights stored in bf16 ----------===//
//
// tp-compile --backend cuda --dtype bf16: every fp32 GEMM call
// (tprt_[batch_]matmul_f32, after tp-linalg-to-runtime) becomes
// tprt_[batch_]matmul_bf16, bf16 a and b with fp32 accumulation into the
// same fp32 c.
//
// A weight (an entry-function argument after the input) that only GEMMs read
// is stored in bf16: the argument becomes a bf16 memref, the views between it
// and the calls are retyped, and the launcher converts the checkpoint's fp32
// once when it uploads the weights (the manifest says "bf16" for it: the
// argument numbers are left in the module attribute tpcompile.bf16_args, per
// entry function, for tp-compile). Rounding such a weight in every forward pass
// would read 4 and write 2 bytes per parameter before the GEMM reads 2; at 128
// tokens that traffic costs more than the GEMM itself. A weight the entry
// passes to an outlined layer (tp-outline-repeated-blocks) counts as read by
// GEMMs only when the layer's argument is, and that argument becomes bf16 too
// when every call passes a stored weight there. Any other operand (activations,
// weights also read by other ops, views cuBLAS cannot take as they are) is
// rounded into a fresh contiguous buffer by a linalg.generic (a kernel),
// once for the GEMMs that read it until something else may write it (a
// layer's Q, K and V projections share their input's); the deallocation
// passes that follow free it. A GEMM with neither operand stored in bf16
// stays f32 where its output has under 64 rows or columns (a decode step's
// attention over the KV cache): it is bound by reading its operands, and
// rounding them would read them whole to write half of them again.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "../RuntimeCalls.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPGEMMBF16
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// tprt_[batch_]matmul_{f32,bf16}(a, b, c, trans_a, trans_b, accumulate):
/// ABI 2.
bool isGemm(func::CallOp call, bool f32Only = false) {
  StringRef callee = call.getCallee();
  bool f32 = callee == "tprt_matmul_f32" || callee == "tprt_batch_matmul_f32";
  bool bf16 =
      callee == "tprt_matmul_bf16" || callee == "tprt_batch_matmul_bf16";
  return (f32 || (bf16 && !f32Only)) && call.getNumOperands() == 6;
}

bool isF32Gemm(func::CallOp call) { return isGemm(call, /*f32Only=*/true); }

/// The memref a view-like op reads, if `op` is one.
Value viewSource(Operation *op) {
  if (auto cast = dyn_cast<memref::CastOp>(op))
    return cast.getSource();
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  return nullptr;
}

/// Whether cuBLAS takes this GEMM operand as it is: static strides, the
/// last two dimensions row- or column-major (runtime/cuda/Gemm.cpp copies
/// any other fp32 view, and refuses a bf16 one).
bool blasLayout(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.size() < 2)
    return false;
  int64_t inner = strides.back(), outer = strides[strides.size() - 2];
  return !ShapedType::isDynamic(inner) && !ShapedType::isDynamic(outer) &&
         (inner == 1 || outer == 1);
}

/// For each private function with a body (a block tp-outline-repeated-blocks
/// outlined), the arguments that only GEMMs read: what a caller passes there
/// may be stored in bf16.
using GemmOnlyArgs = DenseMap<Operation *, llvm::SmallDenseSet<unsigned>>;

/// Whether every use of `value`, through view-like ops, is the a or b of an
/// fp32 GEMM call in a layout cuBLAS takes, or an argument of a function
/// that `callees` says only GEMMs read; collects the views in `views` (defs
/// before uses).
bool onlyGemmOperands(Value value, SmallVectorImpl<Operation *> &views,
                      const GemmOnlyArgs &callees) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto call = dyn_cast<func::CallOp>(user)) {
      if (!isF32Gemm(call)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        auto it = callee ? callees.find(callee) : callees.end();
        if (it == callees.end() || !it->second.contains(use.getOperandNumber()))
          return false;
        continue;
      }
      if (use.getOperandNumber() > 1)
        return false;
      // tp-linalg-to-runtime casts each operand to a fully dynamic layout:
      // the layout is in the type before that cast.
      Value operand = value;
      while (auto cast = operand.getDefiningOp<memref::CastOp>())
        operand = cast.getSource();
      if (!blasLayout(cast<MemRefType>(operand.getType())))
        return false;
      continue;
    }
    if (viewSource(user) != value || user->getNumResults() != 1)
      return false;
    views.push_back(user);
    if (!onlyGemmOperands(user->getResult(0), views, callees))
      return false;
  }
  return true;
}

MemRefType withElement(Type type, Type element) {
  return MemRefType::Builder(cast<MemRefType>(type)).setElementType(element);
}

/// The arguments of `fn` (after the first, the input, for the entry) that
/// are f32 buffers only GEMMs read.
SmallVector<unsigned> gemmOnlyArgs(func::FuncOp fn, bool isEntry,
                                   const GemmOnlyArgs &callees) {
  SmallVector<unsigned> found;
  // Argument 0 of the entry is the input, which the launcher passes as it
  // is.
  for (BlockArgument arg : fn.getArguments().drop_front(isEntry ? 1 : 0)) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    SmallVector<Operation *> views;
    if (type && type.getElementType().isF32() && !arg.use_empty() &&
        onlyGemmOperands(arg, views, callees))
      found.push_back(arg.getArgNumber());
  }
  return found;
}

/// Retypes arguments `args` of `fn` to bf16, with their views.
void storeInBf16(func::FuncOp fn, ArrayRef<unsigned> args,
                 const GemmOnlyArgs &callees) {
  Type bf16 = BFloat16Type::get(fn.getContext());
  SmallVector<Type> argTypes(fn.getArgumentTypes());
  for (unsigned i : args) {
    BlockArgument arg = fn.getArgument(i);
    SmallVector<Operation *> views;
    (void)onlyGemmOperands(arg, views, callees);
    arg.setType(withElement(arg.getType(), bf16));
    argTypes[i] = arg.getType();
    for (Operation *view : views)
      view->getResult(0).setType(
          withElement(view->getResult(0).getType(), bf16));
  }
  fn.setFunctionType(
      FunctionType::get(fn.getContext(), argTypes, fn.getResultTypes()));
}

/// The argument of `fn` that `v` is a view of, if any.
BlockArgument viewedArgument(Value v, func::FuncOp fn) {
  while (Operation *def = v.getDefiningOp()) {
    Value source = viewSource(def);
    if (!source)
      return nullptr;
    v = source;
  }
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner()->getParentOp() == fn ? arg : nullptr;
}

/// The weights only GEMMs read, retyped to bf16 with their views, also
/// where the entry passes them to an outlined block whose argument only
/// GEMMs read (that argument is retyped too, if every call passes a stored
/// weight there). Returns the entry's argument numbers.
SmallVector<int64_t> storeWeightsInBf16(ModuleOp module, func::FuncOp entry) {
  GemmOnlyArgs callees;
  SmallVector<func::FuncOp> blocks;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPrivate() && !fn.isExternal()) {
      blocks.push_back(fn);
      for (unsigned i : gemmOnlyArgs(fn, /*isEntry=*/false, GemmOnlyArgs()))
        callees[fn].insert(i);
    }
  SmallVector<func::CallOp> calls;
  module.walk([&](func::CallOp call) {
    if (call->getParentOfType<func::FuncOp>() == entry) {
      calls.push_back(call);
      return;
    }
    // A block another function calls keeps its types.
    if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr()))
      callees.erase(callee);
  });
  // A block argument stays f32 when a call passes it anything but a stored
  // weight; the weights passed there then stay f32 too: until nothing
  // changes.
  SmallVector<unsigned> stored;
  for (bool changed = true; changed;) {
    changed = false;
    stored = gemmOnlyArgs(entry, /*isEntry=*/true, callees);
    llvm::SmallDenseSet<unsigned> storedSet(stored.begin(), stored.end());
    for (func::CallOp call : calls) {
      auto it = callees.find(SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr()));
      if (it == callees.end())
        continue;
      for (unsigned i : llvm::to_vector(it->second)) {
        BlockArgument arg = viewedArgument(call.getOperand(i), entry);
        if (!arg || !storedSet.contains(arg.getArgNumber())) {
          it->second.erase(i);
          changed = true;
        }
      }
    }
  }
  for (func::FuncOp fn : blocks)
    if (auto it = callees.find(fn); it != callees.end() && !it->second.empty())
      storeInBf16(fn, llvm::to_vector(it->second), GemmOnlyArgs());
  storeInBf16(entry, stored, callees);
  return SmallVector<int64_t>(stored.begin(), stored.end());
}

/// `v` rounded to bf16 into a fresh contiguous buffer, by a linalg.generic.
/// A collapsed view is rounded in its source's shape and the copy collapsed
/// the same way: the rounding then has the loops of the op that wrote the
/// source, and runs in its kernel (tp-fuse-kernel-loops).
Value roundToBf16(OpBuilder &b, Location loc, Value v) {
  if (auto collapse = v.getDefiningOp<memref::CollapseShapeOp>())
    return memref::CollapseShapeOp::create(
        b, loc, roundToBf16(b, loc, collapse.getSrc()),
        collapse.getReassociationIndices());
  auto type = cast<MemRefType>(v.getType());
  unsigned rank = type.getRank();
  Type bf16 = b.getBF16Type();
  SmallVector<Value> dynamicSizes;
  for (unsigned d = 0; d < rank; ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(memref::DimOp::create(b, loc, v, d));
  Value buffer = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), bf16), dynamicSizes);
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{v}, ValueRange{buffer},
      ArrayRef<AffineMap>{id, id}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange x) {
        linalg::YieldOp::create(
            nb, l, arith::TruncFOp::create(nb, l, bf16, x[0]).getResult());
      });
  return buffer;
}

/// Whether nothing from `from` (a GEMM) to `to` (in one block) may write
/// `source`: only views, allocations, constants and GEMMs writing buffers
/// that cannot alias it come between.
bool unwrittenBetween(Operation *from, Operation *to, Value source,
                      AliasAnalysis &aliases) {
  if (from->getBlock() != to->getBlock() || !from->isBeforeInBlock(to))
    return false;
  for (Operation *op = from; op != to; op = op->getNextNode()) {
    if (viewSource(op) || isa<memref::AllocOp, arith::ConstantOp>(op))
      continue;
    auto call = dyn_cast<func::CallOp>(op);
    if (!call || !isGemm(call) ||
        !aliases.alias(call.getOperand(2), source).isNo())
      return false;
  }
  return true;
}

/// `v` without the memref.casts to the runtime's fully dynamic layout.
Value withoutCasts(Value v) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  return v;
}

/// Whether the GEMM's output (each matrix of a batch) has fewer than 64
/// rows or columns: a GEMM bound by reading its operands (a decode step's,
/// M = 1), where rounding operands that are not stored in bf16 reads and
/// writes more than the fp32 GEMM itself reads.
bool readBound(func::CallOp call) {
  Value c = withoutCasts(call.getOperand(2));
  ArrayRef<int64_t> shape = cast<MemRefType>(c.getType()).getShape();
  return llvm::any_of(shape.take_back(2), [](int64_t size) {
    return !ShapedType::isDynamic(size) && size < 64;
  });
}

struct GemmBf16Pass : tp::impl::TPGemmBf16Base<GemmBf16Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The entry function: the one with a C interface and a body (the
    // runtime's declarations have none).
    SmallVector<NamedAttribute> stored;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && fn->hasAttr("llvm.emit_c_interface"))
        if (SmallVector<int64_t> args = storeWeightsInBf16(module, fn);
            !args.empty())
          stored.emplace_back(fn.getSymNameAttr(),
                              DenseI64ArrayAttr::get(&getContext(), args));
    if (!stored.empty())
      module->setAttr(tp::kBf16ArgsAttrName,
                      DictionaryAttr::get(&getContext(), stored));

    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (isF32Gemm(call))
        calls.push_back(call);
    });
    // Each fp32 operand rounded once for the GEMMs that follow while it is
    // not written (a layer's Q, K and V projections read one input).
    struct Rounded {
      Value buffer;
      Operation *lastGemm = nullptr; // the last GEMM that read it
    };
    DenseMap<Value, Rounded> rounded;
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    auto isBf16 = [](Value v) {
      return cast<MemRefType>(v.getType()).getElementType().isBF16();
    };
    for (func::CallOp call : calls) {
      if (!isBf16(call.getOperand(0)) && !isBf16(call.getOperand(1)) &&
          readBound(call))
        continue;
      bool batched = call.getCallee() == "tprt_batch_matmul_f32";
      OpBuilder b(call);
      Location loc = call.getLoc();
      MemRefType view16 = tp::anyStrided(batched ? 3 : 2, b.getBF16Type());
      SmallVector<Value> args, sources;
      for (unsigned i = 0; i < 2; ++i) {
        Value v = call.getOperand(i);
        if (!isBf16(v)) {
          Value source = withoutCasts(v);
          Rounded &r = rounded[source];
          // No lastGemm yet: rounded for this call's other operand.
          if (!r.buffer || (r.lastGemm && !unwrittenBetween(r.lastGemm, call,
                                                            source, aliases))) {
            r.buffer = roundToBf16(b, loc, source);
            r.lastGemm = nullptr;
          }
          v = r.buffer;
          sources.push_back(source);
        }
        args.push_back(v.getType() == view16
                           ? v
                           : memref::CastOp::create(b, loc, view16, v));
      }
      // c, the transpositions and whether to accumulate, as they were.
      for (unsigned i = 2, e = call.getNumOperands(); i < e; ++i)
        args.push_back(call.getOperand(i));
      func::FuncOp fn = tp::declareRuntimeFunc(
          call, batched ? "tprt_batch_matmul_bf16" : "tprt_matmul_bf16",
          ValueRange(args).getTypes());
      auto gemm = func::CallOp::create(b, loc, fn, args);
      for (Value source : sources)
        rounded[source].lastGemm = gemm;
      llvm::SmallSetVector<Operation *, 2> casts;
      for (Value operand : call.getOperands().take_front(2))
        if (auto cast = operand.getDefiningOp<memref::CastOp>())
          casts.insert(cast);
      call.erase();
      for (Operation *cast : casts)
        if (cast->use_empty())
          cast->erase();
    }
    // The f32 entry points no call uses any more, in whichever module
    // declared them.
    module.walk([](ModuleOp scope) {
      for (StringRef name : {"tprt_matmul_f32", "tprt_batch_matmul_f32"})
        if (auto fn = scope.lookupSymbol<func::FuncOp>(name))
          if (SymbolTable::symbolKnownUseEmpty(fn, scope))
            fn.erase();
    });
  }
};

} // namespace

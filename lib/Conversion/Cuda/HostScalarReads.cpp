//===- HostScalarReads.cpp - scalars the host reads from device memory ----===//
//
// The host side of a cuda model loads a few scalars itself: a generating
// model's position, which sets the offset at which a decode step writes its
// row of the KV cache (and, in a step over the positions [0, pos], the
// length of its attention). Every buffer is device memory on this backend.
// Where only kernels use such a scalar (an offset), each kernel loads it
// itself: a step then needs no host read, and a CUDA graph can replay it.
// What the host still needs (a length) becomes a copy into a host scalar
// (tprt_read_scalar of libtprt_cuda: on the rank's stream, after everything
// issued before it) and a load of that.
//
//===----------------------------------------------------------------------===//

#include "CudaPasses.h"

#include "tp/IR/TPDialect.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/Support/JSON.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPHOSTSCALARREADS
#include "tp/Conversion/CudaPasses.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kReadScalar = "tprt_read_scalar";

/// The address of `memref`'s first element as an LLVM pointer.
Value addressOf(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value bytes =
      arith::ConstantIndexOp::create(b, loc, type.getElementTypeBitWidth() / 8);
  Value offset = arith::MulIOp::create(b, loc, metadata.getOffset(), bytes);
  Value address = arith::AddIOp::create(b, loc, base, offset);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), i64);
}

bool isHostLoad(memref::LoadOp load) {
  return load.getMemRefType().getRank() == 0 &&
         !load->getParentOfType<scf::ParallelOp>();
}

/// Whether nothing writes the buffer `value` views: every use of the
/// buffer, of its views (memref.cast, subviews, reshapes) and of the
/// arguments of calls it is passed to, reads it.
bool isReadOnly(Value value, SymbolTable &symbols) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  SmallVector<Value> worklist{value};
  DenseSet<Value> seen{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      auto view = dyn_cast<ViewLikeOpInterface>(user);
      auto call = dyn_cast<func::CallOp>(user);
      auto callee =
          call ? symbols.lookup<func::FuncOp>(call.getCallee()) : nullptr;
      Value next;
      if (isa<memref::LoadOp>(user))
        continue;
      if (view && view.getViewSource() == v)
        next = view->getResult(0);
      else if (callee && !callee.isExternal())
        next = callee.getArgument(use.getOperandNumber());
      else
        return false;
      if (seen.insert(next).second)
        worklist.push_back(next);
    }
  }
  return true;
}

/// Sinks into each outermost parallel loop of `fn` (a kernel to be) the
/// values it uses that are computed on the host from rank-0 loads of
/// read-only memory, through pure ops (casts, index arithmetic, views):
/// the kernel loads the scalar itself. The host's copies left without a
/// use are erased.
void sinkIntoKernels(func::FuncOp fn, SymbolTable &symbols) {
  SetVector<Operation *> derived; // in program order
  auto isDerived = [&](Value v) {
    return v.getDefiningOp() && derived.contains(v.getDefiningOp());
  };
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<scf::ParallelOp>(op))
      return WalkResult::skip();
    auto load = dyn_cast<memref::LoadOp>(op);
    if (load ? isHostLoad(load) && isReadOnly(load.getMemRef(), symbols)
             : op->getNumRegions() == 0 && isPure(op) &&
                   llvm::any_of(op->getOperands(), isDerived))
      derived.insert(op);
    return WalkResult::advance();
  });
  if (derived.empty())
    return;
  BackwardSliceOptions derivedOnly;
  derivedOnly.inclusive = true;
  derivedOnly.filter = [&](Operation *op) { return derived.contains(op); };
  fn.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
    SmallVector<OpOperand *> uses;
    loop.getRegion().walk([&](Operation *op) {
      for (OpOperand &operand : op->getOpOperands())
        if (isDerived(operand.get()))
          uses.push_back(&operand);
    });
    OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
    IRMapping mapping;
    for (OpOperand *use : uses) {
      SetVector<Operation *> chain; // operands first
      (void)getBackwardSlice(use->get(), &chain, derivedOnly);
      for (Operation *op : chain)
        if (!mapping.contains(op))
          b.clone(*op, mapping);
      use->set(mapping.lookup(use->get()));
    }
    return WalkResult::skip();
  });
  for (Operation *op : llvm::reverse(derived))
    if (op->use_empty())
      op->erase();
}

/// Whether `fn`, or a function it calls, reads device memory on the host.
bool readsOnHost(func::FuncOp fn, SymbolTable &symbols,
                 DenseMap<Operation *, bool> &known) {
  auto [it, inserted] = known.try_emplace(fn, false);
  if (!inserted)
    return it->second; // known, or being walked (a recursion adds nothing)
  bool reads = false;
  fn.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    reads = reads || call.getCallee() == kReadScalar ||
            (callee && readsOnHost(callee, symbols, known));
  });
  return known[fn] = reads;
}

/// Says of each of the manifest's functions whether it reads device memory
/// on the host ("host_reads"): a launcher cannot capture such a call as a
/// CUDA graph.
void markHostReads(ModuleOp module, SymbolTable &symbols) {
  auto text =
      module->getAttrOfType<StringAttr>(tp::TPDialect::getManifestAttrName());
  if (!text)
    return;
  llvm::Expected<llvm::json::Value> manifest = llvm::json::parse(text);
  if (!manifest) {
    llvm::consumeError(manifest.takeError());
    return; // tp-model-interface reports it
  }
  llvm::json::Array *functions =
      manifest->getAsObject() ? manifest->getAsObject()->getArray("functions")
                              : nullptr;
  if (!functions)
    return;
  DenseMap<Operation *, bool> known;
  for (llvm::json::Value &entry : *functions) {
    llvm::json::Object *function = entry.getAsObject();
    std::optional<StringRef> name =
        function ? function->getString("name") : std::nullopt;
    auto fn = name ? symbols.lookup<func::FuncOp>(*name) : nullptr;
    if (fn)
      (*function)["host_reads"] = readsOnHost(fn, symbols, known);
  }
  std::string json;
  llvm::raw_string_ostream os(json);
  os << *manifest;
  module->setAttr(tp::TPDialect::getManifestAttrName(),
                  StringAttr::get(module.getContext(), json));
}

/// Each of `reads` as a copy into a host scalar (tprt_read_scalar) and a
/// load of that.
void readOnHost(ModuleOp module, ArrayRef<memref::LoadOp> reads) {
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  if (!reads.empty() && !module.lookupSymbol(kReadScalar)) {
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto fn =
        func::FuncOp::create(b, module.getLoc(), kReadScalar,
                             b.getFunctionType({ptr, ptr, b.getI64Type()}, {}));
    fn.setPrivate();
  }
  for (memref::LoadOp load : reads) {
    OpBuilder b(load);
    Location loc = load.getLoc();
    MemRefType type = load.getMemRefType();
    Value host = memref::AllocaOp::create(
        b, loc, MemRefType::get({}, type.getElementType()));
    Value bytes = arith::ConstantIntOp::create(
        b, loc, b.getI64Type(), type.getElementTypeBitWidth() / 8);
    func::CallOp::create(b, loc, kReadScalar, TypeRange{},
                         ValueRange{addressOf(b, loc, host),
                                    addressOf(b, loc, load.getMemRef()),
                                    bytes});
    load->setOperand(0, host);
  }
}

struct HostScalarReadsPass
    : tp::impl::TPHostScalarReadsBase<HostScalarReadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp fn : module.getOps<func::FuncOp>())
      sinkIntoKernels(fn, symbols);
    SmallVector<memref::LoadOp> reads;
    module.walk([&](memref::LoadOp load) {
      if (isHostLoad(load) &&
          load.getMemRefType().getElementTypeBitWidth() % 8 == 0)
        reads.push_back(load);
    });
    readOnHost(module, reads);
    markHostReads(module, symbols);
  }
};

} // namespace

//===- AssertsToRuntime.cpp - a failed check ends every rank -------------===//
//
// Upstream lowers a failed `cf.assert` to a print and `abort()`: a SIGABRT
// with a backtrace on one rank, while the others wait in their next
// collective until mpirun kills them. The runtime's `tprt_abort` prints the
// message with the rank and ends every rank with exit code 1, as tp-run's
// own checks do.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPASSERTSTORUNTIME
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// An internal constant holding `message` and its NUL, in `module`.
LLVM::GlobalOp createMessage(ModuleOp module, Location loc, StringRef message) {
  std::string name;
  for (int64_t k = 0; name.empty() || module.lookupSymbol(name); ++k)
    name = "tp_assert_message_" + std::to_string(k);
  auto builder = OpBuilder::atBlockBegin(module.getBody());
  auto type = LLVM::LLVMArrayType::get(builder.getI8Type(), message.size() + 1);
  return LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, name,
                                builder.getStringAttr(message.str() + '\0'));
}

struct TPAssertsToRuntimePass
    : tp::impl::TPAssertsToRuntimeBase<TPAssertsToRuntimePass> {
  void runOnOperation() override {
    SmallVector<cf::AssertOp> asserts;
    getOperation().walk([&](cf::AssertOp op) { asserts.push_back(op); });
    // One global per module and message.
    DenseMap<std::pair<Operation *, StringAttr>, LLVM::GlobalOp> messages;
    for (cf::AssertOp check : asserts) {
      OpBuilder b(check);
      Location loc = check.getLoc();
      auto module = check->getParentOfType<ModuleOp>();
      LLVM::GlobalOp &global = messages[{module, check.getMsgAttr()}];
      if (!global)
        global = createMessage(module, loc, check.getMsg());
      Value failed = arith::XOrIOp::create(
          b, loc, check.getArg(),
          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
      auto ifFailed = scf::IfOp::create(b, loc, failed);
      b.setInsertionPointToStart(&ifFailed.getThenRegion().front());
      Value message = LLVM::AddressOfOp::create(b, loc, global);
      func::FuncOp abort =
          tp::declareRuntimeFunc(check, "tprt_abort", message.getType(), {},
                                 /*cInterface=*/false);
      func::CallOp::create(b, loc, abort, message);
      check.erase();
    }
  }
};

} // namespace

//===- consumer.cpp - embed the tp-shard pass in another tool -------------===//
//
// Parses an MLP pair (matmul 4x16 @ 16x64, tanh, matmul 4x64 @ 64x16),
// shards it for 2 ranks with tp-shard, prints the per-rank IR, and exits
// non-zero unless it holds exactly one tp.all_reduce and the first weight
// became tensor<16x32xf32>.
//
//===----------------------------------------------------------------------===//

#include "tp/InitAll.h"
#include "tp/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

static const char *kMLP = R"mlir(
func.func @mlp(%x: tensor<4x16xf32>, %up: tensor<16x64xf32> {tp.name = "up"},
               %down: tensor<64x16xf32> {tp.name = "down"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x16xf32>, tensor<16x64xf32>)
                     outs(%i : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a = math.tanh %h : tensor<4x64xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%a, %down : tensor<4x64xf32>, tensor<64x16xf32>)
                     outs(%i2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  mlir::tp::registerAllDialects(registry);
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kMLP, &context);
  if (!module)
    return 1;

  mlir::PassManager pm(&context);
  mlir::tp::TPShardOptions options;
  options.tpSize = 2;
  pm.addPass(mlir::tp::createTPShard(options));
  if (mlir::failed(pm.run(*module)))
    return 1;

  module->print(llvm::outs());
  llvm::outs().flush();

  int allReduces = 0;
  module->walk([&](mlir::Operation *op) {
    allReduces += op->getName().getStringRef() == "tp.all_reduce";
  });
  auto fn = *module->getOps<mlir::func::FuncOp>().begin();
  std::string upType;
  llvm::raw_string_ostream(upType) << fn.getArgumentTypes()[1];

  bool ok = allReduces == 1 && upType == "tensor<16x32xf32>";
  llvm::errs() << "tp-consumer: " << allReduces
               << " tp.all_reduce, up : " << upType
               << (ok ? " -- OK\n" : " -- FAILED\n");
  return ok ? 0 : 1;
}

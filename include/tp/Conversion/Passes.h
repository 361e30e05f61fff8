//===- Passes.h - lowering of per-rank programs -----------------*- C++ -*-===//

#ifndef TP_CONVERSION_PASSES_H
#define TP_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Conversion/Passes.h.inc"

/// Replaces every aggregated linalg op (linalg.softmax) under `root` by its
/// decomposition into generics; fails at the first that cannot be.
LogicalResult decomposeAggregatedOps(Operation *root);

/// Options of the stages both lowerings share.
struct TensorSimplificationOptions {
  /// tp-fold-broadcast-into-matmul; off only to measure what it saves
  /// (bench/cpu/bert_linears.sh).
  bool foldBroadcastIntoMatmul = true;
  /// tp-outline-repeated-blocks; off only to compare against the inline
  /// forward pass.
  bool outlineRepeatedBlocks = true;
  /// tp-fuse-pointwise into arg reductions: off on the CPU, whose argmax is
  /// a runtime call (tp-argmax-to-runtime) that reads a buffer.
  bool fuseIntoArgReductions = true;
};

/// Stages the CPU and cuda lowerings share. First, on tensors: aggregates
/// decomposed, elementwise ops on whole tensors as generics, batched GEMMs
/// by a broadcast weight as one GEMM, transposed GEMM operands read through
/// the GEMM's maps, pointwise chains fused, f32 math approximated, strided
/// rank-reducing slices unfolded; last, each repeated block (a layer)
/// outlined into one function that every instance calls.
void addTensorSimplifications(OpPassManager &pm,
                              const TensorSimplificationOptions &options = {});
/// Then: collectives as runtime calls, one-shot bufferization with results
/// as out-parameters, f32 GEMMs as runtime calls.
void addRuntimeCallsAndBufferization(OpPassManager &pm);
/// Ownership-based deallocation, lowered, each free moved after the last
/// use (tp-early-dealloc).
void addDeallocation(OpPassManager &pm);
/// Host code (loops, memref, math, arith, func, cf) to the LLVM dialect;
/// `genericAllocation`: allocations call _mlir_memref_to_llvm_alloc / _free
/// (which the runtime defines) instead of malloc / free. `moreConversions`
/// adds passes after the others, before unrealized casts are reconciled
/// (the cuda pipeline's gpu-to-llvm), so that both backends share one host
/// lowering.
void addHostToLLVM(
    OpPassManager &pm, bool genericAllocation = false,
    llvm::function_ref<void(OpPassManager &)> moreConversions = nullptr);

/// The CPU lowering of a per-rank program down to the LLVM dialect:
/// decompose aggregates, collectives to runtime calls, one-shot
/// bufferization, results to out-parameters, GEMMs to runtime calls, the
/// rest through loops, deallocation, then LLVM. The entry function gets a
/// C interface (`_mlir_ciface_<name>`). `panelWeights`: run
/// tp-panel-weights (off only to compare against the row-major weights).
void buildCpuLoweringPipeline(OpPassManager &pm,
                              const TensorSimplificationOptions &options = {},
                              bool panelWeights = true);

/// Registers buildCpuLoweringPipeline as `tp-lower-cpu`.
void registerCpuLoweringPipeline();

} // namespace mlir::tp

#endif // TP_CONVERSION_PASSES_H

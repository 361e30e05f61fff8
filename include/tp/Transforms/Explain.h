//===- Explain.h - print what each rank holds -------------------*- C++ -*-===//

#ifndef TP_TRANSFORMS_EXPLAIN_H
#define TP_TRANSFORMS_EXPLAIN_H

#include "tp/Transforms/ShardingAnalysis.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tp {

/// Prints the trace of a sharded `func`: for each op, the rank-local type
/// and which part each rank holds; for each collective, its size; then
/// the totals per pair and per token. Call after the plan was applied.
void explainPlan(FunctionOpInterface func, const ShardPlan &plan,
                 llvm::raw_ostream &os);

} // namespace mlir::tp

#endif // TP_TRANSFORMS_EXPLAIN_H

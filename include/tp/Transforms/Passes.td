//===- Passes.td - tensor-parallel passes ------------------*- tablegen -*-===//

#ifndef TP_TRANSFORMS_PASSES_TD
#define TP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TPShard : Pass<"tp-shard", "ModuleOp"> {
  let summary = "Rewrite an unsharded transformer graph into the per-rank "
                "Megatron tensor-parallel program";
  let description = [{
    Finds every contraction whose right operand is a weight argument and the
    cut of its output dimension that lets the values downstream stay local
    until a contraction reduces over the cut dimension (column -> row
    pairs). The candidate cuts of a dimension come from the reshapes it
    flows through (for a fused QKV `[d, 3*h*dh]` reshaped to `[.., 3, h, dh]`:
    the contiguous cut, the cut between heads, the cut inside heads); the
    one with the least communication wins. Each chosen pair costs exactly
    one `tp.all_reduce`, placed right after the narrowing contraction, so a
    bias that contraction accumulates into is added once, after it.

    Weight arguments shrink to their shard and carry `tp.shard`; the module
    records `tp.size`. When no cut is free of extra communication (heads not
    divisible by the tp size, an op that cannot hold a split, a widening
    contraction without a narrowing partner) the pass reports it at the op,
    with the sizes and the cost of the fallback, and fails, unless
    `allow-fallback` is set: then it inserts the extra collectives (an
    all-reduce of partial scores, or an all-gather) and remarks their size.
  }];
  let options = [
    Option<"tpSize", "tp-size", "int64_t", /*default=*/"2",
           "number of tensor-parallel ranks">,
    Option<"allowFallback", "allow-fallback", "bool", /*default=*/"false",
           "accept cuts that need extra communication instead of failing">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "print, per pair, each op's local shard and each collective's "
           "size to stderr">,
  ];
  let dependentDialects = ["tp::TPDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect", "arith::ArithDialect"];
}

def TPExternalizeWeights : Pass<"tp-externalize-weights", "ModuleOp"> {
  let summary = "Turn weights given as constants into arguments, their "
                "values into a safetensors checkpoint";
  let description = [{
    `tp-shard` cuts weight arguments: the runtime gives each rank its slice
    of the checkpoint. A model imported with its weights inline (torch-mlir's
    importer writes every parameter as an `arith.constant dense_resource<..>`)
    has none, so every rank would hold and compute it whole. This pass makes
    each non-splat f32 constant of a function with a body an argument,
    appended after the existing ones in the order the constants appear,
    named (`tp.name`) after its resource key, or `const<i>` for inline
    `dense<..>` values, with a numeric suffix where a name is taken; one
    value used twice is one argument. Their values go to `file`, a
    safetensors checkpoint in that order (what `tp-run --weights` reads),
    written even when there is nothing to move. Splat constants stay:
    `tp-shard` shrinks them in place. A function that is called cannot take
    more arguments: the pass fails there.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"",
           "the safetensors checkpoint to write (required when there is a "
           "constant to move)">,
  ];
  let dependentDialects = ["tp::TPDialect"];
}

#endif // TP_TRANSFORMS_PASSES_TD

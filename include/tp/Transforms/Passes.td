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
    of the checkpoint. A model imported with its weights inline has none, so
    every rank would hold and compute them whole. Front-ends write weights
    three ways, and each f32 constant of rank >= 1 in a function with a body
    is a weight when it is

    * a `dense_resource` (torch-mlir's importer), its blob in the module or
      not (printed elided: `dense_resource<__elided__>`, or the
      `dialect_resources` section removed);
    * a non-splat `dense<..>`: data, whatever reads it (a bias a cut would
      have to reach cannot stay a constant);
    * a splat (models with their weights stripped to one value each) that
      is read as a weight: an operand a contraction (a sum reduction of two
      or more inputs) multiplies, or a table a `tensor.extract` gathers from
      at computed indices, possibly through reshapes, transposes and
      broadcasts (linalg and tensor ops: a splat a TOSA op reads is not
      recognised before the TOSA conversion). Other splats (a matmul's zero init, a scale, a mask, a
      splat bias) are constants of the program and stay: `tp-shard` shrinks
      them in place.

    Scalars and integer tensors (position ids, masks) stay, except an
    integer `dense_resource` printed elided: the program cannot be compiled
    without its values, so it becomes an argument too (torch-mlir's position
    ids buffer).

    Each weight becomes an argument, appended after the existing ones in the
    order the constants appear and named (`tp.name`) after its resource key,
    else the name of a `NameLoc`, else `const_L<line>` from its location,
    with a numeric suffix where a name is taken. A value with known data used
    twice is one argument; each elided resource and each splat is its own.
    Only the uses of a splat that read it as a weight move to the argument.

    With `file`, the values go to that safetensors checkpoint in argument
    order (a splat repeated to its shape), written even when there is
    nothing to move; an elided weight has no value to write: a warning
    counts those. Without `file` the weights are arguments with their shapes
    only: their values are dropped and a remark counts them (compile and
    inspect a model without its weights). With `keep-values`, only the
    weights the module holds no value for (elided resources) become
    arguments and the others stay constants, compiled into the model. A
    function that is called cannot take more arguments: it keeps its
    constants, with a warning.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"",
           "the safetensors checkpoint to write the weights' values to; "
           "without it the weights become arguments with their shapes only">,
    Option<"keepValues", "keep-values", "bool", /*default=*/"false",
           "leave the weights whose values the module holds as constants; "
           "only elided ones become arguments">,
  ];
  let dependentDialects = ["tp::TPDialect"];
}

#endif // TP_TRANSFORMS_PASSES_TD

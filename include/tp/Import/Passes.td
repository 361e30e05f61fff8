//===- Passes.td - importing graphs of other front-ends ----*- tablegen -*-===//

#ifndef TP_IMPORT_PASSES_TD
#define TP_IMPORT_PASSES_TD

include "mlir/Pass/PassBase.td"

def TPStripShardAnnotations : Pass<"tp-strip-shard-annotations", "ModuleOp"> {
  let summary = "Remove the upstream shard dialect's sharding annotations";
  let description = [{
    A graph written for upstream's `shard` partitioner carries its own cut:
    `shard.shard` annotations of values, the `shard.sharding` values they
    name and the `shard.grid` those refer to. tp-shard chooses the cut
    itself, so this pass forwards each `shard.shard` result to its source
    value, then erases the `shard.sharding` ops and the `shard.grid` symbols
    nothing refers to any more. Each function that held annotations gets
    one remark saying so. Any other shard op (a collective, a process
    index) means the graph is already partitioned: the pass reports it at
    the op and fails.
  }];
}

def TPDropDeadTosaShapes : Pass<"tp-drop-dead-tosa-shapes"> {
  let summary = "Erase the tosa.const_shape ops the TOSA conversion leaves";
  let description = [{
    TOSA passes shapes as `tosa.const_shape` operands (of `tosa.reshape`,
    `tosa.slice`, ...). The upstream TOSA-to-linalg, -arith and -tensor
    conversions rewrite the ops that read them but leave the shapes behind,
    unused. This pass erases every unused `tosa.const_shape`; one that is
    still used means an op that reads it was not converted, and the pass
    reports it at that op and fails.
  }];
}

def TPStripInstrumentation : Pass<"tp-strip-instrumentation", "ModuleOp"> {
  let summary = "Remove a front-end's timing instrumentation from the graph";
  let description = [{
    Some front-ends time the model from inside it: buddy-mlir's graphs call
    `rtclock()` (MLIR's runner utils) around each operator and pass the
    difference, with the operator's name as an `llvm.mlir.global` string,
    to `record_timing`. The compiled model would then need those functions
    defined where it is loaded. This pass removes such calls when both

    * the callee is known instrumentation: a function declared without a
      body, named `rtclock` or `record_timing` (or in the `functions`
      option), whose signature holds no tensor or memref, so it cannot read
      or write the model's data; and
    * every result of the call feeds, through ops without side effects
      (the `arith.subf` of two clock readings), only other calls this pass
      removes: nothing the model computes depends on it.

    The side-effect-free ops that only fed the removed calls (the
    subtraction, `llvm.mlir.addressof` of the name) go with them, and so do
    the module-local symbols nothing refers to any more (the private
    declarations, the name strings: LLVM globals of private linkage, which
    `symbol-dce` keeps since their symbol visibility is public). Each function that held such calls gets one remark
    counting them. A call of a known instrumentation function whose result
    the model reads is kept, with a warning at the call and a note at the
    op that reads it.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "more names of instrumentation functions (declarations "
               "without a body, no tensor or memref in their signature)">,
  ];
}

def TPFoldConstantGlobals : Pass<"tp-fold-constant-globals", "ModuleOp"> {
  let summary = "Read an immutable ml_program global's value as a constant";
  let description = [{
    A front-end may hold a parameter in an immutable `ml_program.global`
    and read it with `ml_program.global_load_const` (or `global_load`).
    tp-externalize-weights makes weights of constants, and one-shot
    bufferization has no rule for `global_load_const`, so this pass
    replaces the loads of an immutable global that holds a value by one
    `arith.constant` of that value per function (a layer inlined twice
    loads it twice; a splat read twice would otherwise be two weights),
    located at a name of the global's symbol: the weight it becomes is
    named after the global. The private globals left unused go with
    `symbol-dce`. A load of an immutable global without a value (one
    defined where the model is linked) is reported at the load: tp-mlir has
    no value to give it. Mutable globals (a model's state) are left as they
    are.
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def TPDecomposeTMAttention : Pass<"tp-decompose-tm-attention"> {
  let summary = "Rewrite torch-mlir's tm_tensor.attention into linalg";
  let description = [{
    torch-mlir lowers `scaled_dot_product_attention` to one
    `tm_tensor.attention` (query `[B..., M, K1]`, key `[B..., K2, K1]`,
    value `[B..., K2, N]`, an optional mask `[B..., M, K2]`), which tp-shard
    cannot see into. This pass rewrites each into linalg: the key
    transposed, a `linalg.batch_matmul` of the scores, a `linalg.generic`
    that divides them by `sqrt(K1)` (or multiplies them by the op's
    `scale`) and adds the mask (an `i1` mask adds 0 where it is true and
    -inf where it is false), the softmax over the keys as generics (a row
    maximum, the exponentials, a row sum, the quotients) and a
    `linalg.batch_matmul` with the value. A row whose every key is masked
    gives 0, as torch-mlir's own loops and PyTorch's `_safe_softmax` give,
    not the NaN of `exp(-inf - -inf)`, which a later layer's product with
    V would spread to every token. Batch dimensions beyond one are
    collapsed around these ops. An attention on buffers or without a batch
    dimension is reported at the op.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
}

def TPDecomposeTMScan : Pass<"tp-decompose-tm-scan"> {
  let summary = "Rewrite torch-mlir's tm_tensor.scan into linalg";
  let description = [{
    torch-mlir lowers `cumsum` to a `tm_tensor.scan` (RoBERTa's position
    ids are a cumulative sum of the padding mask). This pass rewrites each
    into a `linalg.generic` with one more loop, a reduction over the
    scanned dimension, innermost: output element i is the first input
    element (inclusive scan) or the accumulator (exclusive), combined by
    the op's region with each input element j after the first (inclusive:
    0 < j <= i) or before i (exclusive), in order of j. Quadratic in the
    scanned length, which is a sequence length for the scans front-ends
    write. The accumulator result, where read, is what torch-mlir's loops
    leave in it: the last output element (as given for a dimension of one
    element). A region op that is not pure (with side effects, or a
    division that may trap) is reported at the op: the generic evaluates
    the region for every j, on values the scan never combines.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect"];
}

def TPTMTensorToLoops : Pass<"tp-tm-tensor-to-loops"> {
  let summary = "Rewrite torch-mlir's tm_tensor.scatter, sort and topk into "
                "loops";
  let description = [{
    torch-mlir lowers `index_put`, `scatter` and `index_copy` (the update
    of a static KV cache) to a `tm_tensor.scatter`, `sort` to a
    `tm_tensor.sort` and `topk` (a mixture of experts' router) to a
    `tm_tensor.topk`. This pass rewrites each into the loops torch-mlir's
    own lowering makes of it, on tensors: an `scf.for` nest carrying the
    outputs that reads and `tensor.insert`s one element at a time in the
    same order, so that ties and repeated indices come out as there.

    - scatter: over the updates' elements, each combined through the region
      with the element its index tuple names (a later update of a repeated
      index sees the earlier one's result). Each element's place is checked
      against the original's sizes with a `cf.assert` naming the op's
      location, which tp-compile turns into an error that ends every rank.
    - sort: for every element, a bubble pass along the dimension that swaps
      a pair, in every output, where the region yields false: quadratic in
      the sorted length, as there.
    - topk: each input element, in order, walks the k kept ones and takes
      the place of the first the region prefers it to, the displaced one
      walking on: the input's size times k steps.

    Bufferization writes the elements in place: the work is the elements
    visited, not copies of the outputs.
  }];
  let dependentDialects = ["arith::ArithDialect", "cf::ControlFlowDialect",
                           "scf::SCFDialect", "tensor::TensorDialect"];
}

def TPSplitFusedProjections : Pass<"tp-split-fused-projections", "ModuleOp"> {
  let summary = "Compute each slice of a fused projection from its rows of "
                "the weight";
  let description = [{
    A front-end exports a fused projection as PyTorch runs it: one matmul
    over the whole weight, its result sliced into sections. Phi-3's
    `qkv_proj` is sliced into q, k and v, which differ in width where there
    are fewer kv heads than heads (Phi-3-medium: 40 over 10); GPT-BigCode's
    `c_attn` into q and kv, and kv again into k and v. No cut of equal
    column blocks gives a rank whole heads of each section, so tp-shard
    could not cut the projection. This pass computes each section apart:
    the slice is moved up through the linalg ops that compute it (the bias
    add, the matmul, the transpose and broadcast of the weight) and
    reshapes, as upstream's tiling computes a tile of an op's result, down
    to rows of the weight and bias arguments. In a function no symbol
    refers to, the rows of each such argument then become arguments of
    their own, as `tp-unpack-weights` makes them (`tp.name` the argument's,
    `tp.checkpoint_shape` its shape, `tp.checkpoint_offset` the first row;
    rows of a packed tensor already give rows of that tensor), which
    tp-shard cuts as any weight.

    A result is split when only static, unit-stride slices of its rank read
    it, at least two sections along one dimension, whole in the others and
    not overlapping; when the ops back to the arguments are linalg ops
    whose indexing maps are projected permutations (broadcast unit
    dimensions allowed in the operands') and reshapes that group the
    dimension with unit ones only, each read only by this chain, one of
    them a sum-reduction contraction whose data operand (the first input,
    as tp-shard takes it) does not depend on the section; and when every
    argument the sections reach is read there alone, in rows (the
    dimension the sections map to is its first), and carries no `tp.`
    attribute but its name and checkpoint rows. The first dimension is the
    output row of an `[out, in]` weight, as PyTorch's Linear stores it: a
    Conv1D weight stored `[in, out]` (GPT-2's `c_attn`) is sliced in
    columns and stays fused, which tp-shard cuts when its sections are of
    equal widths. Empty tensors, fills of them and constants may be read
    anywhere else. A section sliced again is split again. Each function
    that changed gets a remark counting the projections, sections and
    weights.
  }];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "tensor::TensorDialect"];
}

def TPUnpackWeights : Pass<"tp-unpack-weights", "ModuleOp"> {
  let summary = "Make each weight of a packed parameter argument an argument";
  let description = [{
    Some front-ends pass all of a model's parameters as one flat argument
    and carve each weight out of it: buddy-mlir's graphs take a
    `tensor<Nxf32>` its runtime fills from one file, and read every weight
    as a static `tensor.extract_slice` of it, most reshaped by a
    `tensor.expand_shape`. tp-shard cuts whole arguments only, so this
    pass gives each slice an argument of its own, in place of the packed
    one: the slice's type (or the static type of the `expand_shape` that
    alone reads it), with `tp.name` the packed argument's (`arg<i>`, its
    position, when it has none), `tp.checkpoint_shape` its shape and
    `tp.checkpoint_offset` the slice's offset, so that `tp-run` reads the
    weight's elements, and each rank its part of them, from the one
    checkpoint tensor. The slices of one offset share an argument; where
    their reshapes differ, it takes the slice's type and the reshapes stay.

    An argument is unpacked when it is a static 1-D tensor that at least
    two static, unit-stride, 1-D `tensor.extract_slice` ops read and
    nothing else, one size at each offset, that carries no `tp.`
    attribute but `tp.name` (or, rows of a checkpoint tensor already,
    `tp.checkpoint_offset` and `tp.checkpoint_shape`: its parts are then
    rows of that tensor), in a function no symbol refers to (a callee
    keeps its signature). Each function that changed gets a remark
    counting the weights.
  }];
}

def TPWidenFloats : Pass<"tp-widen-floats", "ModuleOp"> {
  let summary = "Compute a bf16 or f16 graph in f32";
  let description = [{
    A front-end exports a model in the precision it holds: torch-mlir
    writes bf16 or f16 tensors for a PyTorch model in half precision.
    tp-mlir's runtime computes in f32 (`tp-run` widens bf16 and f16
    checkpoints as it loads them), so this pass widens the graph in place:
    every bf16 and f16 type, in values, block arguments, function
    signatures and attributes, becomes f32, and constants keep their values
    exactly (a `dense_resource` keeps its key, its blob rewritten). The
    `arith.extf` and `arith.truncf` the graph had between its precision and
    f32 then cast f32 to f32 and go. Each function whose signature changed
    gets a remark: its callers pass and receive f32. Reported at the op,
    with nothing changed: a bitcast (or `memref.view`) of 16-bit floats, a
    function declared without a body that takes or returns them, an
    attribute holding them in another form (complex values), and a
    resource blob read as two types or of a size its type does not give.
  }];
}

#endif // TP_IMPORT_PASSES_TD

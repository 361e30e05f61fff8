//===- Passes.td - lowering of per-rank programs -----------*- tablegen -*-===//

#ifndef TP_CONVERSION_PASSES_TD
#define TP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TPDecomposeAggregates : Pass<"tp-decompose-aggregates"> {
  let summary = "Decompose aggregated linalg ops (linalg.softmax) into "
                "generics";
  let description = [{
    `linalg.softmax` has no loop lowering; its decomposition (max, sub+exp,
    sum, div generics) does. Runs before bufferization.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "arith::ArithDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
}

def TPCollectivesToRuntime : Pass<"tp-collectives-to-runtime", "ModuleOp"> {
  let summary = "Turn tp collectives into calls of the tprt runtime";
  let description = [{
    On tensors, before bufferization: each `tp.all_reduce` (sum, max, min)
    and `tp.all_gather` on f32 becomes a fresh buffer that the runtime fills
    in place (`tprt_all_reduce_<kind>_f32`, `tprt_all_gather_f32`, see
    runtime/include/tprt/tprt.h), wrapped back into a tensor. The runtime
    functions are declared with `llvm.emit_c_interface`. `tp.rank` becomes
    a call of `tprt_rank`.
  }];
  let dependentDialects = ["bufferization::BufferizationDialect",
                           "func::FuncDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

def TPFoldTransposeIntoMatmul : Pass<"tp-fold-transpose-into-matmul"> {
  let summary = "Read a transposed GEMM operand through the GEMM's "
                "indexing map instead of a transposed copy";
  let description = [{
    Torch-style weights ([out, in]) and attention's K^T reach a
    `linalg.matmul` / `linalg.batch_matmul` through a `linalg.transpose`
    that swaps the last two dimensions: a copy of the operand in every
    forward pass (each weight, on both backends). On tensors, before
    bufferization, the GEMM reads the transpose's input instead, with its
    operand map's last two results swapped; `tp-linalg-to-runtime` passes
    that on as the GEMM's transpose flag. A transpose left without users
    goes away. Other permutations are left alone (the runtime's GEMM takes
    plain or swapped operands only). A copy `linalg.generic` whose maps
    swap the last two dimensions (torch-mlir's TorchScript form of a
    transpose) is folded the same way.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def TPFoldBroadcastIntoMatmul : Pass<"tp-fold-broadcast-into-matmul"> {
  let summary = "Turn a batch_matmul by a weight broadcast over the batch "
                "into one matmul";
  let description = [{
    torch-mlir writes a linear layer `x @ W^T + b` on [1, S, in] activations
    as a transpose of the [out, in] weight, a copy broadcasting it to
    [1, in, out] and a `linalg.batch_matmul`: two copies of every weight in
    every forward pass. On tensors, before bufferization, a
    `linalg.batch_matmul` whose right operand repeats one matrix over the
    batch (a `linalg.broadcast` of dimension 0, or a copy generic reading a
    2-D or unit-batch 3-D tensor, maybe transposed) becomes a
    `linalg.matmul` of the collapsed [B*S, in] rows by that matrix, read
    transposed through its map where the broadcast transposed it, and an
    `expand_shape` back to [B, S, out]. A left operand that is a copy only
    keeping or adding the unit batch is read through; a zero fill of the
    result is made again on the flat shape, so the GEMM still overwrites it.
    `tp-fold-transpose-into-matmul` after it folds the weight's transpose
    into the new GEMM.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def TPFusePointwise : Pass<"tp-fuse-pointwise"> {
  let summary = "Fuse chains of pointwise linalg.generic ops";
  let description = [{
    Each linalg op becomes one loop nest on the CPU and one kernel launch on
    the GPU, with its result written to memory and read back by the next. On
    tensors, before bufferization, an all-parallel `linalg.generic` whose
    result has one use is fused into the `linalg.generic` using it
    (upstream's elementwise fusion), unless that consumer is a contraction:
    GEMMs must stay recognisable for `tp-linalg-to-runtime`. A producer
    with several uses is left alone (no recomputation).
  }];
  let options = [
    Option<"intoArgReductions", "into-arg-reductions", "bool", "true",
           "also fuse into an arg reduction (an argmax); the CPU lowering "
           "does not, so that tp-argmax-to-runtime finds the argmax over "
           "a buffer (a padded vocabulary's mask before it stays a loop)">
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def TPOutlineRepeatedBlocks
    : Pass<"tp-outline-repeated-blocks", "ModuleOp"> {
  let summary = "Outline each repeated block of the entry function (a "
                "transformer layer) into one function that every instance "
                "calls";
  let description = [{
    A forward pass is one straight-line function with N copies of the same
    transformer block, and LLVM's optimisation and code generation cost
    more than linearly in the size of one function. On tensors, right after
    sharding (so that the tensor rewrites, bufferization and the loops work
    on each distinct block once too), each public function's body is
    searched for a repeated block: every op gets a token of its structure
    (name, attributes, types, regions, the values of constant operands, but
    not where other operands come from); the period with the most ops in
    whole repetitions wins, smaller first among equals, and a block must hold
    a contraction. Its boundary is the phase that keeps the most whole
    instances, then the fewest values live across it (the residual stream).
    Each instance is then checked op for op against a reference: the same
    ops reading their own instance's values where the reference does, equal
    constants, and outside values (weights, the previous layer's output) in
    the same pattern; those that differ stay inline.

    The reference is cloned into a private function (constants cloned in;
    outside values, in the order of first use, as arguments; the results any
    instance uses afterwards, in the order of definition, as results) with
    internal linkage and `passthrough = ["noinline"]`, so that LLVM keeps one
    body, and, when every argument and result has a static shape,
    `llvm.bareptr`: `convert-func-to-llvm` passes each buffer as one pointer,
    not as the fields of its descriptor. Each instance becomes a `func.call`
    of it. A scalar every instance reads, computed by pure ops from rank-0
    tensors (a generating model's position: `tensor.extract`,
    `arith.index_cast`) and used for no dynamic size, is recomputed in the
    callee, which takes those tensors instead: on the cuda backend the
    kernels then load the position themselves (`tp-host-scalar-reads`). Repeats for up to
    `max-blocks` distinct blocks.
  }];
  let options = [
    Option<"maxBlocks", "max-blocks", "unsigned", /*default=*/"4",
           "the most distinct blocks outlined per function">,
  ];
  let dependentDialects = ["func::FuncDialect", "LLVM::LLVMDialect"];
}

def TPRollRepeatedCalls : Pass<"tp-roll-repeated-calls", "ModuleOp"> {
  let summary = "Turn a run of identical calls that differ in the slots "
                "they load into a loop over a table of slots";
  let description = [{
    On the LLVM-dialect module, after `tp-model-interface`: an entry calls
    each outlined block (`tp-outline-repeated-blocks`) once per layer, after
    loading that layer's buffers from the launcher's array, so the entry, one
    basic block, grows with the depth, and LLVM's optimisation and code
    generation with it. In each block of each function, the calls of one
    callee at evenly spaced places cut the ops into segments (each phase of
    the boundary is tried, and the first few segments may be left out). A
    run of at least 3 segments is rolled when every segment does what the
    first does: the same ops, each operand read from its own segment where
    the first's is (at the same place), from the previous segment's (the
    same place in every segment: a carried value, such as the activation
    one layer passes the next), or the same value defined before the run;
    and GEPs with one constant index may differ in it (the slot of
    `buffers` a layer reads). Values used after the run must be the last
    segment's.

    The run becomes a loop: a header with the iteration and one argument per
    carried value (or value used after the run), a body with the first
    segment, its carried operands read from the header and each varying
    index loaded from an internal constant global `<function>_slots<n>`
    (`[segments x varying GEPs] x i32`), and the rest of the block after
    it, reading the header's arguments for the last segment's values.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def TPLinalgToRuntime : Pass<"tp-linalg-to-runtime", "ModuleOp"> {
  let summary = "Turn f32 linalg.matmul / batch_matmul on buffers into "
                "calls of the runtime's GEMM";
  let description = [{
    After bufferization: `linalg.matmul` and `linalg.batch_matmul` on f32
    memrefs, with plain or transposed operand maps, become calls of
    `tprt_matmul_f32` / `tprt_batch_matmul_f32` (c = op(a) op(b) + c). When
    a `linalg.fill` of zero writes exactly c just before (nothing with
    memory effects in between) and k is known non-zero, the fill goes and
    the call overwrites c instead (`accumulate` = 0). Other contractions are
    left to the loop lowering.
  }];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect",
                           "arith::ArithDialect"];
}

def TPArgmaxToRuntime : Pass<"tp-argmax-to-runtime", "ModuleOp"> {
  let summary = "Turn an f32 argmax over the innermost loop into a call of "
                "the runtime's vectorized argmax";
  let description = [{
    After bufferization, on the CPU lowering: a linalg op that computes the
    maximum of its one f32 input over the innermost loop with
    `arith.maximumf` (a NaN wins) and the first index where it occurs, as
    tp-shard recognises an argmax (the index may have a value defined
    outside the op added: a rank's first position after tp-shard), whose
    other loops index both results (f32 and i64) in order, becomes
    `tprt_argmax_f32(rows, max, index, offset)`, which starts from the
    results' values as the loop would. LLVM cannot vectorize the loop: each
    element's comparison waits on the running maximum. Other arg reductions
    (an argmin, `arith.maxnumf`, other maps or element types, a view whose
    leading dimensions do not collapse) stay for the loops.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "memref::MemRefDialect"];
}

def TPAssertsToRuntime : Pass<"tp-asserts-to-runtime", "ModuleOp"> {
  let summary = "Turn each cf.assert into a call of tprt_abort when it fails";
  let description = [{
    A `cf.assert` (tp-import checks the indices of a `tm_tensor.scatter`
    with one) becomes an `scf.if` on the negated condition that calls
    `tprt_abort(message)`, which prints the message with the rank and ends
    every rank with exit code 1; upstream's lowering would `abort()` the one
    rank. The message is an internal LLVM global string, one per distinct
    message. CPU lowering only: a check inside a linalg op (torch-mlir's
    bounds checks of an embedding lookup) would become a call from a GPU
    kernel to the host.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "LLVM::LLVMDialect", "scf::SCFDialect"];
}

def TPPanelWeights : Pass<"tp-panel-weights", "ModuleOp"> {
  let summary = "Lay out the [k, n] weights that only the runtime's GEMM "
                "reads in column panels";
  let description = [{
    After `tp-linalg-to-runtime`, on the CPU lowering: an f32 argument of a
    function of the manifest (`tp.manifest`) that every use reads as b of a
    `tprt_matmul_f32` call, whole, all of them transposed or none (through
    casts, and through the parameters of the private functions it is
    passed to, which every call of them must pass an argument read the same
    way), in every function that takes it under its name, gets `"layout":
    "panels"` (or `"transposed_panels"`) in the manifest, and those calls
    become `tprt_matmul_panels_f32`: the loader lays op(b), the weight or
    its transpose, out in column panels (runtime/lib/Panels.h), which the
    few-row products of a decode step read as one stream. Element loads of
    such a weight (`memref.load`, an embedding lookup of a tied LM head)
    are rewritten to read the element where the panels put it
    (`TPRT_PANEL_COLS` in tprt.h). Any other reader (a slice, a view, a
    result read back from the argument's buffer, a function reached other
    than by calls) leaves the weight as it is. Does nothing to a module
    without a manifest.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "memref::MemRefDialect"];
}

def TPApproximateMath : Pass<"tp-approximate-math"> {
  let summary = "Replace f32 transcendental math (exp, tanh, erf, ...) by "
                "MLIR's polynomial approximations";
  let description = [{
    libm's `expf`/`tanhf` are calls the loop vectorizer cannot look
    through; in GeLU, softmax and SiLU they cost as much as a fifth of a
    CPU forward pass. The upstream approximations are plain arithmetic,
    accurate to a few ulp in f32, and vectorize. Applies to scalar and
    vector math (inside linalg bodies); math on whole tensors is left as it
    is (the pipelines make it a linalg.generic first, with upstream's
    convert-elementwise-to-linalg).
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect"];
}

def TPUnfoldStridedSlices : Pass<"tp-unfold-strided-slices"> {
  let summary = "Split a strided rank-reducing tensor.extract_slice into a "
                "slice that keeps every dimension and a collapse_shape";
  let description = [{
    Bufferized, a strided slice that drops unit dimensions (a q|k|v slice
    of a fused projection with stride 3, say) becomes a rank-reducing
    `memref.subview`, and upstream MLIR 22 reads past the end of its
    strides when it works out which unit dimensions such a subview drops
    (`SubViewOp::getDroppedDims`): tp-compile crashed. On tensors, before
    bufferization, such a slice keeps every dimension and a
    `tensor.collapse_shape` drops the unit ones, so no subview has to guess
    them. Unit-stride rank-reducing slices lower as they are and stay.
  }];
  let dependentDialects = ["tensor::TensorDialect"];
}

def TPEarlyDealloc : Pass<"tp-early-dealloc"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Ownership-based deallocation frees the temporaries of a straight-line
    function at its end, so a forward pass holds every layer's activations
    at once. This moves each `memref.dealloc` of a buffer allocated in the
    same block to just after the last use of the buffer or of any view of
    it. A buffer with a use it cannot see through (an op that returns a
    memref without being a view) is left alone.
  }];
}

def TPStridedCopiesToLinalg : Pass<"tp-strided-copies-to-linalg"> {
  let summary = "Turn a memref.copy between views that are not both "
                "contiguous into linalg.copy";
  let description = [{
    Before the loop lowering, on the CPU: a `memref.copy` that upstream's
    LLVM lowering would not make a memcpy (a source or target that is
    neither of identity layout nor a static contiguous row-major view)
    becomes `linalg.copy`, which the loop lowering makes inline loops.
    Lowered as it is, such a copy calls `memrefCopy`
    (libmlir_c_runner_utils), which walks any layout element by element
    through the descriptors; a decode step's KV cache writes are such
    copies. The others stay, as do unranked ones.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def TPExpandArithForLLVM : Pass<"tp-expand-arith-for-llvm"> {
  let summary = "Expand the arith ops ArithToLLVM cannot lower, and bf16 "
                "conversions; leave the float min and max ops";
  let description = [{
    Upstream's `arith-expand-ops` minus its float min/max rewrites: the
    rounding divisions (`ceildivsi`, `floordivsi`, `ceildivui`) and, as
    integer arithmetic, bf16 `extf`/`truncf` (LLVM would call
    `__truncsfbf2`, which Debian 12's libgcc lacks). `maximumf`, `maxnumf`,
    `minimumf` and `minnumf` stay for ArithToLLVM, which makes them LLVM's
    intrinsics: LLVM vectorizes reductions over those, not over the compares
    and selects upstream's expansion writes.
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def TPPromoteAccumulators : Pass<"tp-promote-accumulators"> {
  let summary = "Keep the element a loop reads and writes in place in every "
                "iteration in a register";
  let description = [{
    After the loop lowering: in an `scf.for`, a `memref.store` whose buffer
    and indices are defined outside the loop, read before it by
    `memref.load`s of the same place and by nothing else the loop does (no
    other access to a buffer that may alias it, no op of unknown effects;
    upstream's alias analysis: a buffer allocated in the function is
    neither an argument nor another allocation), becomes an iter_arg: one
    load before the loop, one store after it. A reduction's output element
    (a sum, a max, an argmax's value and index) then stays in a register;
    LLVM cannot do it itself, since lowered memrefs carry no alias
    information. A loop whose trip count is unknown runs in an `scf.if`
    that skips it, load and store included, when it has no iterations.
    Inner loops go first, so a reduction over several loops moves out as
    far as its place is invariant.
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect",
                           "scf::SCFDialect"];
}

def TPStackWeights : Pass<"tp-stack-weights", "ModuleOp"> {
  let summary = "Stack the weights of GEMMs that read one activation into "
                "one argument, read by one GEMM";
  let description = [{
    On the sharded module, before `tp-model-manifest`: in each public
    function with a body, `linalg.matmul`s that read the same activation
    (the same value, or identical `tensor.collapse_shape`s of one) by
    weights that are named arguments, each read by its GEMM alone, stored
    [k, n] or transposed from [n, k] (`linalg.transpose` or a copy
    generic), into inits filled with one constant, become one GEMM over a
    new argument that stacks the weights along n, in block order, and
    `tensor.extract_slice`s of its result. The argument is named after its
    parts, what they differ in between braces
    (`layer.{q,k,v}.weight`), and carries `tp.stack` (`{dim, parts}`: each part's
    size along the stacked dimension and the attributes of the argument it
    was), from which the manifest says how the loader builds it: each
    part's slice for the rank, stacked. q|k|v and gate|up of a Llama-style
    layer: one GEMM call each instead of three and two (at tp > 1 too:
    each part is sliced for the rank before the stacking). GEMMs of one
    activation whose inits or layouts differ, a weight read anywhere
    else, unnamed weights and dynamic shapes are left alone.
  }];
  let dependentDialects = ["linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def TPModelManifest : Pass<"tp-model-manifest", "ModuleOp"> {
  let summary = "Record the model manifest of a per-rank program and hand "
                "its entry functions to the lowering";
  let description = [{
    On the sharded module, before the lowering: every public function with
    a body is an entry of the model (`@forward`; `@prefill` and `@decode`
    of a generating model), exported as `tp_model_<name>`. Their arguments
    (weights and inputs with `tp.name`, weights with `tp.shard`) and results
    (`tp.name`, and `tp.shard` for a cut one such as a KV cache) become the
    manifest that the runtime reads (runtime/include/tprt/model.h: ABI
    version, backend, `tp.size`, per function each tensor's name, dtype,
    full and local shape and cut), JSON text in the module attribute
    `tp.manifest`. The argument and result attributes, now in the
    manifest, are dropped, and each entry gets `llvm.emit_c_interface`.
    Every argument but a state (one the entry returns under its own
    `tp.name`: a KV cache) gets `bufferization.writable = false`: the
    launcher passes the same weights and inputs to every call, so an op
    that updates one (a scatter into a weight) writes a copy.
    Fails at the entry (or the module) when an argument or result is not a
    static tensor of f32, i64, i32 or i1, when two arguments of a function
    share a name but not a full shape, when two entries would export the
    same symbol, or when there is no public function with a body.
  }];
  let options = [
    Option<"backend", "backend", "std::string", /*default=*/"\"cpu\"",
           "the runtime the model calls: cpu or cuda">,
  ];
}

def TPInPlaceResults : Pass<"tp-in-place-results", "ModuleOp"> {
  let summary = "Drop the results of a model's entries that are updated in "
                "an argument's buffer";
  let description = [{
    After one-shot bufferization, before results become out-parameters: a
    result of a function of the manifest (`tp.manifest`) that is one of the
    function's arguments (a KV cache with this step's rows written into
    the argument's buffer) is removed from the function, and its manifest
    entry gets `"in_place": <argument number>`: after a call the argument's
    buffer holds it, and no copy of the cache is made per step. Does
    nothing to a module without a manifest.
  }];
}

def TPModelInterface : Pass<"tp-model-interface", "ModuleOp"> {
  let summary = "Add the functions a launcher calls: the manifest and each "
                "entry over an array of buffers";
  let description = [{
    On the LLVM-dialect module (after the lowering): from `tp.manifest`,
    adds `tp_model_manifest()`, returning the manifest text, and per entry
    function its `symbol(void **buffers)` (`tp_model_forward`), which takes
    one memref descriptor per argument, then per result
    (runtime/include/tprt/model.h); a result updated in place has a slot
    the entry does not read. The entry's expanded body moves into its C
    interface `_mlir_ciface_<entry>` and that into the symbol's function,
    each descriptor pointer loaded from `buffers`, and each field read
    loaded from its descriptor, next to what reads it: no function takes
    every descriptor or descriptor field as an argument, and no value lives
    across the whole body. A C interface without a body is called with the
    descriptor pointers instead. Arguments the cuda lowering stored as
    bf16 (`tpcompile.bf16_args`) are marked so in the manifest. Both module
    attributes are removed.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // TP_CONVERSION_PASSES_TD

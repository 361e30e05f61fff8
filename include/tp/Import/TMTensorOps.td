//===- TMTensorOps.td - torch-mlir's TMTensor ops ----------*- tablegen -*-===//
//
// torch-mlir lowers `scaled_dot_product_attention` to linalg-on-tensors as
// one op of its own dialect, `tm_tensor.attention`; `cumsum`, `index_put`,
// `sort` and `topk` as `tm_tensor.scan`, `scatter`, `sort` and `topk`
// (TMTensorOps.td there). tp-mlir does not link torch-mlir; to read what its
// importer writes, this dialect declares those ops, with the same operands,
// attributes and assembly formats, and tp-import decomposes them into
// linalg (`tp-decompose-tm-attention`, `tp-decompose-tm-scan`) or loops
// (`tp-tm-tensor-to-loops`).
//
//===----------------------------------------------------------------------===//

#ifndef TP_IMPORT_TMTENSOROPS_TD
#define TP_IMPORT_TMTENSOROPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TMTensor_Dialect : Dialect {
  let name = "tm_tensor";
  let cppNamespace = "::mlir::tp::tm_tensor";
  let summary = "The ops of torch-mlir's TMTensor that tp-import reads";
  let description = [{
    The ops of torch-mlir's TMTensor dialect that its linalg-on-tensors
    output keeps for a transformer: `tm_tensor.attention`,
    `tm_tensor.scan` for a cumulative sum (RoBERTa's position ids, the
    positions of a padded batch), `tm_tensor.scatter` for `index_put` (a
    KV cache's update), `tm_tensor.sort` and `tm_tensor.topk` (a mixture
    of experts' router, sampling). Registered by
    `tp::registerImportDialects`, so `tp-opt` and `tp-compile` parse
    torch-mlir's graphs as torch-mlir prints them; `tp-import` rewrites each
    attention into linalg before `tp-shard` cuts it. A tool that registers
    torch-mlir's own TMTensor dialect must not register this one too (two
    dialects cannot share the namespace): tp-import's decompositions work on
    these ops only.
  }];
}

def TMTensor_AttentionOp : Op<TMTensor_Dialect, "attention",
                              [AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention over batches of heads";
  let description = [{
    `ins(query, key, value[, mask]) outs(output)` with query `[B..., M, K1]`,
    key `[B..., K2, K1]`, value `[B..., K2, N]`, mask `[B..., M, K2]` and
    output `[B..., M, N]`:

        output = softmax(query @ key^T * scale + mask) @ value

    over the last dimension, where `scale` is the attribute when given,
    else `1 / sqrt(K1)`. A mask of `i1` adds 0 where it is true and -inf
    where it is false; a float mask is added as it is. The output operand
    gives the result's shape only: its values are not read (torch-mlir
    passes a tensor filled with zeros).
  }];

  let arguments = (ins Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    attr-dict
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

def TMTensor_ScanOp : Op<TMTensor_Dialect, "scan",
                         [AttrSizedOperandSegments]> {
  let summary = "inclusive or exclusive scan along one dimension";
  let description = [{
    `ins(input) outs(output, accumulator)`, with `output` of the input's
    shape and `accumulator` of its shape without `dimension`; the region
    `(previous, next) -> combined` of the element type. Inclusive:

        output[0] = input[0],  output[i] = f(output[i-1], input[i])

    exclusive: `output[0] = accumulator`, `output[i] = f(output[i-1],
    input[i-1])`. The second result is the accumulator as torch-mlir's
    loops leave it: each output element after the first is stored into it,
    so it ends as the last one (as given for a dimension of one element).
    torch-mlir writes `cumsum` as an inclusive scan with `arith.addi` or
    `arith.addf`. A dynamic size may stand for a static one, as there.
  }];

  let arguments = (ins Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs,
                       I64Attr:$dimension,
                       BoolAttr:$inclusive);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    `dimension` `(` $dimension `)`
    `inclusive` `(` $inclusive `)`
    attr-dict
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def TMTensor_ScatterOp : Op<TMTensor_Dialect, "scatter",
                            [AttrSizedOperandSegments]> {
  let summary = "update the elements of a tensor that indices name";
  let description = [{
    `ins(updates, indices) outs(original)`, with `indices` `[N, depth]` of
    signless integers and `updates` `[N, U_1, ..., U_s]`, whose slices lie
    along the original's last s dimensions (offset = rank - s): the
    element u of update n lands at

        start[offset + i] = u[i]                   for i < s
        start[dimension_map[k]] += indices[n, k]   for k < depth

    and becomes `region(updates[n, u], original[start])` (the region's
    first argument is the update, the second the current value), in order
    of n and u, as torch-mlir's loops do it: with repeated indices
    (`unique_indices(false)`) a later update sees an earlier one's result.
    torch-mlir writes `index_put`, `scatter` and `index_copy` (a static KV
    cache's update) in this form.
  }];

  let arguments = (ins Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs,
                       DenseI64ArrayAttr:$dimension_map,
                       DefaultValuedAttr<BoolAttr, "true">:$unique_indices);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    attr-dict `unique_indices` `(` $unique_indices `)`
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def TMTensor_SortOp : Op<TMTensor_Dialect, "sort",
                         [AttrSizedOperandSegments]> {
  let summary = "sort tensors along one dimension by a comparator";
  let description = [{
    `outs(operands...)` of one shape, sorted together along `dimension`
    by the region `(a[i], a[i+1], b[i], b[i+1], ...) -> i1`: true keeps a
    pair in its order, false swaps it, in every operand. As torch-mlir's
    loops do it: for every position along the dimension, one bubble pass
    over its adjacent pairs, so a row of n elements takes n passes. torch-mlir
    writes `aten.sort` (values and their i64 indices) in this form.
  }];

  let arguments = (ins Variadic<AnyType>:$inputs,
                       Variadic<AnyShaped>:$outputs,
                       I64Attr:$dimension);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    attr-dict
    `dimension` `(` $dimension `)`
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def TMTensor_TopkOp : Op<TMTensor_Dialect, "topk",
                         [AttrSizedOperandSegments]> {
  let summary = "the k first elements along one dimension by a comparator";
  let description = [{
    `ins(values[, indices]) outs(out_values, out_indices)`, the outputs of
    the input's shape but k along `dimension`, indices i32. The outputs
    hold the k elements found so far, first to last: each input element,
    in order, walks them from the first, and where the region `(element,
    kept) -> i1` is true it takes that place and the displaced element
    walks on (of two elements equal by the region, the one of lower index
    keeps the index, as torch-mlir's loops do it). torch-mlir writes
    `aten.topk` (a mixture of experts' router) in this form, its outputs
    filled with the lowest value first.
  }];

  let arguments = (ins Variadic<AnyShaped>:$inputs,
                       Variadic<AnyShaped>:$outputs,
                       I64Attr:$dimension);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    attr-dict
    `dimension` `(` $dimension `)`
    `ins` `(` $inputs `:` type($inputs) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    $region (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def TMTensor_YieldOp : Op<TMTensor_Dialect, "yield",
                          [Pure, ReturnLike, Terminator,
                           ParentOneOf<["ScanOp", "ScatterOp", "SortOp", "TopkOp"]>]> {
  let summary = "the value a tm_tensor op's region gives";
  let arguments = (ins Variadic<AnyType>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

#endif // TP_IMPORT_TMTENSOROPS_TD

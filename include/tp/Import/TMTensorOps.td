//===- TMTensorOps.td - torch-mlir's attention op ----------*- tablegen -*-===//
//
// torch-mlir lowers `scaled_dot_product_attention` to linalg-on-tensors as
// one op of its own dialect, `tm_tensor.attention` (TMTensorOps.td there).
// tp-mlir does not link torch-mlir; to read what its importer writes, this
// dialect declares that op alone, with the same operands, attribute and
// assembly format, and tp-import decomposes it into linalg
// (`tp-decompose-tm-attention`).
//
//===----------------------------------------------------------------------===//

#ifndef TP_IMPORT_TMTENSOROPS_TD
#define TP_IMPORT_TMTENSOROPS_TD

include "mlir/IR/OpBase.td"

def TMTensor_Dialect : Dialect {
  let name = "tm_tensor";
  let cppNamespace = "::mlir::tp::tm_tensor";
  let summary = "The attention op of torch-mlir's TMTensor, as tp-import reads it";
  let description = [{
    The one op of torch-mlir's TMTensor dialect that its linalg-on-tensors
    output keeps for a transformer: `tm_tensor.attention`. Registered by
    `tp::registerImportDialects`, so `tp-opt` and `tp-compile` parse
    torch-mlir's graphs as torch-mlir prints them; `tp-import` rewrites each
    attention into linalg before `tp-shard` cuts it. A tool that registers
    torch-mlir's own TMTensor dialect must not register this one too (two
    dialects cannot share the namespace): `tp-decompose-tm-attention` works
    on this op only.
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

#endif // TP_IMPORT_TMTENSOROPS_TD

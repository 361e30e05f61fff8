//===- TPOps.td - tensor-parallel dialect definition -------*- tablegen -*-===//
//
// The `tp` dialect carries what a tensor-parallel program needs beyond plain
// linalg on tensors: how a full tensor is cut across ranks (`#tp.shard`) and
// the collectives that move data between ranks.
//
//===----------------------------------------------------------------------===//

#ifndef TP_IR_TPOPS_TD
#define TP_IR_TPOPS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TP_Dialect : Dialect {
  let name = "tp";
  let cppNamespace = "::mlir::tp";
  let summary = "Tensor parallelism: shard descriptions and collectives";
  let description = [{
    A module in this dialect is the program that each of `tp.size` ranks runs
    (SPMD). Values are rank-local tensors. Function arguments that hold a
    shard of a full tensor carry `tp.shard` (how to cut the full tensor) and,
    optionally, `tp.name` (the checkpoint name of the full tensor).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Argument attribute: how the full tensor is cut (`#tp.shard<...>`).
    static constexpr llvm::StringLiteral getShardAttrName() { return "tp.shard"; }
    /// Argument attribute: the checkpoint name of the full tensor.
    static constexpr llvm::StringLiteral getNameAttrName() { return "tp.name"; }
    /// Argument attribute: the shape the checkpoint holds the full tensor in
    /// when the model takes it padded with zeros after it in each dimension
    /// (a vocabulary padded so that the ranks divide it), `array<i64: ...>`.
    static constexpr llvm::StringLiteral getCheckpointShapeAttrName() {
      return "tp.checkpoint_shape";
    }
    /// Argument attribute: the full tensor is whole rows from row N of the
    /// checkpoint tensor `tp.name` of shape `tp.checkpoint_shape`, a tensor
    /// that packs several weights one after the other, read in row-major
    /// order: rows [N, N + D0) of a tensor as wide as it (Phi-3's q|k|v in
    /// one qkv_proj of unequal sections), or of a tensor of another rank
    /// (elements of buddy-mlir's flat parameters as a matrix), `N : i64`.
    static constexpr llvm::StringLiteral getCheckpointOffsetAttrName() {
      return "tp.checkpoint_offset";
    }
    /// Argument attribute of a KV cache [B, kv_heads, W, head_dim] that
    /// serves positions [0, N) as a ring of W rows (position p at row p mod
    /// W: a sliding-window layer keeps its window alone), `N : i64`.
    static constexpr llvm::StringLiteral getPositionsAttrName() {
      return "tp.positions";
    }
    /// Argument attribute of a rank's weights stacked into one tensor along
    /// a dimension (tp-stack-weights: q|k|v, gate|up), which the loader
    /// builds from each part's slice of its checkpoint tensor:
    /// a dictionary of `dim` (D : i64) and `parts`, an array of dictionaries:
    /// each part its `size` along D and the attributes of the argument it was.
    static constexpr llvm::StringLiteral getStackAttrName() {
      return "tp.stack";
    }
    /// Module attribute: the number of ranks the module is written for.
    static constexpr llvm::StringLiteral getSizeAttrName() { return "tp.size"; }
    /// Module attribute: a generating model's end ids (its config's
    /// eos_token_id), `array<i64: ...>`: the launcher stops a sequence at the
    /// first it gives unless told other ones.
    static constexpr llvm::StringLiteral getEosTokenIdsAttrName() {
      return "tp.eos_token_ids";
    }
    /// Module attribute: the model manifest (runtime/include/tprt/model.h),
    /// JSON text, from tp-model-manifest to tp-model-interface.
    static constexpr llvm::StringLiteral getManifestAttrName() {
      return "tp.manifest";
    }
  }];
}

//===----------------------------------------------------------------------===//
// Enums and attributes
//===----------------------------------------------------------------------===//

def TP_ReductionKind : I32EnumAttr<"ReductionKind", "reduction of a collective",
    [I32EnumAttrCase<"Sum", 0, "sum">, I32EnumAttrCase<"Max", 1, "max">,
     I32EnumAttrCase<"Min", 2, "min">]> {
  let cppNamespace = "::mlir::tp";
}

def TP_ShardAttr : AttrDef<TP_Dialect, "Shard"> {
  let mnemonic = "shard";
  let summary = "which part of a full tensor each rank holds";
  let description = [{
    `#tp.shard<dim = D, outer = B, replicas = R>`: dimension `D` of the
    full tensor is read as `B` equal blocks (default 1), each cut into
    `tp.size / R` contiguous parts; rank `r` holds part `r / R` of every
    block, in block order. `B` = 1 is a plain column or row block. A fused
    QKV weight `[d, 3*h*dh]` cut between heads is
    `#tp.shard<dim = 1, outer = 3>`: each rank owns the same heads of Q, of
    K and of V. `R` > 1 (default 1) gives each part to `R` consecutive
    ranks: the K/V weights of grouped-query attention with fewer kv heads
    than ranks. The analysis (`DimCut`) and the model manifest
    (`{"dim", "outer", "replicas"}`, runtime/include/tprt/model.h) use the
    same three numbers.
  }];
  let parameters = (ins "int64_t":$dim,
                        DefaultValuedParameter<"int64_t", "1">:$outer,
                        DefaultValuedParameter<"int64_t", "1">:$replicas);
  let assemblyFormat = "`<` `dim` `=` $dim (`,` `outer` `=` $outer^)? "
                       "(`,` `replicas` `=` $replicas^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Shape of the local shard of a full tensor of `shape` on `numRanks`
    /// ranks, or failure when the blocks do not cut evenly.
    FailureOr<SmallVector<int64_t>> getLocalShape(ArrayRef<int64_t> shape,
                                                  int64_t numRanks) const;
  }];
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class TP_Op<string mnemonic, list<Trait> traits = []>
    : Op<TP_Dialect, mnemonic, traits>;

def TP_RankOp : TP_Op<"rank", [Pure]> {
  let summary = "the index of the calling rank among the tp-size ranks";
  let description = [{
    The rank `r` in `[0, tp.size)` of the process that runs the per-rank
    program: what a rank's part of a cut dimension starts at, for the few
    ops whose values depend on it (a vocabulary-parallel embedding reads the
    rows `[r * V/N, (r + 1) * V/N)` of its table). The lowering calls the
    runtime's `tprt_rank`.

    ```mlir
    %r = tp.rank
    ```
  }];
  let results = (outs Index:$rank);
  let assemblyFormat = "attr-dict";
}

def TP_AllReduceOp : TP_Op<"all_reduce", [Pure, SameOperandsAndResultType]> {
  let summary = "reduce a tensor across all ranks, every rank gets the result";
  let description = [{
    Every rank contributes a tensor of the same shape and receives the
    elementwise reduction over all ranks. The sharding pass inserts one
    `sum` all-reduce after each row-parallel (narrowing) contraction, turning
    its partial sums into the full, replicated value.

    ```mlir
    %full = tp.all_reduce sum %partial : tensor<8x768xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, TP_ReductionKind:$kind);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def TP_AllGatherOp : TP_Op<"all_gather", [Pure]> {
  let summary = "concatenate the ranks' tensors along one dimension";
  let description = [{
    Rank `r`'s operand becomes part `r` of the result along `dim`; every
    rank receives the whole result. The group size is the ratio of the
    result to the operand extent along `dim` and must equal the module's
    `tp.size` when the module records one.

    ```mlir
    %full = tp.all_gather %part dim 1 : tensor<8x384xf32> -> tensor<8x768xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input `dim` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TP_ReduceScatterOp : TP_Op<"reduce_scatter", [Pure]> {
  let summary = "reduce across ranks and keep this rank's part along a dimension";
  let description = [{
    The elementwise reduction of all ranks' operands, cut into equal
    contiguous parts along `dim`; rank `r` receives part `r`.

    ```mlir
    %part = tp.reduce_scatter sum %partial dim 0 : tensor<8x768xf32> -> tensor<4x768xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, TP_ReductionKind:$kind,
                       I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$kind $input `dim` $dim attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // TP_IR_TPOPS_TD

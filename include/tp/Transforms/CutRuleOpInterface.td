//===- CutRuleOpInterface.td - how one op kind carries a cut -*- tablegen -*-===//

#ifndef TP_TRANSFORMS_CUTRULEOPINTERFACE_TD
#define TP_TRANSFORMS_CUTRULEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def TP_CutRuleOpInterface : OpInterface<"CutRuleOpInterface"> {
  let cppNamespace = "::mlir::tp";
  let description = [{
    The sharding rule of one op kind, both halves in one place: how a cut of
    one of its operands or results (`DimCut`: which dimension, in how many
    blocks) spreads to the others, and how the op is rewritten for one rank
    once its values took their rank-local types. tp-shard attaches it to the
    upstream ops it knows as external models (lib/Transforms/CutRules/, one
    file per dialect); an op without it keeps a cut when it is
    `Elementwise` and otherwise needs its cut operands whole (an
    all-gather, a fallback).
  }];
  let methods = [
    InterfaceMethod<[{
        Spreads the cuts `state` knows on this op's operands and results to
        the others (`state.mark`), records the collectives the op needs
        (`state.gather`, `state.reduce`) and cuts worth trying instead
        (`state.hint`). Fails through `state.fail`, which says why at the
        op, when no rank-local form of the op exists for these cuts.
      }],
      "::llvm::LogicalResult", "propagateCuts",
      (ins "::mlir::tp::CutPropagation &":$state)>,
    InterfaceMethod<[{
        Called once the op's cut values (defined or read) have their
        rank-local types (the full tensor's dimension divided by the cut's
        parts, `tpSize` / replicas):
        updates what spells out shapes or positions in the full tensor
        (static sizes, offsets, splat constants, the rows a lookup reads).
        `cuts` holds the full-tensor cut of every value of the region.
      }],
      "void", "localizeShapes",
      (ins "const ::mlir::tp::CutMap &":$cuts, "int64_t":$tpSize),
      /*methodBody=*/"", /*defaultImplementation=*/"return;">,
  ];
}

#endif // TP_TRANSFORMS_CUTRULEOPINTERFACE_TD

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

#endif // TP_IMPORT_PASSES_TD

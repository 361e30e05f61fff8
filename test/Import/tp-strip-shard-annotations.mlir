// RUN: tp-opt %s --split-input-file --tp-strip-shard-annotations --verify-diagnostics | FileCheck %s --enable-var-scope

// Megatron annotations as upstream's shard partition test writes them: each
// shard.shard is forwarded to its source (chains too), the shardings and the
// grid go, and the function gets one remark.
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x8xf32>, %[[W:[^:]*]]: tensor<8x16xf32>
// CHECK-NOT: shard.
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x16xf32>)
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[F]] : tensor<4x16xf32>)
// CHECK-NOT: shard.
// CHECK: return %[[Y]]
shard.grid @grid(shape = 2)
// expected-remark @below {{dropped 5 shard annotations and 2 shardings: tp-shard decides the cut}}
func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %repl = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xa = shard.shard %x to %repl annotate_for_users : tensor<4x8xf32>
  %wa = shard.shard %w to %cols : tensor<8x16xf32>
  %wb = shard.shard %wa to %cols annotate_for_users : tensor<8x16xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %fa = shard.shard %f to %cols : tensor<4x16xf32>
  %y = linalg.matmul ins(%xa, %wb : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fa : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ya = shard.shard %y to %cols : tensor<4x16xf32>
  return %ya : tensor<4x16xf32>
}

// -----

// A function without annotations gets no remark; a grid still referred to
// stays.
// CHECK: shard.grid @kept(shape = 2)
// CHECK-LABEL: func.func @plain(
// CHECK-NEXT: return
shard.grid @kept(shape = 2)
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @uses_grid() attributes {grid = @kept}

// -----

// A collective means the graph was already partitioned.
shard.grid @grid(shape = 2)
func.func @partitioned(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'shard.all_reduce' op is not a sharding annotation: tp-import takes a graph before it is partitioned}}
  %y = shard.all_reduce %x on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

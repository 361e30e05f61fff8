// RUN: tp-opt %s -split-input-file --tp-shard="tp-size=4" -verify-diagnostics | FileCheck %s

// Grouped-query attention with 2 kv heads on 4 ranks: each query head
// (4 of 4) goes to one rank; each kv head to 2 ranks (replicas = 2), which
// compute its K and repeat it for the 2 query heads it serves, then slice
// the one their query head reads, at an offset their rank decides.

// CHECK-LABEL: func.func @gqa
// CHECK-SAME: %{{.*}}: tensor<8x4xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK-SAME: %{{.*}}: tensor<8x4xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>}
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK: linalg.broadcast {{.*}} outs(%{{.*}} : tensor<4x1x2x4xf32>)
// CHECK-NEXT: %[[REP:.*]] = tensor.collapse_shape {{.*}} into tensor<4x2x4xf32>
// CHECK-NEXT: %[[RANK:.*]] = tp.rank
// CHECK: %[[FINE:.*]] = arith.divui %[[RANK]], %{{.*}} : index
// CHECK: %[[PART:.*]] = arith.remui %[[FINE]], %{{.*}} : index
// CHECK: %[[OFF:.*]] = arith.muli %[[PART]], %{{.*}} : index
// CHECK: %[[MINE:.*]] = tensor.extract_slice %[[REP]][0, %[[OFF]], 0] [4, 1, 4] [1, 1, 1] : tensor<4x2x4xf32> to tensor<4x1x4xf32>
// CHECK: linalg.mul ins(%{{.*}}, %[[MINE]] : tensor<4x1x4xf32>, tensor<4x1x4xf32>)
// CHECK: tp.all_reduce sum
// CHECK-NOT: tp.all_
func.func @gqa(%x: tensor<4x8xf32>, %wq: tensor<8x16xf32>, %wk: tensor<8x8xf32>, %wo: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<4x16xf32>
  %z16 = linalg.fill ins(%c0 : f32) outs(%e16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z16 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %z8 = linalg.fill ins(%c0 : f32) outs(%e8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [4, 4, 4] : tensor<4x16xf32> into tensor<4x4x4xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %eb = tensor.empty() : tensor<4x2x2x4xf32>
  %kb = linalg.broadcast ins(%k3 : tensor<4x2x4xf32>) outs(%eb : tensor<4x2x2x4xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3]] : tensor<4x2x2x4xf32> into tensor<4x4x4xf32>
  %ea = tensor.empty() : tensor<4x4x4xf32>
  %a = linalg.mul ins(%q3, %kr : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%ea : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
  %a2 = tensor.collapse_shape %a [[0], [1, 2]] : tensor<4x4x4xf32> into tensor<4x16xf32>
  %o = linalg.matmul ins(%a2, %wo : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// The same with K returned too, and heads of 3 that 4 ranks cannot cut
// inside: no all-gather assembles a value whose parts 2 ranks each hold, and
// the cut that gives the query heads replicas too would have the output
// projection sum each part twice. Q is left whole; K's 2 kv heads, which
// no cut region reads through a broadcast now, do not divide among 4 ranks.

func.func @gqa_returns_k(%x: tensor<4x8xf32>, %wq: tensor<8x12xf32>, %wk: tensor<8x6xf32>, %wo: tensor<12x8xf32>) -> (tensor<4x8xf32>, tensor<4x6xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e12 = tensor.empty() : tensor<4x12xf32>
  %z12 = linalg.fill ins(%c0 : f32) outs(%e12 : tensor<4x12xf32>) -> tensor<4x12xf32>
  // expected-remark @+1 {{left whole on every rank: no tensor-parallel cut of output dimension 1 of 'tensor<4x12xf32>' keeps the values after it local}}
  %q = linalg.matmul ins(%x, %wq : tensor<4x8xf32>, tensor<8x12xf32>) outs(%z12 : tensor<4x12xf32>) -> tensor<4x12xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %z8 = linalg.fill ins(%c0 : f32) outs(%e8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e6 = tensor.empty() : tensor<4x6xf32>
  %z6 = linalg.fill ins(%c0 : f32) outs(%e6 : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-error @+2 {{no tensor-parallel cut for 4 ranks of output dimension 1 of 'tensor<4x6xf32>' keeps the values after it local; 2 heads of 3}}
  // expected-note @+1 {{'linalg.matmul' cannot cut dimension 1 of tensor<4x6xf32> into 4 equal parts}}
  %k = linalg.matmul ins(%x, %wk : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z6 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [4, 4, 3] : tensor<4x12xf32> into tensor<4x4x3xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
  %eb = tensor.empty() : tensor<4x2x2x3xf32>
  %kb = linalg.broadcast ins(%k3 : tensor<4x2x3xf32>) outs(%eb : tensor<4x2x2x3xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3]] : tensor<4x2x2x3xf32> into tensor<4x4x3xf32>
  %ea = tensor.empty() : tensor<4x4x3xf32>
  %a = linalg.mul ins(%q3, %kr : tensor<4x4x3xf32>, tensor<4x4x3xf32>) outs(%ea : tensor<4x4x3xf32>) -> tensor<4x4x3xf32>
  %a2 = tensor.collapse_shape %a [[0], [1, 2]] : tensor<4x4x3xf32> into tensor<4x12xf32>
  // expected-note @+1 {{'linalg.matmul' reduces over loop 2, whose parts 2 ranks each hold}}
  %o = linalg.matmul ins(%a2, %wo : tensor<4x12xf32>, tensor<12x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  // expected-note @+1 {{'func.return' needs the whole of a value whose parts 2 ranks each hold: no all-gather assembles it}}
  return %o, %k : tensor<4x8xf32>, tensor<4x6xf32>
}

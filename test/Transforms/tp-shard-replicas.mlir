// RUN: tp-opt %s -split-input-file --tp-shard="tp-size=4" -verify-diagnostics | FileCheck %s

// Grouped-query attention with 2 kv heads on 4 ranks: each query head
// (4 of 4) goes to one rank; each kv head to 2 ranks (replicas = 2), which
// compute its K and repeat it for the 2 query heads it serves. The repeats
// [kv heads, 2] fold into the query heads, cut across both factors: the 2
// ranks of a kv head split its repeats, so each repeats K for its own query
// head only, and no rank slices anything.

// CHECK-LABEL: func.func @gqa
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x4xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x4xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<4x8xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK-NOT: tp.rank
// CHECK: %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<4x1x4xf32>) outs(%{{.*}} : tensor<4x1x1x4xf32>) dimensions = [2]
// CHECK-NEXT: %[[REP:.*]] = tensor.collapse_shape %[[B]] {{\[\[}}0], [1, 2], [3]] : tensor<4x1x1x4xf32> into tensor<4x1x4xf32>
// CHECK: linalg.mul ins(%{{.*}}, %[[REP]] : tensor<4x1x4xf32>, tensor<4x1x4xf32>)
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

// -----

// Decode attention batched over kv heads, as the builders write @decode
// (docs/generation.md): 4 query heads in 2 groups of 2 ([KVH, g] unfolded
// from the heads), each group's queries as rows against its kv head's cache
// [B*KVH, S_max, Dh]. At 4 ranks the heads cut spans both factors: rank r
// holds kv head r / 2 (the caches and K/V weights with replicas = 2) and
// member r % 2 of its group (its own query head, dimension 2 of the groups,
// which the 2 ranks of a kv head split). No rank slices anything, the
// caches stay cut and the output projection's all-reduce is the only
// collective.

// CHECK-LABEL: func.func @decode_gqa
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<1x1x4x2xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<1x1x4x2xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x2xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x2xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<8x2xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>}
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<2x8xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK-SAME: -> (tensor<1x8xf32>, tensor<1x1x4x2xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>}, tensor<1x1x4x2xf32> {tp.shard = #tp.shard<dim = 1, replicas = 2>})
// CHECK-NOT: tp.rank
// CHECK: %[[KC:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, %{{.*}}, 0] [1, 1, 1, 2] [1, 1, 1, 1] : tensor<1x1x1x2xf32> into tensor<1x1x4x2xf32>
// CHECK: %[[VC:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, %{{.*}}, 0] [1, 1, 1, 2] [1, 1, 1, 1] : tensor<1x1x1x2xf32> into tensor<1x1x4x2xf32>
// CHECK: %[[HEADS:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [1, 1, 2] : tensor<1x2xf32> into tensor<1x1x2xf32>
// CHECK: %[[GROUPS:.*]] = tensor.expand_shape %[[HEADS]] {{\[\[}}0], [1, 2], [3]] output_shape [1, 1, 1, 2] : tensor<1x1x2xf32> into tensor<1x1x1x2xf32>
// CHECK: %[[QH:.*]] = tensor.collapse_shape %[[GROUPS]] {{\[\[}}0, 1], [2], [3]] : tensor<1x1x1x2xf32> into tensor<1x1x2xf32>
// CHECK: %[[KH:.*]] = tensor.collapse_shape %[[KC]] {{\[\[}}0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[KH]] : tensor<1x4x2xf32>) outs(%{{.*}} : tensor<1x2x4xf32>)
// CHECK: %[[S:.*]] = linalg.batch_matmul ins(%[[QH]], %[[KT]] : tensor<1x1x2xf32>, tensor<1x2x4xf32>) outs(%{{.*}} : tensor<1x1x4xf32>)
// CHECK: %[[P:.*]] = linalg.softmax dimension(2) ins(%[[S]] : tensor<1x1x4xf32>)
// CHECK: %[[VH:.*]] = tensor.collapse_shape %[[VC]] {{\[\[}}0, 1], [2], [3]] : tensor<1x1x4x2xf32> into tensor<1x4x2xf32>
// CHECK: %[[CTX:.*]] = linalg.batch_matmul ins(%[[P]], %[[VH]] : tensor<1x1x4xf32>, tensor<1x4x2xf32>) outs(%{{.*}} : tensor<1x1x2xf32>)
// CHECK: %[[CG:.*]] = tensor.expand_shape %[[CTX]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 1, 1, 2] : tensor<1x1x2xf32> into tensor<1x1x1x2xf32>
// CHECK: %[[CF:.*]] = tensor.collapse_shape %[[CG]] {{\[\[}}0], [1, 2, 3]] : tensor<1x1x1x2xf32> into tensor<1x2xf32>
// CHECK: %[[O:.*]] = linalg.matmul ins(%[[CF]], %{{.*}} : tensor<1x2xf32>, tensor<2x8xf32>)
// CHECK: %[[SUM:.*]] = tp.all_reduce sum %[[O]] : tensor<1x8xf32>
// CHECK-NOT: tp.all_
// CHECK: return %[[SUM]], %[[KC]], %[[VC]]
func.func @decode_gqa(%x: tensor<1x8xf32>, %pos: index, %cache_k: tensor<1x2x4x2xf32>, %cache_v: tensor<1x2x4x2xf32>,
                      %wq: tensor<8x8xf32>, %wk: tensor<8x4xf32>, %wv: tensor<8x4xf32>, %wo: tensor<8x8xf32>)
    -> (tensor<1x8xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<1x8xf32>
  %z8 = linalg.fill ins(%c0 : f32) outs(%e8 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %e4 = tensor.empty() : tensor<1x4xf32>
  %z4 = linalg.fill ins(%c0 : f32) outs(%e4 : tensor<1x4xf32>) -> tensor<1x4xf32>
  %q = linalg.matmul ins(%x, %wq : tensor<1x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %k = linalg.matmul ins(%x, %wk : tensor<1x8xf32>, tensor<8x4xf32>) outs(%z4 : tensor<1x4xf32>) -> tensor<1x4xf32>
  %v = linalg.matmul ins(%x, %wv : tensor<1x8xf32>, tensor<8x4xf32>) outs(%z4 : tensor<1x4xf32>) -> tensor<1x4xf32>
  // The step's K and V, [B, KVH, 1, Dh], written at `pos`.
  %k4 = tensor.expand_shape %k [[0], [1, 2, 3]] output_shape [1, 2, 1, 2] : tensor<1x4xf32> into tensor<1x2x1x2xf32>
  %v4 = tensor.expand_shape %v [[0], [1, 2, 3]] output_shape [1, 2, 1, 2] : tensor<1x4xf32> into tensor<1x2x1x2xf32>
  %kc = tensor.insert_slice %k4 into %cache_k[0, 0, %pos, 0] [1, 2, 1, 2] [1, 1, 1, 1] : tensor<1x2x1x2xf32> into tensor<1x2x4x2xf32>
  %vc = tensor.insert_slice %v4 into %cache_v[0, 0, %pos, 0] [1, 2, 1, 2] [1, 1, 1, 1] : tensor<1x2x1x2xf32> into tensor<1x2x4x2xf32>
  // q [B, H, Dh] -> [B, KVH, g, Dh] -> [B*KVH, g, Dh].
  %qhd = tensor.expand_shape %q [[0], [1, 2]] output_shape [1, 4, 2] : tensor<1x8xf32> into tensor<1x4x2xf32>
  %qg = tensor.expand_shape %qhd [[0], [1, 2], [3]] output_shape [1, 2, 2, 2] : tensor<1x4x2xf32> into tensor<1x2x2x2xf32>
  %qh = tensor.collapse_shape %qg [[0, 1], [2], [3]] : tensor<1x2x2x2xf32> into tensor<2x2x2xf32>
  %kh = tensor.collapse_shape %kc [[0, 1], [2], [3]] : tensor<1x2x4x2xf32> into tensor<2x4x2xf32>
  %ekt = tensor.empty() : tensor<2x2x4xf32>
  %kt = linalg.transpose ins(%kh : tensor<2x4x2xf32>) outs(%ekt : tensor<2x2x4xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x2x4xf32>
  %zs = linalg.fill ins(%c0 : f32) outs(%es : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %s = linalg.batch_matmul ins(%qh, %kt : tensor<2x2x2xf32>, tensor<2x2x4xf32>) outs(%zs : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %ep = tensor.empty() : tensor<2x2x4xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x2x4xf32>) outs(%ep : tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %vh = tensor.collapse_shape %vc [[0, 1], [2], [3]] : tensor<1x2x4x2xf32> into tensor<2x4x2xf32>
  %ec = tensor.empty() : tensor<2x2x2xf32>
  %zc = linalg.fill ins(%c0 : f32) outs(%ec : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %ctx = linalg.batch_matmul ins(%p, %vh : tensor<2x2x4xf32>, tensor<2x4x2xf32>) outs(%zc : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  // Back to [B, H * Dh] for the output projection.
  %cg = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [1, 2, 2, 2] : tensor<2x2x2xf32> into tensor<1x2x2x2xf32>
  %cf = tensor.collapse_shape %cg [[0], [1, 2, 3]] : tensor<1x2x2x2xf32> into tensor<1x8xf32>
  %o = linalg.matmul ins(%cf, %wo : tensor<1x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<1x8xf32>) -> tensor<1x8xf32>
  return %o, %kc, %vc : tensor<1x8xf32>, tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>
}

// -----

// The query heads unfolded as [kv heads, group] again, but normalised over
// the group members, which the 2 ranks of a kv head split: a softmax needs
// its whole row, and no all-gather assembles a value cut on two dimensions.
// Nothing else cuts the 4 heads 4 ways: refused.

func.func @softmax_over_group(%x: tensor<1x8xf32>, %wq: tensor<8x8xf32>, %wo: tensor<8x8xf32>) -> tensor<1x8xf32> {
  %c0 = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<1x8xf32>
  %z8 = linalg.fill ins(%c0 : f32) outs(%e8 : tensor<1x8xf32>) -> tensor<1x8xf32>
  // expected-error @+1 {{no tensor-parallel cut for 4 ranks of output dimension 1 of 'tensor<1x8xf32>' keeps the values after it local; 2 heads of 2}}
  %q = linalg.matmul ins(%x, %wq : tensor<1x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<1x8xf32>) -> tensor<1x8xf32>
  %qg = tensor.expand_shape %q [[0], [1, 2, 3]] output_shape [1, 2, 2, 2] : tensor<1x8xf32> into tensor<1x2x2x2xf32>
  %ep = tensor.empty() : tensor<1x2x2x2xf32>
  // expected-note @+1 {{'linalg.softmax' needs the whole of a value cut on dimensions 1 and 2: no all-gather assembles it}}
  %p = linalg.softmax dimension(2) ins(%qg : tensor<1x2x2x2xf32>) outs(%ep : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %pf = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<1x2x2x2xf32> into tensor<1x8xf32>
  %o = linalg.matmul ins(%pf, %wo : tensor<1x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<1x8xf32>) -> tensor<1x8xf32>
  return %o : tensor<1x8xf32>
}

// RUN: tp-opt %s -split-input-file --tp-shard="tp-size=2" | FileCheck %s --enable-var-scope

// A column -> row MLP pair whose narrowing matmul accumulates into its bias:
// the bias must be added once, after the all-reduce, not once per rank.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK: module attributes {tp.size = 2 : i64}
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: %[[X:.*]]: tensor<4x16xf32>,
// CHECK-SAME: %[[UP:.*]]: tensor<16x32xf32> {tp.name = "up", tp.shard = #tp.shard<dim = 1>},
// CHECK-SAME: %[[UPB:.*]]: tensor<32xf32> {tp.shard = #tp.shard<dim = 0>},
// CHECK-SAME: %[[DOWN:.*]]: tensor<32x16xf32> {tp.name = "down", tp.shard = #tp.shard<dim = 0>},
// CHECK-SAME: %[[DOWNB:.*]]: tensor<4x16xf32>) -> tensor<4x16xf32>
func.func @mlp(%x: tensor<4x16xf32>, %up: tensor<16x64xf32> {tp.name = "up"},
               %up_b: tensor<64xf32>, %down: tensor<64x16xf32> {tp.name = "down"},
               %down_b: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  // CHECK: %[[H:.*]] = linalg.matmul ins(%[[X]], %[[UP]] : tensor<4x16xf32>, tensor<16x32xf32>) {{.*}} -> tensor<4x32xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x16xf32>, tensor<16x64xf32>) outs(%init : tensor<4x64xf32>) -> tensor<4x64xf32>
  // CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[UPB]] : tensor<4x32xf32>, tensor<32xf32>)
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %up_b : tensor<4x64xf32>, tensor<64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  // The bias init is replaced by zeros for the partial sums ...
  // CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x16xf32>)
  // CHECK: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[DOWN]] : tensor<4x32xf32>, tensor<32x16xf32>) outs(%[[Z]] : tensor<4x16xf32>)
  // CHECK: %[[S:.*]] = tp.all_reduce sum %[[P]] : tensor<4x16xf32>
  // ... and added once after the reduction.
  // CHECK: %[[Y:.*]] = linalg.add ins(%[[S]], %[[DOWNB]] : tensor<4x16xf32>, tensor<4x16xf32>)
  // CHECK: return %[[Y]]
  %y = linalg.matmul ins(%a, %down : tensor<4x64xf32>, tensor<64x16xf32>) outs(%down_b : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Fused QKV [d, 3*h*dh] sliced into q|k|v on the 2-D result, heads as a
// loop dimension of the attention generics: the cut must be between heads
// inside each of q, k and v (3 blocks), never the contiguous column block.

#q = affine_map<(h, s, t, e) -> (s, h, e)>
#k = affine_map<(h, s, t, e) -> (t, h, e)>
#sc = affine_map<(h, s, t, e) -> (h, s, t)>
#p = affine_map<(h, s, t, e) -> (h, s, t)>
#v = affine_map<(h, s, t, e) -> (t, h, e)>
#o = affine_map<(h, s, t, e) -> (s, h, e)>
// CHECK-LABEL: func.func @fused_qkv
// CHECK-SAME: tensor<16x24xf32> {tp.shard = #tp.shard<dim = 1, outer = 3>}
// CHECK-SAME: tensor<8x16xf32> {tp.shard = #tp.shard<dim = 0>}
func.func @fused_qkv(%x: tensor<4x16xf32>, %wqkv: tensor<16x48xf32>, %wo: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x48xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x48xf32>) -> tensor<4x48xf32>
  // CHECK: linalg.matmul {{.*}} -> tensor<4x24xf32>
  %qkv = linalg.matmul ins(%x, %wqkv : tensor<4x16xf32>, tensor<16x48xf32>) outs(%init : tensor<4x48xf32>) -> tensor<4x48xf32>
  // Each rank's q, k and v are 8 wide, at offsets 0, 8 and 16 of its 24.
  // CHECK: tensor.extract_slice %{{.*}}[0, 0] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  // CHECK: tensor.extract_slice %{{.*}}[0, 8] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  // CHECK: tensor.extract_slice %{{.*}}[0, 16] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %q2 = tensor.extract_slice %qkv[0, 0] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
  %k2 = tensor.extract_slice %qkv[0, 16] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
  %v2 = tensor.extract_slice %qkv[0, 32] [4, 16] [1, 1] : tensor<4x48xf32> to tensor<4x16xf32>
  // CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [4, 1, 8] : tensor<4x8xf32> into tensor<4x1x8xf32>
  %q = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %k = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %v = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %se = tensor.empty() : tensor<2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  // CHECK: linalg.generic
  // CHECK: } -> tensor<1x4x4xf32>
  %scores = linalg.generic {indexing_maps = [#q, #k, #sc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%sinit : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x4xf32>
  // CHECK: linalg.softmax dimension(2) {{.*}} -> tensor<1x4x4xf32>
  %probs = linalg.softmax dimension(2) ins(%scores : tensor<2x4x4xf32>) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %oe = tensor.empty() : tensor<4x2x8xf32>
  %oinit = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  %ctx = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%probs, %v : tensor<2x4x4xf32>, tensor<4x2x8xf32>) outs(%oinit : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2x8xf32>
  // CHECK: tensor.collapse_shape {{.*}} : tensor<4x1x8xf32> into tensor<4x8xf32>
  %ctx2 = tensor.collapse_shape %ctx [[0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
  %ye = tensor.empty() : tensor<4x16xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK: %[[P:.*]] = linalg.matmul ins({{.*}} : tensor<4x8xf32>, tensor<8x16xf32>) {{.*}} -> tensor<4x16xf32>
  // CHECK-NEXT: %[[S:.*]] = tp.all_reduce sum %[[P]] : tensor<4x16xf32>
  // CHECK-NEXT: return %[[S]]
  %y = linalg.matmul ins(%ctx2, %wo : tensor<4x16xf32>, tensor<16x16xf32>) outs(%yinit : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// SwiGLU: two widening matmuls meet in an elementwise product; one pair,
// one all-reduce. Weights are torch-style [out, in], used through a
// transposed indexing map.

#mT = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: %arg1: tensor<16x16xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK-SAME: %arg2: tensor<16x16xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK-SAME: %arg3: tensor<16x16xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK-COUNT-1: tp.all_reduce
// CHECK-NOT: tp.all_reduce
func.func @swiglu(%x: tensor<4x16xf32>, %gate: tensor<32x16xf32>, %up: tensor<32x16xf32>, %down: tensor<16x32xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %g = linalg.matmul indexing_maps = #mT ins(%x, %gate : tensor<4x16xf32>, tensor<32x16xf32>) outs(%init : tensor<4x32xf32>) -> tensor<4x32xf32>
  %u = linalg.matmul indexing_maps = #mT ins(%x, %up : tensor<4x16xf32>, tensor<32x16xf32>) outs(%init : tensor<4x32xf32>) -> tensor<4x32xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<4x32xf32>, tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) {
  ^bb0(%gv: f32, %uv: f32, %o: f32):
    %n = arith.negf %gv : f32
    %ex = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %ex : f32
    %silu = arith.divf %gv, %den : f32
    %r = arith.mulf %silu, %uv : f32
    linalg.yield %r : f32
  } -> tensor<4x32xf32>
  %ye = tensor.empty() : tensor<4x16xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul indexing_maps = #mT ins(%a, %down : tensor<4x32xf32>, tensor<16x32xf32>) outs(%yinit : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// torch-mlir's form of `x @ W` on 3-D activations: the weight broadcast
// over the batch and a linalg.batch_matmul. The cut reaches the weight
// argument through the broadcast.

#bid3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @batched_linear
// CHECK-SAME: %arg1: tensor<16x16xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK-SAME: %arg2: tensor<16x16xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK: linalg.broadcast ins(%arg1 : tensor<16x16xf32>) outs(%{{.*}} : tensor<2x16x16xf32>) dimensions = [0]
// CHECK: linalg.batch_matmul {{.*}} -> tensor<2x4x16xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul {{.*}} -> tensor<2x4x16xf32>
// CHECK-NEXT: tp.all_reduce sum %[[P]] : tensor<2x4x16xf32>
func.func @batched_linear(%x: tensor<2x4x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %b1e = tensor.empty() : tensor<2x16x32xf32>
  %w1b = linalg.broadcast ins(%w1 : tensor<16x32xf32>) outs(%b1e : tensor<2x16x32xf32>) dimensions = [0]
  %he = tensor.empty() : tensor<2x4x32xf32>
  %hinit = linalg.fill ins(%zero : f32) outs(%he : tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %h = linalg.batch_matmul ins(%x, %w1b : tensor<2x4x16xf32>, tensor<2x16x32xf32>) outs(%hinit : tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %a = linalg.generic {indexing_maps = [#bid3, #bid3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<2x4x32xf32>) outs(%he : tensor<2x4x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<2x4x32xf32>
  %b2e = tensor.empty() : tensor<2x32x16xf32>
  %w2b = linalg.broadcast ins(%w2 : tensor<32x16xf32>) outs(%b2e : tensor<2x32x16xf32>) dimensions = [0]
  %ye = tensor.empty() : tensor<2x4x16xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%ye : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %y = linalg.batch_matmul ins(%a, %w2b : tensor<2x4x32xf32>, tensor<2x32x16xf32>) outs(%yinit : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----

// Rotary-style glue on dh while the cut is on heads: strided slices of the
// even and odd lanes and insert_slice to reassemble them leave the heads
// dimension whole, so they stay local.

#rid = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @interleaved_rotary
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [4, 1, 4] [1, 1, 2] : tensor<4x1x8xf32> to tensor<4x1x4xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 4] [4, 1, 4] [1, 1, 1] : tensor<4x1x4xf32> into tensor<4x1x8xf32>
// CHECK-COUNT-1: tp.all_reduce
// CHECK-NOT: tp.all_reduce
func.func @interleaved_rotary(%x: tensor<4x16xf32>, %wq: tensor<16x16xf32>, %wo: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q2 = linalg.matmul ins(%x, %wq : tensor<4x16xf32>, tensor<16x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %even = tensor.extract_slice %q[0, 0, 0] [4, 2, 4] [1, 1, 2] : tensor<4x2x8xf32> to tensor<4x2x4xf32>
  %odd = tensor.extract_slice %q[0, 0, 1] [4, 2, 4] [1, 1, 2] : tensor<4x2x8xf32> to tensor<4x2x4xf32>
  %he = tensor.empty() : tensor<4x2x4xf32>
  %neg = linalg.generic {indexing_maps = [#rid, #rid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%odd : tensor<4x2x4xf32>) outs(%he : tensor<4x2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x2x4xf32>
  %re = tensor.empty() : tensor<4x2x8xf32>
  %r0 = tensor.insert_slice %neg into %re[0, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf32> into tensor<4x2x8xf32>
  %rot = tensor.insert_slice %even into %r0[0, 0, 4] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf32> into tensor<4x2x8xf32>
  %sum = linalg.generic {indexing_maps = [#rid, #rid, #rid], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q, %rot : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%re : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<4x2x8xf32>
  %c = tensor.collapse_shape %sum [[0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%c, %wo : tensor<4x16xf32>, tensor<16x16xf32>) outs(%yinit : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A widening matmul whose output leaves the function (an LM head returning
// logits): cut by columns, gathered before the return.

// CHECK-LABEL: func.func @no_partner
// CHECK-SAME: tensor<8x8xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK: %[[H:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32>
// CHECK: %[[G:.*]] = tp.all_gather %[[H]] dim 1 : tensor<4x8xf32> -> tensor<4x16xf32>
// CHECK: return %[[G]]
func.func @no_partner(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}

// -----

// A vocabulary lookup (an embedding) of a table worth cutting: each rank
// holds 512 of the 1024 rows, reads the rows it holds (offset by its rank)
// and yields zero for the others; one all-reduce sums the ranks' lookups.
// CHECK-LABEL: func.func @vocab_lookup
// CHECK-SAME: tensor<512x16xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK: %[[ROWS:.*]] = arith.constant 512 : index
// CHECK: %[[RANK:.*]] = tp.rank
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]], %[[ROWS]] : index
// CHECK: %[[L:.*]] = linalg.generic
// CHECK: %[[ID:.*]] = arith.index_cast
// CHECK: %[[LOCAL:.*]] = arith.subi %[[ID]], %[[FIRST]] : index
// CHECK: %[[HELD:.*]] = arith.cmpi ult, %[[LOCAL]], %[[ROWS]] : index
// CHECK: %[[ROW:.*]] = arith.select %[[HELD]], %[[LOCAL]], %{{.*}} : index
// CHECK: %[[E:.*]] = tensor.extract %{{.*}}[%[[ROW]], %{{.*}}] : tensor<512x16xf32>
// CHECK: %[[Y:.*]] = arith.select %[[HELD]], %[[E]], %{{.*}} : f32
// CHECK: linalg.yield %[[Y]] : f32
// CHECK: tp.all_reduce sum %[[L]] : tensor<4x16xf32>
#ids = affine_map<(d0, d1) -> (d0)>
#rows = affine_map<(d0, d1) -> (d0, d1)>
func.func @vocab_lookup(%ids: tensor<4xi64>, %table: tensor<1024x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %h = linalg.generic {indexing_maps = [#ids, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%t: i64, %o: f32):
    %row = arith.index_cast %t : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<1024x16xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}

// -----

// Glue that reads the index of the cut loop (a mask over the positions of a
// padded vocabulary) reads the global position: each rank adds its part's
// first column, rank * 4, and the pair stays cut.
// CHECK-LABEL: func.func @index_of_cut_loop
// CHECK: %[[H:.*]] = linalg.matmul {{.*}} -> tensor<4x4xf32>
// CHECK: %[[RANK:.*]] = tp.rank
// CHECK: %[[COLS:.*]] = arith.constant 4 : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[RANK]], %[[COLS]] : index
// CHECK: linalg.generic {{.*}} ins(%[[H]] : tensor<4x4xf32>)
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[GLOBAL:.*]] = arith.addi %[[J]], %[[FIRST]] : index
// CHECK: arith.cmpi ult, %[[GLOBAL]]
// CHECK: tp.all_reduce sum
#im = affine_map<(d0, d1) -> (d0, d1)>
func.func @index_of_cut_loop(%x: tensor<4x8xf32>, %up: tensor<8x8xf32>, %down: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#im, #im], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %j = linalg.index 1 : index
    %c6 = arith.constant 6 : index
    %seen = arith.cmpi ult, %j, %c6 : index
    %r = arith.select %seen, %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %down : tensor<4x8xf32>, tensor<8x8xf32>) outs(%yinit : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A table whose memory saved per rank would be under 64 times what the
// all-reduce moves per forward pass (a position or token-type table) is read
// whole by every rank.
// CHECK-LABEL: func.func @small_lookup
// CHECK-SAME: %{{.*}}: tensor<8x16xf32>)
// CHECK-NOT: tp.rank
// CHECK-NOT: tp.all_reduce
// CHECK: return
#ids2 = affine_map<(d0, d1) -> (d0)>
#rows2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @small_lookup(%ids: tensor<4xi64>, %table: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %h = linalg.generic {indexing_maps = [#ids2, #rows2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%t: i64, %o: f32):
    %row = arith.index_cast %t : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<8x16xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}

// -----

// One zero-filled init for both matmuls of a pair, over one empty tensor:
// each matmul gets its own fill and its own empty, so the column matmul's
// init is cut and the row matmul's is not.

// CHECK-LABEL: func.func @shared_init
// CHECK-DAG: %[[E1:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK-DAG: %[[E2:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-DAG: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-DAG: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<4x16xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[F1]] : tensor<4x8xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.matmul {{.*}} outs(%[[F2]] : tensor<4x16xf32>)
// CHECK-NEXT: tp.all_reduce sum %[[P]] : tensor<4x16xf32>
func.func @shared_init(%x: tensor<4x16xf32>, %up: tensor<16x16xf32>, %down: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x16xf32>, tensor<16x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%h, %down : tensor<4x16xf32>, tensor<16x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// An llvm.func (another type system, no tensors) is left as it is, not
// crashed on (the fuzzer found it).

// CHECK-LABEL: llvm.func @lowered(%{{.*}}: !llvm.ptr)
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.store
llvm.func @lowered(%a: !llvm.ptr) {
  %c = llvm.mlir.constant(1.0 : f32) : f32
  llvm.store %c, %a : f32, !llvm.ptr
  llvm.return
}

// -----

// A weight two functions read (the same tp.name and type) gets one cut: @a
// cuts `w` by rows (the narrowing half of its pair), @b alone would cut it
// by columns and gather its output. On that tie the first function's cut
// wins, and @b gives `w` its rows too: its input is cut to match and its
// partial products summed (one all-reduce, as many bytes as the gather).

// CHECK-LABEL: func.func @rows
// CHECK-SAME: tensor<16x16xf32> {tp.name = "w", tp.shard = #tp.shard<dim = 0>}
func.func @rows(%x: tensor<4x16xf32>, %v: tensor<16x32xf32> {tp.name = "v"},
                %w: tensor<32x16xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.matmul ins(%x, %v : tensor<4x16xf32>, tensor<16x32xf32>) outs(%init : tensor<4x32xf32>) -> tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%h, %w : tensor<4x32xf32>, tensor<32x16xf32>) outs(%init2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @columns
// CHECK-SAME: %[[Z:.*]]: tensor<4x16xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK-SAME: %[[W:.*]]: tensor<16x16xf32> {tp.name = "w", tp.shard = #tp.shard<dim = 0>}
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[Z]], %[[W]] : tensor<4x16xf32>, tensor<16x16xf32>)
// CHECK: tp.all_reduce sum %[[P]] : tensor<4x16xf32>
// CHECK-NOT: tp.all_gather
func.func @columns(%z: tensor<4x32xf32>, %w: tensor<32x16xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%z, %w : tensor<4x32xf32>, tensor<32x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A greedy argmax over logits cut by vocabulary: each rank's extreme and
// global position (its first column added), then the extreme over the
// ranks and the first position holding it. A rank whose extreme is NaN
// offers -1, so a row with a NaN anywhere gives -1 on every rank (no table
// has that row) instead of whatever MPI's max over a NaN returns there.

#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @next_ids
// CHECK-SAME: tensor<64x256xf32> {tp.shard = #tp.shard<dim = 1>}
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c256 : index
// CHECK: %[[LOCAL:.*]]:2 = linalg.generic
// CHECK: arith.addi %{{.*}}, %[[FIRST]] : index
// CHECK: %[[MAX:.*]] = tp.all_reduce max %[[LOCAL]]#0 : tensor<2x1xf32>
// CHECK: linalg.generic {{.*}} ins(%[[LOCAL]]#0, %[[MAX]], %[[LOCAL]]#1 : tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32, %[[P:.*]]: i64, %{{.*}}: f32):
// CHECK-DAG: %[[HELD:.*]] = arith.cmpf oeq, %[[V]], %[[M]] : f32
// CHECK-DAG: %[[AT:.*]] = arith.sitofp %[[P]] : i64 to f32
// CHECK-DAG: %[[NONE:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-DAG: %[[INVALID:.*]] = arith.constant -1.000000e+00 : f32
// CHECK: %[[CANDIDATE:.*]] = arith.select %[[HELD]], %[[AT]], %[[NONE]] : f32
// CHECK: %[[OFFER:.*]] = arith.select %[[NAN]], %[[INVALID]], %[[CANDIDATE]] : f32
// CHECK: linalg.yield %[[OFFER]] : f32
// CHECK: tp.all_reduce min
// CHECK: arith.fptosi %{{.*}} : f32 to i64
func.func @next_ids(%x: tensor<2x64xf32>, %w: tensor<64x512xf32>) -> tensor<2x1xi64> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x512xf32>) -> tensor<2x512xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x64xf32>, tensor<64x512xf32>) outs(%init : tensor<2x512xf32>) -> tensor<2x512xf32>
  %logits = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 1, 512] : tensor<2x512xf32> into tensor<2x1x512xf32>
  %me = tensor.empty() : tensor<2x1xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %m0 = linalg.fill ins(%ninf : f32) outs(%me : tensor<2x1xf32>) -> tensor<2x1xf32>
  %c0 = arith.constant 0 : i64
  %ie = tensor.empty() : tensor<2x1xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ie : tensor<2x1xi64>) -> tensor<2x1xi64>
  %next:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%logits : tensor<2x1x512xf32>) outs(%m0, %i0 : tensor<2x1xf32>, tensor<2x1xi64>) {
  ^bb0(%v: f32, %m: f32, %i: i64):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i64
    %mx = arith.maximumf %v, %m : f32
    %gt = arith.cmpf ogt, %v, %m : f32
    %sel = arith.select %gt, %ki, %i : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<2x1xf32>, tensor<2x1xi64>)
  return %next#1 : tensor<2x1xi64>
}

// RUN: tp-opt %s --tp-split-fused-projections --split-input-file --verify-diagnostics | FileCheck %s

// Phi-3-medium's qkv_proj in small, as torch-mlir's FX importer writes a
// Linear (the [out, in] weight transposed and broadcast, a batch_matmul,
// the bias added) and `split` (slices of the last dimension): 4 heads of q
// and 2 of k and of v, sections of 16, 8 and 8. Each section is computed
// from its rows of the weight and of the bias, each an argument in the
// weight's place; the init is a fill of each section's shape.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @fx_gqa
// CHECK-SAME:    (%[[X:.*]]: tensor<1x5x16xf32>,
// CHECK-SAME:     %[[WQ:.*]]: tensor<16x16xf32> {tp.checkpoint_offset = 0 : i64, tp.checkpoint_shape = array<i64: 32, 16>, tp.name = "qkv_proj.weight"},
// CHECK-SAME:     %[[WK:.*]]: tensor<8x16xf32> {tp.checkpoint_offset = 16 : i64, tp.checkpoint_shape = array<i64: 32, 16>, tp.name = "qkv_proj.weight"},
// CHECK-SAME:     %[[WV:.*]]: tensor<8x16xf32> {tp.checkpoint_offset = 24 : i64, tp.checkpoint_shape = array<i64: 32, 16>, tp.name = "qkv_proj.weight"},
// CHECK-SAME:     %[[BQ:.*]]: tensor<16xf32> {tp.checkpoint_offset = 0 : i64, tp.checkpoint_shape = array<i64: 32>, tp.name = "qkv_proj.bias"},
// CHECK-SAME:     %[[BK:.*]]: tensor<8xf32> {tp.checkpoint_offset = 16 : i64, tp.checkpoint_shape = array<i64: 32>, tp.name = "qkv_proj.bias"},
// CHECK-SAME:     %[[BV:.*]]: tensor<8xf32> {tp.checkpoint_offset = 24 : i64, tp.checkpoint_shape = array<i64: 32>, tp.name = "qkv_proj.bias"})
// CHECK-NOT:     tensor.extract_slice
// CHECK:         linalg.transpose ins(%[[WQ]] : tensor<16x16xf32>)
// CHECK:         %[[FQ:.*]] = linalg.fill {{.*}} -> tensor<1x5x16xf32>
// CHECK:         %[[MQ:.*]] = linalg.batch_matmul ins(%[[X]], %{{.*}} : tensor<1x5x16xf32>, tensor<1x16x16xf32>) outs(%[[FQ]] : tensor<1x5x16xf32>)
// CHECK:         %[[Q:.*]] = linalg.generic {{.*}} ins(%[[MQ]], %[[BQ]] : tensor<1x5x16xf32>, tensor<16xf32>)
// CHECK:         linalg.transpose ins(%[[WK]] : tensor<8x16xf32>)
// CHECK:         %[[MK:.*]] = linalg.batch_matmul ins(%[[X]], %{{.*}} : tensor<1x5x16xf32>, tensor<1x16x8xf32>)
// CHECK:         %[[K:.*]] = linalg.generic {{.*}} ins(%[[MK]], %[[BK]] : tensor<1x5x8xf32>, tensor<8xf32>)
// CHECK:         linalg.transpose ins(%[[WV]] : tensor<8x16xf32>)
// CHECK:         %[[MV:.*]] = linalg.batch_matmul ins(%[[X]], %{{.*}} : tensor<1x5x16xf32>, tensor<1x16x8xf32>)
// CHECK:         %[[V:.*]] = linalg.generic {{.*}} ins(%[[MV]], %[[BV]] : tensor<1x5x8xf32>, tensor<8xf32>)
// CHECK-NOT:     tensor<1x5x32xf32>
// CHECK:         return %[[Q]], %[[K]], %[[V]]
// expected-remark @below {{computed 1 sliced projection as 3 sections, each from its rows of the weight: 6 weights, each its own argument}}
func.func @fx_gqa(%x: tensor<1x5x16xf32>, %w: tensor<32x16xf32> {tp.name = "qkv_proj.weight"},
                  %b: tensor<32xf32> {tp.name = "qkv_proj.bias"})
    -> (tensor<1x5x16xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<16x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x16xf32>) outs(%te : tensor<16x32xf32>) permutation = [1, 0]
  %be = tensor.empty() : tensor<1x16x32xf32>
  %wb = linalg.generic {indexing_maps = [#bcast, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wt : tensor<16x32xf32>) outs(%be : tensor<1x16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x16x32xf32>
  %me = tensor.empty() : tensor<1x5x32xf32>
  %mi = linalg.fill ins(%zero : f32) outs(%me : tensor<1x5x32xf32>) -> tensor<1x5x32xf32>
  %mm = linalg.batch_matmul ins(%x, %wb : tensor<1x5x16xf32>, tensor<1x16x32xf32>) outs(%mi : tensor<1x5x32xf32>) -> tensor<1x5x32xf32>
  %qkv = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm, %b : tensor<1x5x32xf32>, tensor<32xf32>) outs(%me : tensor<1x5x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<1x5x32xf32>
  %q = tensor.extract_slice %qkv[0, 0, 0] [1, 5, 16] [1, 1, 1] : tensor<1x5x32xf32> to tensor<1x5x16xf32>
  %k = tensor.extract_slice %qkv[0, 0, 16] [1, 5, 8] [1, 1, 1] : tensor<1x5x32xf32> to tensor<1x5x8xf32>
  %v = tensor.extract_slice %qkv[0, 0, 24] [1, 5, 8] [1, 1, 1] : tensor<1x5x32xf32> to tensor<1x5x8xf32>
  return %q, %k, %v : tensor<1x5x16xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>
}

// -----

// The activations collapsed to 2-D, a linalg.matmul, the result expanded
// back (buddy-mlir's form), GPT-BigCode's multi-query c_attn: q and kv
// sliced apart, kv again into k and v. Each section from its rows of the
// weight, the rows of kv's rows merged.

// CHECK-LABEL: func.func @bigcode
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x16xf32>,
// CHECK-SAME:     %[[WQ:.*]]: tensor<16x16xf32> {tp.checkpoint_offset = 0 : i64, tp.checkpoint_shape = array<i64: 24, 16>, tp.name = "arg1"},
// CHECK-SAME:     %[[WK:.*]]: tensor<4x16xf32> {tp.checkpoint_offset = 16 : i64, tp.checkpoint_shape = array<i64: 24, 16>, tp.name = "arg1"},
// CHECK-SAME:     %[[WV:.*]]: tensor<4x16xf32> {tp.checkpoint_offset = 20 : i64, tp.checkpoint_shape = array<i64: 24, 16>, tp.name = "arg1"})
// CHECK-NOT:     tensor.extract_slice
// CHECK:         linalg.transpose ins(%[[WQ]]
// CHECK:         linalg.matmul
// CHECK:         tensor.expand_shape {{.*}} : tensor<6x16xf32> into tensor<2x3x16xf32>
// CHECK:         linalg.transpose ins(%[[WK]]
// CHECK:         linalg.matmul
// CHECK:         tensor.expand_shape {{.*}} : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK:         linalg.transpose ins(%[[WV]]
// CHECK:         linalg.matmul
// CHECK:         tensor.expand_shape {{.*}} : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK-NOT:     linalg.matmul
// expected-remark @below {{computed 2 sliced projections as 4 sections, each from its rows of the weight: 3 weights, each its own argument}}
func.func @bigcode(%x: tensor<2x3x16xf32>, %w: tensor<24x16xf32>)
    -> (tensor<2x3x16xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x16xf32> into tensor<6x16xf32>
  %te = tensor.empty() : tensor<16x24xf32>
  %wt = linalg.transpose ins(%w : tensor<24x16xf32>) outs(%te : tensor<16x24xf32>) permutation = [1, 0]
  %me = tensor.empty() : tensor<6x24xf32>
  %mi = linalg.fill ins(%zero : f32) outs(%me : tensor<6x24xf32>) -> tensor<6x24xf32>
  %mm = linalg.matmul ins(%x2, %wt : tensor<6x16xf32>, tensor<16x24xf32>) outs(%mi : tensor<6x24xf32>) -> tensor<6x24xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 3, 24] : tensor<6x24xf32> into tensor<2x3x24xf32>
  %q = tensor.extract_slice %y[0, 0, 0] [2, 3, 16] [1, 1, 1] : tensor<2x3x24xf32> to tensor<2x3x16xf32>
  %kv = tensor.extract_slice %y[0, 0, 16] [2, 3, 8] [1, 1, 1] : tensor<2x3x24xf32> to tensor<2x3x8xf32>
  %k = tensor.extract_slice %kv[0, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x3x4xf32>
  %v = tensor.extract_slice %kv[0, 0, 4] [2, 3, 4] [1, 1, 1] : tensor<2x3x8xf32> to tensor<2x3x4xf32>
  return %q, %k, %v : tensor<2x3x16xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// What the TOSA conversion gives for torch-mlir's TOSA Linear with a bias:
// the bias reshaped to [1, 1, 32] (its one wide dimension the section's)
// and added by a broadcast; each part of the bias takes the shape its one
// read reshapes it to. An argument already rows of a packed tensor
// (tp-unpack-weights' part of a flat one: 8 elements a row) gives rows of
// that tensor.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#unit = affine_map<(d0, d1, d2) -> (0, 0, d2)>
// CHECK-LABEL: func.func @tosa_bias
// CHECK-SAME:    tensor<24x8xf32> {tp.checkpoint_offset = 100 : i64, tp.checkpoint_shape = array<i64: 1000>, tp.name = "params"},
// CHECK-SAME:    tensor<8x8xf32> {tp.checkpoint_offset = 292 : i64, tp.checkpoint_shape = array<i64: 1000>, tp.name = "params"},
// CHECK-SAME:    tensor<1x1x24xf32> {tp.checkpoint_offset = 0 : i64, tp.checkpoint_shape = array<i64: 32>, tp.name = "b"},
// CHECK-SAME:    tensor<1x1x8xf32> {tp.checkpoint_offset = 24 : i64, tp.checkpoint_shape = array<i64: 32>, tp.name = "b"})
// CHECK-NOT:     tensor.extract_slice
// expected-remark @below {{computed 1 sliced projection as 2 sections, each from its rows of the weight: 4 weights, each its own argument}}
func.func @tosa_bias(%x: tensor<1x4x8xf32>,
                     %w: tensor<32x8xf32> {tp.checkpoint_offset = 100 : i64, tp.checkpoint_shape = array<i64: 1000>, tp.name = "params"},
                     %b: tensor<32xf32> {tp.name = "b"}) -> (tensor<1x4x24xf32>, tensor<1x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<8x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x8xf32>) outs(%te : tensor<8x32xf32>) permutation = [1, 0]
  %w3 = tensor.expand_shape %wt [[0, 1], [2]] output_shape [1, 8, 32] : tensor<8x32xf32> into tensor<1x8x32xf32>
  %me = tensor.empty() : tensor<1x4x32xf32>
  %mi = linalg.fill ins(%zero : f32) outs(%me : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %mm = linalg.batch_matmul ins(%x, %w3 : tensor<1x4x8xf32>, tensor<1x8x32xf32>) outs(%mi : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %b3 = tensor.expand_shape %b [[0, 1, 2]] output_shape [1, 1, 32] : tensor<32xf32> into tensor<1x1x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #unit, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm, %b3 : tensor<1x4x32xf32>, tensor<1x1x32xf32>) outs(%me : tensor<1x4x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<1x4x32xf32>
  %p = tensor.extract_slice %y[0, 0, 0] [1, 4, 24] [1, 1, 1] : tensor<1x4x32xf32> to tensor<1x4x24xf32>
  %q = tensor.extract_slice %y[0, 0, 24] [1, 4, 8] [1, 1, 1] : tensor<1x4x32xf32> to tensor<1x4x8xf32>
  return %p, %q : tensor<1x4x24xf32>, tensor<1x4x8xf32>
}

// -----

// In a function something calls, the sections are split but the weight
// keeps its place in the signature: its rows are read as slices.

// CHECK-LABEL: func.func private @callee
// CHECK-SAME:    (%{{.*}}: tensor<4x8xf32>, %[[W:.*]]: tensor<12x8xf32>)
// CHECK:         tensor.extract_slice %[[W]][0, 0] [4, 8] [1, 1]
// CHECK:         tensor.extract_slice %[[W]][4, 0] [8, 8] [1, 1]
// expected-remark @below {{computed 1 sliced projection as 2 sections, each from its rows of the weight}}
func.func private @callee(%x: tensor<4x8xf32>, %w: tensor<12x8xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
  %te = tensor.empty() : tensor<8x12xf32>
  %wt = linalg.transpose ins(%w : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %y = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %a = tensor.extract_slice %y[0, 0] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
  %b = tensor.extract_slice %y[0, 4] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x8xf32>
}

func.func @caller(%x: tensor<4x8xf32>, %w: tensor<12x8xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %r:2 = call @callee(%x, %w) : (tensor<4x8xf32>, tensor<12x8xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>)
  return %r#0, %r#1 : tensor<4x4xf32>, tensor<4x8xf32>
}

// -----

// Left whole: a Conv1D weight stored [in, out] (its sections are columns,
// GPT-2's c_attn), sections of the data's rows, a weight something else
// reads too, overlapping slices, a slice that is not whole in its other
// dimensions, a weight that says how it is cut, a table stored with fewer
// rows than it has (a padded vocabulary), and a result written through a
// map that is not a projection (no tile of the loops computes a section of
// it).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     tp.checkpoint_offset
// CHECK-COUNT-8: linalg.matmul {{.*}} -> tensor<4x12xf32>
// CHECK-NOT:     linalg.matmul
func.func @kept(%x: tensor<4x8xf32>, %conv: tensor<8x12xf32>, %w1: tensor<12x8xf32>, %shared: tensor<12x8xf32>,
                %w2: tensor<12x8xf32>, %w3: tensor<12x8xf32>, %cut: tensor<12x8xf32> {tp.shard = #tp.shard<dim = 0>},
                %padded: tensor<12x8xf32> {tp.checkpoint_shape = array<i64: 10, 8>}, %w4: tensor<12x8xf32>)
    -> (tensor<4x4xf32>, tensor<4x8xf32>, tensor<2x12xf32>, tensor<2x12xf32>, tensor<4x4xf32>, tensor<4x8xf32>,
        tensor<12x8xf32>, tensor<4x8xf32>, tensor<4x6xf32>, tensor<2x4xf32>, tensor<4x8xf32>,
        tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x4x1xf32>, tensor<4x8x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
  %te = tensor.empty() : tensor<8x12xf32>
  %a = linalg.matmul ins(%x, %conv : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %a0 = tensor.extract_slice %a[0, 0] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
  %a1 = tensor.extract_slice %a[0, 4] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %b = linalg.matmul ins(%x, %w1t : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %b0 = tensor.extract_slice %b[0, 0] [2, 12] [1, 1] : tensor<4x12xf32> to tensor<2x12xf32>
  %b1 = tensor.extract_slice %b[2, 0] [2, 12] [1, 1] : tensor<4x12xf32> to tensor<2x12xf32>
  %st = linalg.transpose ins(%shared : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %c = linalg.matmul ins(%x, %st : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %c0 = tensor.extract_slice %c[0, 0] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
  %c1 = tensor.extract_slice %c[0, 4] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %d = linalg.matmul ins(%x, %w2t : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %d0 = tensor.extract_slice %d[0, 0] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %d1 = tensor.extract_slice %d[0, 6] [4, 6] [1, 1] : tensor<4x12xf32> to tensor<4x6xf32>
  %w3t = linalg.transpose ins(%w3 : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %f = linalg.matmul ins(%x, %w3t : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %f0 = tensor.extract_slice %f[0, 0] [2, 4] [1, 1] : tensor<4x12xf32> to tensor<2x4xf32>
  %f1 = tensor.extract_slice %f[0, 4] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %ct = linalg.transpose ins(%cut : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %g = linalg.matmul ins(%x, %ct : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %g0 = tensor.extract_slice %g[0, 0] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
  %g1 = tensor.extract_slice %g[0, 4] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %pt = linalg.transpose ins(%padded : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %h = linalg.matmul ins(%x, %pt : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %h0 = tensor.extract_slice %h[0, 0] [4, 4] [1, 1] : tensor<4x12xf32> to tensor<4x4xf32>
  %h1 = tensor.extract_slice %h[0, 4] [4, 8] [1, 1] : tensor<4x12xf32> to tensor<4x8xf32>
  %w4t = linalg.transpose ins(%w4 : tensor<12x8xf32>) outs(%te : tensor<8x12xf32>) permutation = [1, 0]
  %k = linalg.matmul ins(%x, %w4t : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %ke = tensor.empty() : tensor<4x12x1xf32>
  %k3 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<4x12xf32>) outs(%ke : tensor<4x12x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4x12x1xf32>
  %k0 = tensor.extract_slice %k3[0, 0, 0] [4, 4, 1] [1, 1, 1] : tensor<4x12x1xf32> to tensor<4x4x1xf32>
  %k1 = tensor.extract_slice %k3[0, 4, 0] [4, 8, 1] [1, 1, 1] : tensor<4x12x1xf32> to tensor<4x8x1xf32>
  return %a0, %a1, %b0, %b1, %c0, %c1, %shared, %d0, %d1, %f0, %f1, %g0, %g1, %h0, %h1, %k0, %k1
      : tensor<4x4xf32>, tensor<4x8xf32>, tensor<2x12xf32>, tensor<2x12xf32>, tensor<4x4xf32>, tensor<4x8xf32>,
        tensor<12x8xf32>, tensor<4x8xf32>, tensor<4x6xf32>, tensor<2x4xf32>, tensor<4x8xf32>,
        tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x8xf32>, tensor<4x4x1xf32>, tensor<4x8x1xf32>
}

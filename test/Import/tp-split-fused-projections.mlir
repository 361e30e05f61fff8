// RUN: tp-opt %s --pass-pipeline='builtin.module(func.func(tp-split-fused-projections))' --split-input-file --verify-diagnostics | FileCheck %s

// Phi-3-medium's qkv_proj in small, as torch-mlir's FX importer writes a
// Linear (the [out, in] weight transposed and broadcast, a batch_matmul,
// the bias added) and `split` (slices of the last dimension): 4 heads of q
// and 2 of k and of v, sections of 16, 8 and 8. Each section is computed
// from its rows of the weight and of the bias; the init is a fill of each
// section's shape.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @fx_gqa
// CHECK-SAME:    (%[[X:.*]]: tensor<1x5x16xf32>, %[[W:.*]]: tensor<32x16xf32> {tp.name = "qkv_proj.weight"}, %[[B:.*]]: tensor<32xf32> {tp.name = "qkv_proj.bias"})
// CHECK:         %[[WQ:.*]] = tensor.extract_slice %[[W]][0, 0] [16, 16] [1, 1]
// CHECK:         linalg.transpose ins(%[[WQ]] : tensor<16x16xf32>)
// CHECK:         %[[FQ:.*]] = linalg.fill {{.*}} -> tensor<1x5x16xf32>
// CHECK:         %[[MQ:.*]] = linalg.batch_matmul ins(%[[X]], %{{.*}} : tensor<1x5x16xf32>, tensor<1x16x16xf32>) outs(%[[FQ]] : tensor<1x5x16xf32>)
// CHECK:         %[[BQ:.*]] = tensor.extract_slice %[[B]][0] [16] [1]
// CHECK:         %[[Q:.*]] = linalg.generic {{.*}} ins(%[[MQ]], %[[BQ]] : tensor<1x5x16xf32>, tensor<16xf32>)
// CHECK:         %[[WK:.*]] = tensor.extract_slice %[[W]][16, 0] [8, 16] [1, 1]
// CHECK:         linalg.transpose ins(%[[WK]] : tensor<8x16xf32>)
// CHECK:         %[[MK:.*]] = linalg.batch_matmul ins(%[[X]], %{{.*}} : tensor<1x5x16xf32>, tensor<1x16x8xf32>)
// CHECK:         %[[BK:.*]] = tensor.extract_slice %[[B]][16] [8] [1]
// CHECK:         %[[K:.*]] = linalg.generic {{.*}} ins(%[[MK]], %[[BK]] : tensor<1x5x8xf32>, tensor<8xf32>)
// CHECK:         %[[WV:.*]] = tensor.extract_slice %[[W]][24, 0] [8, 16] [1, 1]
// CHECK:         linalg.transpose ins(%[[WV]] : tensor<8x16xf32>)
// CHECK:         %[[MV:.*]] = linalg.batch_matmul ins(%[[X]], %{{.*}} : tensor<1x5x16xf32>, tensor<1x16x8xf32>)
// CHECK:         %[[BV:.*]] = tensor.extract_slice %[[B]][24] [8] [1]
// CHECK:         %[[V:.*]] = linalg.generic {{.*}} ins(%[[MV]], %[[BV]] : tensor<1x5x8xf32>, tensor<8xf32>)
// CHECK-NOT:     tensor<1x5x32xf32>
// CHECK:         return %[[Q]], %[[K]], %[[V]]
// expected-remark @below {{computed 1 sliced projection as 3 sections, each from its rows of the weight}}
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

// buddy-mlir's form (the activations collapsed to 2-D, a linalg.matmul,
// the result expanded back), GPT-BigCode's multi-query c_attn: q and kv
// sliced apart, kv again into k and v. Every section from its rows of the
// weight, the slice of a slice merged.

// CHECK-LABEL: func.func @bigcode
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x16xf32>, %[[W:.*]]: tensor<24x16xf32>)
// CHECK:         tensor.extract_slice %[[W]][0, 0] [16, 16] [1, 1]
// CHECK:         linalg.matmul
// CHECK:         tensor.expand_shape {{.*}} : tensor<6x16xf32> into tensor<2x3x16xf32>
// CHECK:         tensor.extract_slice %[[W]][16, 0] [4, 16] [1, 1]
// CHECK:         linalg.matmul
// CHECK:         tensor.expand_shape {{.*}} : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK:         tensor.extract_slice %[[W]][20, 0] [4, 16] [1, 1]
// CHECK:         linalg.matmul
// CHECK:         tensor.expand_shape {{.*}} : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     tensor.extract_slice
// expected-remark @below {{computed 2 sliced projections as 4 sections, each from its rows of the weight}}
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

// Left whole: a Conv1D weight stored [in, out] (its sections are columns,
// GPT-2's c_attn), sections of the data's rows, a weight something else
// reads too, overlapping slices, and a slice that is not whole in its other
// dimensions.

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: linalg.matmul {{.*}} -> tensor<4x12xf32>
// CHECK-NOT:     linalg.matmul
func.func @kept(%x: tensor<4x8xf32>, %conv: tensor<8x12xf32>, %w1: tensor<12x8xf32>, %shared: tensor<12x8xf32>,
                %w2: tensor<12x8xf32>, %w3: tensor<12x8xf32>)
    -> (tensor<4x4xf32>, tensor<4x8xf32>, tensor<2x12xf32>, tensor<2x12xf32>, tensor<4x4xf32>, tensor<4x8xf32>,
        tensor<12x8xf32>, tensor<4x8xf32>, tensor<4x6xf32>, tensor<2x4xf32>, tensor<4x8xf32>) {
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
  return %a0, %a1, %b0, %b1, %c0, %c1, %shared, %d0, %d1, %f0, %f1
      : tensor<4x4xf32>, tensor<4x8xf32>, tensor<2x12xf32>, tensor<2x12xf32>, tensor<4x4xf32>, tensor<4x8xf32>,
        tensor<12x8xf32>, tensor<4x8xf32>, tensor<4x6xf32>, tensor<2x4xf32>, tensor<4x8xf32>
}

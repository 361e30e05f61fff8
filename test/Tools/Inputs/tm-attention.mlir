// Two self-attention layers (4 heads of 4, 8 tokens) as torch-mlir writes
// scaled_dot_product_attention: one tm_tensor.attention each, which
// tp-compile's tp-import rewrites into linalg. The first takes a causal
// float mask (0 or -inf, what torch-mlir builds for is_causal) with token 3
// masked from every key, as a padded token can be: its row of the
// attention is 0, and a NaN there would reach every token through the
// second layer. Heads collapsed to [4, 8, 4]. The second takes an i1 mask
// (true: (i + j) % 3 != 0), a scale of 0.3, and operands of rank 4.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @forward(%x: tensor<8x16xf32>,
                   %wq1: tensor<16x16xf32> {tp.name = "wq1"}, %wk1: tensor<16x16xf32> {tp.name = "wk1"},
                   %wv1: tensor<16x16xf32> {tp.name = "wv1"}, %wo1: tensor<16x16xf32> {tp.name = "wo1"},
                   %wq2: tensor<16x16xf32> {tp.name = "wq2"}, %wk2: tensor<16x16xf32> {tp.name = "wk2"},
                   %wv2: tensor<16x16xf32> {tp.name = "wv2"}, %wo2: tensor<16x16xf32> {tp.name = "wo2"}) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty() : tensor<8x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %eh = tensor.empty() : tensor<4x8x4xf32>

  // Layer 1.
  %q1 = linalg.matmul ins(%x, %wq1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %k1 = linalg.matmul ins(%x, %wk1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %v1 = linalg.matmul ins(%x, %wv1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %q1e = tensor.expand_shape %q1 [[0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xf32> into tensor<8x4x4xf32>
  %k1e = tensor.expand_shape %k1 [[0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xf32> into tensor<8x4x4xf32>
  %v1e = tensor.expand_shape %v1 [[0], [1, 2]] output_shape [8, 4, 4] : tensor<8x16xf32> into tensor<8x4x4xf32>
  %q1h = linalg.transpose ins(%q1e : tensor<8x4x4xf32>) outs(%eh : tensor<4x8x4xf32>) permutation = [1, 0, 2]
  %k1h = linalg.transpose ins(%k1e : tensor<8x4x4xf32>) outs(%eh : tensor<4x8x4xf32>) permutation = [1, 0, 2]
  %v1h = linalg.transpose ins(%v1e : tensor<8x4x4xf32>) outs(%eh : tensor<4x8x4xf32>) permutation = [1, 0, 2]
  %em = tensor.empty() : tensor<4x8x8xf32>
  %causal = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%em : tensor<4x8x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %past = arith.cmpi sge, %i, %j : index
    %c3 = arith.constant 3 : index
    %seen = arith.cmpi ne, %i, %c3 : index
    %keep = arith.andi %past, %seen : i1
    %m = arith.select %keep, %zero, %ninf : f32
    linalg.yield %m : f32
  } -> tensor<4x8x8xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  %a1 = tm_tensor.attention ins(%q1h, %k1h, %v1h, %causal : tensor<4x8x4xf32>, tensor<4x8x4xf32>, tensor<4x8x4xf32>, tensor<4x8x8xf32>) outs(%zh : tensor<4x8x4xf32>) -> tensor<4x8x4xf32>
  %et = tensor.empty() : tensor<8x4x4xf32>
  %a1t = linalg.transpose ins(%a1 : tensor<4x8x4xf32>) outs(%et : tensor<8x4x4xf32>) permutation = [1, 0, 2]
  %a1c = tensor.collapse_shape %a1t [[0], [1, 2]] : tensor<8x4x4xf32> into tensor<8x16xf32>
  %h1 = linalg.matmul ins(%a1c, %wo1 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>

  // Layer 2: rank 4, [1, heads, tokens, 4].
  %q2 = linalg.matmul ins(%h1, %wq2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %k2 = linalg.matmul ins(%h1, %wk2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %v2 = linalg.matmul ins(%h1, %wv2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %q2e = tensor.expand_shape %q2 [[0, 1], [2, 3]] output_shape [1, 8, 4, 4] : tensor<8x16xf32> into tensor<1x8x4x4xf32>
  %k2e = tensor.expand_shape %k2 [[0, 1], [2, 3]] output_shape [1, 8, 4, 4] : tensor<8x16xf32> into tensor<1x8x4x4xf32>
  %v2e = tensor.expand_shape %v2 [[0, 1], [2, 3]] output_shape [1, 8, 4, 4] : tensor<8x16xf32> into tensor<1x8x4x4xf32>
  %eh4 = tensor.empty() : tensor<1x4x8x4xf32>
  %q2h = linalg.transpose ins(%q2e : tensor<1x8x4x4xf32>) outs(%eh4 : tensor<1x4x8x4xf32>) permutation = [0, 2, 1, 3]
  %k2h = linalg.transpose ins(%k2e : tensor<1x8x4x4xf32>) outs(%eh4 : tensor<1x4x8x4xf32>) permutation = [0, 2, 1, 3]
  %v2h = linalg.transpose ins(%v2e : tensor<1x8x4x4xf32>) outs(%eh4 : tensor<1x4x8x4xf32>) permutation = [0, 2, 1, 3]
  %eb = tensor.empty() : tensor<1x4x8x8xi1>
  %band = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%eb : tensor<1x4x8x8xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %s = arith.addi %i, %j : index
    %r = arith.remui %s, %c3 : index
    %keep = arith.cmpi ne, %r, %c0 : index
    linalg.yield %keep : i1
  } -> tensor<1x4x8x8xi1>
  %zh4 = linalg.fill ins(%zero : f32) outs(%eh4 : tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  %a2 = tm_tensor.attention {scale = 3.000000e-01 : f64} ins(%q2h, %k2h, %v2h, %band : tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x8xi1>) outs(%zh4 : tensor<1x4x8x4xf32>) -> tensor<1x4x8x4xf32>
  %et4 = tensor.empty() : tensor<1x8x4x4xf32>
  %a2t = linalg.transpose ins(%a2 : tensor<1x4x8x4xf32>) outs(%et4 : tensor<1x8x4x4xf32>) permutation = [0, 2, 1, 3]
  %a2c = tensor.collapse_shape %a2t [[0, 1], [2, 3]] : tensor<1x8x4x4xf32> into tensor<8x16xf32>
  %y = linalg.matmul ins(%a2c, %wo2 : tensor<8x16xf32>, tensor<16x16xf32>) outs(%z2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

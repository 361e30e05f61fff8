// Two transformer layers (attention, then an MLP) whose attention blocks add
// the same per-head mask to their scores, as torch-mlir's BERT does with its
// one extended attention mask: the mask is cut by heads with the first
// block, which puts both attention blocks in one cut region.
#qk_q = affine_map<(h, i, j, d) -> (i, h, d)>
#qk_k = affine_map<(h, i, j, d) -> (j, h, d)>
#qk_s = affine_map<(h, i, j, d) -> (h, i, j)>
#pv_p = affine_map<(i, h, d, j) -> (h, i, j)>
#pv_v = affine_map<(i, h, d, j) -> (j, h, d)>
#pv_o = affine_map<(i, h, d, j) -> (i, h, d)>
#id3 = affine_map<(h, i, j) -> (h, i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @forward(%x: tensor<4x16xf32>, %mask: tensor<2x4x4xf32> {tp.name = "mask"},
                   %wq1: tensor<16x16xf32>, %wk1: tensor<16x16xf32>, %wv1: tensor<16x16xf32>, %wo1: tensor<16x16xf32>,
                   %up1: tensor<16x32xf32>, %down1: tensor<32x16xf32>,
                   %wq2: tensor<16x16xf32>, %wk2: tensor<16x16xf32>, %wv2: tensor<16x16xf32>, %wo2: tensor<16x16xf32>,
                   %up2: tensor<16x32xf32>, %down2: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  // Layer 1: attention.
  %e1 = tensor.empty() : tensor<4x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q1 = linalg.matmul ins(%x, %wq1 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %k1 = linalg.matmul ins(%x, %wk1 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %v1 = linalg.matmul ins(%x, %wv1 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %qh1 = tensor.expand_shape %q1 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %kh1 = tensor.expand_shape %k1 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %vh1 = tensor.expand_shape %v1 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %es1 = tensor.empty() : tensor<2x4x4xf32>
  %fs1 = linalg.fill ins(%zero : f32) outs(%es1 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s1 = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%qh1, %kh1 : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%fs1 : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %sm1 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s1, %mask : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%es1 : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %pr1 = linalg.softmax dimension(2) ins(%sm1 : tensor<2x4x4xf32>) outs(%es1 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %ec1 = tensor.empty() : tensor<4x2x8xf32>
  %fc1 = linalg.fill ins(%zero : f32) outs(%ec1 : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  %c1 = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%pr1, %vh1 : tensor<2x4x4xf32>, tensor<4x2x8xf32>) outs(%fc1 : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x2x8xf32>
  %cc1 = tensor.collapse_shape %c1 [[0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
  %o1 = linalg.matmul ins(%cc1, %wo1 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  // Layer 1: MLP.
  %eh1 = tensor.empty() : tensor<4x32xf32>
  %fh1 = linalg.fill ins(%zero : f32) outs(%eh1 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h1 = linalg.matmul ins(%o1, %up1 : tensor<4x16xf32>, tensor<16x32xf32>) outs(%fh1 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %g1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<4x32xf32>) outs(%eh1 : tensor<4x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  %y1 = linalg.matmul ins(%g1, %down1 : tensor<4x32xf32>, tensor<32x16xf32>) outs(%f1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  // Layer 2: attention.
  %e2 = tensor.empty() : tensor<4x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q2 = linalg.matmul ins(%y1, %wq2 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %k2 = linalg.matmul ins(%y1, %wk2 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %v2 = linalg.matmul ins(%y1, %wv2 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %qh2 = tensor.expand_shape %q2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %kh2 = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %vh2 = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %es2 = tensor.empty() : tensor<2x4x4xf32>
  %fs2 = linalg.fill ins(%zero : f32) outs(%es2 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s2 = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%qh2, %kh2 : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%fs2 : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %sm2 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s2, %mask : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%es2 : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %r = arith.addf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %pr2 = linalg.softmax dimension(2) ins(%sm2 : tensor<2x4x4xf32>) outs(%es2 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %ec2 = tensor.empty() : tensor<4x2x8xf32>
  %fc2 = linalg.fill ins(%zero : f32) outs(%ec2 : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  %c2 = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%pr2, %vh2 : tensor<2x4x4xf32>, tensor<4x2x8xf32>) outs(%fc2 : tensor<4x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x2x8xf32>
  %cc2 = tensor.collapse_shape %c2 [[0], [1, 2]] : tensor<4x2x8xf32> into tensor<4x16xf32>
  %o2 = linalg.matmul ins(%cc2, %wo2 : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  // Layer 2: MLP.
  %eh2 = tensor.empty() : tensor<4x32xf32>
  %fh2 = linalg.fill ins(%zero : f32) outs(%eh2 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h2 = linalg.matmul ins(%o2, %up2 : tensor<4x16xf32>, tensor<16x32xf32>) outs(%fh2 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %g2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : tensor<4x32xf32>) outs(%eh2 : tensor<4x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  %y2 = linalg.matmul ins(%g2, %down2 : tensor<4x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y2 : tensor<4x16xf32>
}

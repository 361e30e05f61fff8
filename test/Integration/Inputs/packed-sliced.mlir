// buddy-mlir's packed layout with a fused projection sliced in the graph:
// up [32, 8] ([out, in], flat at element 0), then down_a [8, 24] and
// down_b [8, 8] after it, all in one flat argument. tp-unpack-weights gives
// up its argument (elements from 0); tp-split-fused-projections computes
// its sections of 24 and 8 from their rows, at elements 0 and 192 of the
// packed tensor.
func.func @forward(%params: tensor<512xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %su = tensor.extract_slice %params[0] [256] [1] : tensor<512xf32> to tensor<256xf32>
  %w = tensor.expand_shape %su [[0, 1]] output_shape [32, 8] : tensor<256xf32> into tensor<32x8xf32>
  %sa = tensor.extract_slice %params[256] [192] [1] : tensor<512xf32> to tensor<192xf32>
  %wa = tensor.expand_shape %sa [[0, 1]] output_shape [8, 24] : tensor<192xf32> into tensor<8x24xf32>
  %sb = tensor.extract_slice %params[448] [64] [1] : tensor<512xf32> to tensor<64xf32>
  %wb = tensor.expand_shape %sb [[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
  %te = tensor.empty() : tensor<8x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x8xf32>) outs(%te : tensor<8x32xf32>) permutation = [1, 0]
  %he = tensor.empty() : tensor<4x32xf32>
  %hi = linalg.fill ins(%zero : f32) outs(%he : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x32xf32>) outs(%hi : tensor<4x32xf32>) -> tensor<4x32xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x32xf32>) outs(%he : tensor<4x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  } -> tensor<4x32xf32>
  %ha = tensor.extract_slice %t[0, 0] [4, 24] [1, 1] : tensor<4x32xf32> to tensor<4x24xf32>
  %hb = tensor.extract_slice %t[0, 24] [4, 8] [1, 1] : tensor<4x32xf32> to tensor<4x8xf32>
  %ye = tensor.empty() : tensor<4x8xf32>
  %yi = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x8xf32>) -> tensor<4x8xf32>
  %tae = tensor.empty() : tensor<24x8xf32>
  %wat = linalg.transpose ins(%wa : tensor<8x24xf32>) outs(%tae : tensor<24x8xf32>) permutation = [1, 0]
  %ya = linalg.matmul ins(%ha, %wat : tensor<4x24xf32>, tensor<24x8xf32>) outs(%yi : tensor<4x8xf32>) -> tensor<4x8xf32>
  %tbe = tensor.empty() : tensor<8x8xf32>
  %wbt = linalg.transpose ins(%wb : tensor<8x8xf32>) outs(%tbe : tensor<8x8xf32>) permutation = [1, 0]
  %y = linalg.matmul ins(%hb, %wbt : tensor<4x8xf32>, tensor<8x8xf32>) outs(%ya : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

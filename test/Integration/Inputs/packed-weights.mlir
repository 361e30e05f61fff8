// buddy-mlir's layout in small: every weight a static slice of one flat
// parameter argument, most reshaped; the token ids come after it. An
// embedding lookup, an MLP pair with biases; b2 is read twice (its two
// slices share one argument).
#ids = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @forward(%params: tensor<360xf32> {bufferization.writable = false}, %ids: tensor<4xi64>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %st = tensor.extract_slice %params[0] [80] [1] : tensor<360xf32> to tensor<80xf32>
  %table = tensor.expand_shape %st [[0, 1]] output_shape [10, 8] : tensor<80xf32> into tensor<10x8xf32>
  %s1 = tensor.extract_slice %params[80] [128] [1] : tensor<360xf32> to tensor<128xf32>
  %w1 = tensor.expand_shape %s1 [[0, 1]] output_shape [8, 16] : tensor<128xf32> into tensor<8x16xf32>
  %b1 = tensor.extract_slice %params[208] [16] [1] : tensor<360xf32> to tensor<16xf32>
  %s2 = tensor.extract_slice %params[224] [128] [1] : tensor<360xf32> to tensor<128xf32>
  %w2 = tensor.expand_shape %s2 [[0, 1]] output_shape [16, 8] : tensor<128xf32> into tensor<16x8xf32>
  %b2 = tensor.extract_slice %params[352] [8] [1] : tensor<360xf32> to tensor<8xf32>
  %b2again = tensor.extract_slice %params[352] [8] [1] : tensor<360xf32> to tensor<8xf32>
  %xe = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#ids, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%xe : tensor<4x8xf32>) {
  ^bb0(%t: i64, %o: f32):
    %r = arith.index_cast %t : i64 to index
    %c = linalg.index 1 : index
    %e = tensor.extract %table[%r, %c] : tensor<10x8xf32>
    linalg.yield %e : f32
  } -> tensor<4x8xf32>
  %he = tensor.empty() : tensor<4x16xf32>
  %hi = linalg.fill ins(%zero : f32) outs(%he : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%hi : tensor<4x16xf32>) -> tensor<4x16xf32>
  %hb = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<4x16xf32>, tensor<16xf32>) outs(%he : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %yi = linalg.fill ins(%zero : f32) outs(%xe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%hb, %w2 : tensor<4x16xf32>, tensor<16x8xf32>) outs(%yi : tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %b2, %b2again : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%xe : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %yb : tensor<4x8xf32>
}

// A column -> row pair whose hidden values also feed a row max over the cut
// dimension: with allow-fallback each rank takes the max of its part and an
// all-reduce combines them. Used by fallback.test.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: tensor<4x8xf32>, %up: tensor<8x16xf32>, %down: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %me = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%me : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x16xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %ye = tensor.empty() : tensor<4x8xf32>
  %yinit = linalg.fill ins(%zero : f32) outs(%ye : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%h, %down : tensor<4x16xf32>, tensor<16x8xf32>) outs(%yinit : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %m : tensor<4x8xf32>, tensor<4xf32>
}

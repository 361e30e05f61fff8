// Scatters as torch-mlir writes them (TorchToTMTensor): index_put with
// accumulate, one scalar update per index tuple (a repeated tuple adds
// twice), and index_copy of rows into a cache whose rows then feed an MLP
// (a Megatron pair, cut at tp 2 after the scatter, which stays whole).
func.func @forward(%idx: tensor<4x3xi64>, %orig: tensor<10x8x6xf32>,
                   %upd: tensor<4xf32>, %cache: tensor<8x4xf32>,
                   %pos: tensor<2x1xi32>, %rows: tensor<2x4xf32>,
                   %w1: tensor<4x16xf32>, %w2: tensor<16x4xf32>)
    -> (tensor<10x8x6xf32>, tensor<8x4xf32>) {
  %sum = tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2>} unique_indices(false)
      ins(%upd, %idx : tensor<4xf32>, tensor<4x3xi64>)
      outs(%orig : tensor<10x8x6xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.addf %o, %u : f32
    tm_tensor.yield %s : f32
  } -> tensor<10x8x6xf32>
  %updated = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true)
      ins(%rows, %pos : tensor<2x4xf32>, tensor<2x1xi32>)
      outs(%cache : tensor<8x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    tm_tensor.yield %u : f32
  } -> tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = linalg.matmul ins(%updated, %w1 : tensor<8x4xf32>, tensor<4x16xf32>)
                     outs(%f1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                           affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x16xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%relu, %w2 : tensor<8x16xf32>, tensor<16x4xf32>)
                     outs(%f2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %sum, %y : tensor<10x8x6xf32>, tensor<8x4xf32>
}

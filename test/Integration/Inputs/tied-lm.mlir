// A toy language model whose LM head is its embedding table transposed
// (GPT-2's tied weights): one table argument, cut once by vocabulary rows,
// read by the lookup and, transposed, by the LM head. Used by
// equivalence.test.
#id = affine_map<(d0, d1) -> (d0, d1)>
#ids = affine_map<(d0, d1) -> (d0)>
func.func @tied(%x: tensor<4xf32>, %table: tensor<1024x16xf32>) -> tensor<4x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %ie = tensor.empty() : tensor<4xi64>
  %ids = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%ie : tensor<4xi64>) {
  ^bb0(%v: f32, %o: i64):
    %a = math.absf %v : f32
    %s = arith.constant 997.0 : f32
    %m = arith.mulf %a, %s : f32
    %i = arith.fptosi %m : f32 to i64
    %n = arith.constant 1024 : i64
    %r = arith.remui %i, %n : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  %he = tensor.empty() : tensor<4x16xf32>
  %h = linalg.generic {indexing_maps = [#ids, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%he : tensor<4x16xf32>) {
  ^bb0(%t: i64, %o: f32):
    %row = arith.index_cast %t : i64 to index
    %col = linalg.index 1 : index
    %e = tensor.extract %table[%row, %col] : tensor<1024x16xf32>
    linalg.yield %e : f32
  } -> tensor<4x16xf32>
  %te = tensor.empty() : tensor<16x1024xf32>
  %head = linalg.transpose ins(%table : tensor<1024x16xf32>) outs(%te : tensor<16x1024xf32>) permutation = [1, 0]
  %le = tensor.empty() : tensor<4x1024xf32>
  %linit = linalg.fill ins(%zero : f32) outs(%le : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %logits = linalg.matmul ins(%h, %head : tensor<4x16xf32>, tensor<16x1024xf32>) outs(%linit : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  return %logits : tensor<4x1024xf32>
}

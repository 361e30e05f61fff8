// An LM head followed by a softmax over the vocabulary, written as generics
// (a max, exponentials of the differences, their sum, a division) as the
// TOSA conversion writes it: cut by vocabulary columns, the max and the sum
// combined from each rank's part by two small all-reduces, the
// probabilities gathered before the return. Used by equivalence.test.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @lm_softmax(%x: tensor<4x16xf32>, %head: tensor<16x1024xf32>) -> tensor<4x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %le = tensor.empty() : tensor<4x1024xf32>
  %linit = linalg.fill ins(%zero : f32) outs(%le : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %logits = linalg.matmul ins(%x, %head : tensor<4x16xf32>, tensor<16x1024xf32>) outs(%linit : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %re = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<4x1024xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%v: f32, %m: f32):
    %r = arith.maximumf %v, %m : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %max : tensor<4x1024xf32>, tensor<4xf32>) outs(%le : tensor<4x1024xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x1024xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4x1024xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%v: f32, %s: f32):
    %r = arith.addf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4x1024xf32>, tensor<4xf32>) outs(%le : tensor<4x1024xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x1024xf32>
  return %p : tensor<4x1024xf32>
}

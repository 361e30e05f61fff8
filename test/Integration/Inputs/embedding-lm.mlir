// A whole toy language model: token ids (made from an f32 input, so that the
// oracle's pseudo-random inputs are valid ids), a vocabulary embedding
// lookup, one MLP pair, and an LM head returning logits. Used by
// equivalence.test; tp-shard.mlir checks its IR.
#id = affine_map<(d0, d1) -> (d0, d1)>
#ids = affine_map<(d0, d1) -> (d0)>
func.func @lm(%x: tensor<4xf32>, %table: tensor<1024x16xf32>, %up: tensor<16x64xf32>,
              %down: tensor<64x16xf32>, %head: tensor<16x1024xf32>) -> tensor<4x1024xf32> {
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
  %ue = tensor.empty() : tensor<4x64xf32>
  %uinit = linalg.fill ins(%zero : f32) outs(%ue : tensor<4x64xf32>) -> tensor<4x64xf32>
  %u = linalg.matmul ins(%h, %up : tensor<4x16xf32>, tensor<16x64xf32>) outs(%uinit : tensor<4x64xf32>) -> tensor<4x64xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u : tensor<4x64xf32>) outs(%ue : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  %dinit = linalg.fill ins(%zero : f32) outs(%he : tensor<4x16xf32>) -> tensor<4x16xf32>
  %d = linalg.matmul ins(%g, %down : tensor<4x64xf32>, tensor<64x16xf32>) outs(%dinit : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.add ins(%h, %d : tensor<4x16xf32>, tensor<4x16xf32>) outs(%he : tensor<4x16xf32>) -> tensor<4x16xf32>
  %le = tensor.empty() : tensor<4x1024xf32>
  %linit = linalg.fill ins(%zero : f32) outs(%le : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  %logits = linalg.matmul ins(%r, %head : tensor<4x16xf32>, tensor<16x1024xf32>) outs(%linit : tensor<4x1024xf32>) -> tensor<4x1024xf32>
  return %logits : tensor<4x1024xf32>
}

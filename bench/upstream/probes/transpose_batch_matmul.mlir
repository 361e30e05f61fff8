// Probe (accepted form): heads moved to the front with linalg.transpose and
// scores computed with linalg.batch_matmul (heads = batch dim), all split on heads.
shard.grid @grid(shape = 2)
func.func @probe(%q: tensor<128x12x64xf32>, %k: tensor<128x12x64xf32>) -> tensor<12x128x128xf32> {
  %cst = arith.constant 0.0 : f32
  %s_h = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %s_h0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %q_s = shard.shard %q to %s_h : tensor<128x12x64xf32>
  %k_s = shard.shard %k to %s_h : tensor<128x12x64xf32>
  %eq = tensor.empty() : tensor<12x128x64xf32>
  %qt = linalg.transpose ins(%q_s : tensor<128x12x64xf32>) outs(%eq : tensor<12x128x64xf32>) permutation = [1, 0, 2]
  %ek = tensor.empty() : tensor<12x64x128xf32>
  %kt = linalg.transpose ins(%k_s : tensor<128x12x64xf32>) outs(%ek : tensor<12x64x128xf32>) permutation = [1, 2, 0]
  %e = tensor.empty() : tensor<12x128x128xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %s = linalg.batch_matmul ins(%qt, %kt : tensor<12x128x64xf32>, tensor<12x64x128xf32>) outs(%z : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %r = shard.shard %s to %s_h0 annotate_for_users : tensor<12x128x128xf32>
  return %r : tensor<12x128x128xf32>
}

// Probe: attention scores [h, s, t] split on heads, normalised with linalg.softmax.
shard.grid @grid(shape = 2)
func.func @probe(%sc: tensor<12x128x128xf32>) -> tensor<12x128x128xf32> {
  %s_h = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sc_s = shard.shard %sc to %s_h : tensor<12x128x128xf32>
  %e = tensor.empty() : tensor<12x128x128xf32>
  %p = linalg.softmax dimension(2) ins(%sc_s : tensor<12x128x128xf32>) outs(%e : tensor<12x128x128xf32>) -> tensor<12x128x128xf32>
  %r = shard.shard %p to %s_h annotate_for_users : tensor<12x128x128xf32>
  return %r : tensor<12x128x128xf32>
}

// Probe: attention context [s, h, dh] split on heads, merged back with
// tensor.collapse_shape -> [s, h*dh] and fed to the row-split out-projection.
shard.grid @grid(shape = 2)
func.func @probe(%ctx: tensor<128x12x64xf32>, %w: tensor<768x768xf32>) -> tensor<128x768xf32> {
  %cst = arith.constant 0.0 : f32
  %s_rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %s_col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %s_row = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %c_s = shard.shard %ctx to %s_col : tensor<128x12x64xf32>
  %w_s = shard.shard %w to %s_row : tensor<768x768xf32>
  %c2 = tensor.collapse_shape %c_s [[0], [1, 2]] : tensor<128x12x64xf32> into tensor<128x768xf32>
  %e = tensor.empty() : tensor<128x768xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %o = linalg.matmul ins(%c2, %w_s : tensor<128x768xf32>, tensor<768x768xf32>) outs(%z : tensor<128x768xf32>) -> tensor<128x768xf32>
  %r = shard.shard %o to %s_rep annotate_for_users : tensor<128x768xf32>
  return %r : tensor<128x768xf32>
}

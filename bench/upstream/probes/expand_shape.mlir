// Probe: column-split Q projection [s, h*dh] followed by the usual head split
// tensor.expand_shape -> [s, h, dh] (what torch-mlir / design.md section 3 emit).
shard.grid @grid(shape = 2)
func.func @probe(%x: tensor<128x768xf32>, %w: tensor<768x768xf32>) -> tensor<128x12x64xf32> {
  %cst = arith.constant 0.0 : f32
  %s_rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %s_col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x_s = shard.shard %x to %s_rep : tensor<128x768xf32>
  %w_s = shard.shard %w to %s_col : tensor<768x768xf32>
  %e = tensor.empty() : tensor<128x768xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %q = linalg.matmul ins(%x_s, %w_s : tensor<128x768xf32>, tensor<768x768xf32>) outs(%z : tensor<128x768xf32>) -> tensor<128x768xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [128, 12, 64] : tensor<128x768xf32> into tensor<128x12x64xf32>
  %r = shard.shard %q3 to %s_col annotate_for_users : tensor<128x12x64xf32>
  return %r : tensor<128x12x64xf32>
}

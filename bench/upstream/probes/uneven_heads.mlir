// Probe: 12 heads on a grid of 8 (heads not divisible by the TP size).
shard.grid @grid(shape = 8)
func.func @probe(%x: tensor<128x768xf32>, %w: tensor<768x12x64xf32>) -> tensor<128x12x64xf32> {
  %cst = arith.constant 0.0 : f32
  %s_rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %s_col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x_s = shard.shard %x to %s_rep : tensor<128x768xf32>
  %w_s = shard.shard %w to %s_col : tensor<768x12x64xf32>
  %e = tensor.empty() : tensor<128x12x64xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<128x12x64xf32>) -> tensor<128x12x64xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(s, h, e, k) -> (s, k)>, affine_map<(s, h, e, k) -> (k, h, e)>, affine_map<(s, h, e, k) -> (s, h, e)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x_s, %w_s : tensor<128x768xf32>, tensor<768x12x64xf32>) outs(%z : tensor<128x12x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  } -> tensor<128x12x64xf32>
  %r = shard.shard %q to %s_col annotate_for_users : tensor<128x12x64xf32>
  return %r : tensor<128x12x64xf32>
}

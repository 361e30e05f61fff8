// Probe: fused QKV kept reshape-free as [s, 3, h, dh]; Q is picked with a
// linalg.generic whose input map has a constant (s,h,e) -> (s, 0, h, e)
// instead of tensor.extract_slice.
shard.grid @grid(shape = 2)
func.func @probe(%qkv: tensor<128x3x12x64xf32>) -> tensor<128x12x64xf32> {
  %s_h4 = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %s_h3 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %qkv_s = shard.shard %qkv to %s_h4 : tensor<128x3x12x64xf32>
  %e = tensor.empty() : tensor<128x12x64xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(s, h, e) -> (s, 0, h, e)>, affine_map<(s, h, e) -> (s, h, e)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qkv_s : tensor<128x3x12x64xf32>) outs(%e : tensor<128x12x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<128x12x64xf32>
  %r = shard.shard %q to %s_h3 annotate_for_users : tensor<128x12x64xf32>
  return %r : tensor<128x12x64xf32>
}

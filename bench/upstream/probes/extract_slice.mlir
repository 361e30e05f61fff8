// Probe: fused QKV projection [s, 3*h*dh]; Q taken with tensor.extract_slice.
shard.grid @grid(shape = 2)
func.func @probe(%qkv: tensor<128x2304xf32>) -> tensor<128x768xf32> {
  %s_col = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %qkv_s = shard.shard %qkv to %s_col : tensor<128x2304xf32>
  %q = tensor.extract_slice %qkv_s[0, 0] [128, 768] [1, 1] : tensor<128x2304xf32> to tensor<128x768xf32>
  %r = shard.shard %q to %s_col annotate_for_users : tensor<128x768xf32>
  return %r : tensor<128x768xf32>
}

// q and k taken from a fused QKV projection read as [tokens, heads, q|k|v,
// head dim] with stride-3 slices of the q|k|v factor that drop it: the heads
// are cut (tp 2, 4), the strided factor is not.
func.func @forward(%x: tensor<4x16xf32>, %wqkv: tensor<16x96xf32> {tp.name = "qkv"}, %wo: tensor<32x16xf32> {tp.name = "o"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x96xf32>) -> tensor<4x96xf32>
  %qkv = linalg.matmul ins(%x, %wqkv : tensor<4x16xf32>, tensor<16x96xf32>) outs(%f : tensor<4x96xf32>) -> tensor<4x96xf32>
  %r = tensor.expand_shape %qkv [[0], [1, 2, 3]] output_shape [4, 4, 3, 8] : tensor<4x96xf32> into tensor<4x4x3x8xf32>
  %q = tensor.extract_slice %r[0, 0, 0, 0] [4, 4, 1, 8] [1, 1, 3, 1] : tensor<4x4x3x8xf32> to tensor<4x4x8xf32>
  %k = tensor.extract_slice %r[0, 0, 1, 0] [4, 4, 1, 8] [1, 1, 3, 1] : tensor<4x4x3x8xf32> to tensor<4x4x8xf32>
  %s = arith.addf %q, %k : tensor<4x4x8xf32>
  %c = tensor.collapse_shape %s [[0], [1, 2]] : tensor<4x4x8xf32> into tensor<4x32xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%c, %wo : tensor<4x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// Two weight arguments named alike with different shapes: one checkpoint
// tensor cannot be both (tp-compile.test).
func.func @forward(%x: tensor<4x8xf32>, %a: tensor<8x16xf32> {tp.name = "w"},
                   %b: tensor<8x8xf32> {tp.name = "w"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = linalg.matmul ins(%x, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%i : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%h, %a : tensor<4x8xf32>, tensor<8x16xf32>) outs(%i2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

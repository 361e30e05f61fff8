// An MLP pair with its activation in TOSA, as a TOSA front-end writes it.
func.func @forward(%x: tensor<4x8xf32>, %up: tensor<8x16xf32> {tp.name = "up"},
                   %down: tensor<16x8xf32> {tp.name = "down"}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x16xf32>) outs(%i : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = tosa.sigmoid %h : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %down : tensor<4x16xf32>, tensor<16x8xf32>) outs(%i2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

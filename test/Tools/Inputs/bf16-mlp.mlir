// An MLP pair as a front-end writes a model held in bfloat16: bf16 tensors
// throughout, the activation computed upcast to f32 (extf, tanh, truncf).
// tp-compile's tp-import widens it: the model computes in f32.
func.func @forward(%x: tensor<4x8xbf16>, %up: tensor<8x16xbf16> {tp.name = "up"},
                   %down: tensor<16x8xbf16> {tp.name = "down"}) -> tensor<4x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %bias = arith.constant dense<0.375> : tensor<16xbf16>
  %e = tensor.empty() : tensor<4x16xbf16>
  %i = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%i : tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h, %bias : tensor<4x16xbf16>, tensor<16xbf16>) outs(%e : tensor<4x16xbf16>) {
  ^bb0(%in: bf16, %b: bf16, %out: bf16):
    %s = arith.addf %in, %b : bf16
    %w = arith.extf %s : bf16 to f32
    %t = math.tanh %w : f32
    %n = arith.truncf %t : f32 to bf16
    linalg.yield %n : bf16
  } -> tensor<4x16xbf16>
  %e2 = tensor.empty() : tensor<4x8xbf16>
  %i2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %y = linalg.matmul ins(%a, %down : tensor<4x16xbf16>, tensor<16x8xbf16>) outs(%i2 : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// An MLP pair with its weights stripped to splat constants, as in models
// published without their weights; the bias is a splat too.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %up = arith.constant dense<0.5> : tensor<8x16xf32> loc("up")
  %bias = arith.constant dense<0.125> : tensor<16xf32>
  %down = arith.constant dense<0.25> : tensor<16x8xf32> loc("down")
  %e = tensor.empty() : tensor<4x16xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x8xf32>, tensor<8x16xf32>) outs(%i : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%v: f32, %b: f32, %out: f32):
    %vb = arith.addf %v, %b : f32
    %n = arith.negf %vb : f32
    %ex = math.exp %n : f32
    %d = arith.addf %one, %ex : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %down : tensor<4x16xf32>, tensor<16x8xf32>) outs(%i2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// A column -> row MLP in f64 beside an integer argument (token ids, a mask),
// for the equivalence oracle, which fills every argument of its own element
// type and compares in f32 (equivalence.test).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @mlp_f64(%x: tensor<4x16xf64>, %ids: tensor<4xi64>, %up: tensor<16x32xf64>,
                   %down: tensor<32x16xf64>) -> tensor<4x16xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x32xf64>
  %i = linalg.fill ins(%zero : f64) outs(%e : tensor<4x32xf64>) -> tensor<4x32xf64>
  %h = linalg.matmul ins(%x, %up : tensor<4x16xf64>, tensor<16x32xf64>) outs(%i : tensor<4x32xf64>) -> tensor<4x32xf64>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x32xf64>) outs(%e : tensor<4x32xf64>) {
  ^bb0(%v: f64, %o: f64):
    %t = math.tanh %v : f64
    linalg.yield %t : f64
  } -> tensor<4x32xf64>
  %e2 = tensor.empty() : tensor<4x16xf64>
  %i2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<4x16xf64>) -> tensor<4x16xf64>
  %y = linalg.matmul ins(%a, %down : tensor<4x32xf64>, tensor<32x16xf64>) outs(%i2 : tensor<4x16xf64>) -> tensor<4x16xf64>
  %z = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %ids : tensor<4x16xf64>, tensor<4xi64>) outs(%e2 : tensor<4x16xf64>) {
  ^bb0(%v: f64, %id: i64, %o: f64):
    %f = arith.sitofp %id : i64 to f64
    %s = arith.addf %v, %f : f64
    linalg.yield %s : f64
  } -> tensor<4x16xf64>
  return %z : tensor<4x16xf64>
}

// Scans as torch-mlir writes them (TorchToTMTensor): cumsum along the last
// dimension of token ids (RoBERTa's position ids are
// cumsum(ids != pad) * (ids != pad) + pad), and an exclusive scan along the
// first dimension with a product, its accumulator read, on floats.
func.func @forward(%ids: tensor<2x6xi64>, %x: tensor<4x3xf32>)
    -> (tensor<2x6xi64>, tensor<4x3xf32>, tensor<3xf32>) {
  %pad = arith.constant 1 : i64
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x6xi64>
  %mask = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                           affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<2x6xi64>) outs(%e : tensor<2x6xi64>) {
  ^bb0(%id: i64, %o: i64):
    %ne = arith.cmpi ne, %id, %pad : i64
    %m = arith.extui %ne : i1 to i64
    linalg.yield %m : i64
  } -> tensor<2x6xi64>
  %out = linalg.fill ins(%c0 : i64) outs(%e : tensor<2x6xi64>) -> tensor<2x6xi64>
  %ea = tensor.empty() : tensor<2xi64>
  %acc = linalg.fill ins(%c0 : i64) outs(%ea : tensor<2xi64>) -> tensor<2xi64>
  %sum:2 = tm_tensor.scan dimension(1) inclusive(true)
      ins(%mask : tensor<2x6xi64>) outs(%out, %acc : tensor<2x6xi64>, tensor<2xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<2x6xi64>, tensor<2xi64>
  %positions = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                                affine_map<(i, j) -> (i, j)>,
                                                affine_map<(i, j) -> (i, j)>],
                               iterator_types = ["parallel", "parallel"]}
      ins(%sum#0, %mask : tensor<2x6xi64>, tensor<2x6xi64>) outs(%e : tensor<2x6xi64>) {
  ^bb0(%s: i64, %m: i64, %o: i64):
    %p = arith.muli %s, %m : i64
    %q = arith.addi %p, %pad : i64
    linalg.yield %q : i64
  } -> tensor<2x6xi64>

  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %ex = tensor.empty() : tensor<4x3xf32>
  %xout = linalg.fill ins(%zero : f32) outs(%ex : tensor<4x3xf32>) -> tensor<4x3xf32>
  %exa = tensor.empty() : tensor<3xf32>
  %xacc = linalg.fill ins(%two : f32) outs(%exa : tensor<3xf32>) -> tensor<3xf32>
  %prod:2 = tm_tensor.scan dimension(0) inclusive(false)
      ins(%x : tensor<4x3xf32>) outs(%xout, %xacc : tensor<4x3xf32>, tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    tm_tensor.yield %m : f32
  } -> tensor<4x3xf32>, tensor<3xf32>
  return %positions, %prod#0, %prod#1 : tensor<2x6xi64>, tensor<4x3xf32>, tensor<3xf32>
}

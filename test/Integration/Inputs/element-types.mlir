// Arguments of element types other than f32, for the equivalence oracle,
// which fills every argument in its own element type and compares in f32
// (equivalence.test).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A column -> row MLP in f64 beside an integer argument.
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

// Token ids index an embedding table (a gather: tensor.extract in the body,
// the id through arith.index_cast), and an i1 mask zeroes some tokens'
// outputs; between them a column -> row MLP. The oracle's ids must be valid
// rows of the table.
func.func @embed_masked(%ids: tensor<4xi64>, %mask: tensor<4xi1>,
                        %table: tensor<8x16xf32>, %up: tensor<16x32xf32>,
                        %down: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<4x16xf32>
  %x = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%ex : tensor<4x16xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<8x16xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %eh = tensor.empty() : tensor<4x32xf32>
  %ih = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.matmul ins(%x, %up : tensor<4x16xf32>, tensor<16x32xf32>) outs(%ih : tensor<4x32xf32>) -> tensor<4x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x32xf32>) outs(%eh : tensor<4x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x32xf32>
  %iy = linalg.fill ins(%zero : f32) outs(%ex : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%a, %down : tensor<4x32xf32>, tensor<32x16xf32>) outs(%iy : tensor<4x16xf32>) -> tensor<4x16xf32>
  %z = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %mask : tensor<4x16xf32>, tensor<4xi1>) outs(%ex : tensor<4x16xf32>) {
  ^bb0(%v: f32, %m: i1, %o: f32):
    %s = arith.select %m, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %z : tensor<4x16xf32>
}

// Sorts and top-k as torch-mlir writes them (TorchToTMTensor): a mixture of
// experts' router, top 2 of 8 experts by logits (outputs filled with the
// lowest value and INT32_MAX first), the logits sorted in descending order
// with their i64 positions, and a top 2 of integers with a tie (the lower
// index comes first).
func.func @forward(%x: tensor<6x16xf32>, %w: tensor<16x8xf32>, %c: tensor<4xi64>)
    -> (tensor<6x2xf32>, tensor<6x2xi32>, tensor<6x8xf32>, tensor<6x8xi64>,
        tensor<2xi64>, tensor<2xi32>) {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %imax = arith.constant 2147483647 : i32
  %e = tensor.empty() : tensor<6x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x8xf32>) -> tensor<6x8xf32>
  %logits = linalg.matmul ins(%x, %w : tensor<6x16xf32>, tensor<16x8xf32>)
                          outs(%f : tensor<6x8xf32>) -> tensor<6x8xf32>
  %ev = tensor.empty() : tensor<6x2xf32>
  %fv = linalg.fill ins(%lowest : f32) outs(%ev : tensor<6x2xf32>) -> tensor<6x2xf32>
  %ei = tensor.empty() : tensor<6x2xi32>
  %fi = linalg.fill ins(%imax : i32) outs(%ei : tensor<6x2xi32>) -> tensor<6x2xi32>
  %top:2 = tm_tensor.topk dimension(1) ins(%logits : tensor<6x8xf32>)
      outs(%fv, %fi : tensor<6x2xf32>, tensor<6x2xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    tm_tensor.yield %gt : i1
  } -> tensor<6x2xf32>, tensor<6x2xi32>
  %ep = tensor.empty() : tensor<6x8xi64>
  %positions = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                               iterator_types = ["parallel", "parallel"]}
      outs(%ep : tensor<6x8xi64>) {
  ^bb0(%o: i64):
    %j = linalg.index 1 : index
    %p = arith.index_cast %j : index to i64
    linalg.yield %p : i64
  } -> tensor<6x8xi64>
  %sorted:2 = tm_tensor.sort dimension(1) outs(%logits, %positions : tensor<6x8xf32>, tensor<6x8xi64>) {
  ^bb0(%a: f32, %b: f32, %pa: i64, %pb: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %ge : i1
  } -> tensor<6x8xf32>, tensor<6x8xi64>
  %lowi = arith.constant -9223372036854775808 : i64
  %ec = tensor.empty() : tensor<2xi64>
  %fc = linalg.fill ins(%lowi : i64) outs(%ec : tensor<2xi64>) -> tensor<2xi64>
  %ek = tensor.empty() : tensor<2xi32>
  %fk = linalg.fill ins(%imax : i32) outs(%ek : tensor<2xi32>) -> tensor<2xi32>
  %ctop:2 = tm_tensor.topk dimension(0) ins(%c : tensor<4xi64>)
      outs(%fc, %fk : tensor<2xi64>, tensor<2xi32>) {
  ^bb0(%a: i64, %b: i64):
    %gt = arith.cmpi sgt, %a, %b : i64
    tm_tensor.yield %gt : i1
  } -> tensor<2xi64>, tensor<2xi32>
  return %top#0, %top#1, %sorted#0, %sorted#1, %ctop#0, %ctop#1
      : tensor<6x2xf32>, tensor<6x2xi32>, tensor<6x8xf32>, tensor<6x8xi64>,
        tensor<2xi64>, tensor<2xi32>
}

// An LM head followed by a greedy argmax over the vocabulary (the form
// torch-mlir and the builders write: the max and, where the input exceeds
// it, the index of the reduction loop), and an argmin. The logits are
// rounded down to multiples of 1/2 first, so many positions tie: the first
// one must win, across ranks too. Used by equivalence.test.
#io = affine_map<(d0, d1) -> (d0, d1)>
#o = affine_map<(d0, d1) -> (d0)>
func.func @lm_argmax(%x: tensor<4x16xf32>, %head: tensor<16x512xf32> {tp.name = "lm_head.weight"}) -> (tensor<4xi64>, tensor<4xf32>, tensor<4xi32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x512xf32>) -> tensor<4x512xf32>
  %logits = linalg.matmul ins(%x, %head : tensor<4x16xf32>, tensor<16x512xf32>) outs(%init : tensor<4x512xf32>) -> tensor<4x512xf32>
  %re = tensor.empty() : tensor<4x512xf32>
  %rounded = linalg.generic {indexing_maps = [#io, #io], iterator_types = ["parallel", "parallel"]}
      ins(%logits : tensor<4x512xf32>) outs(%re : tensor<4x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.constant 2.0 : f32
    %s = arith.mulf %in, %q : f32
    %f = math.floor %s : f32
    linalg.yield %f : f32
  } -> tensor<4x512xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %inf = arith.constant 0x7F800000 : f32
  %c0 = arith.constant 0 : i64
  %c0i32 = arith.constant 0 : i32
  %me = tensor.empty() : tensor<4xf32>
  %maxinit = linalg.fill ins(%ninf : f32) outs(%me : tensor<4xf32>) -> tensor<4xf32>
  %mininit = linalg.fill ins(%inf : f32) outs(%me : tensor<4xf32>) -> tensor<4xf32>
  %ie = tensor.empty() : tensor<4xi64>
  %iinit = linalg.fill ins(%c0 : i64) outs(%ie : tensor<4xi64>) -> tensor<4xi64>
  %je = tensor.empty() : tensor<4xi32>
  %jinit = linalg.fill ins(%c0i32 : i32) outs(%je : tensor<4xi32>) -> tensor<4xi32>
  %max:2 = linalg.generic {indexing_maps = [#io, #o, #o], iterator_types = ["parallel", "reduction"]}
      ins(%rounded : tensor<4x512xf32>) outs(%maxinit, %iinit : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %gt, %i64, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  %min:2 = linalg.generic {indexing_maps = [#io, #o, #o], iterator_types = ["parallel", "reduction"]}
      ins(%rounded : tensor<4x512xf32>) outs(%mininit, %jinit : tensor<4xf32>, tensor<4xi32>) {
  ^bb0(%in: f32, %acc: f32, %idx: i32):
    %i = linalg.index 1 : index
    %i32 = arith.index_cast %i : index to i32
    %lt = arith.cmpf olt, %in, %acc : f32
    %m = arith.select %lt, %in, %acc : f32
    %s = arith.select %lt, %i32, %idx : i32
    linalg.yield %m, %s : f32, i32
  } -> (tensor<4xf32>, tensor<4xi32>)
  return %max#1, %max#0, %min#1 : tensor<4xi64>, tensor<4xf32>, tensor<4xi32>
}

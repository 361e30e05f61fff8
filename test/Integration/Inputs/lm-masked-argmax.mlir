// An LM head over a vocabulary padded from 300 to 512 rows (as Megatron-LM
// pads one to cut it), its padded positions masked to -inf by their index
// before the greedy argmax. Cut, the mask reads the global position: with
// a rank's own positions rank 1 of 2 would keep positions 300..511. Used by
// equivalence.test.
#io = affine_map<(d0, d1) -> (d0, d1)>
#o = affine_map<(d0, d1) -> (d0)>
func.func @lm_masked_argmax(%x: tensor<4x16xf32>, %head: tensor<16x512xf32> {tp.name = "lm_head.weight"}) -> (tensor<4xi64>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x512xf32>) -> tensor<4x512xf32>
  %logits = linalg.matmul ins(%x, %head : tensor<4x16xf32>, tensor<16x512xf32>) outs(%init : tensor<4x512xf32>) -> tensor<4x512xf32>
  %masked = linalg.generic {indexing_maps = [#io, #io], iterator_types = ["parallel", "parallel"]}
      ins(%logits : tensor<4x512xf32>) outs(%e : tensor<4x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %j = linalg.index 1 : index
    %vocab = arith.constant 300 : index
    %real = arith.cmpi ult, %j, %vocab : index
    %v = arith.select %real, %in, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<4x512xf32>
  %c0 = arith.constant 0 : i64
  %me = tensor.empty() : tensor<4xf32>
  %maxinit = linalg.fill ins(%ninf : f32) outs(%me : tensor<4xf32>) -> tensor<4xf32>
  %ie = tensor.empty() : tensor<4xi64>
  %iinit = linalg.fill ins(%c0 : i64) outs(%ie : tensor<4xi64>) -> tensor<4xi64>
  %max:2 = linalg.generic {indexing_maps = [#io, #o, #o], iterator_types = ["parallel", "reduction"]}
      ins(%masked : tensor<4x512xf32>) outs(%maxinit, %iinit : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %i = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %s = arith.select %gt, %i64, %idx : i64
    linalg.yield %m, %s : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %max#1, %max#0 : tensor<4xi64>, tensor<4xf32>
}

// Token ids (i64) and positions (i32) pick rows of an embedding table (a
// gather: tensor.extract at the id), a boolean mask zeroes padded tokens,
// then an MLP that tp-shard cuts as a Megatron pair. The integer arguments
// are inputs because the checkpoint has no tensor of their names
// (token_ids_data.py writes its checkpoint, inputs and numpy reference).
#tok = affine_map<(b, s, d) -> (b, s)>
#out = affine_map<(b, s, d) -> (b, s, d)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @forward(%ids: tensor<2x4xi64> {tp.name = "ids"},
                   %pos: tensor<2x4xi32> {tp.name = "pos"},
                   %mask: tensor<2x4xi1> {tp.name = "mask"},
                   %wte: tensor<16x8xf32> {tp.name = "wte"},
                   %wpe: tensor<4x8xf32> {tp.name = "wpe"},
                   %fc1: tensor<8x32xf32> {tp.name = "fc1"},
                   %fc2: tensor<32x8xf32> {tp.name = "fc2"}) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8xf32>
  %h = linalg.generic {indexing_maps = [#tok, #tok, #tok, #out],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids, %pos, %mask : tensor<2x4xi64>, tensor<2x4xi32>, tensor<2x4xi1>)
      outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%id: i64, %p: i32, %keep: i1, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %prow = arith.index_cast %p : i32 to index
    %col = linalg.index 2 : index
    %t = tensor.extract %wte[%row, %col] : tensor<16x8xf32>
    %q = tensor.extract %wpe[%prow, %col] : tensor<4x8xf32>
    %s = arith.addf %t, %q : f32
    %v = arith.select %keep, %s, %zero : f32
    linalg.yield %v : f32
  } -> tensor<2x4x8xf32>
  %x = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %a = linalg.matmul ins(%x, %fc1 : tensor<8x8xf32>, tensor<8x32xf32>)
                     outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.matmul ins(%r, %fc2 : tensor<8x32xf32>, tensor<32x8xf32>)
                     outs(%f2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

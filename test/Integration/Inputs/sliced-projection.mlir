// One projection whose result is sliced into sections of unequal widths (24
// and 8 of 32), as torch-mlir's FX importer writes a Linear and `split`:
// the [out, in] weight transposed and broadcast, a batch_matmul, the bias
// and a tanh in one generic. Each section goes on to its own narrowing
// Linear; the two are summed. sliced-projection.test makes the data.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
func.func @forward(%x: tensor<1x4x8xf32> {tp.name = "x"},
                   %w: tensor<32x8xf32> {tp.name = "up.weight"},
                   %b: tensor<32xf32> {tp.name = "up.bias"},
                   %wa: tensor<8x24xf32> {tp.name = "down_a.weight"},
                   %wb: tensor<8x8xf32> {tp.name = "down_b.weight"}) -> tensor<1x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<8x32xf32>
  %wt = linalg.transpose ins(%w : tensor<32x8xf32>) outs(%et : tensor<8x32xf32>) permutation = [1, 0]
  %ew = tensor.empty() : tensor<1x8x32xf32>
  %wbc = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wt : tensor<8x32xf32>) outs(%ew : tensor<1x8x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x32xf32>
  %eh = tensor.empty() : tensor<1x4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%eh : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %mm = linalg.batch_matmul ins(%x, %wbc : tensor<1x4x8xf32>, tensor<1x8x32xf32>) outs(%acc : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %h = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm, %b : tensor<1x4x32xf32>, tensor<32xf32>) outs(%eh : tensor<1x4x32xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<1x4x32xf32>
  %ha = tensor.extract_slice %h[0, 0, 0] [1, 4, 24] [1, 1, 1] : tensor<1x4x32xf32> to tensor<1x4x24xf32>
  %hb = tensor.extract_slice %h[0, 0, 24] [1, 4, 8] [1, 1, 1] : tensor<1x4x32xf32> to tensor<1x4x8xf32>
  %ey = tensor.empty() : tensor<1x4x8xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%ey : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %eat = tensor.empty() : tensor<24x8xf32>
  %wat = linalg.transpose ins(%wa : tensor<8x24xf32>) outs(%eat : tensor<24x8xf32>) permutation = [1, 0]
  %eab = tensor.empty() : tensor<1x24x8xf32>
  %wab = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wat : tensor<24x8xf32>) outs(%eab : tensor<1x24x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x24x8xf32>
  %ya = linalg.batch_matmul ins(%ha, %wab : tensor<1x4x24xf32>, tensor<1x24x8xf32>) outs(%acc2 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %ebt = tensor.empty() : tensor<8x8xf32>
  %wbt = linalg.transpose ins(%wb : tensor<8x8xf32>) outs(%ebt : tensor<8x8xf32>) permutation = [1, 0]
  %ebb = tensor.empty() : tensor<1x8x8xf32>
  %wbb = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wbt : tensor<8x8xf32>) outs(%ebb : tensor<1x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x8xf32>
  %yb = linalg.batch_matmul ins(%hb, %wbb : tensor<1x4x8xf32>, tensor<1x8x8xf32>) outs(%acc2 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ya, %yb : tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%ey : tensor<1x4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

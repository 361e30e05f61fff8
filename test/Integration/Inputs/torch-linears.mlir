// A two-layer MLP on [1, 4, 8] activations with its linears written the way
// torch-mlir writes `x @ W^T + b`: fc1 as the FX importer does (a
// linalg.transpose of the [out, in] weight, broadcast copies of the weight
// and of the collapsed activations, linalg.batch_matmul), fc2 as the
// TorchScript path does (the transpose a copy generic, the activations
// copied through a map reading batch index 0). torch_linears_data.py writes
// the checkpoint, the input and the numpy reference.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#unit = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#bias = affine_map<(d0, d1, d2) -> (d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @forward(%x: tensor<1x4x8xf32> {tp.name = "x"},
                   %w1: tensor<32x8xf32> {tp.name = "fc1.weight"},
                   %b1: tensor<32xf32> {tp.name = "fc1.bias"},
                   %w2: tensor<8x32xf32> {tp.name = "fc2.weight"},
                   %b2: tensor<8xf32> {tp.name = "fc2.bias"}) -> tensor<1x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  // fc1, FX form.
  %e1 = tensor.empty() : tensor<8x32xf32>
  %w1t = linalg.transpose ins(%w1 : tensor<32x8xf32>) outs(%e1 : tensor<8x32xf32>) permutation = [1, 0]
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %ex = tensor.empty() : tensor<1x4x8xf32>
  %xb = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2 : tensor<4x8xf32>) outs(%ex : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8xf32>
  %ew1 = tensor.empty() : tensor<1x8x32xf32>
  %w1b = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w1t : tensor<8x32xf32>) outs(%ew1 : tensor<1x8x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x32xf32>
  %eh = tensor.empty() : tensor<1x4x32xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%eh : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %mm1 = linalg.batch_matmul ins(%xb, %w1b : tensor<1x4x8xf32>, tensor<1x8x32xf32>) outs(%acc1 : tensor<1x4x32xf32>) -> tensor<1x4x32xf32>
  %h = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm1, %b1 : tensor<1x4x32xf32>, tensor<32xf32>) outs(%eh : tensor<1x4x32xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<1x4x32xf32>
  // fc2, TorchScript form.
  %e2 = tensor.empty() : tensor<32x8xf32>
  %w2t = linalg.generic {indexing_maps = [#id2, #swap], iterator_types = ["parallel", "parallel"]}
      ins(%w2 : tensor<8x32xf32>) outs(%e2 : tensor<32x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<32x8xf32>
  %hc = linalg.generic {indexing_maps = [#unit, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h : tensor<1x4x32xf32>) outs(%eh : tensor<1x4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x32xf32>
  %ew2 = tensor.empty() : tensor<1x32x8xf32>
  %w2b = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w2t : tensor<32x8xf32>) outs(%ew2 : tensor<1x32x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x8xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%ex : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %mm2 = linalg.batch_matmul ins(%hc, %w2b : tensor<1x4x32xf32>, tensor<1x32x8xf32>) outs(%acc2 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm2, %b2 : tensor<1x4x8xf32>, tensor<8xf32>) outs(%ex : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}

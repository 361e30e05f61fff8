// Two MLP blocks that add the same bias to their hidden layer: the bias is
// cut with the first block's hidden layer, so both pairs form one region.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @forward(%x: tensor<4x16xf32>, %b: tensor<64xf32> {tp.name = "b"},
                   %up1: tensor<16x64xf32> {tp.name = "up1"}, %down1: tensor<64x16xf32> {tp.name = "down1"},
                   %up2: tensor<16x64xf32> {tp.name = "up2"}, %down2: tensor<64x16xf32> {tp.name = "down2"}) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<4x64xf32>
  %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<4x64xf32>) -> tensor<4x64xf32>
  %ey = tensor.empty() : tensor<4x16xf32>
  %fy = linalg.fill ins(%zero : f32) outs(%ey : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h1 = linalg.matmul ins(%x, %up1 : tensor<4x16xf32>, tensor<16x64xf32>) outs(%fh : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1, %b : tensor<4x64xf32>, tensor<64xf32>) outs(%eh : tensor<4x64xf32>) {
  ^bb0(%h: f32, %bb: f32, %o: f32):
    %s = arith.addf %h, %bb : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %y1 = linalg.matmul ins(%a1, %down1 : tensor<4x64xf32>, tensor<64x16xf32>) outs(%fy : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h2 = linalg.matmul ins(%y1, %up2 : tensor<4x16xf32>, tensor<16x64xf32>) outs(%fh : tensor<4x64xf32>) -> tensor<4x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2, %b : tensor<4x64xf32>, tensor<64xf32>) outs(%eh : tensor<4x64xf32>) {
  ^bb0(%h: f32, %bb: f32, %o: f32):
    %s = arith.addf %h, %bb : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %y2 = linalg.matmul ins(%a2, %down2 : tensor<4x64xf32>, tensor<64x16xf32>) outs(%fy : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y2 : tensor<4x16xf32>
}

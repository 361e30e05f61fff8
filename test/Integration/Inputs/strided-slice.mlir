// The minimal input of a tp-compile crash: a stride-3 slice that drops a
// unit dimension (cpu-e2e.test).
func.func @forward(%x: tensor<1x4x3x1x16xf32> {tp.name = "x"}) -> tensor<1x4x1x16xf32> {
  %s = tensor.extract_slice %x[0, 0, 0, 0, 0] [1, 4, 1, 1, 16] [1, 1, 3, 1, 1] : tensor<1x4x3x1x16xf32> to tensor<1x4x1x16xf32>
  return %s : tensor<1x4x1x16xf32>
}

// A model with state: a mutable ml_program global (torch-mlir's TorchScript
// modules keep their random seed in one) read and advanced by each call.
// forward(x) = x @ w_up @ w_down + the calls made before this one + 5.
ml_program.global private mutable @calls(dense<5> : tensor<i64>) : tensor<i64>

func.func @forward(%x: tensor<4x8xf32>,
                   %w_up: tensor<8x16xf32> {tp.name = "w_up"},
                   %w_down: tensor<16x8xf32> {tp.name = "w_down"}) -> tensor<4x8xf32> {
  %state = ml_program.global_load @calls : tensor<i64>
  %count = tensor.extract %state[] : tensor<i64>
  %one = arith.constant 1 : i64
  %next = arith.addi %count, %one : i64
  %stored = tensor.from_elements %next : tensor<i64>
  ml_program.global_store @calls = %stored : tensor<i64>
  %offset = arith.sitofp %count : i64 to f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x16xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w_up : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%a : tensor<4x16xf32>) -> tensor<4x16xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %b = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%h, %w_down : tensor<4x16xf32>, tensor<16x8xf32>)
                     outs(%b : tensor<4x8xf32>) -> tensor<4x8xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                          affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %offset : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}

// RUN: tp-opt %s --tp-fold-broadcast-into-matmul --split-input-file | FileCheck %s --enable-var-scope
// RUN: tp-opt %s --tp-fold-broadcast-into-matmul --tp-fold-transpose-into-matmul --split-input-file | FileCheck %s --enable-var-scope --check-prefix=BOTH

// torch-mlir's FX linear: the [out, in] weight transposed, broadcast to
// [1, in, out], the activations collapsed and broadcast back to [1, S, in].
// One GEMM on the [S, in] rows, its zero fill made again on the flat shape;
// with the transpose folding after it, the GEMM reads the weight itself.
// CHECK-LABEL: func.func @fx_linear(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]]
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<4x16xf32>)
// CHECK: %[[GEMM:.*]] = linalg.matmul ins(%[[ROWS]], %[[WT]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[ZERO]] : tensor<4x16xf32>)
// CHECK-NOT: linalg.batch_matmul
// CHECK: %[[R:.*]] = tensor.expand_shape %[[GEMM]] {{\[\[}}0, 1], [2]] output_shape [1, 4, 16]
// CHECK: return %[[R]]
// BOTH-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// BOTH-LABEL: func.func @fx_linear(
// BOTH-SAME: %[[X:.*]]: tensor<1x4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// BOTH-NOT: linalg.transpose
// BOTH-NOT: linalg.generic
// BOTH: linalg.matmul indexing_maps = [#{{.*}}, #[[$BT]], #{{.*}}] ins(%{{.*}}, %[[W]] : tensor<4x8xf32>, tensor<16x8xf32>)
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @fx_linear(%x: tensor<1x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<1x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %ex = tensor.empty() : tensor<1x4x8xf32>
  %xb = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x2 : tensor<4x8xf32>) outs(%ex : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8xf32>
  %ew = tensor.empty() : tensor<1x8x16xf32>
  %wb = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wt : tensor<8x16xf32>) outs(%ew : tensor<1x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x16xf32>
  %o = tensor.empty() : tensor<1x4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %r = linalg.batch_matmul ins(%xb, %wb : tensor<1x4x8xf32>, tensor<1x8x16xf32>) outs(%acc : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}

// -----

// torch-mlir's TorchScript linear: the transpose is a copy generic too, and
// the activations are copied through a map reading batch index 0.
// CHECK-LABEL: func.func @ts_linear(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// CHECK: %[[WT:.*]] = linalg.generic
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]]
// CHECK: linalg.matmul ins(%[[ROWS]], %[[WT]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NOT: linalg.batch_matmul
// BOTH-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// BOTH-LABEL: func.func @ts_linear(
// BOTH-SAME: %[[X:.*]]: tensor<1x4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// BOTH-NOT: linalg.generic
// BOTH: linalg.matmul indexing_maps = [#{{.*}}, #[[$BT]], #{{.*}}] ins(%{{.*}}, %[[W]] : tensor<4x8xf32>, tensor<16x8xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
#unit = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#bcast = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @ts_linear(%x: tensor<1x4x8xf32>, %w: tensor<16x8xf32>) -> tensor<1x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.generic {indexing_maps = [#id2, #swap], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x16xf32>
  %ex = tensor.empty() : tensor<1x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#unit, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x8xf32>) outs(%ex : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8xf32>
  %ew = tensor.empty() : tensor<1x8x16xf32>
  %wb = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wt : tensor<8x16xf32>) outs(%ew : tensor<1x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x16xf32>
  %o = tensor.empty() : tensor<1x4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %r = linalg.batch_matmul ins(%xc, %wb : tensor<1x4x8xf32>, tensor<1x8x16xf32>) outs(%acc : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}

// -----

// A batch of two by one weight (linalg.broadcast): the 2 x 4 rows are one
// GEMM. The result's init is not a fresh zero fill: it is collapsed and
// accumulated into, as before.
// CHECK-LABEL: func.func @batch_of_two(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<2x4x16xf32>
// CHECK-DAG: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK-DAG: %[[ACC:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
// CHECK: %[[GEMM:.*]] = linalg.matmul ins(%[[ROWS]], %[[W]] : tensor<8x8xf32>, tensor<8x16xf32>) outs(%[[ACC]] : tensor<8x16xf32>)
// CHECK: tensor.expand_shape %[[GEMM]] {{\[\[}}0, 1], [2]] output_shape [2, 4, 16]
func.func @batch_of_two(%x: tensor<2x4x8xf32>, %w: tensor<8x16xf32>, %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %wb = linalg.broadcast ins(%w : tensor<8x16xf32>) outs(%e : tensor<2x8x16xf32>) dimensions = [0]
  %r = linalg.batch_matmul ins(%x, %wb : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// A broadcast that transposes on the way, of a unit-batch [1, out, in]
// weight: the GEMM reads the weight transposed through its map.
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @transposing_broadcast(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<1x16x8xf32>
// CHECK: %[[W2:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1], [2]] : tensor<1x16x8xf32> into tensor<16x8xf32>
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #[[$BT]], #{{.*}}] ins(%{{.*}}, %[[W2]] : tensor<8x8xf32>, tensor<16x8xf32>)
#unit_t = affine_map<(d0, d1, d2) -> (0, d2, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @transposing_broadcast(%x: tensor<2x4x8xf32>, %w: tensor<1x16x8xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ew = tensor.empty() : tensor<2x8x16xf32>
  %wb = linalg.generic {indexing_maps = [#unit_t, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<1x16x8xf32>) outs(%ew : tensor<2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x16xf32>
  %o = tensor.empty() : tensor<2x4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %r = linalg.batch_matmul ins(%x, %wb : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%acc : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// TOSA's linear (tosa-to-linalg of tosa.transpose, tosa.reshape and the
// batched tosa.matmul): the [out, in] weight transposed and reshaped to a
// unit batch. One GEMM; with the transpose folding after it, the GEMM reads
// the weight itself rather than a transposed copy made every call.
// CHECK-LABEL: func.func @tosa_linear(
// CHECK-SAME: %{{.*}}: tensor<4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[W]]
// CHECK: linalg.matmul ins(%{{.*}}, %[[WT]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NOT: linalg.batch_matmul
// BOTH-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// BOTH-LABEL: func.func @tosa_linear(
// BOTH-SAME: %{{.*}}: tensor<4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// BOTH-NOT: linalg.transpose
// BOTH: linalg.matmul indexing_maps = [#{{.*}}, #[[$BT]], #{{.*}}] ins(%{{.*}}, %[[W]] : tensor<4x8xf32>, tensor<16x8xf32>)
func.func @tosa_linear(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<1x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %xb = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 4, 8] : tensor<4x8xf32> into tensor<1x4x8xf32>
  %wb = tensor.expand_shape %wt [[0, 1], [2]] output_shape [1, 8, 16] : tensor<8x16xf32> into tensor<1x8x16xf32>
  %o = tensor.empty() : tensor<1x4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %r = linalg.batch_matmul ins(%xb, %wb : tensor<1x4x8xf32>, tensor<1x8x16xf32>) outs(%acc : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}

// -----

// A reshape that splits the columns of a [1, k * n] row into a unit batch,
// or the rows of a matrix into batches, gives no weight a batch of one:
// both stay batched GEMMs.
// CHECK-LABEL: func.func @expand_splits_columns(
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @expand_splits_rows(
// CHECK: linalg.batch_matmul
// CHECK-NOT: linalg.matmul
func.func @expand_splits_columns(%x: tensor<1x4x8xf32>, %w: tensor<1x128xf32>) -> tensor<1x4x16xf32> {
  %wb = tensor.expand_shape %w [[0], [1, 2]] output_shape [1, 8, 16] : tensor<1x128xf32> into tensor<1x8x16xf32>
  %o = tensor.empty() : tensor<1x4x16xf32>
  %r = linalg.batch_matmul ins(%x, %wb : tensor<1x4x8xf32>, tensor<1x8x16xf32>) outs(%o : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}
func.func @expand_splits_rows(%x: tensor<2x4x8xf32>, %w: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  %wb = tensor.expand_shape %w [[0, 1], [2]] output_shape [2, 8, 16] : tensor<16x16xf32> into tensor<2x8x16xf32>
  %o = tensor.empty() : tensor<2x4x16xf32>
  %r = linalg.batch_matmul ins(%x, %wb : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%o : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// Attention's batches multiply different matrices, and a copy that keeps
// every batch is no broadcast: both stay batched GEMMs.
// CHECK-LABEL: func.func @not_broadcast(
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT: linalg.matmul
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @not_broadcast(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>) {
  %o = tensor.empty() : tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%o : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %e = tensor.empty() : tensor<2x8x4xf32>
  %kc = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x8x4xf32>) outs(%e : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x4xf32>
  %s2 = linalg.batch_matmul ins(%q, %kc : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%o : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %s, %s2 : tensor<2x4x4xf32>, tensor<2x4x4xf32>
}

// RUN: tp-opt %s --tp-fold-transpose-into-matmul --split-input-file | FileCheck %s

// A torch-style [out, in] weight: the matmul reads it with a swapped map and
// the transpose (a copy per forward pass) is gone.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @torch_weight(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[A]], #[[BT]], #[[C]]] ins(%[[X]], %[[W]] :
func.func @torch_weight(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// Attention's K^T on a batch; a transposed operand that already had a swapped
// map swaps back to the plain one. A transpose with another user stays for it.
// CHECK-DAG: #[[PLAIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[KT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @scores(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x4x8xf32>, %[[QT:.*]]: tensor<2x8x4xf32>
// CHECK: %[[KT_COPY:.*]] = linalg.transpose ins(%[[K]]
// CHECK: linalg.batch_matmul indexing_maps = [#[[PLAIN]], #[[KT]], #{{.*}}] ins(%[[Q]], %[[K]] :
// CHECK: linalg.batch_matmul indexing_maps = [#[[PLAIN]], #[[KT]], #{{.*}}] ins(%[[Q]], %[[K]] :
// CHECK: return {{.*}}, %[[KT_COPY]]
#a_t = affine_map<(b, m, n, k) -> (b, k, m)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @scores(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %qt: tensor<2x8x4xf32>)
    -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x8x4xf32>) {
  %e = tensor.empty() : tensor<2x8x4xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%e : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %o = tensor.empty() : tensor<2x4x4xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%o : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %e2 = tensor.empty() : tensor<2x8x4xf32>
  %qtt = linalg.transpose ins(%q : tensor<2x4x8xf32>) outs(%e2 : tensor<2x8x4xf32>) permutation = [0, 2, 1]
  %s2 = linalg.batch_matmul indexing_maps = [#a_t, #b, #c] ins(%qtt, %kt : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%o : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %s, %s2, %kt : tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x8x4xf32>
}

// -----

// Only a swap of the last two dimensions folds: the runtime's GEMM has no
// other transposition.
// CHECK-LABEL: func.func @head_permutation(
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul ins(
func.func @head_permutation(%x: tensor<4x2x8xf32>, %y: tensor<2x8x4xf32>) -> tensor<2x2x4xf32> {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %xt = linalg.transpose ins(%x : tensor<4x2x8xf32>) outs(%e : tensor<2x4x8xf32>) permutation = [1, 0, 2]
  %o = tensor.empty() : tensor<2x4x4xf32>
  %r = linalg.batch_matmul ins(%xt, %y : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%o : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = tensor.extract_slice %r[0, 0, 0] [2, 2, 4] [1, 1, 1] : tensor<2x4x4xf32> to tensor<2x2x4xf32>
  return %s : tensor<2x2x4xf32>
}

// -----

// torch-mlir's TorchScript path writes the weight's transpose as a copy
// generic (identity input map, swapped output map): it folds as well; one
// that keeps the layout does not.
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @generic_transpose(
// CHECK-SAME: %[[X:.*]]: tensor<1x8xf32>, %[[W:.*]]: tensor<2x8xf32>, %[[V:.*]]: tensor<8x2xf32>
// CHECK: %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[V]] :
// CHECK: linalg.matmul indexing_maps = [#{{.*}}, #[[BT]], #{{.*}}] ins(%[[X]], %[[W]] :
// CHECK: linalg.matmul ins(%[[X]], %[[COPY]] :
#id = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
func.func @generic_transpose(%x: tensor<1x8xf32>, %w: tensor<2x8xf32>, %v: tensor<8x2xf32>)
    -> (tensor<1x2xf32>, tensor<1x2xf32>) {
  %e = tensor.empty() : tensor<8x2xf32>
  %wt = linalg.generic {indexing_maps = [#id, #swap], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x8xf32>) outs(%e : tensor<8x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x2xf32>
  %vc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x2xf32>
  %o = tensor.empty() : tensor<1x2xf32>
  %r = linalg.matmul ins(%x, %wt : tensor<1x8xf32>, tensor<8x2xf32>) outs(%o : tensor<1x2xf32>) -> tensor<1x2xf32>
  %r2 = linalg.matmul ins(%x, %vc : tensor<1x8xf32>, tensor<8x2xf32>) outs(%o : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %r, %r2 : tensor<1x2xf32>, tensor<1x2xf32>
}

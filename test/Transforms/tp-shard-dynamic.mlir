// RUN: tp-opt %s -split-input-file --tp-shard="tp-size=2" | FileCheck %s --enable-var-scope

// A dynamic batch (torch-mlir's usual output): only the cut dimensions must
// be static; reading the batch size stays local.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-SAME: %[[X:.*]]: tensor<?x16xf32>, %{{.*}}: tensor<16x16xf32> {tp.shard = #tp.shard<dim = 1>}, %{{.*}}: tensor<16x16xf32> {tp.shard = #tp.shard<dim = 0>}
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x16xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<?x16xf32>
// CHECK: linalg.matmul {{.*}} -> tensor<?x16xf32>
// CHECK: %[[P:.*]] = linalg.matmul {{.*}} -> tensor<?x16xf32>
// CHECK-NEXT: tp.all_reduce sum %[[P]] : tensor<?x16xf32>
func.func @dynamic_batch(%x: tensor<?x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x32xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<?x16xf32>, tensor<16x32xf32>) outs(%i : tensor<?x32xf32>) -> tensor<?x32xf32>
  %m = tensor.dim %h, %c0 : tensor<?x32xf32>
  %ea = tensor.empty(%m) : tensor<?x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x32xf32>) outs(%ea : tensor<?x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<?x32xf32>
  %e2 = tensor.empty(%n) : tensor<?x16xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<?x32xf32>, tensor<32x16xf32>) outs(%i2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// The narrowing matmul accumulates into a bias (a fill of 1.0) of a dynamic
// batch: the zero init that replaces it, and the sum after the all-reduce,
// keep the dynamic size.

// CHECK-LABEL: func.func @dynamic_bias
// CHECK: %[[C1:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[ONES:.*]] = linalg.fill ins(%[[C1]] : f32) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK: %[[N0:.*]] = tensor.dim %[[ONES]], %{{.*}} : tensor<?x16xf32>
// CHECK: %[[E0:.*]] = tensor.empty(%[[N0]]) : tensor<?x16xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<?x16xf32>)
// CHECK: %[[P:.*]] = linalg.matmul {{.*}} outs(%[[ZERO]] : tensor<?x16xf32>)
// CHECK: %[[S:.*]] = tp.all_reduce sum %[[P]] : tensor<?x16xf32>
// CHECK: %[[N1:.*]] = tensor.dim %[[ONES]], %{{.*}} : tensor<?x16xf32>
// CHECK: %[[E1:.*]] = tensor.empty(%[[N1]]) : tensor<?x16xf32>
// CHECK: %[[Y:.*]] = linalg.add ins(%[[S]], %[[ONES]] : tensor<?x16xf32>, tensor<?x16xf32>) outs(%[[E1]] : tensor<?x16xf32>)
// CHECK: return %[[Y]]
func.func @dynamic_bias(%x: tensor<?x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<?x16xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty(%n) : tensor<?x32xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<?x16xf32>, tensor<16x32xf32>) outs(%i : tensor<?x32xf32>) -> tensor<?x32xf32>
  %e2 = tensor.empty(%n) : tensor<?x16xf32>
  %i2 = linalg.fill ins(%one : f32) outs(%e2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<?x32xf32>, tensor<32x16xf32>) outs(%i2 : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

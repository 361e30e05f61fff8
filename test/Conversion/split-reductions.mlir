// RUN: tp-opt %s --pass-pipeline='builtin.module(func.func(tp-split-reductions))' | FileCheck %s
// RUN: tp-opt %s --pass-pipeline='builtin.module(func.func(tp-split-reductions{min-size=2048}))' | FileCheck %s --check-prefix=MIN2048
// MIN2048-NOT: tensor.expand_shape

// RMSNorm's sum of squares over d = 1024: 32 interleaved partial sums per
// row (the inner factor is the parallel one: thread j reads j, j + 32, ...),
// every parallel loop first, then the partials' sum.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 32, 32]
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<8x32x32xf32>) outs(%[[ZERO]] : tensor<8x32xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<8x32xf32>) outs(%{{.*}} : tensor<8xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sum_of_squares(%x: tensor<8x1024xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x1024xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// Short reductions (softmax over 128 keys) stay as they are.
// CHECK-LABEL: func.func @short(
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x128xf32>)
func.func @short(%x: tensor<8x128xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x128xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

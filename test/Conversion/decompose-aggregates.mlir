// RUN: tp-opt %s --tp-decompose-aggregates | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %e = tensor.empty() : tensor<2x4x4xf32>
  %0 = linalg.softmax dimension(2) ins(%x : tensor<2x4x4xf32>) outs(%e : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// RUN: tp-opt %s | tp-opt | FileCheck %s --enable-var-scope
// RUN: tp-opt %s --mlir-print-op-generic | tp-opt | FileCheck %s --enable-var-scope

// tm_tensor.attention prints as torch-mlir prints it, with and without a
// mask, a scale and the result (on buffers).

// CHECK-LABEL: func.func @tensors(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<12x7x64xf32>, %[[K:[^:]*]]: tensor<12x9x64xf32>, %[[V:[^:]*]]: tensor<12x9x32xf32>, %[[M:[^:]*]]: tensor<12x7x9xf32>, %[[O:[^:]*]]: tensor<12x7x32xf32>)
// CHECK: tm_tensor.attention ins(%[[Q]], %[[K]], %[[V]], %[[M]] : tensor<12x7x64xf32>, tensor<12x9x64xf32>, tensor<12x9x32xf32>, tensor<12x7x9xf32>) outs(%[[O]] : tensor<12x7x32xf32>) -> tensor<12x7x32xf32>
// CHECK: tm_tensor.attention {scale = 1.250000e-01 : f64} ins(%[[Q]], %[[K]], %[[V]] : tensor<12x7x64xf32>, tensor<12x9x64xf32>, tensor<12x9x32xf32>) outs(%[[O]] : tensor<12x7x32xf32>) -> tensor<12x7x32xf32>
func.func @tensors(%q: tensor<12x7x64xf32>, %k: tensor<12x9x64xf32>, %v: tensor<12x9x32xf32>, %m: tensor<12x7x9xf32>, %o: tensor<12x7x32xf32>) -> (tensor<12x7x32xf32>, tensor<12x7x32xf32>) {
  %0 = tm_tensor.attention ins(%q, %k, %v, %m : tensor<12x7x64xf32>, tensor<12x9x64xf32>, tensor<12x9x32xf32>, tensor<12x7x9xf32>) outs(%o : tensor<12x7x32xf32>) -> tensor<12x7x32xf32>
  %1 = tm_tensor.attention {scale = 0.125 : f64} ins(%q, %k, %v : tensor<12x7x64xf32>, tensor<12x9x64xf32>, tensor<12x9x32xf32>) outs(%o : tensor<12x7x32xf32>) -> tensor<12x7x32xf32>
  return %0, %1 : tensor<12x7x32xf32>, tensor<12x7x32xf32>
}

// CHECK-LABEL: func.func @buffers(
// CHECK: tm_tensor.attention ins(%{{.*}} : memref<2x3x5x8xf32>, memref<2x3x?x8xf32>, memref<2x3x?x4xf32>, memref<2x3x5x?xi1>) outs(%{{.*}} : memref<2x3x5x4xf32>){{$}}
func.func @buffers(%q: memref<2x3x5x8xf32>, %k: memref<2x3x?x8xf32>, %v: memref<2x3x?x4xf32>, %m: memref<2x3x5x?xi1>, %o: memref<2x3x5x4xf32>) {
  tm_tensor.attention ins(%q, %k, %v, %m : memref<2x3x5x8xf32>, memref<2x3x?x8xf32>, memref<2x3x?x4xf32>, memref<2x3x5x?xi1>) outs(%o : memref<2x3x5x4xf32>)
  return
}

// RUN: tp-opt %s --tp-unfold-strided-slices --split-input-file | FileCheck %s --enable-var-scope

// A stride-3 slice that drops a unit dimension keeps its rank; a
// collapse_shape drops the unit dimension.
// CHECK-LABEL: func.func @strided_drop(
// CHECK-SAME: %[[X:.*]]: tensor<1x4x3x1x16xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0, 0] [1, 4, 1, 1, 16] [1, 1, 3, 1, 1] : tensor<1x4x3x1x16xf32> to tensor<1x4x1x1x16xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1], [2, 3], [4]] : tensor<1x4x1x1x16xf32> into tensor<1x4x1x16xf32>
// CHECK: return %[[C]]
func.func @strided_drop(%x: tensor<1x4x3x1x16xf32>) -> tensor<1x4x1x16xf32> {
  %s = tensor.extract_slice %x[0, 0, 0, 0, 0] [1, 4, 1, 1, 16] [1, 1, 3, 1, 1] : tensor<1x4x3x1x16xf32> to tensor<1x4x1x16xf32>
  return %s : tensor<1x4x1x16xf32>
}

// -----

// Leading dropped dimensions join the first kept one.
// CHECK-LABEL: func.func @leading(
// CHECK: tensor.extract_slice {{.*}} : tensor<3x2x8xf32> to tensor<1x2x4xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
func.func @leading(%x: tensor<3x2x8xf32>) -> tensor<2x4xf32> {
  %s = tensor.extract_slice %x[1, 0, 0] [1, 2, 4] [1, 1, 2] : tensor<3x2x8xf32> to tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// Unit strides, or no dimension dropped: left as they are.
// CHECK-LABEL: func.func @unchanged(
// CHECK-NOT: tensor.collapse_shape
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xf32> to tensor<2x8xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [3, 2, 4] [1, 1, 2] : tensor<3x2x8xf32> to tensor<3x2x4xf32>
// CHECK-NOT: tensor.collapse_shape
func.func @unchanged(%x: tensor<3x2x8xf32>) -> (tensor<2x8xf32>, tensor<3x2x4xf32>) {
  %a = tensor.extract_slice %x[0, 0, 0] [1, 2, 8] [1, 1, 1] : tensor<3x2x8xf32> to tensor<2x8xf32>
  %b = tensor.extract_slice %x[0, 0, 0] [3, 2, 4] [1, 1, 2] : tensor<3x2x8xf32> to tensor<3x2x4xf32>
  return %a, %b : tensor<2x8xf32>, tensor<3x2x4xf32>
}

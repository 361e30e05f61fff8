// RUN: tp-opt %s --tp-approximate-math | FileCheck %s

// Scalar f32 math in a linalg body becomes plain arithmetic: no math op and
// no libm call is left for the loop vectorizer to stop at.

// CHECK-LABEL: func.func @gelu_tanh
// CHECK: linalg.generic
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: linalg.yield
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    %u = math.exp %t : f32
    linalg.yield %u : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// Math on a whole tensor is left as it is (the approximations compare with
// scalar constants); the pipelines make it a generic first.

// CHECK-LABEL: func.func @whole_tensor
// CHECK: math.erf %{{.*}} : tensor<4xf32>
func.func @whole_tensor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = math.erf %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

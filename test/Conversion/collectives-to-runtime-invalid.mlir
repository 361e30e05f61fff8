// RUN: tp-opt %s -split-input-file --tp-collectives-to-runtime -verify-diagnostics

func.func @f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @below {{the cpu runtime supports static f32 collectives only, got 'tensor<4xf16>'}}
  %0 = tp.all_reduce sum %x : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @scatter(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @below {{the cpu runtime has no reduce_scatter yet}}
  %0 = tp.reduce_scatter sum %x dim 0 : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

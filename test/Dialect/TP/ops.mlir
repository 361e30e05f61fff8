// RUN: tp-opt %s | tp-opt | FileCheck %s --enable-var-scope
// RUN: tp-opt %s --mlir-print-op-generic | tp-opt | FileCheck %s --enable-var-scope

module attributes {tp.size = 2 : i64} {
  // CHECK-LABEL: func.func @collectives
  // CHECK-SAME: tp.shard = #tp.shard<dim = 1, outer = 3>
  // CHECK-SAME: tp.shard = #tp.shard<dim = 0>
  func.func @collectives(%w: tensor<768x1152xf32> {tp.name = "qkv", tp.shard = #tp.shard<dim = 1, outer = 3>},
                         %b: tensor<768xf32> {tp.shard = #tp.shard<dim = 0, outer = 1>},
                         %p: tensor<8x768xf32>) -> (tensor<8x768xf32>, tensor<8x1536xf32>, tensor<4x768xf32>, tensor<8x768xi32>) {
    // CHECK: %[[AR:.*]] = tp.all_reduce sum %{{.*}} : tensor<8x768xf32>
    %0 = tp.all_reduce sum %p : tensor<8x768xf32>
    // CHECK: tp.all_gather %[[AR]] dim 1 : tensor<8x768xf32> -> tensor<8x1536xf32>
    %1 = tp.all_gather %0 dim 1 : tensor<8x768xf32> -> tensor<8x1536xf32>
    // CHECK: tp.reduce_scatter max %{{.*}} dim 0 : tensor<8x768xf32> -> tensor<4x768xf32>
    %2 = tp.reduce_scatter max %p dim 0 : tensor<8x768xf32> -> tensor<4x768xf32>
    %i = arith.fptosi %p : tensor<8x768xf32> to tensor<8x768xi32>
    // CHECK: tp.all_reduce min %{{.*}} : tensor<8x768xi32>
    %3 = tp.all_reduce min %i : tensor<8x768xi32>
    return %0, %1, %2, %3 : tensor<8x768xf32>, tensor<8x1536xf32>, tensor<4x768xf32>, tensor<8x768xi32>
  }
}


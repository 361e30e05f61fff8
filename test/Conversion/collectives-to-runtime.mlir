// RUN: tp-opt %s -split-input-file --tp-collectives-to-runtime | FileCheck %s --enable-var-scope

// CHECK: func.func private @tprt_all_reduce_sum_f32(memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4x8xf32> to memref<4x8xf32>
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: memref.copy %[[IN]], %[[BUF]]
// CHECK: %[[U:.*]] = memref.cast %[[BUF]] : memref<4x8xf32> to memref<*xf32>
// CHECK: call @tprt_all_reduce_sum_f32(%[[U]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK: return %[[R]]
func.func @all_reduce(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tp.all_reduce sum %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Each reduction kind has its runtime function.
// CHECK-DAG: func.func private @tprt_all_reduce_max_f32(memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @tprt_all_reduce_min_f32(memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @max_min
// CHECK: call @tprt_all_reduce_max_f32(
// CHECK: call @tprt_all_reduce_min_f32(
func.func @max_min(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = tp.all_reduce max %x : tensor<4xf32>
  %1 = tp.all_reduce min %x : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK: func.func private @tprt_all_gather_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @all_gather
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x8xf32>
// CHECK: %[[D:.*]] = arith.constant 1 : i64
// CHECK: call @tprt_all_gather_f32(%{{.*}}, %{{.*}}, %[[D]])
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable : memref<4x8xf32> to tensor<4x8xf32>
func.func @all_gather(%x: tensor<4x4xf32>) -> tensor<4x8xf32> {
  %0 = tp.all_gather %x dim 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The rank is the runtime's, without a C interface (no memref to pass).
// CHECK: func.func private @tprt_rank() -> i32{{$}}
// CHECK-LABEL: func.func @rank
// CHECK: %[[R:.*]] = call @tprt_rank() : () -> i32
// CHECK: %[[I:.*]] = arith.index_cast %[[R]] : i32 to index
// CHECK: return %[[I]]
func.func @rank() -> index {
  %0 = tp.rank
  return %0 : index
}

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

// -----

// A row-parallel matmul's result, written into a fresh tensor that only the
// all-reduce reads, is reduced in its own buffer (no copy); the same result
// read again after the all-reduce is copied, as is a filled tensor another
// op reads too.
// CHECK-LABEL: func.func @in_place
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[B:.*]] = bufferization.to_buffer %[[P]] : tensor<4x8xf32> to memref<4x8xf32>
// CHECK-NOT: memref.copy
// CHECK: call @tprt_all_reduce_sum_f32(
// CHECK: bufferization.to_tensor %[[B]] restrict writable
// CHECK: %[[Q:.*]] = linalg.matmul
// CHECK: bufferization.to_buffer %[[Q]] read_only
// CHECK: memref.copy
// CHECK: %[[S:.*]] = linalg.matmul
// CHECK: bufferization.to_buffer %[[S]] read_only
// CHECK: memref.copy
func.func @in_place(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %p = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tp.all_reduce sum %p : tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r2 = tp.all_reduce sum %q : tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %init3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init3 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r3 = tp.all_reduce sum %s : tensor<4x8xf32>
  return %r, %r2, %q, %init3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// In place too when the init is a bare tensor.empty; copied when the empty
// tensor is also read elsewhere, or the fill writes into an argument.
// CHECK-LABEL: func.func @inits
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: bufferization.to_buffer %[[P]] : tensor<4xf32>
// CHECK-NOT: memref.copy
// CHECK: call @tprt_all_reduce_sum_f32(
// CHECK: %[[Q:.*]] = linalg.generic
// CHECK: bufferization.to_buffer %[[Q]] read_only
// CHECK: memref.copy
// CHECK: %[[S:.*]] = linalg.fill
// CHECK: %[[T:.*]] = linalg.generic {{.*}} outs(%[[S]]
// CHECK: bufferization.to_buffer %[[T]] read_only
// CHECK: memref.copy
#id = affine_map<(d0) -> (d0)>
func.func @inits(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %r = tp.all_reduce sum %p : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %r2 = tp.all_reduce sum %q : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %s = linalg.fill ins(%zero : f32) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%s : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %r3 = tp.all_reduce sum %t : tensor<4xf32>
  return %r, %r2, %r3, %e2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

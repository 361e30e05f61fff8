// RUN: tp-opt %s --tp-linalg-to-runtime | FileCheck %s --enable-var-scope

// CHECK: func.func private @tprt_batch_matmul_f32(memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK: func.func private @tprt_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, i64, i64, i64) attributes {llvm.emit_c_interface}

// CHECK-LABEL: func.func @plain
// CHECK: %[[A:.*]] = memref.cast %arg0 : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[B:.*]] = memref.cast %arg1
// CHECK: %[[C:.*]] = memref.cast %arg2
// CHECK: %[[F:.*]] = arith.constant 0 : i64
// CHECK: %[[F2:.*]] = arith.constant 0 : i64
// CHECK: %[[ACC:.*]] = arith.constant 1 : i64
// CHECK: call @tprt_matmul_f32(%[[A]], %[[B]], %[[C]], %[[F]], %[[F2]], %[[ACC]])
// CHECK-NOT: linalg.matmul
func.func @plain(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// A torch-style weight [n, k] read through transposed maps, and a strided
// view (a column block): both go to the runtime as they are.
// CHECK-LABEL: func.func @transposed_b
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: call @tprt_matmul_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}})
func.func @transposed_b(%a: memref<4x8xf32, strided<[16, 1], offset: 8>>, %b: memref<16x8xf32>, %c: memref<4x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<4x8xf32, strided<[16, 1], offset: 8>>, memref<16x8xf32>) outs(%c : memref<4x16xf32>)
  return
}

// CHECK-LABEL: func.func @batched
// CHECK: call @tprt_batch_matmul_f32
func.func @batched(%a: memref<2x4x8xf32>, %b: memref<2x8x4xf32>, %c: memref<2x4x4xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x4xf32>) outs(%c : memref<2x4x4xf32>)
  return
}

// Not f32, or still on tensors: left for the loop lowering.
// CHECK-LABEL: func.func @f64
// CHECK: linalg.matmul
func.func @f64(%a: memref<4x8xf64>, %b: memref<8x16xf64>, %c: memref<4x16xf64>) {
  linalg.matmul ins(%a, %b : memref<4x8xf64>, memref<8x16xf64>) outs(%c : memref<4x16xf64>)
  return
}

// CHECK-LABEL: func.func @tensors
// CHECK: linalg.matmul
func.func @tensors(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// A zero fill of exactly c right before the GEMM (only pure ops between):
// dropped, and the GEMM overwrites c.
// CHECK-LABEL: func.func @zero_filled
// CHECK-NOT: linalg.fill
// The sixth argument, accumulate, is 0.
// CHECK: call @tprt_matmul_f32({{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, %c0_i64{{[_0-9]*}})
func.func @zero_filled(%a: memref<4x8xf32>, %b: memref<8x16xf32>) -> memref<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  %unused = arith.constant 3 : index
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return %c : memref<4x16xf32>
}

// Kept (and the GEMM accumulates): a fill of another value, a write between
// the fill and the GEMM, and a GEMM with k = 0 (it would not write c).
// CHECK-LABEL: func.func @fills_kept
// CHECK: linalg.fill
// CHECK: call @tprt_matmul_f32({{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, %c1_i64{{[_0-9]*}})
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: call @tprt_matmul_f32({{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, %c1_i64{{[_0-9]*}})
// CHECK: linalg.fill
// CHECK: call @tprt_matmul_f32({{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, {{[^,]*}}, %c1_i64{{[_0-9]*}})
func.func @fills_kept(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %e: memref<4x0xf32>, %f: memref<0x16xf32>)
    -> (memref<4x16xf32>, memref<4x16xf32>, memref<4x16xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  %c1 = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%one : f32) outs(%c1 : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c1 : memref<4x16xf32>)
  %c2 = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c2 : memref<4x16xf32>)
  memref.store %one, %c2[%i, %i] : memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c2 : memref<4x16xf32>)
  %c3 = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c3 : memref<4x16xf32>)
  linalg.matmul ins(%e, %f : memref<4x0xf32>, memref<0x16xf32>) outs(%c3 : memref<4x16xf32>)
  return %c1, %c2, %c3 : memref<4x16xf32>, memref<4x16xf32>, memref<4x16xf32>
}

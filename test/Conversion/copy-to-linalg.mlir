// RUN: tp-opt %s --pass-pipeline="builtin.module(func.func(tp-copy-to-linalg))" | FileCheck %s

// CHECK-LABEL: func.func @copy
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32, strided<[16, 1]>>)
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%[[A]] : memref<4x8xf32>) outs(%[[B]] : memref<4x8xf32, strided<[16, 1]>>)
func.func @copy(%a: memref<4x8xf32>, %b: memref<4x8xf32, strided<[16, 1]>>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32, strided<[16, 1]>>
  return
}

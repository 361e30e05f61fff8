// RUN: tp-opt %s --pass-pipeline="builtin.module(func.func(tp-scalar-kernels))" | FileCheck %s

// A linalg op without loops (torch-mlir's f64 scalar made f32) goes into a
// parallel loop of one iteration; ops with loops, and loop-less ops on
// tensors (not yet buffers), stay as they are.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[IN:.*]]: memref<f64>, %[[OUT:.*]]: memref<f32>, %[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[T:.*]]: tensor<f32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = []} ins(%[[IN]] : memref<f64>) outs(%[[OUT]] : memref<f32>)
// CHECK: arith.truncf
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<f32>)
// CHECK-NOT: scf.parallel
#scalar = affine_map<() -> ()>
func.func @scalar(%in: memref<f64>, %out: memref<f32>, %a: memref<4xf32>,
                  %b: memref<4xf32>, %t: tensor<f32>) -> tensor<f32> {
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%in : memref<f64>) outs(%out : memref<f32>) {
  ^bb0(%x: f64, %y: f32):
    %r = arith.truncf %x : f64 to f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  %e = tensor.empty() : tensor<f32>
  %n = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%t : tensor<f32>) outs(%e : tensor<f32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.negf %x : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %n : tensor<f32>
}

// A rank-0 copy (memref.copy after tp-copy-to-linalg) is one too.
// CHECK-LABEL: func.func @copy
// CHECK: scf.parallel
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<f32>) outs(%{{.*}} : memref<f32>)
func.func @copy(%a: memref<f32>, %b: memref<f32>) {
  linalg.copy ins(%a : memref<f32>) outs(%b : memref<f32>)
  return
}

// One in a parallel loop already (a row kernel's) stays as it is.
// CHECK-LABEL: func.func @nested
// CHECK: scf.parallel
// CHECK-NEXT: linalg.copy
// CHECK-NOT: scf.parallel
func.func @nested(%a: memref<f32>, %b: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    linalg.copy ins(%a : memref<f32>) outs(%b : memref<f32>)
    scf.reduce
  }
  return
}

// RUN: tp-opt %s --split-input-file --tp-decompose-tm-scan --verify-diagnostics | FileCheck %s --enable-var-scope

// torch-mlir's cumsum: an inclusive scan with arith.addi, its accumulator
// unread. The output starts from the first element along the dimension and
// folds in element j for 1 <= j <= i, j the innermost (reduction) loop.

// CHECK-DAG: #[[$FIRST:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ATJ:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @cumsum
// CHECK-SAME:    (%[[X:.*]]: tensor<2x5xi64>)
// CHECK:         %[[OUTS:.*]] = linalg.fill
// CHECK:         %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[$FIRST]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x5xi64>) outs(%[[OUTS]] : tensor<2x5xi64>)
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ATJ]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x5xi64>) outs(%[[INIT]] : tensor<2x5xi64>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: i64, %[[ACC:.*]]: i64):
// CHECK-NEXT:      %[[ADD:.*]] = arith.addi %[[ACC]], %[[IN]] : i64
// CHECK-NEXT:      %[[J:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[AFTER_FIRST:.*]] = arith.cmpi uge, %[[J]], %[[ONE]] : index
// CHECK-NEXT:      %[[UP_TO_I:.*]] = arith.cmpi ule, %[[J]], %[[I]] : index
// CHECK-NEXT:      %[[TAKE:.*]] = arith.andi %[[AFTER_FIRST]], %[[UP_TO_I]] : i1
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[TAKE]], %[[ADD]], %[[ACC]] : i64
// CHECK-NEXT:      linalg.yield %[[R]] : i64
// CHECK:         return %[[SUM]]
// CHECK-NOT:     tm_tensor
func.func @cumsum(%x: tensor<2x5xi64>) -> tensor<2x5xi64> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x5xi64>
  %out = linalg.fill ins(%c0 : i64) outs(%e : tensor<2x5xi64>) -> tensor<2x5xi64>
  %ea = tensor.empty() : tensor<2xi64>
  %acc = linalg.fill ins(%c0 : i64) outs(%ea : tensor<2xi64>) -> tensor<2xi64>
  %0:2 = tm_tensor.scan dimension(1) inclusive(true)
      ins(%x : tensor<2x5xi64>) outs(%out, %acc : tensor<2x5xi64>, tensor<2xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<2x5xi64>, tensor<2xi64>
  return %0#0 : tensor<2x5xi64>
}

// -----

// Exclusive, along dimension 0, the accumulator read: the output starts
// from the accumulator broadcast and folds in j < i; the final accumulator
// folds in every j.

// CHECK-DAG: #[[$BCAST:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ATJ:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$ACC_ATJ:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$ACC_OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @exclusive_product
// CHECK-SAME:    (%[[X:.*]]: tensor<4x3xf32>, %[[OUTS:.*]]: tensor<4x3xf32>, %[[ACC0:.*]]: tensor<3xf32>)
// CHECK:         %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[$BCAST]], #[[$ID]]], {{.*}}} ins(%[[ACC0]] : tensor<3xf32>) outs(%[[OUTS]] : tensor<4x3xf32>)
// CHECK:         %[[PROD:.*]] = linalg.generic {indexing_maps = [#[[$ATJ]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<4x3xf32>) outs(%[[INIT]] : tensor<4x3xf32>)
// CHECK:           arith.mulf
// CHECK:           %[[BEFORE_I:.*]] = arith.cmpi ult
// CHECK:           arith.select %[[BEFORE_I]]
// CHECK:         %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[$ACC_ATJ]], #[[$ACC_OUT]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x3xf32>) outs(%[[ACC0]] : tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[A:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[IN]] : f32
// CHECK-NEXT:      linalg.index 1
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK:         return %[[PROD]], %[[ACC]]
func.func @exclusive_product(%x: tensor<4x3xf32>, %out: tensor<4x3xf32>, %acc: tensor<3xf32>)
    -> (tensor<4x3xf32>, tensor<3xf32>) {
  %0:2 = tm_tensor.scan dimension(0) inclusive(false)
      ins(%x : tensor<4x3xf32>) outs(%out, %acc : tensor<4x3xf32>, tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    tm_tensor.yield %m : f32
  } -> tensor<4x3xf32>, tensor<3xf32>
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<3xf32>
}

// -----

func.func @impure_region(%x: tensor<4xi64>, %out: tensor<4xi64>, %acc: tensor<i64>, %m: memref<i64>) -> tensor<4xi64> {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true)
      ins(%x : tensor<4xi64>) outs(%out, %acc : tensor<4xi64>, tensor<i64>) {
  ^bb0(%a: i64, %b: i64):
    // expected-error @below {{in a tm_tensor.scan's region is not pure (it has effects or may trap): tp-import evaluates the region where the scan would not}}
    %v = memref.load %m[] : memref<i64>
    tm_tensor.yield %v : i64
  } -> tensor<4xi64>, tensor<i64>
  return %0#0 : tensor<4xi64>
}

// -----

func.func @wrong_accumulator(%x: tensor<4x3xf32>, %out: tensor<4x3xf32>, %acc: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error @below {{accumulator 'tensor<4xf32>' must be the input 'tensor<4x3xf32>' without dimension 0}}
  %0:2 = tm_tensor.scan dimension(0) inclusive(true)
      ins(%x : tensor<4x3xf32>) outs(%out, %acc : tensor<4x3xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<4x3xf32>, tensor<4xf32>
  return %0#0 : tensor<4x3xf32>
}

// -----

func.func @wrong_region(%x: tensor<4xf32>, %out: tensor<4xf32>, %acc: tensor<f32>) -> tensor<4xf32> {
  // expected-error @below {{region must take two 'f32'}}
  %0:2 = tm_tensor.scan dimension(0) inclusive(true)
      ins(%x : tensor<4xf32>) outs(%out, %acc : tensor<4xf32>, tensor<f32>) {
  ^bb0(%a: f32):
    tm_tensor.yield %a : f32
  } -> tensor<4xf32>, tensor<f32>
  return %0#0 : tensor<4xf32>
}

// -----

func.func @may_trap(%x: tensor<4xi64>, %out: tensor<4xi64>, %acc: tensor<i64>) -> tensor<4xi64> {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true)
      ins(%x : tensor<4xi64>) outs(%out, %acc : tensor<4xi64>, tensor<i64>) {
  ^bb0(%a: i64, %b: i64):
    // expected-error @below {{not pure}}
    %q = arith.divsi %a, %b : i64
    tm_tensor.yield %q : i64
  } -> tensor<4xi64>, tensor<i64>
  return %0#0 : tensor<4xi64>
}

// -----

func.func @outside(%x: tensor<4xf32>, %out: tensor<4xf32>, %acc: tensor<f32>) -> tensor<4xf32> {
  // expected-error @below {{dimension 1 is outside the input 'tensor<4xf32>'}}
  %0:2 = tm_tensor.scan dimension(1) inclusive(true)
      ins(%x : tensor<4xf32>) outs(%out, %acc : tensor<4xf32>, tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<4xf32>, tensor<f32>
  return %0#0 : tensor<4xf32>
}

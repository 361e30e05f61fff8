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
// from the accumulator broadcast and folds in j < i; the accumulator ends as
// the last output row, as torch-mlir's loops leave it.

// CHECK-DAG: #[[$BCAST:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ATJ:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @exclusive_product
// CHECK-SAME:    (%[[X:.*]]: tensor<4x3xf32>, %[[OUTS:.*]]: tensor<4x3xf32>, %[[ACC0:.*]]: tensor<3xf32>)
// CHECK:         %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[$BCAST]], #[[$ID]]], {{.*}}} ins(%[[ACC0]] : tensor<3xf32>) outs(%[[OUTS]] : tensor<4x3xf32>)
// CHECK:         %[[PROD:.*]] = linalg.generic {indexing_maps = [#[[$ATJ]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<4x3xf32>) outs(%[[INIT]] : tensor<4x3xf32>)
// CHECK:           arith.mulf
// CHECK:           %[[BEFORE_I:.*]] = arith.cmpi ult
// CHECK:           arith.select %[[BEFORE_I]]
// CHECK:         %[[ACC:.*]] = tensor.extract_slice %[[PROD]][3, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
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

// One element along the scanned dimension: torch-mlir's loops leave the
// accumulator as given.

// CHECK-LABEL: func.func @length_one
// CHECK-SAME:    %[[ACC0:[a-z0-9]+]]: tensor<3xf32>)
// CHECK:         %[[OUT:.*]] = linalg.generic
// CHECK:         %[[SCAN:.*]] = linalg.generic
// CHECK:         return %[[SCAN]], %[[ACC0]]
func.func @length_one(%x: tensor<1x3xf32>, %out: tensor<1x3xf32>, %acc: tensor<3xf32>)
    -> (tensor<1x3xf32>, tensor<3xf32>) {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true)
      ins(%x : tensor<1x3xf32>) outs(%out, %acc : tensor<1x3xf32>, tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<1x3xf32>, tensor<3xf32>
  return %0#0, %0#1 : tensor<1x3xf32>, tensor<3xf32>
}

// -----

// A dynamic length: the accumulator is the row at length - 1.

// CHECK-LABEL: func.func @dynamic_length
// CHECK:         %[[SCAN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         %[[N:.*]] = tensor.dim %[[SCAN]], %c0
// CHECK-NOT:     tensor.dim
// CHECK:         %[[LAST:.*]] = arith.subi %[[N]], %c1
// CHECK:         %[[ACC:.*]] = tensor.extract_slice %[[SCAN]][%[[LAST]], 0] [1, 3] [1, 1] : tensor<?x3xf32> to tensor<3xf32>
// CHECK:         return %[[SCAN]], %[[ACC]]
func.func @dynamic_length(%x: tensor<?x3xf32>, %out: tensor<?x3xf32>, %acc: tensor<3xf32>)
    -> (tensor<?x3xf32>, tensor<3xf32>) {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true)
      ins(%x : tensor<?x3xf32>) outs(%out, %acc : tensor<?x3xf32>, tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tm_tensor.yield %s : f32
  } -> tensor<?x3xf32>, tensor<3xf32>
  return %0#0, %0#1 : tensor<?x3xf32>, tensor<3xf32>
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

// A dynamic size may stand for a static one, as torch-mlir's verifier allows.

// CHECK-LABEL: func.func @compatible
// CHECK-NOT:     tm_tensor
func.func @compatible(%x: tensor<2x6xi64>, %out: tensor<?x6xi64>, %acc: tensor<?xi64>) -> tensor<?x6xi64> {
  %0:2 = tm_tensor.scan dimension(1) inclusive(true)
      ins(%x : tensor<2x6xi64>) outs(%out, %acc : tensor<?x6xi64>, tensor<?xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<?x6xi64>, tensor<?xi64>
  return %0#0 : tensor<?x6xi64>
}

// -----

// The accumulator's type may leave dynamic a size the output has static:
// the slice is of the output's sizes, then cast.

// CHECK-LABEL: func.func @mixed_accumulator
// CHECK:         %[[SCAN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:         %[[LAST:.*]] = tensor.extract_slice %[[SCAN]][0, 5] [2, 1] [1, 1] : tensor<2x6xi64> to tensor<2xi64>
// CHECK:         %[[ACC:.*]] = tensor.cast %[[LAST]] : tensor<2xi64> to tensor<?xi64>
// CHECK:         return %[[ACC]]
func.func @mixed_accumulator(%x: tensor<2x6xi64>, %out: tensor<2x6xi64>, %acc: tensor<?xi64>) -> tensor<?xi64> {
  %0:2 = tm_tensor.scan dimension(1) inclusive(true)
      ins(%x : tensor<2x6xi64>) outs(%out, %acc : tensor<2x6xi64>, tensor<?xi64>) {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    tm_tensor.yield %s : i64
  } -> tensor<2x6xi64>, tensor<?xi64>
  return %0#1 : tensor<?xi64>
}

// -----

func.func @wrong_region(%x: tensor<4xf32>, %out: tensor<4xf32>, %acc: tensor<f32>) -> tensor<4xf32> {
  // expected-error @below {{region must take ('f32', 'f32')}}
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

// -----

// The region's checks run after its blocks are verified (hasRegionVerifier):
// a block without a terminator is reported, not read.
func.func @no_yield(%x: tensor<4xf32>, %out: tensor<4xf32>, %acc: tensor<f32>) -> tensor<4xf32> {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true)
      ins(%x : tensor<4xf32>) outs(%out, %acc : tensor<4xf32>, tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    // expected-error @below {{block with no terminator}}
    %s = arith.addf %a, %b : f32
  } -> tensor<4xf32>, tensor<f32>
  return %0#0 : tensor<4xf32>
}

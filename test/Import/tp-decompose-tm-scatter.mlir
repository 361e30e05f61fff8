// RUN: tp-opt %s --split-input-file --tp-decompose-tm-scatter --verify-diagnostics | FileCheck %s --enable-var-scope

// torch-mlir's index_put with accumulate: one scalar update per index tuple
// (repeated indices: unique_indices(false)), combined with arith.addf.

func.func @index_put_accumulate(%original: tensor<10x8x6xf32>, %indices: tensor<?x3xi64>, %updates: tensor<?xf32>) -> tensor<10x8x6xf32> {
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0, 1, 2>} unique_indices(false) ins(%updates, %indices : tensor<?xf32>, tensor<?x3xi64>) outs(%original : tensor<10x8x6xf32>) {
  ^bb0(%update: f32, %current: f32):
    %sum = arith.addf %current, %update : f32
    tm_tensor.yield %sum : f32
  } -> tensor<10x8x6xf32>
  return %0 : tensor<10x8x6xf32>
}

// CHECK-LABEL: func.func @index_put_accumulate
// CHECK-SAME:    (%[[ORIG:.*]]: tensor<10x8x6xf32>, %[[IDX:.*]]: tensor<?x3xi64>, %[[UPD:.*]]: tensor<?xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[N:.*]] = tensor.dim %[[UPD]]
// CHECK-DAG:     %[[C10:.*]] = arith.constant 10 : index
// CHECK:         %[[R:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ORIG]]) -> (tensor<10x8x6xf32>) {
// CHECK:           %[[U:.*]] = tensor.extract %[[UPD]][%[[I]]]
// CHECK:           %[[X0:.*]] = tensor.extract %[[IDX]][%[[I]], %{{.*}}]
// CHECK:           %[[P0:.*]] = arith.index_cast %[[X0]] : i64 to index
// CHECK:           %[[P1:.*]] = arith.index_cast
// CHECK:           %[[P2:.*]] = arith.index_cast
// CHECK:           arith.cmpi sge, %[[P0]], %[[C0]]
// CHECK:           arith.cmpi slt, %[[P0]], %[[C10]]
// CHECK-COUNT-4:   arith.cmpi
// CHECK:           cf.assert %{{.*}}, "tm_tensor.scatter at {{.*}}tp-decompose-tm-scatter.mlir:7:8: an index places an update outside the original tensor<10x8x6xf32>"
// CHECK:           %[[CUR:.*]] = tensor.extract %[[ACC]][%[[P0]], %[[P1]], %[[P2]]]
// CHECK:           %[[SUM:.*]] = arith.addf %[[CUR]], %[[U]] : f32
// CHECK:           %[[NEW:.*]] = tensor.insert %[[SUM]] into %[[ACC]][%[[P0]], %[[P1]], %[[P2]]]
// CHECK:           scf.yield %[[NEW]]
// CHECK:         return %[[R]]
// CHECK-NOT:     tm_tensor
// -----

// Rows of a cache: an update is a slice along the original's last dimension
// and the index places it along the first; the region keeps the update.

// Only the row is checked: the column is the slice's, of the same size.
// CHECK-LABEL: func.func @rows
// CHECK-SAME:    (%[[CACHE:.*]]: tensor<8x4xf32>, %[[POS:.*]]: tensor<2x1xi32>, %[[ROWS:.*]]: tensor<2x4xf32>)
// CHECK:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[CACHE]])
// CHECK-NEXT:      scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC2:.*]] = %[[ACC]])
// CHECK-NEXT:        %[[U:.*]] = tensor.extract %[[ROWS]][%[[I]], %[[J]]]
// CHECK-NEXT:        arith.constant 0 : index
// CHECK-NEXT:        %[[X:.*]] = tensor.extract %[[POS]][%[[I]], %{{.*}}] : tensor<2x1xi32>
// CHECK-NEXT:        %[[ROW:.*]] = arith.index_cast %[[X]] : i32 to index
// CHECK-NEXT:        arith.cmpi sge, %[[ROW]]
// CHECK-NEXT:        arith.cmpi slt, %[[ROW]]
// CHECK-NEXT:        %[[OK:.*]] = arith.andi
// CHECK-NEXT:        cf.assert %[[OK]]
// CHECK-NEXT:        tensor.extract %[[ACC2]][%[[ROW]], %[[J]]]
// CHECK-NEXT:        tensor.insert %[[U]] into %[[ACC2]][%[[ROW]], %[[J]]]
func.func @rows(%cache: tensor<8x4xf32>, %positions: tensor<2x1xi32>, %rows: tensor<2x4xf32>) -> tensor<8x4xf32> {
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%rows, %positions : tensor<2x4xf32>, tensor<2x1xi32>) outs(%cache : tensor<8x4xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// An index that names a dimension the slice covers too is added to the
// element's place in the slice.

// CHECK-LABEL: func.func @offset_slice
// CHECK:         %[[X:.*]] = arith.index_cast
// CHECK-NEXT:    %[[AT:.*]] = arith.addi %[[J:.*]], %[[X]] : index
// CHECK-NEXT:    arith.cmpi sge, %[[AT]]
// CHECK-NEXT:    arith.cmpi slt, %[[AT]]
// CHECK:         tensor.insert %{{.*}} into %{{.*}}[%[[AT]]] : tensor<6xi64>
func.func @offset_slice(%original: tensor<6xi64>, %indices: tensor<1x1xi64>, %updates: tensor<1x2xi64>) -> tensor<6xi64> {
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<1x2xi64>, tensor<1x1xi64>) outs(%original : tensor<6xi64>) {
  ^bb0(%update: i64, %current: i64):
    tm_tensor.yield %update : i64
  } -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

func.func @depth_mismatch(%original: tensor<8x4xf32>, %indices: tensor<2x2xi64>, %updates: tensor<2x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{dimension_map must name one dimension per index, 2}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<2x4xf32>, tensor<2x2xi64>) outs(%original : tensor<8x4xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Dimension 0 is neither indexed nor a dimension of the slice.
func.func @uncovered(%original: tensor<8x4xf32>, %indices: tensor<2x1xi64>, %updates: tensor<2x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{dimension 0 of the original 'tensor<8x4xf32>' is neither indexed nor covered by an update's slice}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 1>} unique_indices(true) ins(%updates, %indices : tensor<2x4xf32>, tensor<2x1xi64>) outs(%original : tensor<8x4xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @outside(%original: tensor<8x4xf32>, %indices: tensor<2x1xi64>, %updates: tensor<2x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{dimension_map entry 2 is outside the original 'tensor<8x4xf32>' or repeated}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 2>} unique_indices(true) ins(%updates, %indices : tensor<2x4xf32>, tensor<2x1xi64>) outs(%original : tensor<8x4xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @element_type(%original: tensor<8xf32>, %indices: tensor<2x1xi64>, %updates: tensor<2xf16>) -> tensor<8xf32> {
  // expected-error @below {{updates 'tensor<2xf16>' must have the original's element type 'tensor<8xf32>'}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<2xf16>, tensor<2x1xi64>) outs(%original : tensor<8xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @float_indices(%original: tensor<8xf32>, %indices: tensor<2x1xf32>, %updates: tensor<2xf32>) -> tensor<8xf32> {
  // expected-error @below {{indices must be [N, depth] integers with a static depth, got 'tensor<2x1xf32>'}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<2xf32>, tensor<2x1xf32>) outs(%original : tensor<8xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @update_count(%original: tensor<8xf32>, %indices: tensor<2x1xi64>, %updates: tensor<3xf32>) -> tensor<8xf32> {
  // expected-error @below {{updates 'tensor<3xf32>' must have the indices' first dimension 'tensor<2x1xi64>'}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<3xf32>, tensor<2x1xi64>) outs(%original : tensor<8xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @region(%original: tensor<8xf32>, %indices: tensor<2x1xi64>, %updates: tensor<2xf32>) -> tensor<8xf32> {
  // expected-error @below {{region must yield one 'f32'}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<2xf32>, tensor<2x1xi64>) outs(%original : tensor<8xf32>) {
  ^bb0(%update: f32, %current: f32):
    %c = arith.constant 0 : i32
    tm_tensor.yield %c : i32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

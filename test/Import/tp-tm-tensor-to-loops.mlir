// RUN: tp-opt %s --split-input-file --tp-tm-tensor-to-loops --verify-diagnostics | FileCheck %s --enable-var-scope

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
// CHECK:           cf.assert %{{.*}}, "tm_tensor.scatter at {{.*}}tp-tm-tensor-to-loops.mlir:7:8: an index places an update outside the original tensor<10x8x6xf32>"
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

// torch-mlir's sort (descending, with the positions): for every element one
// bubble pass over the adjacent pairs along the dimension; the region's
// false swaps the pair in both outputs.

// CHECK-LABEL: func.func @sort
// CHECK-SAME:    (%[[V:.*]]: tensor<2x5xf32>, %[[P:.*]]: tensor<2x5xi64>)
// CHECK:         %[[LAST:.*]] = arith.subi %[[C5:.*]], %[[C1:.*]] : index
// CHECK:         scf.for %[[ROW:.*]] = {{.*}} iter_args(%{{.*}} = %[[V]], %{{.*}} = %[[P]])
// CHECK:           scf.for {{.*}} to %[[C5]]
// CHECK:             scf.for %[[I:.*]] = %{{.*}} to %[[LAST]] step %{{.*}} iter_args(%[[VS:.*]] = %{{.*}}, %[[PS:.*]] = %{{.*}})
// CHECK-NEXT:          %[[NEXT:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT:          %[[A:.*]] = tensor.extract %[[VS]][%[[ROW]], %[[I]]]
// CHECK-NEXT:          %[[B:.*]] = tensor.extract %[[VS]][%[[ROW]], %[[NEXT]]]
// CHECK-NEXT:          %[[PA:.*]] = tensor.extract %[[PS]][%[[ROW]], %[[I]]]
// CHECK-NEXT:          %[[PB:.*]] = tensor.extract %[[PS]][%[[ROW]], %[[NEXT]]]
// CHECK-NEXT:          %[[KEEP:.*]] = arith.cmpf oge, %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[LO:.*]] = arith.select %[[KEEP]], %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[HI:.*]] = arith.select %[[KEEP]], %[[B]], %[[A]] : f32
// CHECK-NEXT:          %[[V1:.*]] = tensor.insert %[[LO]] into %[[VS]][%[[ROW]], %[[I]]]
// CHECK-NEXT:          %[[V2:.*]] = tensor.insert %[[HI]] into %[[V1]][%[[ROW]], %[[NEXT]]]
// CHECK-NEXT:          %[[PLO:.*]] = arith.select %[[KEEP]], %[[PA]], %[[PB]] : i64
// CHECK-NEXT:          %[[PHI:.*]] = arith.select %[[KEEP]], %[[PB]], %[[PA]] : i64
// CHECK-NEXT:          %[[P1:.*]] = tensor.insert %[[PLO]] into %[[PS]][%[[ROW]], %[[I]]]
// CHECK-NEXT:          %[[P2:.*]] = tensor.insert %[[PHI]] into %[[P1]][%[[ROW]], %[[NEXT]]]
// CHECK-NEXT:          scf.yield %[[V2]], %[[P2]]
// CHECK-NOT:     tm_tensor
func.func @sort(%values: tensor<2x5xf32>, %positions: tensor<2x5xi64>) -> (tensor<2x5xf32>, tensor<2x5xi64>) {
  %0:2 = tm_tensor.sort dimension(1) outs(%values, %positions : tensor<2x5xf32>, tensor<2x5xi64>) {
  ^bb0(%a: f32, %b: f32, %pa: i64, %pb: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %ge : i1
  } -> tensor<2x5xf32>, tensor<2x5xi64>
  return %0#0, %0#1 : tensor<2x5xf32>, tensor<2x5xi64>
}

// -----

// torch-mlir's topk: each element walks the k kept ones; the region is
// evaluated both ways to find ties, where the lower index stays.

// The outputs' rows must be the values' (dynamic here): checked at run time.
// CHECK-LABEL: func.func @topk
// CHECK-SAME:    (%[[VALUES:.*]]: tensor<?x8xf32>, %[[KEPT:.*]]: tensor<?x2xf32>, %[[KEPT_I:.*]]: tensor<?x2xi32>)
// CHECK-COUNT-2: cf.assert %{{.*}}, "tm_tensor.topk at {{.*}}: the operands differ in size"
// CHECK:         scf.for %[[ROW:.*]] = {{.*}} iter_args(%{{.*}} = %[[KEPT]], %{{.*}} = %[[KEPT_I]])
// CHECK:           scf.for %[[N:.*]] = {{.*}} iter_args(%[[OV:.*]] = %{{.*}}, %[[OI:.*]] = %{{.*}})
// CHECK-NEXT:        %[[X:.*]] = tensor.extract %[[VALUES]][%[[ROW]], %[[N]]]
// CHECK-NEXT:        %[[XI:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK-NEXT:        %[[W:.*]]:4 = scf.for %[[J:.*]] = {{.*}} iter_args(%[[CV:.*]] = %[[X]], %[[CI:.*]] = %[[XI]], %[[SV:.*]] = %[[OV]], %[[SI:.*]] = %[[OI]])
// CHECK-NEXT:          %[[KV:.*]] = tensor.extract %[[SV]][%[[ROW]], %[[J]]]
// CHECK-NEXT:          %[[KI:.*]] = tensor.extract %[[SI]][%[[ROW]], %[[J]]]
// CHECK-NEXT:          %[[TAKES:.*]] = arith.cmpf ogt, %[[CV]], %[[KV]] : f32
// CHECK-NEXT:          %[[YIELDS:.*]] = arith.cmpf ogt, %[[KV]], %[[CV]] : f32
// CHECK-NEXT:          %[[TIE:.*]] = arith.cmpi eq, %[[TAKES]], %[[YIELDS]] : i1
// CHECK-NEXT:          %[[EARLIER:.*]] = arith.cmpi slt, %[[CI]], %[[KI]] : i32
// CHECK-NEXT:          %[[TIE_EARLIER:.*]] = arith.andi %[[TIE]], %[[EARLIER]] : i1
// CHECK-NEXT:          %[[TAKES_I:.*]] = arith.ori %[[TAKES]], %[[TIE_EARLIER]] : i1
// CHECK-NEXT:          %[[NV:.*]] = arith.select %[[TAKES]], %[[CV]], %[[KV]] : f32
// CHECK-NEXT:          %[[SV2:.*]] = tensor.insert %[[NV]] into %[[SV]][%[[ROW]], %[[J]]]
// CHECK-NEXT:          %[[NI:.*]] = arith.select %[[TAKES_I]], %[[CI]], %[[KI]] : i32
// CHECK-NEXT:          %[[SI2:.*]] = tensor.insert %[[NI]] into %[[SI]][%[[ROW]], %[[J]]]
// CHECK-NEXT:          %[[WV:.*]] = arith.select %[[TAKES]], %[[KV]], %[[CV]] : f32
// CHECK-NEXT:          %[[WI:.*]] = arith.select %[[TAKES_I]], %[[KI]], %[[CI]] : i32
// CHECK-NEXT:          scf.yield %[[WV]], %[[WI]], %[[SV2]], %[[SI2]]
// CHECK:           scf.yield %[[W]]#2, %[[W]]#3
// CHECK-NOT:     tm_tensor
func.func @topk(%values: tensor<?x8xf32>, %kept: tensor<?x2xf32>, %kept_indices: tensor<?x2xi32>) -> (tensor<?x2xf32>, tensor<?x2xi32>) {
  %0:2 = tm_tensor.topk dimension(1) ins(%values : tensor<?x8xf32>) outs(%kept, %kept_indices : tensor<?x2xf32>, tensor<?x2xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    tm_tensor.yield %gt : i1
  } -> tensor<?x2xf32>, tensor<?x2xi32>
  return %0#0, %0#1 : tensor<?x2xf32>, tensor<?x2xi32>
}

// -----

func.func @depth_mismatch(%original: tensor<8x4xf32>, %indices: tensor<2x2xi64>, %updates: tensor<2x4xf32>) -> tensor<8x4xf32> {
  // expected-error @below {{dimension_map has 1 entries for indices of depth 2}}
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

// -----

func.func @sort_region(%values: tensor<5xf32>, %positions: tensor<5xi64>) -> (tensor<5xf32>, tensor<5xi64>) {
  // expected-error @below {{region must take ('f32', 'f32', 'i64', 'i64')}}
  %0:2 = tm_tensor.sort dimension(0) outs(%values, %positions : tensor<5xf32>, tensor<5xi64>) {
  ^bb0(%a: f32, %b: f32):
    %ge = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %ge : i1
  } -> tensor<5xf32>, tensor<5xi64>
  return %0#0, %0#1 : tensor<5xf32>, tensor<5xi64>
}

// -----

func.func @sort_shapes(%values: tensor<5xf32>, %positions: tensor<4xi64>) -> (tensor<5xf32>, tensor<4xi64>) {
  // expected-error @below {{outputs must be ranked tensors of one shape, got 'tensor<4xi64>'}}
  %0:2 = tm_tensor.sort dimension(0) outs(%values, %positions : tensor<5xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %b: f32, %pa: i64, %pb: i64):
    %ge = arith.cmpf oge, %a, %b : f32
    tm_tensor.yield %ge : i1
  } -> tensor<5xf32>, tensor<4xi64>
  return %0#0, %0#1 : tensor<5xf32>, tensor<4xi64>
}

// -----

func.func @topk_indices(%values: tensor<8xf32>, %kept: tensor<2xf32>, %kept_indices: tensor<2xi64>) -> (tensor<2xf32>, tensor<2xi64>) {
  // expected-error @below {{output indices 'tensor<2xi64>' must be i32 of the output values' shape 'tensor<2xf32>'}}
  %0:2 = tm_tensor.topk dimension(0) ins(%values : tensor<8xf32>) outs(%kept, %kept_indices : tensor<2xf32>, tensor<2xi64>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    tm_tensor.yield %gt : i1
  } -> tensor<2xf32>, tensor<2xi64>
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi64>
}

// -----

func.func @topk_region(%values: tensor<8xf32>, %kept: tensor<2xf32>, %kept_indices: tensor<2xi32>) -> (tensor<2xf32>, tensor<2xi32>) {
  // expected-error @below {{region must yield one 'i1'}}
  %0:2 = tm_tensor.topk dimension(0) ins(%values : tensor<8xf32>) outs(%kept, %kept_indices : tensor<2xf32>, tensor<2xi32>) {
  ^bb0(%a: f32, %b: f32):
    tm_tensor.yield %a : f32
  } -> tensor<2xf32>, tensor<2xi32>
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi32>
}

// -----

func.func @topk_rows(%values: tensor<3x8xf32>, %kept: tensor<4x2xf32>, %kept_indices: tensor<4x2xi32>) -> (tensor<4x2xf32>, tensor<4x2xi32>) {
  // expected-error @below {{output values 'tensor<4x2xf32>' must have the values' shape 'tensor<3x8xf32>' but along dimension 1}}
  %0:2 = tm_tensor.topk dimension(1) ins(%values : tensor<3x8xf32>) outs(%kept, %kept_indices : tensor<4x2xf32>, tensor<4x2xi32>) {
  ^bb0(%a: f32, %b: f32):
    %gt = arith.cmpf ogt, %a, %b : f32
    tm_tensor.yield %gt : i1
  } -> tensor<4x2xf32>, tensor<4x2xi32>
  return %0#0, %0#1 : tensor<4x2xf32>, tensor<4x2xi32>
}

// -----

func.func @unsigned_indices(%original: tensor<8xf32>, %indices: tensor<2x1xui32>, %updates: tensor<2xf32>) -> tensor<8xf32> {
  // expected-error @below {{indices must be [N, depth] integers with a static depth, got 'tensor<2x1xui32>'}}
  %0 = tm_tensor.scatter {dimension_map = array<i64: 0>} unique_indices(true) ins(%updates, %indices : tensor<2xf32>, tensor<2x1xui32>) outs(%original : tensor<8xf32>) {
  ^bb0(%update: f32, %current: f32):
    tm_tensor.yield %update : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

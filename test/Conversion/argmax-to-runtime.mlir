// RUN: tp-opt %s -split-input-file --tp-argmax-to-runtime | FileCheck %s

#in = affine_map<(i, j, k) -> (i, j, k)>
#out = affine_map<(i, j, k) -> (i, j)>

// A decode step's argmax over [B, 1, V] logits: rows of V, one result each.
// CHECK-LABEL: func.func @next_token
// CHECK-SAME: (%[[L:.*]]: memref<8x1x64xf32>, %[[M:.*]]: memref<8x1xf32>, %[[I:.*]]: memref<8x1xi64>)
// CHECK-DAG: %[[ROWS:.*]] = memref.collapse_shape %[[L]] {{\[\[}}0, 1], [2]] : memref<8x1x64xf32> into memref<8x64xf32>
// CHECK-DAG: %[[MAX:.*]] = memref.collapse_shape %[[M]] {{\[\[}}0, 1]] : memref<8x1xf32> into memref<8xf32>
// CHECK-DAG: %[[IDX:.*]] = memref.collapse_shape %[[I]] {{\[\[}}0, 1]] : memref<8x1xi64> into memref<8xi64>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[A:.*]] = memref.cast %[[ROWS]] : memref<8x64xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[B:.*]] = memref.cast %[[MAX]]
// CHECK: %[[C:.*]] = memref.cast %[[IDX]]
// CHECK: call @tprt_argmax_f32(%[[A]], %[[B]], %[[C]], %[[ZERO]])
// CHECK-NOT: linalg.generic
func.func @next_token(%logits: memref<8x1x64xf32>, %max: memref<8x1xf32>, %idx: memref<8x1xi64>) {
  linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%logits : memref<8x1x64xf32>) outs(%max, %idx : memref<8x1xf32>, memref<8x1xi64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i64
    %m2 = arith.maximumf %x, %m : f32
    %gt = arith.cmpf ogt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  return
}

// -----

// After tp-shard: each rank's index starts at its first position, passed on.
// CHECK-LABEL: func.func @sharded
// CHECK-SAME: (%{{.*}}: memref<4x32xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xi64>, %[[FIRST:.*]]: index)
// CHECK: %[[OFFSET:.*]] = arith.index_cast %[[FIRST]] : index to i64
// CHECK: call @tprt_argmax_f32(%{{.*}}, %{{.*}}, %{{.*}}, %[[OFFSET]])
func.func @sharded(%logits: memref<4x32xf32>, %max: memref<4xf32>, %idx: memref<4xi64>, %first: index) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%logits : memref<4x32xf32>) outs(%max, %idx : memref<4xf32>, memref<4xi64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %g = arith.addi %k, %first : index
    %ki = arith.index_cast %g : index to i64
    %m2 = arith.maximumf %x, %m : f32
    %gt = arith.cmpf ogt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  return
}

// -----

// One row: the input gains a unit dimension, the 0-d results one too.
// CHECK-LABEL: func.func @one_row
// CHECK-DAG: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 64] : memref<64xf32> into memref<1x64xf32>
// CHECK-DAG: memref.expand_shape %{{.*}} [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK-DAG: memref.expand_shape %{{.*}} [] output_shape [1] : memref<i64> into memref<1xi64>
// CHECK: call @tprt_argmax_f32
func.func @one_row(%logits: memref<64xf32>, %max: memref<f32>, %idx: memref<i64>) {
  linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>, affine_map<(k) -> ()>], iterator_types = ["reduction"]} ins(%logits : memref<64xf32>) outs(%max, %idx : memref<f32>, memref<i64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 0 : index
    %ki = arith.index_cast %k : index to i64
    %m2 = arith.maximumf %x, %m : f32
    %gt = arith.cmpf ogt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  return
}

// -----

// Not the runtime's semantics: maxnumf ignores a NaN, a select keeps the
// first NaN out, an argmin, an i32 index, a reduction over the outer loop;
// results whose rows no view can collapse. Nothing is left of the tries.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: call
// CHECK-NOT: memref.collapse_shape
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: call
func.func @kept(%logits: memref<4x32xf32>, %max: memref<4xf32>, %idx: memref<4xi64>, %idx32: memref<4xi32>, %cols: memref<32xf32>, %cidx: memref<32xi64>, %l3: memref<2x2x32xf32>, %m3: memref<2x2xf32, strided<[3, 1]>>, %i3: memref<2x2xi64, strided<[3, 1]>>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%l3 : memref<2x2x32xf32>) outs(%m3, %i3 : memref<2x2xf32, strided<[3, 1]>>, memref<2x2xi64, strided<[3, 1]>>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i64
    %m2 = arith.maximumf %x, %m : f32
    %gt = arith.cmpf ogt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%logits : memref<4x32xf32>) outs(%max, %idx : memref<4xf32>, memref<4xi64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %m2 = arith.maxnumf %x, %m : f32
    %gt = arith.cmpf ogt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%logits : memref<4x32xf32>) outs(%max, %idx : memref<4xf32>, memref<4xi64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %x, %m : f32
    %m2 = arith.select %gt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%logits : memref<4x32xf32>) outs(%max, %idx : memref<4xf32>, memref<4xi64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %m2 = arith.minimumf %x, %m : f32
    %lt = arith.cmpf olt, %x, %m : f32
    %i2 = arith.select %lt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%logits : memref<4x32xf32>) outs(%max, %idx32 : memref<4xf32>, memref<4xi32>) {
  ^bb0(%x: f32, %m: f32, %i: i32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %m2 = arith.maximumf %x, %m : f32
    %gt = arith.cmpf ogt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i32
    linalg.yield %m2, %i2 : f32, i32
  }
  linalg.generic {indexing_maps = [affine_map<(k, i) -> (k, i)>, affine_map<(k, i) -> (i)>, affine_map<(k, i) -> (i)>], iterator_types = ["reduction", "parallel"]} ins(%logits : memref<4x32xf32>) outs(%cols, %cidx : memref<32xf32>, memref<32xi64>) {
  ^bb0(%x: f32, %m: f32, %i: i64):
    %k = linalg.index 0 : index
    %ki = arith.index_cast %k : index to i64
    %m2 = arith.maximumf %x, %m : f32
    %gt = arith.cmpf ogt, %x, %m : f32
    %i2 = arith.select %gt, %ki, %i : i64
    linalg.yield %m2, %i2 : f32, i64
  }
  return
}

// RUN: tp-opt %s --tp-lower-cuda --mlir-print-ir-after=tp-host-scalar-reads -o /dev/null 2>&1 | FileCheck %s
// REQUIRES: cuda-toolkit
// The cuda pipeline's kernel loops, before they are mapped to blocks and
// threads: one outermost parallel loop is one kernel.

// A reduction along rows and the fill of its init: one row kernel
// (tp-row-kernels), a block per row, its threads striding along the row.
// The copy into the result is a kernel of its own: %out, an argument, may
// be the buffer %x is.
// CHECK-LABEL: func.func @row_sums(
// CHECK-SAME: %[[X:[^:]*]]: memref<8x1024xf32>, %[[OUT:[^:]*]]: memref<8xf32>)
// CHECK: %[[INIT:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: scf.parallel (%[[ROW:.*]]) = (%c0) to (%c8) step (%c1) {
// CHECK: memref.store %{{.*}}, %[[INIT]][%[[ROW]]]
// CHECK: scf.parallel (%[[T:.*]]) = {{.*}} init
// CHECK-NEXT: scf.for %{{.*}} = %[[T]] to %c1024 step %c1024
// CHECK: memref.load %[[X]][%[[ROW]], %{{.*}}]
// CHECK: scf.reduce
// CHECK: memref.store %{{.*}}, %[[INIT]][%[[ROW]]]
// CHECK: } {tpcuda.row_kernel}
// CHECK-NEXT: scf.parallel (%[[I:.*]]) = (%c0) to (%c8)
// CHECK-NEXT: memref.load %[[INIT]][%[[I]]]
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT]][%[[I]]]
// CHECK-NOT: scf.parallel
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @row_sums(%x: tensor<8x1024xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x1024xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// A reduction across rows is split (tp-split-reductions): the partials,
// each thread's accumulator carried through its loop
// (tp-promote-accumulators), not stored to memory every iteration; then
// their merge along the partials' rows, a row kernel with the fill of the
// original init and, here, the copy into the result (the merge reads no
// argument), run with the fold into the init (tp-fuse-kernel-loops).
// CHECK-LABEL: func.func @column_sums(
// CHECK-SAME: %[[X:[^:]*]]: memref<1024x8xf32>, %[[OUT:[^:]*]]: memref<8xf32>)
// CHECK: %[[INIT:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: %[[PARTIALS:.*]] = memref.alloc() {{.*}} : memref<8x32xf32>
// CHECK: scf.parallel (%[[COL:.*]], %[[LANE:.*]]) = (%c0, %c0) to (%c8, %c32)
// CHECK-NEXT: memref.store %[[ZERO:.*]], %[[PARTIALS]][%[[COL]], %[[LANE]]]
// CHECK-NEXT: %[[START:.*]] = memref.load %[[PARTIALS]][%[[COL]], %[[LANE]]]
// CHECK-NEXT: %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[START]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[PARTIALS]][%[[COL]], %[[LANE]]]
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%c8)
// CHECK: memref.store %[[ZERO]], %[[INIT]][%[[I]]]
// CHECK: memref.load %[[PARTIALS]][%[[I]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[I]]]
// CHECK: } {tpcuda.row_kernel}
// CHECK-NOT: scf.parallel
// CHECK: memref.dealloc
func.func @column_sums(%x: tensor<1024x8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<1024x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// RUN: tp-opt %s --tp-lower-cuda --mlir-print-ir-after=tp-host-scalar-reads -o /dev/null 2>&1 | FileCheck %s
// REQUIRES: cuda-toolkit
// The cuda pipeline's kernel loops, before they are tiled into kernels: one
// parallel loop is one kernel. Adjacent loops of the same bounds where the
// second reads only what the first wrote at the same point are fused
// (tp-fuse-kernel-loops), once tp-cluster-kernel-loops has
// moved the allocations and deallocations from between them: a split
// reduction is two kernels, its partials, then the fill of the original
// init (tp-split-reductions moves it next to the merge), the merge and the
// copy into the result. Each thread's accumulator is carried through its
// loop (tp-promote-accumulators), not stored to memory every iteration.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: memref<8x1024xf32>, %[[OUT:[^:]*]]: memref<8xf32>)
// CHECK: %[[INIT:.*]] = memref.alloc() {{.*}} : memref<8xf32>
// CHECK: %[[PARTIALS:.*]] = memref.alloc() {{.*}} : memref<8x32xf32>
// CHECK: scf.parallel (%[[ROW:.*]], %[[LANE:.*]]) = (%c0, %c0) to (%c8, %c32)
// CHECK-NEXT: memref.store %[[ZERO:.*]], %[[PARTIALS]][%[[ROW]], %[[LANE]]]
// CHECK-NEXT: %[[START:.*]] = memref.load %[[PARTIALS]][%[[ROW]], %[[LANE]]]
// CHECK-NEXT: %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[START]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[PARTIALS]][%[[ROW]], %[[LANE]]]
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%c8)
// CHECK-NEXT: memref.store %[[ZERO]], %[[INIT]][%[[I]]]
// CHECK-NEXT: memref.load %[[INIT]][%[[I]]]
// CHECK-NEXT: scf.for {{.*}} iter_args
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[I]]]
// CHECK-NOT: scf.parallel
// CHECK: memref.dealloc
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @forward(%x: tensor<8x1024xf32>) -> tensor<8xf32> {
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

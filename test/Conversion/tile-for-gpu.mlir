// RUN: tp-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(tp-tile-for-gpu{block-size=128}))" -verify-diagnostics | FileCheck %s

// A 4x300 loop: the innermost dimension fills the block (128 threads), the
// outer one gets tiles of 1 (a thread runs its one point sequentially);
// blocks and threads map x to the innermost dimension.

// CHECK-LABEL: func.func @add
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[ROWS:.*]] = arith.muli %[[C1]], %{{.*}} : index
// CHECK: %[[COLS:.*]] = arith.muli %[[C1]], %[[C128]] : index
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to ({{.*}}) step (%[[ROWS]], %[[COLS]]) {
// CHECK:   scf.parallel
// CHECK:     scf.if
// CHECK:       memref.load
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = sequential, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>]}
func.func @add(%a: memref<4x300xf32>, %b: memref<4x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c300 = arith.constant 300 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c300) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x300xf32>
    memref.store %x, %b[%i, %j] : memref<4x300xf32>
  }
  return
}

// -----

// A dimension of one iteration takes no processor: x goes to the next one.

// CHECK-LABEL: func.func @unit_inner
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x, {{.*}}>, #gpu.loop_dim_map<processor = sequential, {{.*}}>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = sequential, {{.*}}>]}
func.func @unit_inner(%a: memref<300x1xf32>, %b: memref<300x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c300, %c1) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<300x1xf32>
    memref.store %x, %b[%i, %j] : memref<300x1xf32>
  }
  return
}

// -----

// A store with no parallel loop around it would run on the host.

func.func @scalar_store(%b: memref<f32>) {
  %x = arith.constant 1.0 : f32
  // expected-error @+1 {{memory access outside a parallel loop: it would run on the host against device memory}}
  memref.store %x, %b[] : memref<f32>
  return
}

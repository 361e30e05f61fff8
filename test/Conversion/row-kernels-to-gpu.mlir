// RUN: tp-opt %s --tp-row-kernels-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

// A block per row, as many threads as the widest thread loop; the index
// of each thread loop is the thread's, a loop over fewer threads runs
// under `if`, a reduction is a uniform gpu.all_reduce, and a barrier
// stands between any two stages or loads. What the host reads at row
// level (a position) every thread reads.
// CHECK-LABEL: func.func @row_kernel(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x64xf32>, %[[S:[^:]*]]: memref<4xf32>, %[[Y:[^:]*]]: memref<4x64xf32>, %[[P:[^:]*]]: memref<i64>)
// CHECK: %cst = arith.constant
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[THREADS:.*]] = arith.constant 64 : index
// CHECK-NEXT: gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[THREADS]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) {
// CHECK-NEXT: memref.load %[[P]][]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[PART:.*]] = scf.for %{{.*}} = %[[T]] to %c64
// CHECK: %[[ALL:.*]] = gpu.all_reduce maxnumf %[[PART]] uniform
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[ONE_T:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.cmpi ult, %[[T]], %[[ONE_T]]
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: memref.store %[[ALL]], %[[S]][%[[ROW]]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for %[[J:.*]] = %[[T]] to %c64
// CHECK: memref.store %{{.*}}, %[[Y]][%[[ROW]], %[[J]]]
// CHECK: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: scf.parallel
func.func @row_kernel(%x: memref<4x64xf32>, %s: memref<4xf32>, %y: memref<4x64xf32>, %pos: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %nan = arith.constant 0x7FC00000 : f32
  scf.parallel (%r) = (%c0) to (%c4) step (%c1) {
    %p = memref.load %pos[] : memref<i64>
    %m = scf.parallel (%t) = (%c0) to (%c64) step (%c1) init (%nan) -> f32 {
      %part = scf.for %j = %t to %c64 step %c64 iter_args(%acc = %nan) -> f32 {
        %v = memref.load %x[%r, %j] : memref<4x64xf32>
        %n = arith.maxnumf %v, %acc : f32
        scf.yield %n : f32
      }
      scf.reduce(%part : f32) {
      ^bb0(%a: f32, %b: f32):
        %n = arith.maxnumf %a, %b : f32
        scf.reduce.return %n : f32
      }
    }
    scf.parallel (%t) = (%c0) to (%c1) step (%c1) {
      memref.store %m, %s[%r] : memref<4xf32>
      scf.reduce
    }
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      scf.for %j = %t to %c64 step %c64 {
        %v = memref.load %x[%r, %j] : memref<4x64xf32>
        %w = memref.load %s[%r] : memref<4xf32>
        %q = arith.subf %v, %w : f32
        %i = arith.index_cast %j : index to i64
        %keep = arith.cmpi sle, %i, %p : i64
        %o = arith.select %keep, %q, %nan : f32
        memref.store %o, %y[%r, %j] : memref<4x64xf32>
      }
      scf.reduce
    }
    scf.reduce
  } {tpcuda.row_kernel}
  return
}

// -----

// A row-level load after a stage waits for it, and the stage after the
// load waits for every thread's load.
// CHECK-LABEL: func.func @load_between(
// CHECK: scf.if
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[S:.*]] = memref.load
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for
// CHECK: gpu.terminator
func.func @load_between(%s: memref<4xf32>, %y: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%r) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%t) = (%c0) to (%c1) step (%c1) {
      memref.store %one, %s[%r] : memref<4xf32>
      scf.reduce
    }
    %v = memref.load %s[%r] : memref<4xf32>
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      scf.for %j = %t to %c64 step %c64 {
        memref.store %v, %y[%r, %j] : memref<4x64xf32>
        memref.store %v, %s[%r] : memref<4xf32>
      }
      scf.reduce
    }
    scf.reduce
  } {tpcuda.row_kernel}
  return
}

// -----

// Only thread loops may write memory: a row-level store would run on
// every thread.
func.func @row_store(%s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%r) = (%c0) to (%c4) step (%c1) {
    // expected-error @below {{row kernel: only thread loops may write memory}}
    memref.store %zero, %s[%r] : memref<4xf32>
    scf.parallel (%t) = (%c0) to (%c1) step (%c1) {
      memref.store %zero, %s[%r] : memref<4xf32>
      scf.reduce
    }
    scf.reduce
  } {tpcuda.row_kernel}
  return
}

// -----

// A reduction on fewer threads than the block's would leave the others'
// values out of the all-reduce.
func.func @narrow_reduction(%x: memref<4x64xf32>, %s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%r) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%t) = (%c0) to (%c64) step (%c1) {
      memref.store %zero, %x[%r, %t] : memref<4x64xf32>
      scf.reduce
    }
    // expected-error @below {{row kernel: a reduction must run on every thread, to one value}}
    %m = scf.parallel (%t) = (%c0) to (%c32) step (%c1) init (%zero) -> f32 {
      %v = memref.load %x[%r, %t] : memref<4x64xf32>
      scf.reduce(%v : f32) {
      ^bb0(%a: f32, %b: f32):
        %n = arith.addf %a, %b : f32
        scf.reduce.return %n : f32
      }
    }
    scf.reduce
  } {tpcuda.row_kernel}
  return
}

// -----

// gpu.all_reduce has no subtraction.
func.func @unknown_combiner(%x: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%r) = (%c0) to (%c4) step (%c1) {
    // expected-error @below {{row kernel: a reduction gpu.all_reduce does not know}}
    %m = scf.parallel (%t) = (%c0) to (%c64) step (%c1) init (%zero) -> f32 {
      %v = memref.load %x[%r, %t] : memref<4x64xf32>
      scf.reduce(%v : f32) {
      ^bb0(%a: f32, %b: f32):
        %n = arith.subf %a, %b : f32
        scf.reduce.return %n : f32
      }
    }
    scf.reduce
  } {tpcuda.row_kernel}
  return
}

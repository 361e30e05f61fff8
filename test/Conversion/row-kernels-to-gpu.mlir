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

// tp-row-kernels' argmax: the threads' folds into scratch, then two
// all-reduces (the best value, the smallest index holding it), each
// followed by a barrier, and the fold into the inits on thread 0.
// CHECK-LABEL: func.func @argmax(
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: memref.store
// CHECK: memref.store
// CHECK-NEXT: gpu.barrier
// CHECK: %[[BEST:.*]] = gpu.all_reduce maximumf
// CHECK: gpu.barrier
// CHECK: arith.cmpf oeq, %{{.*}}, %[[BEST]]
// CHECK: %[[FIRST:.*]] = gpu.all_reduce minsi
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: arith.select %{{.*}}, %[[FIRST]]
// CHECK: gpu.terminator
func.func @argmax(%arg0: memref<2x100xf32>, %arg1: memref<2xf32>, %arg2: memref<2xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c100 = arith.constant 100 : index
  %c2 = arith.constant 2 : index
  %alloc = memref.alloc() : memref<2x128xf32>
  %alloc_0 = memref.alloc() : memref<2x128xi64>
  scf.parallel (%arg3) = (%c0) to (%c2) step (%c1) {
    %cst = arith.constant 0xFF800000 : f32
    %c9223372036854775807_i64 = arith.constant 9223372036854775807 : i64
    scf.parallel (%arg4) = (%c0) to (%c128) step (%c1) {
      %2:2 = scf.for %arg5 = %arg4 to %c100 step %c128 iter_args(%arg6 = %cst, %arg7 = %c9223372036854775807_i64) -> (f32, i64) {
        %3 = memref.load %arg0[%arg3, %arg5] : memref<2x100xf32>
        %4 = arith.index_cast %arg5 : index to i64
        %5 = arith.cmpf ogt, %3, %arg6 : f32
        %6 = arith.maximumf %3, %arg6 : f32
        %7 = arith.select %5, %4, %arg7 : i64
        scf.yield %6, %7 : f32, i64
      }
      memref.store %2#0, %alloc[%arg3, %arg4] : memref<2x128xf32>
      memref.store %2#1, %alloc_0[%arg3, %arg4] : memref<2x128xi64>
      scf.reduce 
    }
    %0 = scf.parallel (%arg4) = (%c0) to (%c128) step (%c1) init (%cst) -> f32 {
      %2 = memref.load %alloc[%arg3, %arg4] : memref<2x128xf32>
      scf.reduce(%2 : f32) {
      ^bb0(%arg5: f32, %arg6: f32):
        %3 = arith.maximumf %arg5, %arg6 : f32
        scf.reduce.return %3 : f32
      }
    }
    %1 = scf.parallel (%arg4) = (%c0) to (%c128) step (%c1) init (%c9223372036854775807_i64) -> i64 {
      %2 = memref.load %alloc[%arg3, %arg4] : memref<2x128xf32>
      %3 = memref.load %alloc_0[%arg3, %arg4] : memref<2x128xi64>
      %4 = arith.cmpf oeq, %2, %0 : f32
      %5 = arith.select %4, %3, %c9223372036854775807_i64 : i64
      scf.reduce(%5 : i64) {
      ^bb0(%arg5: i64, %arg6: i64):
        %6 = arith.minsi %arg5, %arg6 : i64
        scf.reduce.return %6 : i64
      }
    }
    scf.parallel (%arg4) = (%c0) to (%c1) step (%c1) {
      %2 = memref.load %arg1[%arg3] : memref<2xf32>
      %3 = memref.load %arg2[%arg3] : memref<2xi64>
      %4 = arith.maximumf %0, %2 : f32
      %5 = arith.cmpf ogt, %0, %2 : f32
      %6 = arith.select %5, %1, %3 : i64
      memref.store %4, %arg1[%arg3] : memref<2xf32>
      memref.store %6, %arg2[%arg3] : memref<2xi64>
      scf.reduce 
    }
    scf.reduce 
  } {tpcuda.row_kernel}
  memref.dealloc %alloc : memref<2x128xf32>
  memref.dealloc %alloc_0 : memref<2x128xi64>
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

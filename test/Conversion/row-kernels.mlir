// RUN: tp-opt %s --tp-row-kernels --split-input-file | FileCheck %s
// RUN: tp-opt %s --tp-row-kernels=max-threads=64 --split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: not tp-opt %s --tp-row-kernels=max-threads=2048 --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: tp-row-kernels: max-threads must be from 32 to 1024 (a CUDA block), not 2048

// RMSNorm: the residual add, the fill of the sum's init, the sum of squares
// and the scaling are one loop over the 4 rows, a thread loop each; the
// reduction folds each thread's elements from zero, then into the init.
// CHECK-LABEL: func.func @rms_norm(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x256xf32>, %[[R:[^:]*]]: memref<4x256xf32>, %[[W:[^:]*]]: memref<256xf32>)
// CHECK: %[[H:.*]] = memref.alloc() : memref<4x256xf32>
// CHECK: %[[SS:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x256xf32>
// Threads: the row length rounded up to 32, at most max-threads; each
// thread strides along the row.
// CHECK: %[[THREADS:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[LENGTH:.*]] = arith.constant 256 : index
// CHECK: scf.parallel (%[[ROW:.*]]) = (%c0) to (%c4) step (%c1) {
// CHECK-NEXT: scf.parallel (%[[T:.*]]) = (%c0) to (%[[THREADS:.*]]) step (%c1) {
// CHECK-NEXT: scf.for %[[J:.*]] = %[[T]] to %[[LENGTH:.*]] step %[[THREADS]] {
// CHECK: memref.load %[[X]][%[[ROW]], %[[J]]]
// CHECK: memref.store %{{.*}}, %[[H]][%[[ROW]], %[[J]]]
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: memref.store %{{.*}}, %[[SS]][%[[ROW]]]
// CHECK: %[[SUM:.*]] = scf.parallel (%[[T2:.*]]) = (%c0) to (%[[THREADS]]) step (%c1) init (%[[ZERO:.*]]) -> f32 {
// CHECK-NEXT: %[[PART:.*]] = scf.for %[[J2:.*]] = %[[T2]] to %[[LENGTH]] step %[[THREADS]] iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[E:.*]] = memref.load %[[H]][%[[ROW]], %[[J2]]]
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[E]], %[[E]]
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[SQ]], %[[ACC]]
// CHECK-NEXT: scf.yield %[[NEXT]]
// CHECK: scf.reduce(%[[PART]] : f32) {
// CHECK: arith.addf
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[SS]][%[[ROW]]]
// CHECK-NEXT: %[[NEW:.*]] = arith.addf %[[SUM]], %[[OLD]]
// CHECK-NEXT: memref.store %[[NEW]], %[[SS]][%[[ROW]]]
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%[[THREADS]]) step (%c1) {
// CHECK: memref.load %[[SS]][%[[ROW]]]
// CHECK: memref.load %[[W]][%{{.*}}]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[ROW]], %{{.*}}]
// CHECK: } {tpcuda.row_kernel}
// CHECK-NOT: linalg.
// CHECK: memref.dealloc %[[SS]]
// CHECK-NEXT: memref.dealloc %[[H]]
// CHECK-NEXT: return %[[OUT]]
// SMALL-LABEL: func.func @rms_norm(
// SMALL: %[[THREADS:.*]] = arith.constant 64 : index
// SMALL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[THREADS]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @rms_norm(%x: memref<4x256xf32>, %r: memref<4x256xf32>, %w: memref<256xf32>) -> memref<4x256xf32> {
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<4x256xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<4x256xf32>, memref<4x256xf32>) outs(%h : memref<4x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  %ss = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%ss : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<4x256xf32>) outs(%ss : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %n = arith.addf %sq, %acc : f32
    linalg.yield %n : f32
  }
  %out = memref.alloc() : memref<4x256xf32>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %ss, %w : memref<4x256xf32>, memref<4xf32>, memref<256xf32>) outs(%out : memref<4x256xf32>) {
  ^bb0(%a: f32, %s: f32, %g: f32, %o: f32):
    %rs = math.rsqrt %s : f32
    %y = arith.mulf %a, %rs : f32
    %z = arith.mulf %y, %g : f32
    linalg.yield %z : f32
  }
  memref.dealloc %ss : memref<4xf32>
  memref.dealloc %h : memref<4x256xf32>
  return %out : memref<4x256xf32>
}

// -----

// Softmax over heads [2, 1, 8]: the maximum and the sum reuse one buffer
// (bufferization's), the division is in place, unit loops are dropped and
// the two row indices come from one. linalg.index becomes the element.
// CHECK-LABEL: func.func @softmax(
// CHECK: scf.parallel (%[[ROW:.*]]) = (%c0) to (%c6) step (%c1) {
// CHECK-NEXT: %[[IDX:.*]]:2 = affine.delinearize_index %[[ROW]] into (2, 3)
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c8{{.*}} step %c32
// CHECK: arith.index_cast %[[J]]
// CHECK: scf.parallel {{.*}} init (%{{.*}}) -> f32
// CHECK: arith.maxnumf
// CHECK: scf.reduce
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: scf.parallel {{.*}} init (%{{.*}}) -> f32
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: } {tpcuda.row_kernel}
// CHECK-NOT: linalg.
#s3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#r3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @softmax(%x: memref<2x3x1x8xf32>, %pos: memref<i64>) -> memref<2x3x1x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %big = arith.constant -1.0e9 : f32
  %s = memref.alloc() : memref<2x3x1x8xf32>
  linalg.generic {indexing_maps = [#s3, affine_map<(d0, d1, d2, d3) -> ()>, #s3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %pos : memref<2x3x1x8xf32>, memref<i64>) outs(%s : memref<2x3x1x8xf32>) {
  ^bb0(%a: f32, %p: i64, %o: f32):
    %i = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %keep = arith.cmpi sle, %ii, %p : i64
    %m = arith.select %keep, %a, %big : f32
    linalg.yield %m : f32
  }
  %m = memref.alloc() : memref<2x3x1xf32>
  linalg.fill ins(%ninf : f32) outs(%m : memref<2x3x1xf32>)
  linalg.generic {indexing_maps = [#s3, #r3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : memref<2x3x1x8xf32>) outs(%m : memref<2x3x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.maxnumf %a, %acc : f32
    linalg.yield %n : f32
  }
  %e = memref.alloc() : memref<2x3x1x8xf32>
  linalg.generic {indexing_maps = [#s3, #r3, #s3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %m : memref<2x3x1x8xf32>, memref<2x3x1xf32>) outs(%e : memref<2x3x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %x2 = math.exp %d : f32
    linalg.yield %x2 : f32
  }
  memref.dealloc %s : memref<2x3x1x8xf32>
  linalg.fill ins(%zero : f32) outs(%m : memref<2x3x1xf32>)
  linalg.generic {indexing_maps = [#s3, #r3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e : memref<2x3x1x8xf32>) outs(%m : memref<2x3x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %a, %acc : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#s3, #r3, #s3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%e, %m : memref<2x3x1x8xf32>, memref<2x3x1xf32>) outs(%e : memref<2x3x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  }
  memref.dealloc %m : memref<2x3x1xf32>
  return %e : memref<2x3x1x8xf32>
}

// -----

// The op after the sum reads its buffer transposed: another row's
// elements, which another block writes. It stays an op of its own.
// CHECK-LABEL: func.func @other_row(
// CHECK: scf.parallel
// CHECK: } {tpcuda.row_kernel}
// CHECK-NOT: scf.parallel
// CHECK: linalg.transpose
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @other_row(%x: memref<8x8xf32>) -> (memref<8xf32>, memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %h = memref.alloc() : memref<8x8xf32>
  %ss = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%ss : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%h : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<8x8xf32>) outs(%ss : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %a, %acc : f32
    linalg.yield %n : f32
  }
  %t = memref.alloc() : memref<8x8xf32>
  linalg.transpose ins(%h : memref<8x8xf32>) outs(%t : memref<8x8xf32>) permutation = [1, 0]
  memref.dealloc %h : memref<8x8xf32>
  return %ss, %t : memref<8xf32>, memref<8x8xf32>
}

// -----

// Every row writes the one element of %last: blocks would race on it, so
// that op stays out.
// CHECK-LABEL: func.func @same_element(
// CHECK: } {tpcuda.row_kernel}
// CHECK-NEXT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @same_element(%x: memref<4x64xf32>) -> (memref<4xf32>, memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %ss = memref.alloc() : memref<4xf32>
  %last = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%ss : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%ss : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %a, %acc : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["parallel"]}
      ins(%ss : memref<4xf32>) outs(%last : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return %ss, %last : memref<4xf32>, memref<f32>
}

// -----

// A written argument may be the buffer another argument is: the
// scaling that writes %out stays out of the reduction's kernel.
// CHECK-LABEL: func.func @may_alias(
// CHECK: } {tpcuda.row_kernel}
// CHECK-NEXT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @may_alias(%x: memref<4x64xf32>, %out: memref<4x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %ss = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%ss : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%ss : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %a, %acc : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : memref<4x64xf32>, memref<4xf32>) outs(%out : memref<4x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }
  memref.dealloc %ss : memref<4xf32>
  return
}

// -----

// An argmax (the first occurrence of the maximum): each thread folds its
// elements with the op's body and leaves its best value and index in
// scratch buffers; the block takes the best value, then the smallest index
// holding it; one thread folds them into the inits as the body would,
// taking the index only where the value is better than the init's.
// CHECK-LABEL: func.func @argmax(
// CHECK-SAME: %[[X:[^:]*]]: memref<2x100xf32>, %[[V:[^:]*]]: memref<2xf32>, %[[I:[^:]*]]: memref<2xi64>)
// CHECK-DAG: %[[VALUES:.*]] = memref.alloc() : memref<2x128xf32>
// CHECK-DAG: %[[INDICES:.*]] = memref.alloc() : memref<2x128xi64>
// CHECK: scf.parallel (%[[ROW:.*]]) = (%c0) to (%c2) step (%c1) {
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[NONE:.*]] = arith.constant 9223372036854775807 : i64
// CHECK: scf.parallel (%[[T:.*]]) =
// CHECK-NEXT: %[[FOLD:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[NEG]], %{{.*}} = %[[NONE]]) -> (f32, i64)
// CHECK: memref.store %[[FOLD]]#0, %[[VALUES]][%[[ROW]], %[[T]]]
// CHECK-NEXT: memref.store %[[FOLD]]#1, %[[INDICES]][%[[ROW]], %[[T]]]
// CHECK: %[[BEST:.*]] = scf.parallel {{.*}} init (%[[NEG]]) -> f32 {
// CHECK: arith.maximumf
// CHECK: %[[FIRST:.*]] = scf.parallel {{.*}} init (%[[NONE]]) -> i64 {
// CHECK: %[[HOLDS:.*]] = arith.cmpf oeq, %{{.*}}, %[[BEST]]
// CHECK: arith.select %[[HOLDS]]
// CHECK: arith.minsi
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: %[[OLDV:.*]] = memref.load %[[V]][%[[ROW]]]
// CHECK-NEXT: %[[OLDI:.*]] = memref.load %[[I]][%[[ROW]]]
// CHECK-NEXT: %[[NEWV:.*]] = arith.maximumf %[[BEST]], %[[OLDV]]
// CHECK-NEXT: %[[TAKE:.*]] = arith.cmpf ogt, %[[BEST]], %[[OLDV]]
// CHECK-NEXT: %[[NEWI:.*]] = arith.select %[[TAKE]], %[[FIRST]], %[[OLDI]]
// CHECK-NEXT: memref.store %[[NEWV]], %[[V]][%[[ROW]]]
// CHECK-NEXT: memref.store %[[NEWI]], %[[I]][%[[ROW]]]
// CHECK: } {tpcuda.row_kernel}
// CHECK-NEXT: memref.dealloc %[[VALUES]]
// CHECK-NEXT: memref.dealloc %[[INDICES]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @argmax(%x: memref<2x100xf32>, %v: memref<2xf32>, %i: memref<2xi64>) {
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x100xf32>) outs(%v, %i : memref<2xf32>, memref<2xi64>) {
  ^bb0(%e: f32, %best: f32, %at: i64):
    %j = linalg.index 1 : index
    %jj = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %e, %best : f32
    %m = arith.maximumf %e, %best : f32
    %k = arith.select %gt, %jj, %at : i64
    linalg.yield %m, %k : f32, i64
  }
  return
}

// -----

// Left alone: a reduction over a loop that is not the last, one whose
// reduced loop is not the last dimension of what it reads (it would read
// across rows), and a pointwise op with no reduction beside it. A call
// between the fill and the reduction that reads its init ends the run: the
// reduction is a row kernel alone.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.negf
// CHECK: linalg.fill
// CHECK-NEXT: call @use
// CHECK-NEXT: arith.constant
// CHECK: scf.parallel
// CHECK: } {tpcuda.row_kernel}
// CHECK-NEXT: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func private @use(memref<8xf32>)
func.func @left_alone(%x: memref<8x8xf32>, %a: memref<8xf32>, %v: memref<8xf32>, %y: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %n = arith.addf %e, %acc : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#t, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%v : memref<8xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %n = arith.addf %e, %acc : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%e: f32, %o: f32):
    %n = arith.negf %e : f32
    linalg.yield %n : f32
  }
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  call @use(%a) : (memref<8xf32>) -> ()
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%e: f32, %acc: f32):
    %n = arith.addf %e, %acc : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Two memref.views of one byte buffer: their byte shifts are not in their
// types' offsets, so the same offsets may be different elements. The
// scaling that writes one and reads the other stays out.
// CHECK-LABEL: func.func @byte_views(
// CHECK: } {tpcuda.row_kernel}
// CHECK-NEXT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @byte_views(%bytes: memref<2048xi8>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %x = memref.view %bytes[%c0][] : memref<2048xi8> to memref<4x64xf32>
  %y = memref.view %bytes[%c1024][] : memref<2048xi8> to memref<4x64xf32>
  %ss = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%ss : memref<4xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%ss : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %n = arith.addf %a, %acc : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : memref<4x64xf32>, memref<4xf32>) outs(%y : memref<4x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  }
  return %ss : memref<4xf32>
}

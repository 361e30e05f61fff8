// RUN: tp-opt %s --tp-host-scalar-reads | FileCheck %s

// A decode step's position, read on the host for the offset of its cache
// write: the device buffer's scalar is copied into a host one first. Reads
// inside a parallel loop (a kernel) and of larger buffers stay.

// CHECK: func.func private @tprt_read_scalar(!llvm.ptr, !llvm.ptr, i64)
// CHECK-LABEL: func.func @decode(
// CHECK-SAME: %[[POS:.*]]: memref<i64>, %[[CACHE:.*]]: memref<8x4xf32>
// CHECK:   %[[HOST:.*]] = memref.alloca() : memref<i64>
// CHECK:   %[[BYTES:.*]] = arith.constant 8 : i64
// CHECK:   %[[HBASE:.*]] = memref.extract_aligned_pointer_as_index %[[HOST]]
// CHECK:   %[[HPTR:.*]] = llvm.inttoptr
// CHECK:   %[[DBASE:.*]] = memref.extract_aligned_pointer_as_index %[[POS]]
// CHECK:   %[[DPTR:.*]] = llvm.inttoptr
// CHECK:   call @tprt_read_scalar(%[[HPTR]], %[[DPTR]], %[[BYTES]])
// CHECK:   %[[P:.*]] = memref.load %[[HOST]][] : memref<i64>
// CHECK:   arith.index_cast %[[P]]
// CHECK:   scf.parallel
// CHECK:     memref.load %[[POS]][] : memref<i64>
func.func @decode(%pos: memref<i64>, %cache: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %p = memref.load %pos[] : memref<i64>
  %row = arith.index_cast %p : i64 to index
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    %q = memref.load %pos[] : memref<i64>
    %f = arith.sitofp %q : i64 to f32
    memref.store %f, %cache[%row, %j] : memref<8x4xf32>
    scf.reduce
  }
  return
}

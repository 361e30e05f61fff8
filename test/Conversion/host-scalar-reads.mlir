// RUN: tp-opt %s --tp-host-scalar-reads --split-input-file | FileCheck %s

// A decode step's position sets the offset of its cache write: only a
// kernel (a parallel loop) uses it, so the kernel loads it itself, the view
// at that offset included, and the host reads nothing.

// CHECK-LABEL: func.func @offset_only(
// CHECK-SAME: %[[POS:.*]]: memref<i64>, %[[CACHE:.*]]: memref<8x4xf32>
// CHECK-NOT:   tprt_read_scalar
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[P:.*]] = memref.load %[[POS]][] : memref<i64>
// CHECK-NEXT:    %[[ROW:.*]] = arith.index_cast %[[P]] : i64 to index
// CHECK-NEXT:    %[[VIEW:.*]] = memref.subview %[[CACHE]][%[[ROW]], 0] [1, 4] [1, 1]
// CHECK:         memref.store %{{.*}}, %[[VIEW]]
// CHECK:       scf.parallel
// CHECK-NEXT:    %[[P2:.*]] = memref.load %[[POS]][] : memref<i64>
// CHECK-NEXT:    %[[ROW2:.*]] = arith.index_cast %[[P2]] : i64 to index
// CHECK-NEXT:    %[[Q:.*]] = memref.load %[[POS]][] : memref<i64>
// CHECK:         memref.store %{{.*}}, %[[CACHE]][%[[ROW2]], %{{.*}}]
// CHECK-NOT:   memref.load
// CHECK:       return
func.func @offset_only(%pos: memref<i64>, %cache: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %p = memref.load %pos[] : memref<i64>
  %row = arith.index_cast %p : i64 to index
  %view = memref.subview %cache[%row, 0] [1, 4] [1, 1]
      : memref<8x4xf32> to memref<1x4xf32, strided<[4, 1], offset: ?>>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %view[%c0, %j] : memref<1x4xf32, strided<[4, 1], offset: ?>>
    scf.reduce
  }
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    %q = memref.load %pos[] : memref<i64>
    %f = arith.sitofp %q : i64 to f32
    memref.store %f, %cache[%row, %j] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// The length of a step's attention, pos + 1, bounds a loop: the host needs
// it, so it is copied into a host scalar first. The kernel that also uses
// it as an offset loads it itself.

// CHECK: func.func private @tprt_read_scalar(!llvm.ptr, !llvm.ptr, i64)
// CHECK-LABEL: func.func @length(
// CHECK-SAME: %[[POS:.*]]: memref<i64>, %[[CACHE:.*]]: memref<8x4xf32>
// CHECK:   %[[HOST:.*]] = memref.alloca() : memref<i64>
// CHECK:   %[[BYTES:.*]] = arith.constant 8 : i64
// CHECK:   %[[HBASE:.*]] = memref.extract_aligned_pointer_as_index %[[HOST]]
// CHECK:   %[[HPTR:.*]] = llvm.inttoptr
// CHECK:   %[[DBASE:.*]] = memref.extract_aligned_pointer_as_index %[[POS]]
// CHECK:   %[[DPTR:.*]] = llvm.inttoptr
// CHECK:   call @tprt_read_scalar(%[[HPTR]], %[[DPTR]], %[[BYTES]])
// CHECK:   %[[P:.*]] = memref.load %[[HOST]][] : memref<i64>
// CHECK:   %[[ROW:.*]] = arith.index_cast %[[P]]
// CHECK:   %[[N:.*]] = arith.addi %[[ROW]]
// CHECK:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]])
// CHECK-NEXT: %[[Q:.*]] = memref.load %[[POS]][] : memref<i64>
// CHECK-NEXT: %[[ROW2:.*]] = arith.index_cast %[[Q]]
// CHECK-NEXT: memref.store %{{.*}}, %[[CACHE]][%[[ROW2]], %{{.*}}]
func.func @length(%pos: memref<i64>, %cache: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %p = memref.load %pos[] : memref<i64>
  %row = arith.index_cast %p : i64 to index
  %n = arith.addi %row, %c1 : index
  scf.parallel (%j) = (%c0) to (%n) step (%c1) {
    memref.store %one, %cache[%row, %j] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// A scalar something writes stays where it is read: a kernel's load after
// the write would see another value.

// CHECK-LABEL: func.func @written(
// CHECK:   call @tprt_read_scalar
// CHECK:   memref.store
// CHECK:   scf.parallel
// CHECK-NOT: memref.load %arg0
func.func @written(%pos: memref<i64>, %cache: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : i64
  %one = arith.constant 1.0 : f32
  %p = memref.load %pos[] : memref<i64>
  %row = arith.index_cast %p : i64 to index
  memref.store %c7, %pos[] : memref<i64>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %cache[%row, %j] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// Through an outlined layer: the callee only reads the position, so the
// caller's kernel loads it too; the callee's own kernel likewise.

// CHECK-LABEL: func.func @caller(
// CHECK-NOT:   tprt_read_scalar
// CHECK:       scf.parallel
// CHECK-NEXT:    memref.load %arg0[] : memref<i64>
// CHECK:       call @layer(%arg0, %arg1)
// CHECK-LABEL: func.func private @layer(
// CHECK-NOT:   tprt_read_scalar
// CHECK:       scf.parallel
// CHECK-NEXT:    memref.load %arg0[] : memref<i64>
func.func @caller(%pos: memref<i64>, %cache: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %p = memref.load %pos[] : memref<i64>
  %row = arith.index_cast %p : i64 to index
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %cache[%row, %j] : memref<8x4xf32>
    scf.reduce
  }
  call @layer(%pos, %cache) : (memref<i64>, memref<8x4xf32>) -> ()
  return
}
func.func private @layer(%pos: memref<i64>, %cache: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %p = memref.load %pos[] : memref<i64>
  %row = arith.index_cast %p : i64 to index
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %cache[%row, %j] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// The same through a view of the scalar's buffer: the write to the buffer
// counts.

// CHECK-LABEL: func.func @written_through_a_view(
// CHECK:   call @tprt_read_scalar
// CHECK:   memref.store
// CHECK:   scf.parallel
// CHECK-NOT: memref.load %arg0
func.func @written_through_a_view(%pos: memref<i64>, %cache: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : i64
  %one = arith.constant 1.0 : f32
  %view = memref.cast %pos : memref<i64> to memref<i64, strided<[], offset: ?>>
  %p = memref.load %view[] : memref<i64, strided<[], offset: ?>>
  %row = arith.index_cast %p : i64 to index
  memref.store %c7, %pos[] : memref<i64>
  scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %cache[%row, %j] : memref<8x4xf32>
    scf.reduce
  }
  return
}

// -----

// The manifest says which functions read device memory on the host, the
// reads through a callee included: a launcher cannot capture their calls
// as CUDA graphs.

// CHECK: tp.manifest = "{\22functions\22:[{\22host_reads\22:true,\22name\22:\22step\22},{\22host_reads\22:false,\22name\22:\22other\22}]}"
module attributes {tp.manifest = "{\"functions\": [{\"name\": \"step\"}, {\"name\": \"other\"}]}"} {
  func.func @step(%pos: memref<i64>, %n: memref<8xf32>) {
    call @layer(%pos, %n) : (memref<i64>, memref<8xf32>) -> ()
    return
  }
  func.func private @layer(%pos: memref<i64>, %n: memref<8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f32
    %p = memref.load %pos[] : memref<i64>
    %len = arith.index_cast %p : i64 to index
    scf.parallel (%j) = (%c0) to (%len) step (%c1) {
      memref.store %one, %n[%j] : memref<8xf32>
      scf.reduce
    }
    return
  }
  func.func @other(%n: memref<8xf32>) {
    return
  }
}
